"""The gray-box section of a report, from its JSON form: terminal lines, Markdown and HTML.

A call site is written ``file:line`` and, in Markdown and HTML, linked to the file
(``file://…#Lline``, or a relative path when the file lies under the report's folder).
"""

from __future__ import annotations

import html
import math
import os
from typing import Any

__all__ = ["graybox_lines", "graybox_markdown", "graybox_html", "site_link"]


#: What a finding without a certification says: only the first findings are audited.
_UNCERTIFIED = "not audited (the certified audit aims at the first finding)"


def _site(site: dict) -> str:
    return f"{site.get('file')}:{site.get('line')}"


def site_link(site: dict) -> str:
    """A link target for a call site: ``file:///abs/path#L<line>`` (``<output>`` has none)."""
    path = str(site.get("file", ""))
    if not path or path.startswith("<"):
        return ""
    return f"file://{os.path.abspath(path)}#L{site.get('line')}"


def _number(value: Any) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.6g}"


def graybox_lines(data: dict) -> list[str]:
    """Terminal lines: one per finding (kind, site, measured vs allowed, certification)."""
    if not data:
        return []
    checks = data.get("checks", [])
    lines = [f"gray-box: {len(checks)} pair check(s), {len(data.get('findings', []))} finding(s)"]
    for finding in data.get("findings", []):
        lines.append(f"  [{finding['kind']}] {_site(finding['site'])} ({finding['site'].get('function')}) — "
                     f"{finding['quantity']}: {_number(finding['measured'])} against {_number(finding['allowed'])} "
                     f"[{finding['pair']}]")
        lines.append(f"      {finding['message']}")
        if finding.get("certification"):
            lines.append(f"      {finding['certification']['statement']}")
    if not data.get("findings"):
        lines.append("  no finding (silence is no proof of privacy: see docs/graybox.md)")
    for note in data.get("notes", [])[:5]:
        lines.append(f"  not covered: {note}")
    return lines


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def graybox_markdown(data: dict) -> str:
    """A ``## Gray-box`` section for summary.md."""
    if not data:
        return ""
    rows = ["## Gray-box", "", f"{len(data.get('checks', []))} pair check(s) by record/replay; "
            f"{len(data.get('findings', []))} finding(s).", ""]
    if data.get("findings"):
        rows += ["| kind | call site | measured | allowed | pair | certified |", "|---|---|---|---|---|---|"]
        for f in data["findings"]:
            link = site_link(f["site"])
            site = f"[{_site(f['site'])}]({link})" if link else _site(f["site"])
            cert = f["certification"]["statement"] if f.get("certification") else _UNCERTIFIED
            rows.append(f"| {f['kind']} | {site} | {_number(f['measured'])} ({_cell(f['quantity'])}) | "
                        f"{_number(f['allowed'])} | {_cell(f['pair'])} | {_cell(cert)} |")
    else:
        rows.append("No finding. Silence is no proof of privacy: the replay sees only the pairs it was given.")
    notes = data.get("notes", [])
    if notes:
        rows += ["", "Not covered:", ""] + [f"- {note}" for note in notes]
    return "\n".join(rows) + "\n"


def graybox_html(data: dict) -> str:
    """The gray-box findings as an HTML fragment (call sites linked)."""
    if not data:
        return ""
    parts = ["<section class='graybox'><h3>Gray-box</h3>"]
    if not data.get("findings"):
        parts.append("<p>No finding (silence is no proof of privacy).</p>")
    else:
        parts.append("<table><tr><th>kind</th><th>call site</th><th>measured</th><th>allowed</th>"
                     "<th>pair</th><th>certified</th></tr>")
        for f in data["findings"]:
            link = site_link(f["site"])
            site = html.escape(_site(f["site"]))
            cell = f"<a href='{html.escape(link)}'>{site}</a>" if link else site
            cert = html.escape(f["certification"]["statement"] if f.get("certification") else _UNCERTIFIED)
            parts.append(f"<tr><td>{html.escape(f['kind'])}</td><td>{cell}</td><td>{_number(f['measured'])} "
                         f"({html.escape(f['quantity'])})</td><td>{_number(f['allowed'])}</td>"
                         f"<td>{html.escape(f['pair'])}</td><td>{cert}</td></tr>")
        parts.append("</table>")
    for note in data.get("notes", []):
        parts.append(f"<p class='note'>not covered: {html.escape(note)}</p>")
    parts.append("</section>")
    return "".join(parts)
