"""One-run auditing (Steinke, Nasr & Jagielski 2023): the exact p-value and the ε bound."""

import math

import numpy as np
import pytest

from audit.one_run import one_run_audit, one_run_epsilon, one_run_p_value
from mechanisms.dpsgd import DPSGD

SEED = 20261123


def _brute_force_p(m, r, v, eps, delta):
    """The p-value written out with exact integer binomials (second route)."""
    q = math.exp(eps) / (1 + math.exp(eps))
    pmf = [math.comb(r, k) * q**k * (1 - q) ** (r - k) for k in range(r + 1)]
    tail = sum(pmf[v:])
    extra = max((sum(pmf[v - i:v]) / i for i in range(1, v + 1)), default=0.0)
    return min(1.0, tail + 2 * m * delta * extra)


@pytest.mark.parametrize("m, r, v, eps, delta", [(100, 20, 18, 1.0, 1e-5), (1000, 60, 50, 2.0, 1e-3),
                                                 (50, 10, 10, 0.0, 0.0), (200, 30, 12, 0.5, 1e-2)])
def test_p_value_matches_exact_binomial_sums(m, r, v, eps, delta):
    assert float(one_run_p_value(m, r, v, eps, delta)) == pytest.approx(_brute_force_p(m, r, v, eps, delta),
                                                                        rel=1e-9, abs=1e-300)


def test_epsilon_bound_is_the_first_non_rejected_epsilon():
    m, r, v, delta, gamma = 1000, 100, 95, 1e-5, 0.05
    eps = one_run_epsilon(m, r, v, delta, gamma)
    assert eps > 0
    assert float(one_run_p_value(m, r, v, eps, delta)) < gamma
    assert float(one_run_p_value(m, r, v, eps + 2e-3, delta)) >= gamma
    grid = np.linspace(0.0, eps, 200)
    assert (one_run_p_value(m, r, v, grid, delta) < gamma).all()


def test_bound_grows_with_correct_guesses_and_shrinks_with_delta():
    values = [one_run_epsilon(1000, 100, v, 1e-5, 0.05) for v in (60, 80, 100)]
    assert values[0] < values[1] < values[2]
    assert one_run_epsilon(1000, 100, 100, 1e-3, 0.05) < values[2]
    assert one_run_epsilon(1000, 100, 50, 1e-5, 0.05) == 0.0  # chance level certifies nothing


@pytest.mark.statistical
def test_bound_is_valid_for_randomized_response():
    # ε-DP randomized response per canary is the extreme case of their theorem: the bound must
    # exceed the true ε in at most a γ fraction of runs.  200 runs at γ = 0.05: P(> 20) < 0.002.
    epsilon, m, runs = 1.0, 400, 200
    rng = np.random.default_rng(SEED)
    above = 0
    for _ in range(runs):
        included = rng.random(m) < 0.5
        truthful = rng.random(m) < math.exp(epsilon) / (1 + math.exp(epsilon))
        scores = np.where(included == truthful, 1.0, -1.0) + 1e-3 * rng.random(m)
        result = one_run_audit(scores, included, guesses=[(100, 100)], delta=0.0)
        above += result.epsilon_lower_bound > epsilon
    assert above <= 20


def test_result_counts_guesses_and_applies_bonferroni():
    scores = np.arange(10.0)
    included = scores >= 5
    result = one_run_audit(scores, included, guesses=[(3, 2), (5, 5)], delta=0.0, confidence=0.9)
    assert (result.guesses, result.correct, result.candidates) == (10, 10, 2)
    assert result.epsilon_lower_bound == pytest.approx(one_run_epsilon(10, 10, 10, 0.0, 0.05))
    assert "10 correct" in result.summary()


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="v <= r <= m"):
        one_run_p_value(10, 5, 6, 1.0, 0.0)
    with pytest.raises(ValueError, match="`delta`"):
        one_run_p_value(10, 5, 2, 1.0, 1.5)
    with pytest.raises(TypeError, match="`included`"):
        one_run_audit([1.0, 2.0], [1, 0], guesses=[(1, 1)], delta=0.0)
    with pytest.raises(ValueError, match="guesses"):
        one_run_audit([1.0, 2.0], [True, False], guesses=[(2, 1)], delta=0.0)


@pytest.mark.statistical
def test_dpsgd_one_run_bound_stays_below_the_accountant():
    mechanism = DPSGD(q=0.5, sigma=1.0, steps=4, delta=1e-3, n=50)
    scores, included = mechanism.one_run_scores(1000, np.random.default_rng(SEED))
    result = one_run_audit(scores, included, guesses=[(50, 50), (100, 100)], delta=1e-3)
    assert 0 < result.epsilon_lower_bound < mechanism.claim.epsilon


def _first_crossing_by_full_scan(m, r, v, delta, gamma):
    """The bound as the whole grid is scanned chunk by chunk (the search before branch and bound)."""
    if float(one_run_p_value(m, r, v, 0.0, delta)) >= gamma:
        return 0.0
    start = 0.0
    while start < 50.0:
        grid = start + 1e-3 * np.arange(1, 1025)
        crossed = np.flatnonzero(one_run_p_value(m, r, v, grid, delta) >= gamma)
        if crossed.size:
            high = float(grid[crossed[0]])
            low = high - 1e-3
            for _ in range(30):
                mid = 0.5 * (low + high)
                low, high = (mid, high) if float(one_run_p_value(m, r, v, mid, delta)) < gamma else (low, mid)
            return low
        start = float(grid[-1])
    return math.inf


@pytest.mark.parametrize("m, r, v, delta, gamma", [(1000, 100, 95, 1e-5, 0.05), (1000, 200, 150, 1e-3, 0.05),
                                                   (400, 200, 140, 0.0, 0.05), (1000, 500, 390, 1e-3, 0.0125),
                                                   (100, 50, 48, 1e-5, 0.0125), (30, 20, 20, 0.01, 0.05),
                                                   (1000, 1000, 1000, 1e-3, 0.05)])
def test_branch_and_bound_finds_the_grid_scan_bound(m, r, v, delta, gamma):
    assert one_run_epsilon(m, r, v, delta, gamma) == _first_crossing_by_full_scan(m, r, v, delta, gamma)
