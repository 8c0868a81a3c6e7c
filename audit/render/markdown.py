"""``summary.md``: the run's table, then each audit's summary lines and figures, in Markdown."""

from __future__ import annotations

import json
from typing import Sequence

from .graybox import graybox_markdown
from .tables import markdown_table
from .text import TRADEOFF_MEANING, confidence_text, error_control_text, summary_lines

__all__ = ["summary_markdown", "audit_summary"]


def audit_summary(report: dict) -> str:
    """The summary lines of one audit (:func:`audit.render.text.summary_lines`), followed by the
    first three accuracy violations, if any."""
    lines = summary_lines(report)
    accuracy = report.get("accuracy")
    if accuracy:
        lines += [f"    {violation}" for violation in accuracy.get("violations", [])[:3]]
    return "\n".join(lines)


def summary_markdown(entries: Sequence[dict], settings: dict) -> str:
    """The Markdown summary of report.json's ``entries`` and ``settings``."""
    lines = ["# dpaudit report", "",
             "Every certified bound of one audit holds simultaneously with probability ≥ its "
             "confidence; VIOLATED means a certified bound contradicts the claim.  "
             "tightness = ε_lb/ε_exact (how much of the true ε the audit certified), "
             "slack = ε_exact/ε_claimed (> 1: the claim is false).", "", TRADEOFF_MEANING, "",
             error_control_text(settings.get("error_control"),
                                accuracy=any((e.get("report") or {}).get("accuracy") for e in entries)), "",
             markdown_table(entries), ""]
    for entry in entries:
        lines += [f"## {entry['name']}", "", f"File: `{entry['path']}`"]
        if entry.get("note"):
            lines += ["", entry["note"]]
        for warning in entry.get("warnings") or []:
            lines += ["", f"> warning: {warning}"]
        if entry.get("error"):
            lines += ["", f"**ERROR**: {entry['error']}", ""]
            continue
        confidence = confidence_text(entry)
        if confidence:
            lines += ["", confidence[0].upper() + confidence[1:] + "."]
        lines += ["", "```", audit_summary(entry["report"]), "```", ""]
        if entry["report"].get("graybox"):  # the findings again, with each call site linked
            lines += [graybox_markdown(entry["report"]["graybox"]), ""]
        for kind, path in (entry.get("figures") or {}).items():
            lines.append(f"![{entry['name']} {kind}]({path})")
        lines.append("")
    lines += ["---", "", f"Settings: `{json.dumps(settings, sort_keys=True)}`", ""]
    return "\n".join(lines)
