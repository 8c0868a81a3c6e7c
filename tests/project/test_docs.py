"""The documentation stays true: generated tables up to date, links that resolve, citations that exist.

What is checked, and why each can fail:

- **Generated tables** (:mod:`benchmarks.docs_tables`): every marked region of README.md and
  docs/*.md equals what its results file gives now, so a rerun benchmark without
  ``python -m benchmarks.docs_tables`` fails here. The generator itself is tested on small files of
  its own (columns dropped, the n-th table, a section, a missing heading or closing marker).
- **Links**: every relative link of README.md and docs/*.md names an existing file, and every
  ``#anchor`` a heading of the linked page (GitHub's slugs).
- **Citations in code**: every ``docs/<page>.md`` a ``.py`` or ``.toml`` file cites exists, and so does
  every ``§N`` cited with it, and no code cites a reference outside the repository.
- **README**: at most 400 lines, with the two Quick-start commands that CI runs, verbatim, in one
  bash block under "## Quick start".
- **No history in the docs**: no "issue N", "previous version" or "first version" outside
  CHANGELOG.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchmarks import docs_tables
from benchmarks.docs_tables import Region, extract, parse_marker, render, stale_documents

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
QUICK_START = (
    'pip install ".[plots,accounting]" && dpaudit run',
    'pip install -e ".[test,plots,dask,learn,thirdparty]" && python -m pytest -n 2',
)
#: Code that cites documents: every .py and .toml file of the project, except this checker and the
#: generator (whose docstrings quote the patterns they look for).
CODE = sorted(path for pattern in ("*.py", "*.toml") for path in ROOT.rglob(pattern)
              if ".git" not in path.parts and path not in {Path(__file__).resolve(),
                                                           ROOT / "benchmarks" / "docs_tables.py"})

FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
INLINE_CODE = re.compile(r"`[^`]*`")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
CITATION = re.compile(r"docs/([\w.-]+\.md)((?:\s*(?:§\s*\d+|and|,|/))*)")
EXTERNAL = re.compile(r"GROUND_TRUTH|STYLE\.md|shared/reference|shared/papers")
HISTORY = re.compile(r"issue \d+|previous version|first version", re.IGNORECASE)


def _prose(text: str, code: bool = False) -> list[tuple[int, str]]:
    """(line number, line) of every line outside fenced code blocks; inline code removed unless
    ``code``."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line if code else INLINE_CODE.sub("", line)))
    return lines


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation removed, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link in a heading keeps its text
    text = re.sub(r"[^\w\- ]", "", text.replace("`", "").lower())
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    anchors: set[str] = set()
    for _, line in _prose(path.read_text(encoding="utf-8"), code=True):
        match = HEADING.match(line)
        if match:
            base = _slug(match[2])
            anchor, k = base, 0
            while anchor in anchors:  # GitHub numbers repeated headings
                k += 1
                anchor = f"{base}-{k}"
            anchors.add(anchor)
    return anchors


def _headings(path: Path) -> list[str]:
    return [m[2] for _, line in _prose(path.read_text(encoding="utf-8"), code=True)
            if (m := HEADING.match(line))]


# -- (a) generated tables -------------------------------------------------------------------------

def test_generated_tables_are_up_to_date():
    stale = [str(path.relative_to(ROOT)) for path in stale_documents(ROOT)]
    assert not stale, f"out of date (run `python -m benchmarks.docs_tables`): {stale}"


def test_check_mode_exits_1_on_a_stale_page_and_0_after_a_refresh(tmp_path, capsys):
    (tmp_path / "docs").mkdir()
    (tmp_path / "results.md").write_text("## Speed (2 cores)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n")
    (tmp_path / "README.md").write_text("# x\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text("# p\n\n<!-- table: results.md#Speed -->\n| a | b |\n| 9 | 9 |\n<!-- /table -->\n")
    assert docs_tables.main(["--check"], root=tmp_path) == 1
    assert "docs/page.md" in capsys.readouterr().out
    assert page.read_text().count("| 9 | 9 |") == 1  # --check changes nothing
    assert docs_tables.main([], root=tmp_path) == 0
    assert "| 1 | 2 |" in page.read_text() and "| 9 | 9 |" not in page.read_text()
    assert docs_tables.main(["--check"], root=tmp_path) == 0


@pytest.fixture
def results(tmp_path):
    (tmp_path / "r.md").write_text(
        "Run on 2 cores.\n\n"
        "### Speed (n_jobs=1)\n\nnote\n\n| case | before x | s |\n|---|---|---|\n| a | 1 | 2 |\n\n"
        "| second | table |\n|---|---|\n| b | c |\n\ntrailer\n"
        "### Memory\n\n| m |\n|---|\n| 3 |\n")
    (tmp_path / "r.txt").write_text("0/100 false alarms\n")
    return tmp_path


def test_a_region_shows_the_table_asked_for(results):
    assert extract(parse_marker("r.md#Speed"), results).splitlines()[-1] == "| a | 1 | 2 |"
    assert extract(parse_marker("r.md#Speed n=2"), results).splitlines()[-1] == "| b | c |"
    assert extract(parse_marker("r.md#Memory"), results).splitlines()[-1] == "| 3 |"
    assert extract(parse_marker("r.md"), results).splitlines()[0] == "| case | before x | s |"


def test_a_region_drops_columns_sections_intros_and_titles(results):
    dropped = extract(parse_marker("r.md#Speed drop=before"), results).splitlines()
    assert dropped[0] == "| case | s |" and dropped[2] == "| a | 2 |"
    section = extract(parse_marker("r.md#Speed part=section"), results)
    assert section.startswith("note") and section.endswith("trailer") and "Memory" not in section
    assert extract(parse_marker("r.md part=intro"), results) == "Run on 2 cores."
    assert extract(parse_marker("r.md#Memory title=yes"), results).startswith("**Memory**\n\n| m |")
    assert extract(parse_marker("r.txt"), results) == "```text\n0/100 false alarms\n```"


@pytest.mark.parametrize("spec, message", [
    ("r.md#Nowhere", "`heading` 'Nowhere'"),
    ("r.md#Memory n=2", "`n` is 2"),
    ("r.md#Speed drop=nothing", "`drop`"),
    ("missing.md", "`source`"),
    ("r.md part=table-ish", "`part`"),
    ("r.md n=0", "`n`"),
    ("r.md title=maybe", "`title`"),
    ("r.md title=yes", "`title=yes`"),
])
def test_a_bad_region_is_refused_naming_what_is_wrong(results, spec, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        extract(parse_marker(spec), results)


def test_an_unclosed_region_is_refused(results):
    with pytest.raises(ValueError, match="no <!-- /table -->"):
        render("<!-- table: r.md -->\n| x |\n", results, "page.md")


def test_render_keeps_the_text_around_regions(results):
    page = "intro\n<!-- table: r.md#Memory -->\nold\n<!-- /table -->\noutro\n"
    assert render(page, results) == "intro\n<!-- table: r.md#Memory -->\n\n| m |\n|---|\n| 3 |\n\n<!-- /table -->\noutro\n"
    assert parse_marker("r.md#Memory") == Region("r.md", "Memory")


# -- (b) links ------------------------------------------------------------------------------------

def _links():
    for page in PAGES:
        for number, line in _prose(page.read_text(encoding="utf-8")):
            for target in LINK.findall(line):
                if not re.match(r"[a-z]+:", target):  # http:, https:, mailto: are not checked here
                    yield pytest.param(page, target, id=f"{page.relative_to(ROOT)}:{number}:{target}")


@pytest.mark.parametrize("page, target", list(_links()))
def test_every_relative_link_resolves(page, target):
    path, _, anchor = target.partition("#")
    linked = (page.parent / path).resolve() if path else page
    assert linked.exists(), f"{page.relative_to(ROOT)} links to {path}, which does not exist"
    if anchor:
        assert linked.suffix == ".md", f"an anchor into {path}, which is not Markdown"
        assert anchor in _anchors(linked), (
            f"{page.relative_to(ROOT)} links to #{anchor}, not a heading of {linked.name}")


def test_the_link_checker_reads_headings_and_links_as_github_does(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n## Certified ε per draw\n\n## Certified ε per draw\n\n"
                    "## Phases, and how `samples` is split\n\n"
                    "See [a](other.md#x) and `[not](a-link.md)`.\n\n```\n[in code](nowhere.md)\n```\n")
    assert _anchors(page) == {"title", "certified-ε-per-draw", "certified-ε-per-draw-1",
                              "phases-and-how-samples-is-split"}
    links = [target for _, line in _prose(page.read_text()) for target in LINK.findall(line)]
    assert links == ["other.md#x"]


# -- (c) citations in code ------------------------------------------------------------------------

def _citations():
    for path in CODE:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for page, tail in CITATION.findall(line):
                yield path, number, page, [int(n) for n in re.findall(r"§\s*(\d+)", tail)]


def test_every_cited_docs_page_and_section_exists():
    missing = []
    for path, number, page, sections in _citations():
        where = f"{path.relative_to(ROOT)}:{number}"
        if not (DOCS / page).is_file():
            missing.append(f"{where}: docs/{page}")
            continue
        headings = _headings(DOCS / page)
        missing += [f"{where}: docs/{page} §{n}" for n in sections
                    if not any(re.match(rf"§{n}\b", heading) for heading in headings)]
    assert not missing, "cited but missing:\n" + "\n".join(missing)


def test_every_test_file_cited_exists():
    """Docstrings and docs that send a reader to a test name its current path (tests/<package>/...)."""
    cited = re.compile(r"(?<![\w/])(tests/[\w/]+\.py)")
    missing = [f"{path.relative_to(ROOT)}:{number}: {match}"
               for path in CODE + sorted(DOCS.glob("*.md")) + [ROOT / "README.md"]
               for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
               for match in cited.findall(line) if not (ROOT / match).is_file()]
    assert not missing, "cited test files that do not exist:\n" + "\n".join(missing)


def test_code_cites_no_reference_outside_the_repository():
    outside = [f"{path.relative_to(ROOT)}:{number}"
               for path in CODE
               for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
               if EXTERNAL.search(line)]
    assert not outside, (f"{len(outside)} lines cite GROUND_TRUTH, STYLE.md or shared/ (use "
                         f"docs/ground-truth.md §N, docs/style.md §N): {outside[:10]}")


@pytest.mark.parametrize("page", ["ground-truth.md", "style.md"])
def test_the_cited_reference_pages_number_their_sections(page):
    numbers = [int(m[1]) for heading in _headings(DOCS / page) if (m := re.match(r"§(\d+)\.", heading))]
    expected = list(range(1, 8)) if page == "ground-truth.md" else list(range(1, 11))
    assert numbers == expected


# -- (d) README -----------------------------------------------------------------------------------

def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines <= 400, f"README.md has {lines} lines; move detail to docs/"


def test_readme_quick_start_has_the_commands_ci_runs():
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block, "## Quick start has no ```bash block"
    commands = block[1].splitlines()
    for command in QUICK_START:
        assert command in commands, f"Quick start lacks, verbatim: {command}"


# -- (e) history stays in CHANGELOG.md, and every page says what it covers ------------------------

@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_history_outside_the_changelog(page):
    found = [f"{page.relative_to(ROOT)}:{n}: {m[0]!r}" for n, line in enumerate(
        page.read_text(encoding="utf-8").splitlines(), 1) for m in HISTORY.finditer(line)]
    assert not found, "history belongs in CHANGELOG.md: " + "; ".join(found)


@pytest.mark.parametrize("page", sorted(DOCS.rglob("*.md")), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_every_page_opens_with_what_it_covers_and_is_indexed(page):
    lines = [line for line in page.read_text(encoding="utf-8").splitlines()]
    assert lines[0].startswith("# "), f"{page.name} does not start with a title"
    first = next(line for line in lines[1:] if line.strip())
    assert not re.match(r"\s*([#|>`<*-]|\d+\.)", first), f"{page.name}: no opening paragraph after the title"
    if page.name != "index.md":
        name = page.relative_to(DOCS).as_posix()
        assert f"]({name})" in (DOCS / "index.md").read_text(encoding="utf-8"), (
            f"docs/index.md does not list {name}")
