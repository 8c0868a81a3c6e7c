"""The public one-run call: ``one_run_audit(scores, included, delta=..., method=...)``.

What the result holds (counts, level, both bounds, assumptions), how candidates are paid for, that
ties cannot leak the layout of the inclusion bits, that the default method's results are those of
explicit guesses, that the reported bound agrees with the per-candidate critical counts, and that
bad input is named.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from audit.one_run import (ASSUMPTIONS, METHODS, OneRunResult, blow_up_inverse, default_guesses, fdp_bound,
                           fdp_rejects, independent_bound, independent_p_value, one_run_audit, one_run_epsilon)
from audit.one_run.families import family_epsilon
from benchmarks.one_run import critical_count, idealised_scores
from benchmarks.one_run import main as benchmark_main
from mechanisms.gdp import gdp_epsilon

SEED = 20270301


def _draw(m=2000, mu=1.0, seed=SEED):
    return idealised_scores(np.random.default_rng(seed), m, mu)


@pytest.mark.parametrize("method, family", [("steinke", None), ("fdp", "gdp"), ("fdp", "approx"),
                                            ("order-statistics", "gdp"), ("order-statistics", "approx")])
def test_result_holds_counts_level_bounds_and_assumptions(method, family):
    scores, included = _draw()
    guesses = [(20, 20), (100, 100), (300, 300)]
    result = one_run_audit(scores, included, delta=1e-5, method=method, family=family, guesses=guesses,
                           confidence=0.9)
    family = family or "approx"
    assert (result.method, result.family, result.candidates) == (method, family, 3)
    assert result.level == pytest.approx(0.1 / 3)
    order = np.argsort(scores)
    for item, (kp, km) in zip(result.tried, guesses):
        assert (item.k_plus, item.k_minus) == (kp, km)
        assert item.correct == included[order[-kp:]].sum() + (~included[order[:km]]).sum()
        bound = {"steinke": lambda v: one_run_epsilon(2000, kp + km, v, 1e-5, result.level),
                 "fdp": lambda v: fdp_bound(2000, kp + km, v, result.level, family, 1e-5),
                 "order-statistics": lambda v: independent_bound(2000, kp + km, v, result.level, family, 1e-5)}[method]
        assert item.bound == bound(item.correct)
        assert item.ceiling == bound(kp + km)
        assert item.epsilon == family_epsilon(family, item.bound, 1e-5)
    best = max(result.tried, key=lambda item: item.bound)
    assert (result.k_plus, result.k_minus, result.correct) == (best.k_plus, best.k_minus, best.correct)
    assert result.epsilon_lower_bound == best.epsilon
    assert result.epsilon_ceiling == family_epsilon(family, max(i.ceiling for i in result.tried), 1e-5)
    assert result.epsilon_ceiling >= result.epsilon_lower_bound
    if family == "gdp":
        assert result.mu_lower_bound == best.bound and result.mu_ceiling >= result.mu_lower_bound
        assert result.epsilon_lower_bound == pytest.approx(gdp_epsilon(1e-5, result.mu_lower_bound))
        assert ASSUMPTIONS["gaussian-epsilon"] in result.assumptions
    else:
        assert result.mu_lower_bound is None and result.mu_ceiling is None
    assert (ASSUMPTIONS["independent"] in result.assumptions) == (method == "order-statistics")
    assert ASSUMPTIONS["coins"] in result.assumptions
    summary = result.summary()
    assert "every guess right" in summary and summary.count("assumes:") == len(result.assumptions)
    data = json.loads(json.dumps(result.to_dict()))
    assert data["guesses"] == result.guesses and len(data["tried"]) == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.epsilon_lower_bound = 0.0  # type: ignore[misc]


def test_default_method_is_steinke_and_default_guesses_are_fixed_fractions():
    scores, included = _draw(m=1000)
    default = one_run_audit(scores, included, delta=1e-5)
    explicit = one_run_audit(scores, included, delta=1e-5, method="steinke",
                             guesses=default_guesses(1000, "steinke"))
    assert default.method == "steinke" and default.epsilon_lower_bound == explicit.epsilon_lower_bound
    assert default_guesses(1000, "steinke") == [(10, 10), (50, 50), (100, 100), (250, 250)]
    assert default_guesses(100_000, "fdp") == [(250, 250), (1000, 1000), (5000, 5000), (20_000, 20_000)]
    assert default_guesses(1000, "order-statistics") == [(50, 50), (200, 200), (500, 500)]
    assert default_guesses(1001, "order-statistics") == [(50, 50), (200, 200), (500, 500)]
    assert default_guesses(1000, "order-statistics", "approx") == [(2, 2), (10, 10), (50, 50), (200, 200)]
    assert default_guesses(2, "fdp") == [(1, 1)]
    with pytest.raises(ValueError, match="'approx' for method 'steinke'"):
        default_guesses(1000, "steinke", "gdp")
    assert set(METHODS) == {"steinke", "fdp", "order-statistics"}


def test_ties_are_broken_at_random_not_by_index():
    # Equal scores with the included canaries listed first: breaking ties by index would make every
    # "out" guess (the lowest scores, i.e. the first indices) wrong and every "in" guess... also
    # wrong, and in the other layout all right.  A random order makes the counts chance level.
    m = 1000
    included = np.arange(m) >= m // 2  # the included canaries last
    scores = np.zeros(m)
    for method in METHODS:
        result = one_run_audit(scores, included, delta=1e-5, method=method, guesses=[(200, 200)], seed=3)
        assert abs(result.correct - 200) <= 4 * math.sqrt(400 * 0.25)  # chance level: Bin(400, ½)-like
        again = one_run_audit(scores, included, delta=1e-5, method=method, guesses=[(200, 200)], seed=3)
        assert again.correct == result.correct and again.epsilon_lower_bound == result.epsilon_lower_bound
    by_index = included[np.argsort(scores, kind="stable")]
    assert by_index[-200:].all() and not by_index[:200].any()  # what index order would have guessed


@pytest.mark.parametrize("method, mu", [("fdp", 0.75), ("order-statistics", 1.15)])
def test_reported_bound_exceeds_the_truth_exactly_when_a_count_reaches_its_critical_value(method, mu):
    # The validity studies count false reports through critical counts; this ties them to the
    # audit.  Scores at μ = 1.3 lie above both tested values, so both outcomes occur.
    m, delta = 1000, 1e-5
    sides = [kp for kp, _ in default_guesses(m, method, "gdp")]
    level = 0.05 / len(sides)
    if method == "fdp":
        critical = [critical_count(lambda v, s=s: fdp_rejects(m, 2 * s, v, level, blow_up_inverse("gdp", mu, 0.0)),
                                   2 * s) for s in sides]
    else:
        critical = [critical_count(lambda v, s=s: independent_p_value("gdp", mu, m, 2 * s, v) < level, 2 * s)
                    for s in sides]
    agreed = 0
    for seed in range(8):
        scores, included = _draw(m=m, mu=1.3, seed=seed)
        result = one_run_audit(scores, included, delta=delta, method=method)
        reached = any(item.correct >= c for item, c in zip(result.tried, critical))
        assert (result.mu_lower_bound > mu) == reached
        agreed += reached
    assert 0 < agreed < 8


def test_bad_input_is_named():
    scores, included = _draw(m=100)
    with pytest.raises(ValueError, match="`method`"):
        one_run_audit(scores, included, delta=1e-5, method="fpd")
    with pytest.raises(ValueError, match="`family`"):
        one_run_audit(scores, included, delta=1e-5, method="fdp", family="gauss")
    with pytest.raises(ValueError, match="'approx' for method 'steinke'"):
        one_run_audit(scores, included, delta=1e-5, family="gdp")
    with pytest.raises(ValueError, match="`delta`.*'gdp'"):
        one_run_audit(scores, included, delta=0.0, method="fdp")
    with pytest.raises(ValueError, match="`delta`"):
        one_run_audit(scores, included, delta=1.0, method="fdp")
    with pytest.raises(ValueError, match="`confidence`"):
        one_run_audit(scores, included, delta=1e-5, method="fdp", confidence=1.0)
    with pytest.raises(TypeError, match="`seed`"):
        one_run_audit(scores, included, delta=1e-5, method="fdp", seed=1.5)
    with pytest.raises(ValueError, match="guesses"):
        one_run_audit(scores, included, delta=1e-5, method="fdp", guesses=[(60, 50)])
    with pytest.raises(ValueError, match="at least 2 canaries"):
        one_run_audit([1.0], [True], delta=1e-5, method="fdp")
    with pytest.raises(ValueError, match="NaN or inf"):
        one_run_audit(np.r_[scores[:-1], np.nan], included, delta=1e-5, method="fdp")
    assert isinstance(one_run_audit(scores, included, delta=1e-5, method="fdp"), OneRunResult)


def test_the_docs_example_prints_what_the_docs_show():
    # docs/one-run.md shows a code block and its output; both must stay true.
    text = (Path(__file__).resolve().parents[2] / "docs" / "one-run.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.*?)```", text, re.S)[1]
    shown = re.search(r"```text\n(.*?)```", text, re.S)[1].rstrip("\n")
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, "docs/one-run.md", "exec"), {})
    assert printed.getvalue().rstrip("\n") == shown
    sentence = re.search(r"certify μ ≥ ([\d.]+) \(ε ≥ ([\d.]+);", text)
    rng = np.random.default_rng(5)
    included = rng.random(100_000) < 0.5
    scores = rng.normal(size=100_000) + 1.0 * included
    result = one_run_audit(scores, included, delta=1e-5, method="order-statistics")
    assert (f"{result.mu_lower_bound:.4g}", f"{result.epsilon_lower_bound:.3g}") == sentence.groups()


@pytest.mark.slow
def test_benchmark_quick_run_writes_its_tables(tmp_path):
    result = benchmark_main(["--quick", "--out", str(tmp_path)])
    written = (tmp_path / "one_run.md").read_text(encoding="utf-8")
    for heading in ("## Idealised Gaussian", "## Targets", "## The papers' protocol", "## Validity", "## DP-SGD"):
        assert heading in written
    assert json.loads((tmp_path / "one_run.json").read_text())["validity"] == json.loads(json.dumps(result["validity"]))
