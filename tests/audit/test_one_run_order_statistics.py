"""The order-statistics one-run bound (audit/one_run/order_statistics.py).

- Its p-value is P(C* ≥ v) in the canonical experiment: checked against a Monte Carlo simulation of
  that experiment (a second route), from above and, up to the cell error, from below.
- The auditor's own guesses (k₊ highest and k₋ lowest raw scores) never beat it (the proposition's
  dominance), also by simulation.
- The f_{ε,δ} canonical pair has exactly the trade-off curve f_{ε,δ} (Neyman–Pearson, computed).
- The p-value grows with the parameter, and at μ = 0 it is the Bin(k, ½) tail.
- Validity: on exactly μ-GDP scores (μ = 0 included) the bound exceeds the truth in at most a γ
  fraction of runs (Clopper–Pearson upper bound).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import special, stats

from audit.one_run import default_guesses, independent_bound, independent_p_value
from benchmarks.one_run import critical_count, simulate_counts
from mechanisms.claims.approximate import approx_tradeoff
from mechanisms.gdp import gdp_epsilon

SEED = 20270211


def _canonical_gaussian(rng, reps, m, k, mu):
    """C* of the canonical G_μ experiment, and the auditor's count with k/2 guesses per side."""
    included = rng.random((reps, m)) < 0.5
    x = rng.normal(size=(reps, m)) + mu * included
    correct = (x > mu / 2) == included
    top = np.argpartition(-np.abs(x - mu / 2), k - 1, axis=1)[:, :k]
    canonical = np.take_along_axis(correct, top, axis=1).sum(axis=1)
    order = np.argsort(x, axis=1)
    side = k // 2
    auditor = (np.take_along_axis(included, order[:, m - side:], axis=1).sum(axis=1)
               + (~np.take_along_axis(included, order[:, :side], axis=1)).sum(axis=1))
    return canonical, auditor


@pytest.mark.statistical
@pytest.mark.parametrize("mu", [0.5, 1.5])
def test_gaussian_p_value_matches_the_canonical_experiment(mu):
    # 20 000 simulated experiments: each empirical tail has standard error ≤ 0.0036; we allow 4 of
    # them, plus 1e-3 above for the upper sum's cell error (at most about 2/4096).
    m, k, reps = 300, 60, 20_000
    canonical, auditor = _canonical_gaussian(np.random.default_rng(SEED), reps, m, k, mu)
    for v in range(int(np.quantile(canonical, 0.3)), int(np.quantile(canonical, 0.999)) + 1):
        p = independent_p_value("gdp", mu, m, k, v)
        empirical = float(np.mean(canonical >= v))
        allowance = 4 * math.sqrt(max(empirical * (1 - empirical), 1 / reps) / reps)
        assert empirical - allowance <= p <= empirical + allowance + 1e-3, (v, p, empirical)
        assert float(np.mean(auditor >= v)) <= p + allowance  # the auditor's guesses never beat C*


@pytest.mark.statistical
def test_approx_p_value_matches_the_canonical_experiment():
    # The pair of Kairouz et al.: with probability δ the outcome names the bit, otherwise
    # randomized response with q = e^ε/(1 + e^ε).  Same allowance as above (the sum is exact).
    m, k, epsilon, delta, reps = 200, 40, 1.0, 0.02, 20_000
    rng = np.random.default_rng(SEED + 1)
    leak = rng.random((reps, m)) < delta
    right = rng.random((reps, m)) < special.expit(epsilon)
    confidence = leak + 0.5 * rng.random((reps, m))  # leaks first, the rest in a random order
    top = np.argpartition(-confidence, k - 1, axis=1)[:, :k]
    count = np.take_along_axis(leak | right, top, axis=1).sum(axis=1)
    for v in range(int(np.quantile(count, 0.3)), k + 1):
        p = independent_p_value("approx", epsilon, m, k, v, delta)
        empirical = float(np.mean(count >= v))
        allowance = 4 * math.sqrt(max(empirical * (1 - empirical), 1 / reps) / reps)
        assert abs(p - empirical) <= allowance, (v, p, empirical)


@pytest.mark.parametrize("epsilon, delta", [(0.0, 0.1), (1.0, 0.02), (3.0, 1e-5)])
def test_canonical_approx_pair_has_tradeoff_f_epsilon_delta(epsilon, delta):
    # Outcomes (leak-in, randomized "in", randomized "out", leak-out) under "out" (Q) and "in" (P);
    # the Neyman–Pearson tests reject "out" in decreasing order of P/Q.
    q = special.expit(epsilon)
    out = np.array([0.0, (1 - delta) * (1 - q), (1 - delta) * q, delta])
    inside = np.array([delta, (1 - delta) * q, (1 - delta) * (1 - q), 0.0])
    alpha_knots = np.concatenate(([0.0], np.cumsum(out)))
    beta_knots = 1.0 - np.concatenate(([0.0], np.cumsum(inside)))
    alpha = np.linspace(0.0, 1.0, 2001)
    np.testing.assert_allclose(np.interp(alpha, alpha_knots, beta_knots), approx_tradeoff(alpha, epsilon, delta),
                               atol=1e-12)


def test_p_value_grows_with_the_parameter_and_is_binomial_at_zero():
    m, k, v = 2000, 400, 300
    values = [independent_p_value("gdp", mu, m, k, v) for mu in np.linspace(0.0, 2.0, 41)]
    assert all(b >= a - 1e-12 for a, b in zip(values, values[1:]))
    assert values[0] == pytest.approx(float(stats.binom.sf(v - 1, k, 0.5)), rel=1e-12)
    assert independent_p_value("gdp", 1e-7, m, k, v) == pytest.approx(values[0], abs=1e-3)
    values = [independent_p_value("approx", e, m, k, v, 1e-4) for e in np.linspace(0.0, 3.0, 31)]
    assert all(b >= a - 1e-12 for a, b in zip(values, values[1:]))
    assert independent_p_value("gdp", 1.0, m, k, 0) == 1.0


def test_bound_is_rejected_and_the_next_value_is_not():
    m, k, v, level = 5000, 1000, 860, 0.0125
    mu = independent_bound(m, k, v, level, "gdp", 1e-5)
    assert independent_p_value("gdp", mu, m, k, v) < level
    assert independent_p_value("gdp", mu * (1 + 2e-5), m, k, v) >= level
    assert independent_bound(m, k, k // 2, level, "gdp", 1e-5) == 0.0


@pytest.mark.statistical
@pytest.mark.parametrize("family, mu", [("gdp", 0.0), ("gdp", 1.0), ("gdp", 2.0), ("approx", 1.0)])
def test_bound_exceeds_the_truth_in_at_most_the_level_of_runs(family, mu):
    # Exactly μ-GDP scores, hence (ε_μ(δ), δ)-DP.  The bound exceeds the truth exactly when some
    # candidate rejects the truth (the p-value grows with the parameter), i.e. when its count
    # reaches that candidate's critical value.  10 000 runs at m = 1000, default candidates at γ/3:
    # the test is nearly exact here, and 10 000 runs put the Clopper–Pearson upper bound within
    # about 0.005 of the observed rate.
    m, runs, gamma, delta = 1000, 10_000, 0.05, 1e-5
    sides = [kp for kp, _ in default_guesses(m, "order-statistics", family)]
    level = gamma / len(sides)
    truth = mu if family == "gdp" else gdp_epsilon(delta, mu)
    critical = [critical_count(lambda v: independent_p_value(family, truth, m, 2 * s, v, delta) < level, 2 * s)
                for s in sides]
    counts = simulate_counts(np.random.default_rng(SEED + int(10 * mu)), runs, m, mu, sides)
    false = int((counts >= np.array(critical)).any(axis=1).sum())
    upper = stats.binomtest(false, runs).proportion_ci(0.95, method="exact").high
    assert upper <= gamma, (false, runs)
