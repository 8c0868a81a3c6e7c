"""The run's table: one row per audit, for the terminal (plain text) and for summary.md (Markdown).

The columns (:data:`COLUMNS`): name, mechanism, claim, exact ε at the claim's δ (where the
mechanism knows it), the certified lower bounds ε_lb (at the claim's δ), δ_lb (at the claim's ε)
and μ_lb, the audit tightness ε_lb/ε_exact, the claim slack ε_exact/ε_claimed, the accuracy
verdict, the privacy verdict, what the scenario file expected, and the wall time.  The cells come
from :func:`table_rows`, which report.html shows too, so every view has the same numbers.
"""

from __future__ import annotations

from typing import Any, Sequence

from .text import claim_label, format_number

__all__ = ["COLUMNS", "NUMERIC_COLUMNS", "table_rows", "format_table", "markdown_table", "expected_text",
           "footnotes"]

#: Table columns: (key, heading).
COLUMNS = (("name", "audit"), ("mechanism", "mechanism"), ("claim", "claim"), ("exact", "exact ε"),
           ("eps_lb", "ε_lb"), ("delta_lb", "δ_lb"), ("mu_lb", "μ_lb"), ("tightness", "tightness"),
           ("slack", "slack"), ("accuracy", "accuracy"), ("verdict", "verdict"),
           ("expected", "expected"), ("time", "time"))
#: The columns that hold numbers (right-aligned).
NUMERIC_COLUMNS = frozenset({"exact", "eps_lb", "delta_lb", "mu_lb", "tightness", "slack", "time"})
_MECHANISM_WIDTH = 34


def _fmt(value: Any, digits: int = 4) -> str:
    return format_number(value, digits, missing="—")


def expected_text(entry: dict) -> str:
    """What the scenario file expected, flagged when the verdict disagrees.

    ``violated (limit)``: the claim is false but was not refuted (more samples would); ``holds (!)``:
    the claim was expected to hold but was refuted, a false alarm (probability ≤ 1 − confidence)
    or a bug.
    """
    expected = entry.get("expected")
    if expected is None:
        return "—"
    report = entry.get("report")
    if report is None:
        return expected
    verdict = report["verdict"]
    if expected == "violated" and verdict != "VIOLATED":
        return "violated (limit)"
    if expected == "holds" and verdict == "VIOLATED":
        return "holds (!)"
    return expected


def table_rows(entries: Sequence[dict]) -> list[dict[str, str]]:
    """One row of display strings per report.json entry, keyed like :data:`COLUMNS`."""
    rows = []
    for entry in entries:
        report = entry.get("report")
        if report is None:
            rows.append({key: "—" for key, _ in COLUMNS} | {
                "name": entry["name"], "verdict": "ERROR", "expected": expected_text(entry)})
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
            "expected": expected_text(entry),
            "time": f"{float(runtime['wall_time_s']):.1f}s" if "wall_time_s" in runtime else "—",
        })
    return rows


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def format_table(entries: Sequence[dict]) -> str:
    """The plain-text table for the terminal (long mechanism names shortened), with its notes."""
    rows = table_rows(entries)
    for row in rows:
        row["mechanism"] = _shorten(row["mechanism"], _MECHANISM_WIDTH)
    widths = {key: max([len(head)] + [len(row[key]) for row in rows]) for key, head in COLUMNS}

    def line(cells: dict) -> str:
        return "  ".join(cells[key].rjust(widths[key]) if key in NUMERIC_COLUMNS else cells[key].ljust(widths[key])
                         for key, _ in COLUMNS).rstrip()

    header = line({key: head for key, head in COLUMNS})
    body = [line(row) for row in rows]
    return "\n".join([header, "-" * len(header)] + body + footnotes(entries))


def markdown_table(entries: Sequence[dict]) -> str:
    """The same table in Markdown (full mechanism names), with its notes."""
    rows = table_rows(entries)

    def escape(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(head for _, head in COLUMNS) + " |",
             "|" + "|".join("---" for _ in COLUMNS) + "|"]
    lines += ["| " + " | ".join(escape(row[key]) for key, _ in COLUMNS) + " |" for row in rows]
    return "\n".join(lines + footnotes(entries))


def footnotes(entries: Sequence[dict]) -> list[str]:
    """The notes under a table: what the accuracy column means, errors, limits and false alarms."""
    notes = []
    if any((entry.get("report") or {}).get("accuracy") for entry in entries):
        notes.append("accuracy: the mechanism's declared accuracy claims (error bound P(|error| > a) ≤ α, "
                     "noise variance, worst-case error) checked on the first pair's base dataset; "
                     "summary.md lists each audit's")
    for entry in entries:
        text = expected_text(entry)
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
