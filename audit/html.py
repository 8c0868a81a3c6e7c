"""``report.html``: one self-contained page per run that a reviewer opens in any browser.

Everything is inside the file: the style sheet, the figures (PNG, base64 ``data:`` URIs) and a
few lines of script that only count the figures the browser decoded (``data-figures-shown`` on
``<body>``, for automated checks).  No server, no network, no external asset.

The page holds the run's table, then per audit: the claim / exact / certified comparison, the
violations, the per-pair bounds, the draws, the accuracy audit, the figures and the raw evidence
(every certified event with its counts and level).  :func:`audit_section` is also what
:meth:`audit.report.AuditReport._repr_html_` shows in a notebook.

What the trade-off evidence means (worded once, in :data:`audit.report.TRADEOFF_MEANING`): a certified point
(α_hi, β_hi) is a threshold test whose true errors are at most α_hi and β_hi, so the pair's true
trade-off curve satisfies T(α_hi) ≤ β_hi; the certified points give an *upper* bound on T.
Sampling cannot give a lower bound on T (a rarer event could always separate the two sides
better), so nothing in a report bounds T from below; the claim does, and a certified point below
the claimed curve refutes it (Dong, Roth & Su 2022, Def. 2.1 and Prop. 2.2).
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from typing import Any, Optional, Sequence

from .plots import figure_stem
from .report import TRADEOFF_MEANING, accuracy_claim, claim_label, claim_scope, draws_text, format_number

__all__ = ["report_html", "audit_section", "FIGURE_CAPTIONS"]

FIGURE_CAPTIONS = {
    "tradeoff": "Trade-off curve of the worst pair. " + TRADEOFF_MEANING,
    "epsilon": "Privacy profile: the certified lower bound ε_lb(δ) against the ε(δ) the claim allows "
               "and the exact ε(δ). Certified ε above the claimed curve refutes the claim.",
    "accuracy": "Error distribution of the first query against the exact noise density, with the "
                "claimed error bound.",
}

_STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:1.5em auto;max-width:1250px;
padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.5em}h2{font-size:1.25em;border-top:1px solid #ccc;padding-top:.8em;margin-top:2em}
h3{font-size:1.05em}table{border-collapse:collapse;margin:.6em 0;font-size:.86em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
.VIOLATED{color:#b00020;font-weight:600}.NOT_REFUTED{color:#1b5e20}.ERROR{color:#b00020;font-weight:600}
.note{color:#555;font-size:.9em}.warn{background:#fff4e5;padding:.3em .6em}
figure{margin:1em 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{font-size:.85em;color:#444}
pre{background:#f7f7f7;padding:.6em;overflow-x:auto;font-size:.85em}
details summary{cursor:pointer;font-weight:600}
"""

_COUNT_FIGURES = """
<script>
window.addEventListener("load", function () {
  var shown = 0, images = document.querySelectorAll("img.figure");
  for (var i = 0; i < images.length; i++) {
    if (images[i].complete && images[i].naturalWidth > 0) { shown++; }
  }
  document.body.setAttribute("data-figures-shown", String(shown));
  document.body.setAttribute("data-figures-total", String(images.length));
});
</script>
"""


def _e(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _num(value: Any, digits: int = 4) -> str:
    return format_number(value, digits)


def _anchor(name: str) -> str:
    return "audit-" + figure_stem(name)


def _png_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _figure(kind: str, name: str, png: bytes) -> str:
    return (f'<figure><img class="figure" alt="{_e(name)}: {_e(kind)} figure" src="{_png_uri(png)}">'
            f"<figcaption>{_e(FIGURE_CAPTIONS.get(kind, kind))}</figcaption></figure>")


def _comparison(report: dict) -> str:
    """Claimed, exact and certified side by side for ε, δ and μ."""
    claim = report["claim"]
    confidence = float(report["confidence"])
    ref_delta, ref_eps = float(report["reference_delta"]), float(report["reference_epsilon"])
    rows = [
        (f"ε at δ = {ref_delta:g}", _num(ref_eps), _num(report.get("exact_epsilon")),
         _num(report["epsilon_lower_bound"])),
        (f"δ at ε = {ref_eps:.4g}", _num(ref_delta), _num(report.get("exact_delta")),
         _num(report["delta_lower_bound"])),
        ("μ (Gaussian DP)", _num(claim["mu"]) if claim.get("type") == "gdp" else "—",
         _num(report.get("exact_mu")), _num(report["mu_lower_bound"])),
    ]
    body = "".join(f"<tr><td>{_e(q)}</td><td class=num>{c}</td><td class=num>{x}</td>"
                   f"<td class=num>{b}</td></tr>" for q, c, x, b in rows)
    ratios = []
    if report.get("audit_tightness") is not None:
        ratios.append(f"audit tightness ε_lb/ε_exact = {_num(report['audit_tightness'], 3)}")
    if report.get("claim_slack") is not None:
        ratios.append(f"claim slack ε_exact/ε_claimed = {_num(report['claim_slack'], 3)} "
                      "(above 1: the claim is false)")
    return ("<table class=comparison><tr><th>quantity</th><th>claimed</th><th>exact</th>"
            f"<th>certified lower bound (confidence {confidence:g}, jointly)</th></tr>{body}</table>"
            + (f"<p class=note>{_e('; '.join(ratios))}</p>" if ratios else ""))


def _table(headings: Sequence[str], rows: Sequence[Sequence[Any]], numeric: Sequence[int] = ()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headings)
    body = "".join("<tr>" + "".join(
        f"<td class=num>{_e(cell)}</td>" if index in numeric else f"<td>{_e(cell)}</td>"
        for index, cell in enumerate(row)) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _evidence(report: dict) -> str:
    evidence = report.get("evidence") or []
    rows = [(e.get("pair"), e.get("slot"), e.get("family"), e.get("event"), e.get("more_likely_under"),
             f"{int(e['count_more_likely']):,}", f"{int(e['count_other']):,}", f"{int(e['n']):,}",
             _num(e.get("level"), 3), _num(e.get("alpha_hi")), _num(e.get("beta_hi")), _num(e.get("bound")))
            for e in evidence]
    table = _table(("pair", "slot", "family", "event", "more likely under", "count (more likely side)",
                    "count (other side)", "draws", "level", "α_hi", "β_hi", "joint bound"), rows,
                   numeric=range(5, 12))
    return (f"<details><summary>Evidence: {len(evidence)} certified events</summary>"
            "<p class=note>Each event was chosen on selection draws and counted on fresh certification "
            "draws. Curve events: Clopper–Pearson bounds at the listed level (Bonferroni share of "
            "1 − confidence) give (α_hi, β_hi). Headline events: one exact joint test of both counts "
            "at the listed level gives a lower bound on the slot's quantity (the joint bound). "
            f"{_e(TRADEOFF_MEANING)}</p>{table}</details>")


def _accuracy(report: dict) -> str:
    accuracy = report.get("accuracy")
    if not accuracy:
        return ""
    rows = []
    for column in accuracy.get("columns", []):
        ci = column.get("exceedance") or {}
        exceedances = column.get("exceedances")
        rows.append((column["column"], "query" if column.get("is_query") else "other",
                     _num(column.get("claimed_bound")), "—" if exceedances is None else f"{int(exceedances):,}",
                     f"[{_num(ci.get('low'))}, {_num(ci.get('high'))}]" if ci else "—",
                     _num(column.get("claimed_variance")), _num(column.get("sample_variance"))))
    violations = "".join(f"<li>{_e(v)}</li>" for v in accuracy.get("violations", []))
    return (f"<h3>Accuracy: <span class={_e(accuracy['verdict'])}>{_e(accuracy['verdict'])}</span></h3>"
            f"<p>{_e(accuracy_claim(accuracy))}; {int(accuracy['samples']):,} draws, confidence "
            f"{float(accuracy['confidence']):g}, α = {float(accuracy['alpha']):g}.</p>"
            + (f"<ul>{violations}</ul>" if violations else "")
            + _table(("column", "kind", "claimed bound a", "exceedances", "P(|error| > a) interval",
                      "claimed variance", "sample variance"), rows, numeric=(2, 3, 5, 6)))


def audit_section(report: dict, *, name: Optional[str] = None, figures: Optional[dict] = None,
                  entry: Optional[dict] = None) -> str:
    """The HTML of one audit (an ``AuditReport.to_dict()``), with ``figures`` = {kind: PNG bytes}."""
    name = name or report["mechanism"]
    entry = entry or {}
    verdict = report["verdict"]
    parts = [f'<section id="{_e(_anchor(name))}">',
             f"<h2>{_e(name)}: <span class={_e(verdict)}>{_e(verdict)}</span></h2>",
             f"<p><b>Mechanism</b> {_e(report['mechanism'])}<br><b>Claim</b> "
             f"{_e(claim_label(report['claim']))} {_e(claim_scope(report['claim'], report.get('scenario')))}"]
    if entry.get("path"):
        parts.append(f"<br><b>File</b> <code>{_e(entry['path'])}</code>")
    if entry.get("expected"):
        parts.append(f"<br><b>Expected</b> {_e(entry['expected'])}")
    parts.append("</p>")
    if entry.get("note"):
        parts.append(f"<p class=note>{_e(entry['note'])}</p>")
    parts += [f"<p class=warn>warning: {_e(w)}</p>" for w in entry.get("warnings") or []]
    parts.append(f"<p>Verdict {_e(verdict)}: false-alarm probability ≤ {1 - float(report['confidence']):.3g}. "
                 + ("A certified bound contradicts the claim." if verdict == "VIOLATED" else
                    "No certified bound contradicts the claim (not a proof that it holds).") + "</p>")
    parts.append(_comparison(report))
    violations = report.get("violations") or []
    if violations:
        parts.append("<h3>Violations</h3><ul>" + "".join(
            f"<li>{_e(v['message'])}</li>" for v in violations[:10]) + "</ul>"
            + (f"<p class=note>and {len(violations) - 10} more (see the evidence)</p>" if len(violations) > 10 else ""))
    pairs = [(p["label"], ", ".join(p.get("also_covers") or []) or "—", _num(p["epsilon_lower_bound"]),
              _num(p["delta_lower_bound"]), _num(p["mu_lower_bound"])) for p in report.get("pairs", [])]
    parts.append(f"<h3>Neighbour pairs (worst: {_e(report['worst_pair'])})</h3>"
                 + _table(("pair", "also covers (its reverse)", "ε_lb", "δ_lb", "μ_lb"), pairs, numeric=(2, 3, 4)))
    scenario = report.get("scenario") or {}
    if scenario.get("description"):
        parts.append(f"<p class=note>Scenario: {_e(scenario['description'])}</p>")
    parts.append(f"<p><b>Samples</b> {int(report['samples']):,} per pair and side (all phases); <b>draws</b> "
                 f"{_e(draws_text(report.get('draws') or {}))}; <b>seed</b> {_e(report['seed'])}; "
                 f"<b>statistic</b> {_e((report.get('statistic') or {}).get('kind', 'unknown'))}.</p>")
    parts.append(_accuracy(report))
    for kind, png in (figures or {}).items():
        parts.append(_figure(kind, name, png))
    if not figures:
        parts.append("<p class=note>No figures (run without --no-plots, with matplotlib installed).</p>")
    parts.append(_evidence(report))
    parts.append("</section>")
    return "\n".join(parts)


def _document(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
            '<meta name=viewport content="width=device-width, initial-scale=1">'
            f"<title>{_e(title)}</title><style>{_STYLE}</style></head>\n<body>\n{body}\n"
            f"{_COUNT_FIGURES}</body></html>\n")


def _summary_table(entries: Sequence[dict], columns: Sequence[tuple[str, str]],
                   rows: Sequence[dict]) -> str:
    numeric = {"exact", "eps_lb", "delta_lb", "mu_lb", "tightness", "slack", "time"}
    head = "".join(f"<th>{_e(h)}</th>" for _, h in columns)
    body = []
    for entry, row in zip(entries, rows):
        cells = []
        for key, _ in columns:
            text = _e(row[key])
            if key == "name":
                text = f'<a href="#{_e(_anchor(entry["name"]))}">{text}</a>'
            klass = "num" if key in numeric else (row[key] if key in ("verdict", "accuracy") else "")
            cells.append(f"<td class={_e(klass)}>{text}</td>" if klass else f"<td>{text}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table class=summary><tr>{head}</tr>{''.join(body)}</table>"


def report_html(entries: Sequence[dict], settings: dict, out: "str | Path", *,
                columns: Sequence[tuple[str, str]], rows: Sequence[dict]) -> str:
    """The whole ``report.html`` for the entries of ``report.json`` (figures read from ``out``).

    ``columns`` and ``rows`` are the run's table (:data:`audit.output.COLUMNS`,
    :func:`audit.output.table_rows`), so the page shows the same cells as the terminal.
    """
    from . import __version__

    out = Path(out)
    parts = ["<h1>dpaudit report</h1>",
             f"<p class=note>dpaudit {_e(__version__)}; {len(entries)} audit(s). Every certified bound "
             "of one audit holds simultaneously with probability ≥ its confidence; VIOLATED means a "
             "certified bound contradicts the claim, NOT_REFUTED that none does (not a proof). "
             "tightness = ε_lb/ε_exact, slack = ε_exact/ε_claimed (above 1: the claim is false).</p>",
             _summary_table(entries, columns, rows),
             f"<p class=note>{_e(TRADEOFF_MEANING)}</p>"]
    for entry in entries:
        if entry.get("report") is None:
            parts.append(f'<section id="{_e(_anchor(entry["name"]))}"><h2>{_e(entry["name"])}: '
                         f'<span class=ERROR>ERROR</span></h2><p><code>{_e(entry.get("path"))}</code></p>'
                         f"<pre>{_e(entry.get('error'))}</pre></section>")
            continue
        figures = {}
        for kind, relative in (entry.get("figures") or {}).items():
            try:
                figures[kind] = (out / relative).read_bytes()
            except OSError:
                continue  # a figure deleted since: the section says what it has
        parts.append(audit_section(entry["report"], name=entry["name"], figures=figures, entry=entry))
    parts.append(f"<h2>Settings</h2><pre>{_e(json.dumps(settings, indent=2, sort_keys=True, default=str))}</pre>")
    return _document("dpaudit report", "\n".join(parts))
