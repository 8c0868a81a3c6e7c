"""``report.html``: one self-contained page per run that a reviewer opens in any browser.

Everything is inside the file: the style sheet, the figures (PNG, base64 ``data:`` URIs) and a
few lines of script that only count the figures the browser decoded (``data-figures-shown`` on
``<body>``, for automated checks).  No server, no network, no external asset.

The page holds the run's table, then per audit: the claim / exact / certified comparison, the
violations, the per-pair bounds, the draws, the accuracy audit, the figures and the raw evidence
(every certified event with its counts and level).  :func:`audit_section` is also what
:meth:`audit.report.AuditReport._repr_html_` shows in a notebook.

The markup lives in Jinja2 templates (``audit/render/templates/*.j2``) rendered with autoescaping
on, so every value from a report (a mechanism's name, a scenario note, an error message) is
escaped by the template engine; this module only turns a report dict into the values the
templates lay out.

What the trade-off evidence means (worded once, in :data:`audit.render.text.TRADEOFF_MEANING`): a
certified point (α_hi, β_hi) is a threshold test whose true errors are at most α_hi and β_hi, so
the pair's true trade-off curve satisfies T(α_hi) ≤ β_hi; the certified points give an *upper*
bound on T.  Sampling cannot give a lower bound on T (a rarer event could always separate the two
sides better), so nothing in a report bounds T from below; the claim does, and a certified point
below the claimed curve refutes it (Dong, Roth & Su 2022, "Gaussian differential privacy",
Def. 2.1 and Prop. 2.2).
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

from jinja2 import Environment, PackageLoader, StrictUndefined

from ..version import __version__
from .graybox import graybox_html
from .tables import COLUMNS, NUMERIC_COLUMNS, footnotes, table_rows
from .text import (TRADEOFF_MEANING, accuracy_claim, claim_label, claim_scope, confidence_text, draws_text,
                   error_control_text, figure_stem, format_number, statistic_text, violation_lines)
from .witness import pair_data_text, slot_text, witness_parts

__all__ = ["report_html", "audit_section", "breakable", "FIGURE_CAPTIONS"]

FIGURE_CAPTIONS = {
    "tradeoff": "Trade-off curve of the worst pair. " + TRADEOFF_MEANING,
    "epsilon": "Privacy profile: the certified lower bound ε_lb(δ) against the ε(δ) the claim allows "
               "and the exact ε(δ). Certified ε above the claimed curve refutes the claim.",
    "accuracy": "Error distribution of the first query against the exact noise density, with the "
                "claimed error bound.",
}
#: Violations listed in an audit's section (the evidence table holds them all).
_VIOLATIONS_SHOWN = 10

_TEMPLATES = Environment(loader=PackageLoader("audit.render", "templates"), autoescape=True,
                         undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                         keep_trailing_newline=True)


def _num(value: Any, digits: int = 4) -> str:
    return format_number(value, digits)


def _anchor(name: str) -> str:
    return "audit-" + figure_stem(name)


def _table(headings: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[int] = ()) -> dict:
    """A plain table for the ``table`` macro: cells as text, numeric columns right-aligned."""
    return {"headings": list(headings), "numeric": set(numeric),
            "rows": [[str(cell) for cell in row] for row in rows]}


def _comparison(report: dict) -> dict:
    """Claimed, exact and certified side by side for ε, δ and μ."""
    claim = report["claim"]
    ref_delta, ref_eps = float(report["reference_delta"]), float(report["reference_epsilon"])
    rows = [
        (f"ε at δ = {ref_delta:g}", _num(ref_eps), _num(report.get("exact_epsilon")),
         _num(report["epsilon_lower_bound"])),
        (f"δ at ε = {ref_eps:.4g}", _num(ref_delta), _num(report.get("exact_delta")),
         _num(report["delta_lower_bound"])),
        ("μ (Gaussian DP)", _num(claim["mu"]) if claim.get("type") == "gdp" else "—",
         _num(report.get("exact_mu")), _num(report["mu_lower_bound"])),
    ]
    ratios = []
    if report.get("audit_tightness") is not None:
        ratios.append(f"audit tightness ε_lb/ε_exact = {_num(report['audit_tightness'], 3)}")
    if report.get("claim_slack") is not None:
        ratios.append(f"claim slack ε_exact/ε_claimed = {_num(report['claim_slack'], 3)} "
                      "(above 1: the claim is false)")
    return {"confidence": f"{float(report['confidence']):g}", "rows": rows, "ratios": "; ".join(ratios)}


def _evidence(report: dict) -> dict:
    evidence = report.get("evidence") or []
    if evidence and all(e.get("family") == "anytime" for e in evidence):
        rows = [(e.get("pair"), slot_text(str(e.get("slot"))), e.get("round"), e.get("event"),
                 e.get("more_likely_under"),
                 f"{int(e['count_more_likely']):,}", f"{int(e['count_other']):,}", f"{int(e['n']):,}",
                 _num(e.get("bet"), 3), _num(e.get("level"), 3)) for e in evidence]
        return {"count": len(evidence), "anytime": True, "table": _table(
            ("pair", "bet for", "round", "event", "more likely under", "count (more likely side)",
             "count (other side)", "draws", "bet", "level"), rows, numeric=range(5, 10))}
    rows = [(e.get("pair"), slot_text(str(e.get("slot"))), e.get("family"), e.get("event"), e.get("more_likely_under"),
             f"{int(e['count_more_likely']):,}", f"{int(e['count_other']):,}", f"{int(e['n']):,}",
             _num(e.get("level"), 3), _num(e.get("alpha_hi")), _num(e.get("beta_hi")), _num(e.get("bound")))
            for e in evidence]
    return {"count": len(evidence), "anytime": False, "table": _table(
        ("pair", "chosen for", "family", "event", "more likely under", "count (more likely side)",
         "count (other side)", "draws", "level", "α_hi", "β_hi", "joint bound"), rows, numeric=range(5, 12))}


def _witness(report: dict) -> Optional[dict]:
    """:func:`audit.render.witness.witness_parts`, with an anytime audit's rounds as a table."""
    parts = witness_parts(report)
    if parts is not None and parts.get("mode") == "anytime":
        parts["rounds_table"] = _table(("round", "event", "more likely on", "counts", "bet", "e-value factor"),
                                       [(r["round"], r["event"], r["more_likely"], r["counts"], r["bet"], r["factor"])
                                        for r in parts["rounds"]], numeric=(0, 4, 5))
    return parts


def _accuracy(report: dict) -> Optional[dict]:
    accuracy = report.get("accuracy")
    if not accuracy:
        return None
    rows = []
    for column in accuracy.get("columns", []):
        ci = column.get("exceedance") or {}
        exceedances = column.get("exceedances")
        rows.append((column["column"], "query" if column.get("is_query") else "other",
                     _num(column.get("claimed_bound")), "—" if exceedances is None else f"{int(exceedances):,}",
                     f"[{_num(ci.get('low'))}, {_num(ci.get('high'))}]" if ci else "—",
                     _num(column.get("claimed_variance")), _num(column.get("sample_variance"))))
    return {"verdict": accuracy["verdict"], "claim": accuracy_claim(accuracy),
            "samples": f"{int(accuracy['samples']):,}", "confidence": f"{float(accuracy['confidence']):g}",
            "alpha": f"{float(accuracy['alpha']):g}", "violations": [str(v) for v in accuracy.get("violations", [])],
            "table": _table(("column", "kind", "claimed bound a", "exceedances", "P(|error| > a) interval",
                             "claimed variance", "sample variance"), rows, numeric=(2, 3, 5, 6))}


def _figures(name: str, figures: Mapping[str, bytes]) -> list[dict]:
    return [{"alt": f"{name}: {kind} figure", "caption": FIGURE_CAPTIONS.get(kind, kind),
             "uri": "data:image/png;base64," + base64.b64encode(png).decode("ascii")}
            for kind, png in figures.items()]


def _audit(report: dict, name: Optional[str], figures: Optional[Mapping[str, bytes]],
           entry: Optional[dict]) -> dict:
    """The values of one audit's section (the ``audit_section.html.j2`` template)."""
    name = name or report["mechanism"]
    entry = entry or {}
    violations = report.get("violations") or []
    pairs = [(p["label"], ", ".join(p.get("also_covers") or []) or "—", _num(p["epsilon_lower_bound"]),
              _num(p["delta_lower_bound"]), _num(p["mu_lower_bound"]), pair_data_text(report, p["label"]))
             for p in report.get("pairs", [])]
    return {
        "failed": False, "anchor": _anchor(name), "name": name, "verdict": report["verdict"], "mechanism": report["mechanism"],
        "claim": breakable(f"{claim_label(report['claim'])} {claim_scope(report['claim'], report.get('scenario'))}"),
        "path": entry.get("path"), "expected": entry.get("expected"), "note": entry.get("note"),
        "warnings": list(entry.get("warnings") or []),
        "false_alarm": f"{1 - float(report['confidence']):.3g}",
        "comparison": _comparison(report),
        "violations": violation_lines(violations, limit=_VIOLATIONS_SHOWN),
        "witness": _witness(report),
        "confidence": confidence_text(entry),
        "worst_pair": report["worst_pair"],
        "pairs": _table(("pair", "also covers (its reverse)", "ε_lb", "δ_lb", "μ_lb", "data"), pairs,
                        numeric=(2, 3, 4)),
        "scenario": (report.get("scenario") or {}).get("description"),
        "samples": f"{int(report['samples']):,}", "draws": draws_text(report.get("draws") or {}),
        "seed": report["seed"], "statistic": statistic_text(report.get("statistic")),
        "accuracy": _accuracy(report),
        "figures": _figures(name, figures or {}),
        "evidence": _evidence(report),
        "graybox": graybox_html(report.get("graybox") or {}),  # "" without a gray-box check
    }


def audit_section(report: dict, *, name: Optional[str] = None, figures: Optional[Mapping[str, bytes]] = None,
                  entry: Optional[dict] = None) -> str:
    """The HTML of one audit (an ``AuditReport.to_dict()``), with ``figures`` = {kind: PNG bytes}
    and, from its report.json ``entry``, the scenario file's path, expectation, note and warnings."""
    return _TEMPLATES.get_template("audit_section.html.j2").render(
        audit=_audit(report, name, figures, entry), tradeoff_meaning=TRADEOFF_MEANING)


_BREAK_AFTER = re.compile(r"(?<=[,(=/])")
#: Cells of these columns up to this many characters never wrap (a claim such as "(4.48145, 0.001)-DP").
_KEEP = {"claim": 24, "expected": 16}
#: Words longer than this may also break after ",", "(", "=" and "/" (a long profile claim's label).
_LONG_WORD = 16


def breakable(text: str, keep: int = 0) -> list[tuple[str, bool]]:
    """``text`` as pieces that never break inside, each with whether a space follows it: the whole
    text when it has at most ``keep`` characters, else its words (so "(1, 1e-05)-DP" never breaks
    at its hyphen), long words cut after ",", "(", "=" and "/" (where the page may break them
    without a space)."""
    if len(text) <= keep:
        return [(text, False)]
    pieces: list[tuple[str, bool]] = []
    words = text.split(" ")
    for index, word in enumerate(words):
        parts = [p for p in _BREAK_AFTER.split(word) if p] if len(word) > _LONG_WORD else [word]
        for position, part in enumerate(parts):
            pieces.append((part, position == len(parts) - 1 and index < len(words) - 1))
    return pieces


def _summary_table(entries: Sequence[dict], columns: Sequence[tuple[str, str]],
                   rows: Sequence[dict]) -> dict:
    """The run's table: the cells of :func:`audit.render.tables.table_rows`, each with its class.
    The mechanism, when a column, is shown under the audit's name (one column fewer, so the table
    of a whole suite fits a 1280-pixel window)."""
    merged = "name" in dict(columns) and "mechanism" in dict(columns)
    shown = [(key, heading) for key, heading in columns if not (merged and key == "mechanism")]
    cells = []
    for entry, row in zip(entries, rows):
        cells.append([{"text": row[key], "pieces": breakable(row[key], _KEEP.get(key, 0)),
                       "sub": breakable(row["mechanism"]) if merged and key == "name" and row["mechanism"] != "—" else None,
                       "anchor": _anchor(entry["name"]) if key == "name" else None,
                       "class": " ".join(filter(None, ("num" if key in NUMERIC_COLUMNS else "",
                                                       row[key] if key in ("verdict", "accuracy") else "",
                                                       f"col-{key}")))}
                      for key, _ in shown])
    headings = [(f"{heading} (mechanism)" if merged and key == "name" else heading, f"col-{key}")
                for key, heading in shown]
    return {"headings": headings, "rows": cells}


def report_html(entries: Sequence[dict], settings: dict, out: "str | Path", *,
                columns: Sequence[tuple[str, str]] = COLUMNS, rows: Optional[Sequence[dict]] = None) -> str:
    """The whole ``report.html`` for the entries of ``report.json`` (figures read from ``out``).

    ``columns`` and ``rows`` are the run's table (default :data:`audit.render.tables.COLUMNS` and
    :func:`audit.render.tables.table_rows`), so the page shows the same cells as the terminal.
    """
    out = Path(out)
    audits = []
    for entry in entries:
        if entry.get("report") is None:
            audits.append({"failed": True, "error": entry.get("error"), "anchor": _anchor(entry["name"]), "name": entry["name"],
                           "path": entry.get("path")})
            continue
        figures = {}
        for kind, relative in (entry.get("figures") or {}).items():
            try:
                figures[kind] = (out / relative).read_bytes()
            except OSError:
                continue  # a figure deleted since: the section says what it has
        audits.append(_audit(entry["report"], entry["name"], figures, entry))
    return _TEMPLATES.get_template("report.html.j2").render(
        title="dpaudit report", version=__version__, audits=audits, tradeoff_meaning=TRADEOFF_MEANING,
        summary=_summary_table(entries, columns, table_rows(entries) if rows is None else rows),
        notes=[note.strip() for note in footnotes(entries)[2:]],
        error_control=error_control_text(settings.get("error_control"),
                                         accuracy=any((e.get("report") or {}).get("accuracy") for e in entries)),
        settings=json.dumps(settings, indent=2, sort_keys=True, default=str))
