"""Fill the generated regions of README.md and docs/*.md from the saved benchmark results.

A document never holds a pasted measurement. It holds a region that names where the numbers come
from, and this module rewrites the region's contents from that file::

    <!-- table: benchmarks/results/efficiency.md#Tightness per draw drop=before -->
    (generated: do not edit by hand)
    <!-- /table -->

The opening marker is ``table: SOURCE[#HEADING] [n=N] [part=table|section] [drop=TEXT;TEXT]
[render=NAME]``:

- ``SOURCE`` is a path relative to the repository root.
- ``#HEADING`` restricts a Markdown source to the section under the first heading whose text
  starts with ``HEADING`` (up to the next heading of the same or a higher level); without it the
  whole file is the scope.
- ``part=table`` (default) takes the ``n``-th Markdown table of the scope (default ``n=1``);
  ``part=section`` takes the whole scope, heading line excluded; ``part=intro`` takes the scope's
  text before its first table or heading.
- ``drop=TEXT;TEXT`` removes the columns whose header contains one of the texts (a table only).
- ``title=yes`` puts the matched heading's text first, in bold (it often states the settings).
- A source that is not Markdown is quoted whole in a ``text`` code block; a JSON source needs
  ``render=NAME``, one of :data:`RENDERERS`, which turns the saved data into Markdown.

Run ``python -m benchmarks.docs_tables`` after a benchmark has rewritten its results, and
``python -m benchmarks.docs_tables --check`` (exit status 1 when a document is out of date) in
CI; ``tests/project/test_docs.py`` runs the same check.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional, Sequence

from benchmarks import dask_overhead

__all__ = ["Region", "RENDERERS", "PARTS", "ROOT", "documents", "parse_marker", "extract", "render",
           "stale_documents", "main"]

#: The repository root: marker sources and documents are relative to it.
ROOT = Path(__file__).resolve().parents[1]

OPEN = re.compile(r"^<!--\s*table:\s*(?P<spec>.*?)\s*-->\s*$")
CLOSE = re.compile(r"^<!--\s*/table\s*-->\s*$")
HEADING = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<text>.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
OPTION = re.compile(r"\s+(?=(?:n|part|drop|render|title)=)")
#: What a region of a Markdown source may show.
PARTS = ("table", "section", "intro")


def _dask_overhead(data: dict) -> str:
    """The tables ``benchmarks/dask_overhead.py`` prints, from its saved JSON."""
    return dask_overhead.markdown(data["audits"], data["tiny_chunks"], data["sharing"], data["machine"])


#: Renderers of JSON results: name -> function of the loaded JSON returning Markdown.
RENDERERS: dict[str, Callable[[dict], str]] = {"dask_overhead": _dask_overhead}


@dataclass(frozen=True)
class Region:
    """What one generated region shows: a table or section of one results file."""

    source: str
    heading: Optional[str] = None
    n: int = 1
    part: str = "table"
    drop: tuple[str, ...] = ()
    render: Optional[str] = None
    title: bool = False


def parse_marker(spec: str) -> Region:
    """The :class:`Region` described by the text of an opening marker (after ``table:``)."""
    head, *options = OPTION.split(spec.strip())
    source, _, heading = head.partition("#")
    if not source:
        raise ValueError(f"`table` marker names no source file, got {spec!r}")
    fields: dict = {"source": source.strip(), "heading": heading.strip() or None}
    for option in options:
        key, _, value = option.partition("=")
        value = value.strip()
        if key == "n":
            if not value.isdigit() or int(value) < 1:
                raise ValueError(f"`n` must be a positive integer, got {value!r} in {spec!r}")
            fields["n"] = int(value)
        elif key == "part":
            if value not in PARTS:
                raise ValueError(f"`part` must be one of {PARTS}, got {value!r} in {spec!r}")
            fields["part"] = value
        elif key == "title":
            if value not in ("yes", "no"):
                raise ValueError(f"`title` must be 'yes' or 'no', got {value!r} in {spec!r}")
            fields["title"] = value == "yes"
        elif key == "drop":
            fields["drop"] = tuple(text.strip() for text in value.split(";") if text.strip())
        else:  # render: OPTION admits no other key
            if value not in RENDERERS:
                raise ValueError(f"`render` must be one of {sorted(RENDERERS)}, got {value!r} in {spec!r}")
            fields["render"] = value
    return Region(**fields)


def _scope(lines: list[str], heading: Optional[str], source: str) -> tuple[str, list[str]]:
    """The matched heading's text and the lines of its section (heading line excluded), or
    ``("", lines)`` when no heading is asked for."""
    if heading is None:
        return "", lines
    fenced, start, level, title = False, None, 0, ""
    for i, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else HEADING.match(line)
        if match is None:
            continue
        if start is None and match["text"].startswith(heading):
            start, level, title = i + 1, len(match["hashes"]), match["text"]
        elif start is not None and len(match["hashes"]) <= level:
            return title, lines[start:i]
    if start is None:
        raise ValueError(f"`heading` {heading!r} is not a heading of {source}")
    return title, lines[start:]


def _tables(lines: list[str]) -> list[list[str]]:
    """The Markdown tables among ``lines``: maximal runs of lines starting with '|'."""
    tables: list[list[str]] = []
    current: list[str] = []
    for line in lines + [""]:
        if line.lstrip().startswith("|"):
            current.append(line.rstrip())
        elif current:
            tables.append(current)
            current = []
    return tables


def _cells(row: str) -> list[str]:
    """The cells of a table row; an escaped bar ``\\|`` stays inside its cell."""
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", inner)]


def _drop_columns(table: list[str], drop: Sequence[str], source: str) -> list[str]:
    header = _cells(table[0])
    keep = [i for i, name in enumerate(header) if not any(text in name for text in drop)]
    if len(keep) == len(header):
        raise ValueError(f"`drop` {list(drop)!r} matches no column of the table in {source}")
    rows = [_cells(row) for row in table]
    return ["| " + " | ".join(row[i] for i in keep if i < len(row)) + " |" for row in rows]


def extract(region: Region, root: Path = ROOT) -> str:
    """The Markdown that ``region`` shows, read from its source under ``root``."""
    path = root / region.source
    if not path.is_file():
        raise ValueError(f"`source` {region.source!r} is not a file under {root}")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        if region.render is None:
            raise ValueError(f"a JSON source needs `render=` (one of {sorted(RENDERERS)}): {region.source}")
        return RENDERERS[region.render](json.loads(text)).strip()
    if path.suffix != ".md":
        return "```text\n" + text.strip() + "\n```"
    title, lines = _scope(text.splitlines(), region.heading, region.source)
    if region.title and not title:
        raise ValueError(f"`title=yes` needs a #heading, got {region.source!r}")
    body = _part(region, lines)
    return f"**{title}**\n\n{body}" if region.title else body


def _part(region: Region, lines: list[str]) -> str:
    """The part of a Markdown scope that ``region`` asks for."""
    if region.part == "section":
        return "\n".join(lines).strip()
    if region.part == "intro":
        end = next((i for i, line in enumerate(lines)
                    if line.lstrip().startswith("|") or HEADING.match(line)), len(lines))
        if not "\n".join(lines[:end]).strip():
            raise ValueError(f"`part=intro`: {region.source} has no text before its first table or heading")
        return "\n".join(lines[:end]).strip()
    tables = _tables(lines)
    if len(tables) < region.n:
        where = f"{region.source}#{region.heading}" if region.heading else region.source
        raise ValueError(f"`n` is {region.n} but {where} has {len(tables)} table(s)")
    table = tables[region.n - 1]
    if region.drop:
        table = _drop_columns(table, region.drop, region.source)
    return "\n".join(table)


def render(text: str, root: Path = ROOT, name: str = "document") -> str:
    """``text`` with every generated region refilled from its source."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        match = OPEN.match(line)
        i += 1
        if match is None:
            continue
        region = parse_marker(match["spec"])
        end = next((j for j in range(i, len(lines)) if CLOSE.match(lines[j])), None)
        if end is None:
            raise ValueError(f"{name}: the region opened by {line.strip()!r} has no <!-- /table -->")
        out += ["", extract(region, root), "", lines[end]]
        i = end + 1
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


def documents(root: Path = ROOT) -> list[Path]:
    """README.md and every Markdown page of docs/ (its subfolders included)."""
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def stale_documents(root: Path = ROOT) -> list[Path]:
    """The documents whose generated regions differ from what their sources give now."""
    stale = []
    for path in documents(root):
        text = path.read_text(encoding="utf-8")
        if render(text, root, str(path.relative_to(root))) != text:
            stale.append(path)
    return stale


def main(argv: Optional[Sequence[str]] = None, root: Path = ROOT) -> int:
    """Refresh the documents under ``root`` (or, with ``--check``, only report the stale ones)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a document is out of date")
    args = parser.parse_args(argv)
    stale = stale_documents(root)
    if args.check:
        for path in stale:
            print(f"out of date: {path.relative_to(root)} (run python -m benchmarks.docs_tables)")
        return 1 if stale else 0
    for path in stale:
        text = path.read_text(encoding="utf-8")
        path.write_text(render(text, root, str(path.relative_to(root))), encoding="utf-8")
        print(f"updated {path.relative_to(root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
