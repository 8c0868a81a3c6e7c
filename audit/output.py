"""What ``dpaudit run`` writes: report.json, summary.md, report.html and figures, each atomically.

``report.json`` holds one *entry* per audit::

    {"name": ..., "path": ..., "expected": "holds" | "violated" | null, "note": ...,
     "warnings": [...], "error": null | "message", "figures": {"tradeoff": "figures/x.png", ...},
     "noise_density": null | {"x": [...], "density": [...], "source": ...},
     "report": AuditReport.to_dict()}

under ``{"dpaudit": version, "format": 1, "settings": {...}, "audits": [entries]}``.  Every file
goes through :func:`audit.checkpoint.write_atomic`, so an interrupted run leaves the previous
version or the new one, never a torn file; report.json and summary.md are rewritten after every
audit, so they always describe the audits finished so far.

The table (:func:`format_table` for the terminal, :func:`markdown_table` for summary.md) has
one row per audit: name, mechanism, claim, exact ε at the claim's δ (where the mechanism knows
it), the certified lower bounds ε_lb (at the claim's δ), δ_lb (at the claim's ε) and μ_lb, the
audit tightness ε_lb/ε_exact, the claim slack ε_exact/ε_claimed, the accuracy verdict, the
privacy verdict, what the file expected, and the wall time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from .checkpoint import write_atomic
from .report import (TRADEOFF_MEANING, accuracy_claim, claim_label, claim_scope, draws_text, dumps,
                     format_number, statistic_text)

__all__ = ["REPORT_FORMAT", "make_entry", "error_entry", "noise_density", "table_rows",
           "format_table", "markdown_table", "summary_markdown", "report_document", "write_reports", "load_report",
           "ReportFileError", "COLUMNS", "write_file"]

REPORT_FORMAT = 1
#: Table columns: (key, heading).
COLUMNS = (("name", "audit"), ("mechanism", "mechanism"), ("claim", "claim"), ("exact", "exact ε"),
           ("eps_lb", "ε_lb"), ("delta_lb", "δ_lb"), ("mu_lb", "μ_lb"), ("tightness", "tightness"),
           ("slack", "slack"), ("accuracy", "accuracy"), ("verdict", "verdict"),
           ("expected", "expected"), ("time", "time"))
_MECHANISM_WIDTH = 34
_DENSITY_POINTS = 400


class ReportFileError(ValueError):
    """A file given to ``dpaudit plot`` is not a dpaudit report.json."""


def write_file(path: "str | Path", data: bytes) -> Path:
    """Write atomically (:func:`audit.checkpoint.write_atomic`) and return the path."""
    path = Path(path)
    write_atomic(path, data)
    return path


# -- entries ------------------------------------------------------------------------------------
def make_entry(spec: Any, report: Any) -> dict:
    """The report.json entry of one finished audit of ``spec`` (a :class:`scenarios.AuditSpec`)."""
    data = report.to_dict()
    histogram = (data.get("accuracy") or {}).get("histogram")
    return {"name": spec.name, "path": str(spec.path), "expected": spec.expected, "note": spec.note,
            "warnings": list(spec.warnings), "error": None, "figures": {},
            "noise_density": noise_density(spec.mechanism, histogram) if histogram else None,
            "report": data}


def error_entry(spec: Any, message: str) -> dict:
    """The entry of an audit that could not run (bad input, a mechanism that raised)."""
    return {"name": spec.name, "path": str(spec.path), "expected": spec.expected, "note": spec.note,
            "warnings": list(spec.warnings), "error": message, "figures": {}, "noise_density": None,
            "report": None}


def noise_density(mechanism: Any, histogram: dict) -> Optional[dict]:
    """The exact density of the plotted error column, where the mechanism can tell it.

    Optional mechanism methods, in order: ``noise_pdf(x)`` (the density of the first query's
    noise) or a noise ``cdf(t)`` (bin-averaged: (F(b) − F(a))/(b − a), the quantity a histogram
    estimates).  ``None`` otherwise; the figure then draws a Gaussian of the claimed variance.
    """
    edges = np.asarray(histogram["edges"], dtype=np.float64)
    pdf, cdf = getattr(mechanism, "noise_pdf", None), getattr(mechanism, "cdf", None)
    try:
        if callable(pdf):
            x = np.linspace(edges[0], edges[-1], _DENSITY_POINTS)
            density, source = np.asarray(pdf(x), dtype=np.float64), "noise_pdf"
        elif callable(cdf):
            fine = np.linspace(edges[0], edges[-1], _DENSITY_POINTS + 1)
            x = 0.5 * (fine[:-1] + fine[1:])
            density, source = np.diff(np.asarray(cdf(fine), dtype=np.float64)) / np.diff(fine), "cdf"
        else:
            return None
    except (TypeError, ValueError, NotImplementedError):
        return None
    if density.shape != x.shape or not np.isfinite(density).all():
        return None
    return {"x": x.tolist(), "density": density.tolist(), "source": source}


# -- the table ----------------------------------------------------------------------------------
def _fmt(value: Any, digits: int = 4) -> str:
    return format_number(value, digits, missing="—")


def _expected_text(entry: dict) -> str:
    expected = entry.get("expected")
    if expected is None:
        return "—"
    report = entry.get("report")
    if report is None:
        return expected
    verdict = report["verdict"]
    if expected == "violated" and verdict != "VIOLATED":
        return "violated (limit)"  # refutable only with more samples: not an error
    if expected == "holds" and verdict == "VIOLATED":
        return "holds (!)"  # a false alarm (probability ≤ 1 − confidence) or a bug
    return expected


def table_rows(entries: Sequence[dict]) -> list[dict[str, str]]:
    """One row of display strings per entry, keyed like :data:`COLUMNS`."""
    rows = []
    for entry in entries:
        report = entry.get("report")
        if report is None:
            rows.append({key: "—" for key, _ in COLUMNS} | {
                "name": entry["name"], "verdict": "ERROR", "expected": _expected_text(entry)})
            continue
        accuracy = report.get("accuracy")
        runtime = report.get("runtime") or {}
        rows.append({
            "name": entry["name"],
            "mechanism": report["mechanism"],
            "claim": claim_label(report["claim"]),
            "exact": _fmt(report.get("exact_epsilon")),
            "eps_lb": _fmt(report["epsilon_lower_bound"]),
            "delta_lb": _fmt(report["delta_lower_bound"], 3),
            "mu_lb": _fmt(report["mu_lower_bound"]),
            "tightness": _fmt(report.get("audit_tightness"), 3),
            "slack": _fmt(report.get("claim_slack"), 3),
            "accuracy": "—" if not accuracy else accuracy["verdict"],
            "verdict": report["verdict"],
            "expected": _expected_text(entry),
            "time": f"{float(runtime['wall_time_s']):.1f}s" if "wall_time_s" in runtime else "—",
        })
    return rows


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_table(entries: Sequence[dict]) -> str:
    """The plain-text table for the terminal (long mechanism names shortened)."""
    rows = table_rows(entries)
    for row in rows:
        row["mechanism"] = _shorten(row["mechanism"], _MECHANISM_WIDTH)
    widths = {key: max([len(head)] + [len(row[key]) for row in rows]) for key, head in COLUMNS}
    numeric = {"exact", "eps_lb", "delta_lb", "mu_lb", "tightness", "slack", "time"}

    def line(cells: dict) -> str:
        return "  ".join(cells[key].rjust(widths[key]) if key in numeric else cells[key].ljust(widths[key])
                         for key, _ in COLUMNS).rstrip()

    header = line({key: head for key, head in COLUMNS})
    body = [line(row) for row in rows]
    return "\n".join([header, "-" * len(header)] + body + _footnotes(entries))


def markdown_table(entries: Sequence[dict]) -> str:
    """The same table in Markdown (full mechanism names)."""
    rows = table_rows(entries)
    escape = lambda text: text.replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(head for _, head in COLUMNS) + " |",
             "|" + "|".join("---" for _ in COLUMNS) + "|"]
    lines += ["| " + " | ".join(escape(row[key]) for key, _ in COLUMNS) + " |" for row in rows]
    return "\n".join(lines + _footnotes(entries))


def _footnotes(entries: Sequence[dict]) -> list[str]:
    notes = []
    if any((entry.get("report") or {}).get("accuracy") for entry in entries):
        notes.append("accuracy: the mechanism's declared accuracy claims (error bound P(|error| > a) ≤ α, "
                     "noise variance, worst-case error) checked on the first pair's base dataset; "
                     "summary.md lists each audit's")
    for entry in entries:
        text = _expected_text(entry)
        if entry.get("error"):
            notes.append(f"{entry['name']}: ERROR {entry['error']}")
        elif text.endswith("(limit)"):
            notes.append(f"{entry['name']}: the claim is false but was not refuted at "
                         f"{entry['report']['samples']:,} samples (a limit of the audit, not an error)")
        elif text.endswith("(!)"):
            notes.append(f"{entry['name']}: the file expects the claim to hold but it was refuted: a false "
                         f"alarm (probability ≤ {1 - entry['report']['confidence']:.3g}) or a bug")
    if not notes:
        return []
    return ["", "Notes:"] + [f"  {note}" for note in notes]


# -- summary.md ---------------------------------------------------------------------------------
def error_control_text(control: Optional[dict]) -> str:
    """One sentence: how the run controls false VIOLATED verdicts across its audits."""
    if not control:
        return "Error control across audits: not recorded."
    if control["method"] == "bonferroni":
        return (f"Error control across the run's {control['audits']} audits: Bonferroni. Each audit "
                f"runs at confidence {control['per_audit_confidence']:.6g}, so a run in which every "
                f"claim holds reports some VIOLATED with probability ≤ {1 - control['run_confidence']:.3g}.")
    if control["method"] == "none":
        return (f"Error control across the run's {control['audits']} audits: none (each at its own "
                f"confidence); the probability of some false VIOLATED is at most "
                f"{control['run_false_alarm_bound']:.3g} (the sum of the audits' levels).")
    return (f"One audit: a correct claim is reported VIOLATED with probability ≤ "
            f"{control['run_false_alarm_bound']:.3g}.")


def summary_markdown(entries: Sequence[dict], settings: dict) -> str:
    """The Markdown summary: the table, then each audit's summary and figures."""
    lines = ["# dpaudit report", "",
             "Every certified bound of one audit holds simultaneously with probability ≥ its "
             "confidence; VIOLATED means a certified bound contradicts the claim.  "
             "tightness = ε_lb/ε_exact (how much of the true ε the audit certified), "
             "slack = ε_exact/ε_claimed (> 1: the claim is false).", "", TRADEOFF_MEANING, "",
             error_control_text(settings.get("error_control")), "", markdown_table(entries), ""]
    for entry in entries:
        lines += [f"## {entry['name']}", "", f"File: `{entry['path']}`"]
        if entry.get("note"):
            lines += ["", entry["note"]]
        for warning in entry.get("warnings") or []:
            lines += ["", f"> warning: {warning}"]
        if entry.get("error"):
            lines += ["", f"**ERROR**: {entry['error']}", ""]
            continue
        lines += ["", "```", _summary_text(entry["report"]), "```", ""]
        for kind, path in (entry.get("figures") or {}).items():
            lines.append(f"![{entry['name']} {kind}]({path})")
        lines.append("")
    lines += ["---", "", f"Settings: `{json.dumps(settings, sort_keys=True)}`", ""]
    return "\n".join(lines)


def _summary_text(report: dict) -> str:
    """AuditReport.summary() rebuilt from the dict (the same lines)."""
    def fmt(value: Any) -> str:
        return "unknown" if value is None else f"{float(value):.4g}"

    lines = [
        f"dpaudit: {report['mechanism']}",
        f"  claim          {claim_label(report['claim'])} {claim_scope(report['claim'], report.get('scenario'))}",
        f"  verdict        {report['verdict']} (false-alarm probability ≤ {1 - report['confidence']:.3g})",
        f"  ε lower bound  {fmt(report['epsilon_lower_bound'])} at δ = {float(report['reference_delta']):g}"
        f"   (claimed {fmt(report['reference_epsilon'])}, exact {fmt(report.get('exact_epsilon'))})",
        f"  δ lower bound  {fmt(report['delta_lower_bound'])} at ε = {float(report['reference_epsilon']):.4g}"
        f"   (exact {fmt(report.get('exact_delta'))})",
        f"  μ lower bound  {fmt(report['mu_lower_bound'])}   (exact {fmt(report.get('exact_mu'))})",
    ]
    if report.get("audit_tightness") is not None:
        lines.append(f"  audit tightness ε_lb/ε_exact = {float(report['audit_tightness']):.3f}")
    if report.get("claim_slack") is not None:
        lines.append(f"  claim slack     ε_exact/ε_claimed = {float(report['claim_slack']):.3f}")
    lines.append(f"  worst pair     {report['worst_pair']}")
    lines.append(f"  statistic      {statistic_text(report.get('statistic'))}")
    lines.append(f"  samples        {int(report['samples']):,} per pair and side (all phases); seed {report['seed']}")
    lines.append(f"  draws          {draws_text(report.get('draws') or {})}")
    lines += [f"  violation: {v['message']}" for v in report.get("violations", [])[:3]]
    accuracy = report.get("accuracy")
    if accuracy:
        lines.append(f"  accuracy       {accuracy['verdict']} ({accuracy_claim(accuracy)}; "
                     f"{int(accuracy['samples']):,} more draws)")
        lines += [f"    {v}" for v in accuracy.get("violations", [])[:3]]
    return "\n".join(lines)


# -- files --------------------------------------------------------------------------------------
def report_document(entries: Sequence[dict], settings: dict) -> dict:
    """The content of report.json."""
    from . import __version__

    return {"dpaudit": __version__, "format": REPORT_FORMAT, "settings": settings,
            "audits": list(entries)}


def write_reports(out: "str | Path", entries: Sequence[dict], settings: dict) -> dict[str, Path]:
    """Write ``out/report.json``, ``out/summary.md`` and the self-contained ``out/report.html``
    (:mod:`audit.html`) atomically; returns their paths."""
    from .html import report_html

    out = Path(out)
    document = report_document(entries, settings)
    paths = {"report": out / "report.json", "summary": out / "summary.md", "html": out / "report.html"}
    write_file(paths["report"], (dumps(document) + "\n").encode())
    write_file(paths["summary"], summary_markdown(entries, settings).encode())
    page = report_html(entries, settings, out, columns=COLUMNS, rows=table_rows(entries))
    write_file(paths["html"], page.encode())
    return paths


def load_report(path: "str | Path") -> dict:
    """Read a report.json written by ``dpaudit run``; :class:`ReportFileError` if it is not one."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportFileError(f"{path}: is not valid JSON ({exc})") from None
    if not isinstance(document, dict) or not isinstance(document.get("audits"), list):
        raise ReportFileError(f"{path}: is not a dpaudit report.json (no 'audits' list)")
    for index, entry in enumerate(document["audits"]):
        if not isinstance(entry, dict) or "name" not in entry or "report" not in entry:
            raise ReportFileError(f"{path}: audits[{index}] is not a dpaudit audit entry "
                                  "(needs 'name' and 'report')")
    return document
