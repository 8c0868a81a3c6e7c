"""A range of releases swept one by one, and the table of verdicts per entry across them.

Each release is swept by the unchanged built-in catalogue in its own environment
(:mod:`audit.sweep.releases`) into ``OUT/<version>/`` (its own sweep.md, sweep.json, rows and
scripts); the range writes ``OUT/versions.json`` and ``OUT/versions.md``: for each entry, one row
per grid point and one column per release, so a violation's first and last release read off a
line.  A release whose environment cannot be built audited nothing, like an ERROR row.

A row refuted on several releases gets one reproduction script, not one a release: scripts that
differ only in their finding paragraph (the release, the certified bound, the confidence) are
written once to ``OUT/repro/<row>-<content hash>.py``, whose docstring lists every release's
finding (:func:`merge_scripts`); each release's ``sweep.json`` and ``sweep.md`` point to it.
"""

from __future__ import annotations

import hashlib
import json
import sys
import textwrap
from pathlib import Path
from typing import Callable, Optional, Sequence

from ..checkpoint import write_atomic
from .releases import ensure_environment, sweep_in_environment
from .runner import SweepInterrupted, sweep_counts
from .table import ABSENT, sweep_markdown

__all__ = ["sweep_versions", "versions_markdown", "cell", "changes", "merge_scripts"]

_SHORT = {"VIOLATED": "VIOLATED", "NOT_REFUTED": "ok"}


def cell(record: Optional[dict]) -> str:
    """A release's verdict on one row, short: VIOLATED, ok, ok (limit), ERROR, — (not in this
    release), or a blank when the release has no such row."""
    if record is None:
        return " "
    if record.get("status") == "absent":
        return "—"
    if record.get("status") == "error" or record.get("verdict") is None:
        return "ERROR"
    verdict = _SHORT.get(record["verdict"], record["verdict"])
    if verdict == "ok" and not record.get("refutable", True):
        return "ok (limit)"
    if verdict == "VIOLATED" and record.get("epsilon_lb") is not None:
        return f"VIOLATED (ε ≥ {record['epsilon_lb']:.3g})"
    return verdict


def changes(cells: Sequence[tuple[str, str]]) -> str:
    """Where a row's verdict turns, from ``(version, cell)`` in release order: "VIOLATED from A",
    "not refuted from B" (a fix, or a violation this budget no longer sees)."""
    said, last = [], None
    for version, text in cells:
        state = "VIOLATED" if text.startswith("VIOLATED") else "ok" if text.startswith("ok") else None
        if state is None or state == last:
            continue
        if last is not None or state == "VIOLATED":
            said.append(f"{'VIOLATED' if state == 'VIOLATED' else 'not refuted'} from {version}")
        last = state
    return "; ".join(said)


def sweep_versions(library: str, distribution: str, versions: Sequence[str], *, out: Path, arguments: Sequence[str],
                   confidence: float, log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
                   installed: Optional[str] = None, environments: Optional[Path] = None) -> dict:
    """Sweep each release of ``versions`` (oldest first) into ``out/<version>/`` and write the
    range's report; returns its document.

    ``arguments`` are the ``dpaudit sweep`` options for every release (``--confidence`` is added:
    ``confidence`` is split over the releases, Bonferroni).  The release ``installed`` (the one
    where dpaudit runs) is swept with the running interpreter.
    """
    out = Path(out)
    share = 1.0 - (1.0 - confidence) / len(versions)
    releases: list[dict] = []
    documents: dict[str, dict] = {}
    try:
        _sweep_each(library, distribution, versions, out, arguments, share, log, installed, environments, releases,
                    documents)
    except KeyboardInterrupt:
        result = _result(library, versions, confidence, share, releases, documents)
        result["finished"] = False
        _write(out, result)
        raise SweepInterrupted(
            f"dpaudit: interrupted: {len([r for r in releases if r.get('finished', True)])} of {len(versions)} "
            f"releases swept (their table: {out / 'versions.md'}); rerun the same command with --resume to continue",
            result) from None
    result = _result(library, versions, confidence, share, releases, documents)
    result["scripts"] = merge_scripts(out, [v for v in versions if v in documents])
    _write(out, result)
    return result


def _parts(text: str) -> Optional[tuple[str, str, str]]:
    """A script's title line, its finding paragraph and the rest (None if it is not shaped so)."""
    parts = text.split("\n\n", 2)
    if len(parts) != 3 or not parts[0].startswith('"""Reproduce: ') or not parts[1].startswith("The sweep of "):
        return None
    return parts[0], parts[1], parts[2]


def _earlier_findings(path: Path) -> list[str]:
    """The findings a shared script already lists (a range resumed after it was written)."""
    if not path.is_file():
        return []
    block = path.read_text().split("each by its own sweep:\n", 1)[-1].split("\n\n", 1)[0]
    return [" ".join(item.split()) for item in ("\n" + block).split("\n- ")[1:]]


def merge_scripts(out: Path, versions: Sequence[str]) -> list[dict]:
    """One reproduction script for the rows whose scripts agree but for their finding paragraph.

    Reads each release's ``out/<version>/sweep.json``; groups its VIOLATED rows' scripts by row and
    by the SHA-256 of the script without its finding paragraph; writes each group once to
    ``out/repro/<row slug>-<hash[:8]>.py`` with every release's finding in its docstring, removes the
    releases' copies, and points each release's ``sweep.json``/``sweep.md`` at the shared script.
    Returns one record per script written: its path (relative to ``out``), the row and the releases.
    """
    out = Path(out)
    groups: dict[tuple[str, str], dict] = {}
    documents = {}
    for version in versions:
        path = out / version / "sweep.json"
        if not path.is_file():
            continue
        documents[version] = json.loads(path.read_text())
        for row in documents[version]["rows"]:
            script = (row.get("repro") or {}).get("path")
            if not script or script.startswith("../") or not (out / version / script).is_file():
                continue
            parts = _parts((out / version / script).read_text())
            if parts is None:
                continue
            title, finding, rest = parts
            digest = hashlib.sha256((title + "\n\n" + rest).encode()).hexdigest()[:8]
            group = groups.setdefault((row["slug"], digest), {"title": title, "rest": rest, "findings": [],
                                                              "members": []})
            group["findings"].append(" ".join(finding.split()))
            group["members"].append((version, row, out / version / script))
    for (slug, digest), group in groups.items():
        name = f"repro/{slug}-{digest}.py"
        findings = _earlier_findings(out / name) + group["findings"]  # a resumed range keeps what it found
        listed = "\n".join(textwrap.fill(f, width=100, initial_indent="- ", subsequent_indent="  ")
                           for f in dict.fromkeys(findings))
        text = (f"{group['title']}\n\nFound on {len(dict.fromkeys(findings))} release(s), each by its own sweep:\n"
                f"{listed}\n\n{group['rest']}")
        write_atomic(out / name, text.encode())
        for version, row, copy in group["members"]:
            copy.unlink()
            if not any(copy.parent.iterdir()):
                copy.parent.rmdir()
            row["repro"]["path"] = f"../{name}"
    shared: dict[str, dict] = {}
    for version, document in documents.items():
        for row in document["rows"]:
            path = (row.get("repro") or {}).get("path") or ""
            if path.startswith("../repro/"):
                shared.setdefault(path[3:], {"path": path[3:], "row": row["key"], "versions": []})["versions"].append(version)
    written = list(shared.values())
    for version, document in documents.items():
        if any(version in w["versions"] for w in written):
            write_atomic(out / version / "sweep.json", json.dumps(document, indent=1, default=str).encode())
            write_atomic(out / version / "sweep.md", sweep_markdown(document).encode())
    return written


def _write(out: Path, result: dict) -> None:
    write_atomic(out / "versions.json", json.dumps(result, indent=1, default=str).encode())
    write_atomic(out / "versions.md", versions_markdown(result).encode())


def _sweep_each(library, distribution, versions, out, arguments, share, log, installed, environments, releases,
                documents) -> None:
    """Sweep the releases one by one, appending to ``releases`` and ``documents`` as each ends."""
    for index, version in enumerate(versions, 1):
        where = out / version
        where.mkdir(parents=True, exist_ok=True)
        log(f"[{index}/{len(versions)}] {library}=={version}")
        try:
            python = (Path(sys.executable) if version == installed
                      else ensure_environment(library, distribution, version, folder=environments, log=log))
        except RuntimeError as exc:
            releases.append({"version": version, "status": 3, "error": str(exc), "out": None})
            log(f"  not swept: {exc}")
            continue
        status, document, last = sweep_in_environment(
            python, library, [*arguments, "--confidence", repr(share), "--no-progress"], where)
        entry = {"version": version, "status": status, "out": where.relative_to(out).as_posix()}
        if document is None:
            entry["error"] = last or f"the sweep exited {status} without a report"
        else:
            documents[version] = document
            entry.update(counts=sweep_counts(document["rows"]), finished=document.get("finished", True))
        releases.append(entry)
        log(f"  exit status {status}: " + (entry.get("error") or json.dumps(entry["counts"])))
        if status == 130:
            raise KeyboardInterrupt


def _result(library, versions, confidence, share, releases, documents) -> dict:
    """The range's document: each release's status and counts, and each row's verdicts across them."""
    keys: dict[str, list[str]] = {}
    for version in versions:
        for row in (documents.get(version) or {}).get("rows", []):
            keys.setdefault(row["entry"], [])
            if row["point"] not in keys[row["entry"]]:
                keys[row["entry"]].append(row["point"])
    table = {}
    for entry, points in keys.items():
        for point in points:
            found = {v: next((r for r in documents[v]["rows"] if r["entry"] == entry and r["point"] == point), None)
                     for v in versions if v in documents}
            table[f"{entry} [{point}]"] = {"entry": entry, "point": point,
                                           "cells": {v: cell(found.get(v)) if v in documents else "not swept"
                                                     for v in versions},
                                           "known": known_across(found)}
    statuses = [r["status"] for r in releases]
    status = 3 if any(s not in (0, 1) for s in statuses) else 1 if 1 in statuses else 0
    return {"library": library, "versions": list(versions), "confidence": confidence, "release_confidence": share,
            "releases": releases, "rows": table, "status": status, "finished": True}


def known_across(found: dict) -> str:
    """The known issues a row links across releases (``found``: version → row record or None): the
    one issue, or, when releases link different ones (a grid point that meets one bug on older
    releases and another on newer), each followed by the releases that link it."""
    releases: dict[str, list[str]] = {}
    for version, record in found.items():
        if record and record.get("known"):
            releases.setdefault(record["known"], []).append(version)
    if len(releases) <= 1:
        return next(iter(releases), "")
    return "; ".join(f"{known} (on {', '.join(versions)})" for known, versions in releases.items())


def versions_markdown(result: dict) -> str:
    """The range's report: one line per release, then one table of verdicts per entry."""
    versions = result["versions"]
    lines = [f"# dpaudit sweep: {result['library']} across {len(versions)} releases", "",
             f"Each release swept by the same catalogue in an environment of its own, at confidence "
             f"{result['release_confidence']:.6g} (Bonferroni over the releases: the probability that a claim that "
             f"holds is reported VIOLATED in any release is at most {1 - result['confidence']:.3g}). `ok`: not "
             f"refuted; `ok (limit)`: not refutable at this budget; `—`: {ABSENT}; `ERROR`: the row audited nothing.",
             *(["", f"**Unfinished**: interrupted after {len(result['releases'])} of {len(versions)} releases; rerun "
                 "the same command with `--resume` to continue."] if result.get("finished") is False else []),
             "", "| release | exit status | VIOLATED | not refuted | ERROR | not in this release | note |",
             "|---|---|---|---|---|---|---|"]
    for release in result["releases"]:
        counts = release.get("counts") or {}
        note = release.get("error") or ("" if release.get("finished", True) else "interrupted")
        lines.append(f"| {release['version']} | {release['status']} | {counts.get('violated', '—')} | "
                     f"{counts.get('not_refuted', '—')} | {counts.get('error', '—')} | {counts.get('absent', '—')} | "
                     f"{str(note).replace('|', '/')[:160]} |")
    if result.get("scripts"):
        lines += ["", "Reproduction scripts, in the range's folder (one for a row whose scripts agree across releases):",
                  ""]
        lines += [f"- `{w['path']}`: {w['row']}, on {', '.join(w['versions'])}" for w in result["scripts"]]
    by_entry: dict[str, list[dict]] = {}
    for row in result["rows"].values():
        by_entry.setdefault(row["entry"], []).append(row)
    for entry, rows in by_entry.items():
        lines += ["", f"### {entry}", "", "| grid point | " + " | ".join(versions) + " | change | known issue |",
                  "|---|" + "---|" * (len(versions) + 2)]
        for row in rows:
            cells = [row["cells"][v] for v in versions]
            lines.append(f"| {row['point'].replace('|', '/')} | " + " | ".join(cells) + " | "
                         f"{changes(list(zip(versions, cells)))} | {str(row.get('known') or '').replace('|', '/')} |")
    return "\n".join(lines) + "\n"
