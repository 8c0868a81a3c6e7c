"""Clopper–Pearson bounds (scipy.special.betaincinv) against scipy's beta quantiles, statsmodels'
proportion_confint and hand cases."""

import numpy as np
import pytest
from scipy import stats

from audit.intervals import cp_for_choosing, cp_interval, cp_lower, cp_upper


@pytest.mark.parametrize("k,n", [(0, 10), (1, 10), (5, 10), (9, 10), (10, 10), (3, 1000), (0, 10**8),
                                 (123456, 10**8)])
@pytest.mark.parametrize("level", [0.025, 1e-3, 1e-7])
def test_matches_beta_quantiles(k, n, level):
    # Clopper & Pearson (1934): upper = Beta(k+1, n-k).ppf(1-level), lower = Beta(k, n-k+1).ppf(level).
    upper = 1.0 if k == n else stats.beta.ppf(1 - level, k + 1, n - k)
    lower = 0.0 if k == 0 else stats.beta.ppf(level, k, n - k + 1)
    assert cp_upper(k, n, level) == pytest.approx(upper, rel=1e-9, abs=1e-300)
    assert cp_lower(k, n, level) == pytest.approx(lower, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("level", [0.025, 1e-4, 1e-9])
def test_matches_statsmodels(level):
    # A second implementation: statsmodels' two-sided interval at alpha = 2·level has these ends.
    from statsmodels.stats.proportion import proportion_confint

    k, n = np.array([1, 7, 500, 99_999, 1_000_000 - 3]), 1_000_000
    low, high = proportion_confint(k, n, alpha=2 * level, method="beta")
    np.testing.assert_allclose(cp_lower(k, n, level), low, rtol=1e-9)
    np.testing.assert_allclose(cp_upper(k, n, level), high, rtol=1e-9)


def test_zero_and_full_counts_closed_form():
    # With k = 0 the upper bound solves (1-p)^n = level; with k = n the lower bound solves p^n = level.
    assert cp_upper(0, 10, 0.025) == pytest.approx(1 - 0.025 ** 0.1, rel=1e-12)
    assert cp_lower(10, 10, 0.025) == pytest.approx(0.025 ** 0.1, rel=1e-12)
    assert cp_lower(0, 10, 0.025) == 0.0
    assert cp_upper(10, 10, 0.025) == 1.0


def test_vectorized_and_two_sided():
    k = np.array([0, 3, 10])
    assert cp_upper(k, 10, 0.05).shape == (3,)
    interval = cp_interval(3, 10, 0.95)
    assert interval.low == pytest.approx(stats.beta.ppf(0.025, 3, 8), rel=1e-9)
    assert interval.high == pytest.approx(stats.beta.ppf(0.975, 4, 7), rel=1e-9)
    assert 0.3 in interval


@pytest.mark.parametrize("k,n,level", [(-1, 10, 0.05), (11, 10, 0.05), (1, 0, 0.05), (1, 10, 0.5), (1, 10, 0.0)])
def test_bad_input(k, n, level):
    with pytest.raises(ValueError):
        cp_upper(k, n, level)


@pytest.mark.statistical
def test_coverage_of_upper_bound():
    # Seeded check that the one-sided bound covers: 4000 binomial draws, p = 0.01, n = 500, level 0.05.
    # Failures ~ Binomial(4000, <= 0.05): mean <= 200, sd ~ 13.8; allow 200 + 4 sd = 255.
    rng = np.random.default_rng(20261121)
    counts = rng.binomial(500, 0.01, size=4000)
    failures = int((cp_upper(counts, 500, 0.05) < 0.01).sum())
    assert failures <= 255


@pytest.mark.parametrize("n", [1_000, 70_000, 1_125_000, 20_000_000])
@pytest.mark.parametrize("level", [1e-2, 1e-6])
@pytest.mark.parametrize("bound", [cp_upper, cp_lower])
def test_bounds_for_choosing_are_exact_at_the_ends_and_close_between(n, level, bound):
    # Exact for the 64 smallest and largest counts; in between the interpolation error is below
    # 1e-4 of min(b, 1 − b) (measured: at most 6e-5 on these grids).
    k = np.unique(np.concatenate([np.arange(64), n - np.arange(64), np.linspace(0, n, 20_001).astype(np.int64)]))
    exact, chosen = bound(k, n, level), cp_for_choosing(bound, k, n, level)
    ends = (k < 64) | (n - k < 64)
    np.testing.assert_array_equal(chosen[ends], exact[ends])
    assert np.all(np.abs(chosen - exact) <= 1e-4 * np.maximum(np.minimum(exact, 1.0 - exact), 1e-300))
    assert np.all(np.diff(chosen) >= 0)  # monotone in k, as the exact bounds
