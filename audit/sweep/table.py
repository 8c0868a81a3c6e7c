"""The sweep report as Markdown: a header, one table row per (entry, grid point), coverage.

Rendered from the sweep document's row records (:mod:`audit.sweep.rows`), which hold what each
audit's report dict says; nothing is recomputed here.
"""

from __future__ import annotations

from typing import Any, Optional

from ..render.text import format_number
from .graybox import graybox_markdown_section

__all__ = ["sweep_markdown", "row_cells", "COLUMNS", "ABSENT"]

COLUMNS = ("entry", "grid point", "claim", "verdict", "ε_lb", "δ_lb", "μ_lb", "statistic", "pair", "known issue",
           "repro")


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


#: What the table shows for a row the installed release lacks (neither a verdict nor an error).
ABSENT = "not in this release"


def _verdict(record: dict) -> str:
    if record.get("status") == "absent":
        return ABSENT
    if record.get("status") == "error":
        return "ERROR"
    verdict = record.get("verdict", "—")
    if verdict == "NOT_REFUTED" and not record.get("refutable", True):
        return "NOT_REFUTED (limit)"
    return verdict


def row_cells(record: dict) -> list[str]:
    """One table row's cells for a row record."""
    witness = record.get("witness") or {}
    script = record.get("repro") or {}
    repro = f"[script]({script['path']})" if script.get("path") else ("—" if not script else "no script")
    if script.get("path") and _uncertain(script):
        repro += " (uncertain event)"
    if record.get("status") in ("error", "absent"):
        bounds = ["—"] * 3
        statistic, pair = "—", _cell(record.get("error") or record.get("reason") or "")[:160]
    else:
        bounds = [format_number(record.get(k), 4, "—") for k in ("epsilon_lb", "delta_lb", "mu_lb")]
        statistic, pair = _cell(witness.get("statistic") or "—"), _cell(witness.get("pair") or "—")
    return [_cell(record["entry"]), _cell(record["point"]), _cell(f"{record['claim']} [{record['relation']}]"),
            _verdict(record), *bounds, statistic, pair, _cell(record.get("known") or ""), repro]


def _table(records: list[dict]) -> list[str]:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row_cells(r)) + " |" for r in records]
    return lines


def _count(records: list[dict], verdict: str) -> int:
    return sum(1 for r in records if _verdict(r) == verdict)


def _uncertain(script: dict) -> bool:
    """Whether a row's script carries an event that was not certain on the choosing draws (a record
    written before the choice was recorded has no ``event_choice`` and is not labelled)."""
    return str(script.get("event_choice") or "").startswith("uncertain")


def _uncertain_section(records: list[dict]) -> list[str]:
    """The rows whose reproduction script carries an uncertain event, with what it carries instead
    (:attr:`audit.sweep.repro.Event.choice`)."""
    rows = [r for r in records if (r.get("repro") or {}).get("path") and _uncertain(r["repro"])]
    if not rows:
        return []
    return _section("Scripts carrying an uncertain event",
                    f"{len(rows)} reproduction scripts carry an event whose excess over the claim was not certain on "
                    "the sweep's choosing draws; the verdict rests on the audit's certified evidence, not on the script.",
                    ("entry", "grid point", "script", "how its event was chosen"),
                    [(_cell(r["entry"]), _cell(r["point"]), f"[script]({r['repro']['path']})",
                      _cell(r["repro"]["event_choice"])) for r in rows])


def _reaudited_section(records: list[dict]) -> list[str]:
    """The rows a resumed sweep audited again from scratch because another audit had made their
    saved files (:mod:`audit.sweep.resume`), with why and where those files were kept."""
    again = [r for r in records if r.get("reaudited")]
    if not again:
        return []
    return _section("Re-audited on resume",
                    f"{len(again)} rows were audited again from scratch, at their planned seed and Bonferroni share, "
                    "because another audit had made their saved files; those files were kept, not deleted.",
                    ("entry", "grid point", "why", "old files"),
                    [(_cell(r["entry"]), _cell(r["point"]), f"re-audited: {_cell(r['reaudited'])}",
                      _cell(", ".join(r.get("superseded") or ()))) for r in again])


def _section(title: str, intro: str, header: tuple, rows: list[tuple]) -> list[str]:
    """A section of ``sweep.md``: its heading, one paragraph and a table of ``rows``."""
    return (["", f"## {title}", "", intro, "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(row) + " |" for row in rows])


def sweep_markdown(document: dict, *, title: Optional[str] = None) -> str:
    """The whole sweep report (header, verdict counts, table, coverage) as Markdown."""
    records = document["rows"]
    title = title or f"dpaudit sweep: {document['library']} {document['version']}"
    coverage = document["coverage"]
    violated = [r for r in records if r.get("verdict") == "VIOLATED"]
    errors, absent = _count(records, "ERROR"), _count(records, ABSENT)
    unfinished = ([f"- **unfinished**: interrupted after {document.get('rows_done', len(records))} of "
                   f"{document['rows_planned']} rows; rerun the same command with `--resume` to continue", ""]
                  if document.get("finished") is False else [])
    lines = [
        f"# {title}", "",
        f"- library: {document['library']} {document['version']}; swept on {document['date']} with dpaudit "
        f"{document['dpaudit']}, budget `{document['budget']}`",
        f"- {document['rows_planned']} rows; error control: Bonferroni over every row (each at confidence "
        f"{format_number(document['row_confidence'], 6)}), so the probability that any claim that holds is "
        f"reported VIOLATED is at most {format_number(1 - document['confidence'], 3)}",
        f"- verdicts: {len(violated)} VIOLATED, {_count(records, 'NOT_REFUTED')} NOT_REFUTED, "
        f"{_count(records, 'NOT_REFUTED (limit)')} NOT_REFUTED (limit), {errors} ERROR"
        + (f", {absent} not in this release" if absent else ""),
        f"- {errors} of {len(records) - absent} rows audited nothing (ERROR)" + (": the sweep fails" if errors else ""),
        f"- coverage: {len(coverage['covered'])} public names audited, {len(coverage['excluded'])} left out with a "
        f"reason, {len(coverage['unaccounted'])} unaccounted ({format_number(100 * coverage['fraction'], 3)}% of "
        "the public DP entries audited)", "", *unfinished,
        "`NOT_REFUTED (limit)`: even a release that told the two datasets apart every time could not refute "
        "the claim at this budget. `ERROR`: the row could not run and audited nothing (the reason is in the pair "
        f"column). `{ABSENT}`: the installed release lacks the entry or the parameter (not planned, no error).", "",
    ]
    lines += _table(records)
    lines += _uncertain_section(records)
    lines += _reaudited_section(records)
    lines += graybox_markdown_section(records)
    lines += ["", "## Coverage of the public API", ""]
    lines += ["| public name | audited by | or left out because |", "|---|---|---|"]
    for name in coverage["public"]:
        covered = ", ".join(coverage["covered"].get(name, ()))
        lines.append(f"| `{name}` | {_cell(covered) or '—'} | {_cell(coverage['excluded'].get(name, '')) or ('—' if covered else '**unaccounted**')} |")
    extra = sorted(set(coverage["covered"]) - set(coverage["public"]))
    if extra:
        lines += ["", "Also audited (not enumerated as public names): " + ", ".join(f"`{n}`" for n in extra)]
    return "\n".join(lines) + "\n"
