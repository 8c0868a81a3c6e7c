"""The run's table: one row per audit, for the terminal (plain text) and for summary.md (Markdown).

The columns (:data:`COLUMNS`): name, mechanism, claim, exact ε at the claim's δ (where the
mechanism knows it), the certified lower bounds ε_lb (at the claim's δ), δ_lb (at the claim's ε)
and μ_lb, the audit tightness ε_lb/ε_exact, the claim slack ε_exact/ε_claimed, the accuracy
verdict, the privacy verdict, what the scenario file expected, and the wall time.  The cells come
from :func:`table_rows`, which report.html shows too, so every view has the same numbers.
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from typing import Any, Optional, Sequence

from .numbers import format_number
from .text import claim_label

__all__ = ["COLUMNS", "NUMERIC_COLUMNS", "DROP_ORDER", "table_rows", "format_table", "markdown_table",
           "expected_text", "footnotes", "limit_note", "time_text", "terminal_width"]

#: Table columns: (key, heading).
COLUMNS = (("name", "audit"), ("mechanism", "mechanism"), ("claim", "claim"), ("exact", "exact ε"),
           ("eps_lb", "ε_lb"), ("delta_lb", "δ_lb"), ("mu_lb", "μ_lb"), ("tightness", "tightness"),
           ("slack", "slack"), ("accuracy", "accuracy"), ("verdict", "verdict"),
           ("expected", "expected"), ("time", "time"))
#: The columns that hold numbers (right-aligned).
NUMERIC_COLUMNS = frozenset({"exact", "eps_lb", "delta_lb", "mu_lb", "tightness", "slack", "time"})
_MECHANISM_WIDTH = 34
_CLAIM_WIDTH = 20
#: The terminal width assumed when it cannot be read.
DEFAULT_WIDTH = 120
#: The columns the terminal table leaves out, in this order, until it fits the terminal.
DROP_ORDER = ("mechanism", "tightness", "slack", "time", "accuracy", "mu_lb", "delta_lb", "exact")


def _fmt(value: Any, digits: int = 4) -> str:
    return format_number(value, digits, missing="—")


def _pair_truth_max(entry: dict) -> Optional[float]:
    """The largest exact ε on the audited pairs (``entry["pair_truth"]``, recorded by ``dpaudit run``
    where the mechanism can tell it: :func:`audit.witness.pair_truth`), or None."""
    truth = entry.get("pair_truth") or {}
    values = [float(v) for v in (truth.get("pairs") or {}).values() if v is not None]
    return max(values) if values else None


def _limit_kind(entry: dict) -> str:
    """Why a claim expected to be violated was not refuted: ``"limit"`` when an audited pair is one
    on which it is false (more samples would refute it), ``"pairs"`` when it holds on every audited
    pair (no number of samples can refute it on these pairs), ``"not refuted"`` when the report
    cannot tell which."""
    report = entry["report"]
    largest = _pair_truth_max(entry)
    if largest is None:
        return "not refuted"
    claimed = float(report["reference_epsilon"])
    return "limit" if largest > claimed * (1.0 + 1e-9) else "pairs"


def expected_text(entry: dict) -> str:
    """What the scenario file expected, flagged when the verdict disagrees.

    ``violated (limit)``: the claim is false on an audited pair but was not refuted (more samples
    would); ``violated (pairs)``: it is false only on pairs the scenario does not contain (no number
    of samples refutes it here); ``violated (not refuted)``: false, not refuted, and whether an
    audited pair is one on which it is false is not known; ``holds (!)``: the claim was expected to
    hold but was refuted, a false alarm (probability ≤ 1 − confidence) or a bug.
    """
    expected = entry.get("expected")
    if expected is None:
        return "—"
    report = entry.get("report")
    if report is None:
        return expected
    verdict = report["verdict"]
    if expected == "violated" and verdict != "VIOLATED":
        return f"violated ({_limit_kind(entry)})"
    if expected == "holds" and verdict == "VIOLATED":
        return "holds (!)"
    return expected


def time_text(entry: dict) -> str:
    """The audit's wall time over every run of it: its report's ``runtime`` wall time plus, for an
    audit resumed after an interruption, its earlier runs' (``earlier_runs_s``), then marked ``*``."""
    runtime = (entry.get("report") or {}).get("runtime") or {}
    if "wall_time_s" not in runtime:
        return "—"
    earlier = float(runtime.get("earlier_runs_s", 0.0))
    return f"{float(runtime['wall_time_s']) + earlier:.1f}s" + ("*" if earlier else "")


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
            "time": time_text(entry),
        })
    return rows


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def terminal_width() -> Optional[int]:
    """The width to fit the table to: ``COLUMNS`` when set, else the terminal's when standard output
    is one (else 120), and None (no limit) when the output goes to a file or a pipe."""
    if os.environ.get("COLUMNS", "").isdigit() or sys.stdout.isatty():
        return shutil.get_terminal_size(fallback=(DEFAULT_WIDTH, 24)).columns
    return None


def format_table(entries: Sequence[dict], width: Optional[int] = None) -> str:
    """The plain-text table for the terminal, fitted to ``width`` columns (default: the terminal's):
    long mechanism names and claims are shortened, then the columns of :data:`DROP_ORDER` are left out
    one by one until the rows fit (the notes say which; summary.md has every column).  Audit names,
    ε_lb, the verdicts and the expectation are always shown in full."""
    width = terminal_width() if width is None else int(width)
    width = 1 << 20 if width is None else width
    rows = table_rows(entries)
    for row in rows:
        row["mechanism"] = _shorten(row["mechanism"], _MECHANISM_WIDTH)
        row["claim"] = _shorten(row["claim"], _CLAIM_WIDTH)
    columns = list(COLUMNS)
    dropped: list[str] = []

    def widths(cols):
        return {key: max([len(head)] + [len(row[key]) for row in rows]) for key, head in cols}

    def total(cols):
        return sum(widths(cols).values()) + 2 * (len(cols) - 1)

    for key in DROP_ORDER:
        if total(columns) <= width:
            break
        columns = [(k, h) for k, h in columns if k != key]
        dropped.append(dict(COLUMNS)[key])
    sizes = widths(columns)

    def line(cells: dict) -> str:
        return "  ".join(cells[key].rjust(sizes[key]) if key in NUMERIC_COLUMNS else cells[key].ljust(sizes[key])
                         for key, _ in columns).rstrip()

    header = line({key: head for key, head in columns})
    body = [line(row) for row in rows]
    notes = footnotes(entries, terminal=True)
    if dropped:
        notes = notes or ["", "Notes:"]
        notes.append(f"  columns left out to fit {width} columns: {', '.join(dropped)} (summary.md and report.html "
                     "show every column)")
    return "\n".join([header, "-" * len(header)] + body + (_wrap(notes, width) if width < (1 << 20) else notes))


def _wrap(lines: list[str], width: int) -> list[str]:
    """Note lines wrapped to ``width`` columns, continuation lines indented under their note."""
    wrapped = []
    for text in lines:
        if len(text) <= width or not text.strip():
            wrapped.append(text)
            continue
        indent = " " * (len(text) - len(text.lstrip()))
        wrapped += textwrap.wrap(text, width=max(width, 40), initial_indent="", subsequent_indent=indent + "  ",
                                 break_on_hyphens=False, break_long_words=False)
    return wrapped


def markdown_table(entries: Sequence[dict]) -> str:
    """The same table in Markdown (full mechanism names), with its notes."""
    rows = table_rows(entries)

    def escape(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(head for _, head in COLUMNS) + " |",
             "|" + "|".join("---" for _ in COLUMNS) + "|"]
    lines += ["| " + " | ".join(escape(row[key]) for key, _ in COLUMNS) + " |" for row in rows]
    return "\n".join(lines + footnotes(entries))


def limit_note(entry: dict) -> str:
    """The note under a table for a false claim that was not refuted: whether more samples could
    refute it on the audited pairs (:func:`_limit_kind`), in words."""
    report = entry["report"]
    samples = f"{int(report['samples']):,}"
    kind = _limit_kind(entry)
    truth = entry.get("pair_truth") or {}
    at = f" at δ = {format_number(truth.get('delta'))}" if truth.get("delta") else ""
    if kind == "limit":
        return (f"{entry['name']}: the claim is false on an audited pair (exact ε{at} "
                f"{format_number(_pair_truth_max(entry))} there, claimed {format_number(report['reference_epsilon'])}) "
                f"but was not refuted at {samples} samples: a limit of this sample size, which more samples "
                "would overcome (not an error)")
    if kind == "pairs":
        exact = report.get("exact_epsilon")
        overall = f" (exact ε {format_number(exact)} over all neighbours)" if exact is not None else ""
        return (f"{entry['name']}: the claim is false{overall} but holds on every pair this scenario "
                f"contains (exact ε{at} at most {format_number(_pair_truth_max(entry))} on them, claimed "
                f"{format_number(report['reference_epsilon'])}), so no number of samples refutes it here: "
                "search for a pair on which it is false (docs/search.md)")
    return _unknown_note([entry])


def _unknown_note(entries: Sequence[dict]) -> str:
    """One note for the false claims whose report cannot tell whether more samples would help."""
    named = []
    for entry in entries:
        report = entry["report"]
        exact = report.get("exact_epsilon")
        named.append(f"{entry['name']} (exact ε {format_number(exact)} over all neighbour pairs, not refuted at "
                     f"{int(report['samples']):,} samples)" if exact is not None else entry["name"])
    subject = "the claim is" if len(entries) == 1 else "each claim is"
    return (f"{'; '.join(named)}: {subject} false and was not refuted, and the report cannot tell whether an "
            "audited pair is one on which it is false: if one is, more samples would refute it; if none is, no "
            "number of samples can, and a pair search (docs/search.md) may find one")


def footnotes(entries: Sequence[dict], terminal: bool = False) -> list[str]:
    """The notes under a table: what the accuracy column means, errors, limits, false alarms and
    resumed times."""
    notes = []
    if any((entry.get("report") or {}).get("accuracy") for entry in entries):
        where = "summary.md and report.html state" if terminal else "its section below states"
        notes.append("accuracy: the mechanism's declared accuracy claims (error bound P(|error| > a) ≤ α, "
                     "noise variance, worst-case error) checked on the first pair's base dataset; for each "
                     f"audit, {where} the claims it checked")
    unknown = [entry for entry in entries if expected_text(entry) == "violated (not refuted)"]
    for entry in entries:
        text = expected_text(entry)
        if entry.get("error"):
            notes.append(f"{entry['name']}: ERROR {entry['error']}")
        elif entry is (unknown[0] if unknown else None):
            notes.append(_unknown_note(unknown))
        elif text in ("violated (limit)", "violated (pairs)"):
            notes.append(limit_note(entry))
        elif text.endswith("(!)"):
            notes.append(f"{entry['name']}: the file expects the claim to hold but it was refuted: a false "
                         f"alarm (probability ≤ {1 - entry['report']['confidence']:.3g}) or a bug")
    resumed = [entry for entry in entries if ((entry.get("report") or {}).get("runtime") or {}).get("earlier_runs_s")]
    if resumed:
        notes.append("time*: the audit was interrupted and resumed; its time adds up every run of it ("
                     + ", ".join(f"{entry['name']}: {float(entry['report']['runtime']['earlier_runs_s']):.1f}s "
                                 "before resuming" for entry in resumed) + ")")
    if not notes:
        return []
    return ["", "Notes:"] + [f"  {note}" for note in notes]
