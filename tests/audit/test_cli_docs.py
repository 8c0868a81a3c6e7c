"""What the documentation says about the command line, the defaults and a failure message is what the
code does: the synopsis of docs/cli.md is generated from the parser, the README's abbreviated one
names only real options, every default the pages quote is the code's, and the example failure of
docs/auditing.md is rerun.

Statistical content of the rerun example (fixed seed, so it is deterministic): the classical
calibration at (ε, δ) = (7, 0.1) has exact ε(0.1) = 8.016 (docs/ground-truth.md §1) and the plugin's
default seed refutes it at 1,000,000 samples, as the page shows.
"""

from __future__ import annotations

import argparse
import re
import warnings
from pathlib import Path

import pytest

from audit import AuditSettings
from audit.cli import build_parser, synopsis
from audit.feasibility import LONG_RUN_DRAWS, LONG_RUN_SECONDS
from audit.render.tables import COLUMNS, DROP_ORDER
from audit.testing import DEFAULT_SAMPLES, DEFAULT_SEED, assert_claim
from mechanisms import GaussianMechanism

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
SYNOPSIS = re.compile(r"<!-- synopsis:[^\n]*-->\n```\n(?P<text>.*?)\n```\n<!-- /synopsis -->", re.S)
REGENERATE = ('python -c "from audit.cli import synopsis; print(synopsis())" prints the synopsis to paste '
              "between the markers")


def _page(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def _run_options() -> dict[str, argparse.Action]:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {flag: action for action in commands.choices["run"]._actions for flag in action.option_strings}


def test_the_synopsis_in_docs_cli_is_generated_from_the_parser():
    found = SYNOPSIS.search(_page("docs/cli.md"))
    assert found, "docs/cli.md has no <!-- synopsis: ... --> block"
    assert found["text"] == synopsis(), REGENERATE


def test_the_readme_synopsis_names_only_real_options_with_their_choices():
    block = re.search(r"## The command line\n\n```\n(?P<text>.*?)```", _page("README.md"), re.S)["text"]
    options = _run_options()
    run_part = block.split("dpaudit list")[0]
    written = re.findall(r"\[(--[a-z-]+)(?: ([^\]]+))?\]", run_part)
    assert {"--error-control", "--statistic", "--suite", "--resume", "--overwrite"} <= {flag for flag, _ in written}
    for flag, value in written:
        assert flag in options, f"README names {flag}, which dpaudit run does not have"
        action = options[flag]
        if action.choices and "|" in value:
            assert value.split("|") == list(action.choices), f"README's choices of {flag}"


def test_the_defaults_the_pages_quote_are_the_codes():
    defaults = AuditSettings()
    readme, auditing, cli = _page("README.md"), _page("docs/auditing.md"), _page("docs/cli.md")
    assert defaults.samples == 2_000_000 and "(default 2·10⁶)" in readme
    assert defaults.confidence == 0.95 and "at least this probability (default 0.95)" in readme
    signature = ("`run_audit(mechanism, scenario, *, claim=None, samples=2_000_000, confidence=0.95, seed=None,\n"
                 "n_jobs=1, backend=\"loky\", progress=True, checkpoint=None, assume_unchanged=False, accuracy=True,\n"
                 "statistic=\"auto\", early_stopping=True, anytime=False, **backend_options)`")
    assert signature in auditing
    assert (defaults.n_jobs, defaults.backend, defaults.progress, defaults.checkpoint, defaults.assume_unchanged,
            defaults.accuracy, defaults.statistic, defaults.early_stopping, defaults.anytime, defaults.seed) == \
        (1, "loky", True, None, False, True, "auto", True, False, None)
    assert DEFAULT_SAMPLES == 400_000 and "`DEFAULT_SAMPLES` = 400,000 draws per pair and side" in auditing
    options = _run_options()
    assert options["--jobs"].default == 1 and "`--jobs J` (−1 = all cores; default 1)" in cli
    assert "`--confidence C` (default 0.95)" in cli
    cli_words, auditing_words = " ".join(cli.split()), " ".join(auditing.split())
    assert LONG_RUN_DRAWS == 10**9 and LONG_RUN_SECONDS == 600
    assert "a run of at least 10⁹ draws is timed on one chunk" in cli_words and "over ten minutes" in cli_words
    assert "a run of at least 10⁹ draws that one timed chunk predicts to take over ten minutes" in auditing_words
    headings = dict(COLUMNS)
    order = ", ".join(headings[key] for key in DROP_ORDER[:-1]) + " and " + headings[DROP_ORDER[-1]]
    assert f"the columns {order} are left out in that order" in cli_words


@pytest.mark.statistical
def test_the_failure_message_in_docs_auditing_is_what_assert_claim_says():
    block = re.search(r"<!-- checked: tests/audit/test_cli_docs.py[^\n]*-->\n```\n(?P<text>.*?)\n```",
                      _page("docs/auditing.md"), re.S)["text"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the classical calibration outside its proven range, on purpose
        mechanism = GaussianMechanism(epsilon=7, delta=0.1, calibration="classical")
    with pytest.raises(AssertionError) as raised:
        assert_claim(mechanism, samples=1_000_000, seed=DEFAULT_SEED)
    actual = ("AssertionError: " + str(raised.value)).splitlines()
    position = 0
    for line in block.splitlines():
        if line.strip() == "...":
            continue
        assert line in actual[position:], f"docs/auditing.md shows a line assert_claim no longer prints: {line!r}"
        position = actual.index(line, position) + 1
