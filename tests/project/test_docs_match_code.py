"""Statements of the user docs that name what the code does, checked against the code.

- docs/scenarios.md's ``[audit]`` table lists the statistic names a file may give: every name the
  registry knows (:func:`audit.statistics.statistic_names`) must be among them.
- docs/auditing.md says which datasets outside [0, 1] are rejected: the scenario builders it
  names reject them, the user's own pairs are not range-checked, the built-in mechanisms reject
  them when drawing and a user's own mechanism receives them as given.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import scenarios
from audit.statistics import statistic_names
from audit import run_audit
from mechanisms import LaplaceMechanism, PureDP
from scenarios.scenario import Domain, NeighborPair, Scenario

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())


def test_the_scenario_file_reference_lists_every_statistic():
    (line,) = [line for line in (ROOT / "docs" / "scenarios.md").read_text().splitlines()
               if line.startswith("statistic = ")]
    listed = set(re.findall(r'"([a-z-]+)"', line))
    assert set(statistic_names()) <= listed, sorted(set(statistic_names()) - listed)


def _paragraph(text: str, needle: str) -> str:
    (paragraph,) = [p for p in re.split(r"\n\s*\n", text) if needle in p]
    return " ".join(paragraph.split())


@pytest.mark.statistical  # one small audit of your own mechanism (its verdict is not asserted)
def test_auditing_says_which_datasets_outside_the_unit_interval_are_rejected():
    text = _paragraph((ROOT / "docs" / "auditing.md").read_text(), "outside [0, 1]")
    for name in ("scenarios.counting", "scenarios.bounded", "scenarios.grouped", "scenarios.from_pairs"):
        assert f"`{name}`" in text, name
    assert "built-in mechanisms" in text and "your own mechanism" in text
    # What the paragraph says, checked: the builders' domains reject values outside [0, 1] ...
    wide = np.array([[0.5], [2.0]])
    for domain in (Domain.COUNTING, Domain.BOUNDED):
        with pytest.raises(ValueError, match=r"outside"):
            Scenario(domain, "add-remove", (NeighborPair(wide[:1], wide, "p"),), d=1, checked=True)
    # ... pairs of your own rows are checked as neighbours, not for their range ...
    assert scenarios.from_pairs([(wide[:1], wide)]).pairs[0].neighbor.max() == 2.0
    # ... the built-in mechanisms reject them when drawing, and your own mechanism gets them as given.
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        LaplaceMechanism(1.0)(wide, 1, np.random.default_rng(0))
    seen = []

    def own(dataset, size, rng):
        seen.append(float(np.max(dataset)))
        return np.zeros((size, 1)) + rng.normal(size=(size, 1))

    report = run_audit(own, [(wide[:1], wide)], claim=PureDP(1.0), samples=200, seed=1, progress=False,
                       accuracy=False)
    assert report.verdict is not None and max(seen) == 2.0
