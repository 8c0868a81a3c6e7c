"""Scoring for choosing (audit/scoring.py): claim usage against hand-computed values, and every
number bit-identical to the three copies it replaced (frozen below as they were, so the
expected values never come from the new code)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest
from scipy import stats

from audit.bounds import delta_lower_bound, epsilon_lower_bound, mu_lower_bound
from audit.intervals import cp_for_choosing, cp_lower, cp_upper
from audit.scoring import (ClaimUsage, Spacing, ThresholdEvents, choosing_points, claim_usage, slot_values,
                           threshold_events)
from audit.search import score_candidate
from audit.selection import DELTA_GRID
from audit.slots import MU, TRADEOFF, Slot, curve_slots, headline_slots
from mechanisms.claims import ZCDP, ApproxDP, GaussianDP, ProfileClaim, PureDP, RenyiDP

SEED = 20250125
CLAIMS = [ApproxDP(1.0, 1e-5), PureDP(0.7), GaussianDP(0.5), ZCDP(0.3),
          RenyiDP((2.0, 8.0), (0.4, 1.1), reference_delta=1e-6),
          ProfileClaim.from_table([0.0, 0.5, 2.0], [0.2, 1e-3, 1e-7])]
IDS = ["approx", "pure", "gdp", "zcdp", "renyi", "profile"]


# --- claim usage, by hand ----------------------------------------------------------------------

def test_a_perfectly_separating_event_uses_its_closed_form_share_of_a_pure_claim():
    # All n = 100 draws of one side fall into the event and none of the other's: the one-sided
    # Clopper–Pearson bounds are closed forms, B_hi(0) = 1 − λ^(1/n) and A_lo(n) = λ^(1/n), so
    # α_hi = β_hi = a := 1 − 0.05^(1/100) ≈ 0.029513.  For PureDP(1): ε at δ = 0 is
    # ln((1 − a)/a) ≈ 3.4930, δ at ε = 1 is 1 − a − e·a, and only ε counts (δ_claim = 0).
    n, level = 100, 0.05
    events = ThresholdEvents(np.array([0.0]), np.array([0]), np.array([n]), n, n)
    a = 1.0 - level ** (1.0 / n)
    usage = claim_usage(PureDP(1.0), events.points(level, exact=True))
    epsilon = math.log((1.0 - a) / a)
    # Tolerance: the bounds come from betainccinv/betaincinv, accurate to a few ulps; 1e-12 relative.
    assert usage.value == pytest.approx(epsilon / 1.0, rel=1e-12)
    assert usage.estimates == pytest.approx((epsilon, 1.0 - a - math.e * a, -2 * stats.norm.ppf(a)), rel=1e-12)
    assert usage.value == pytest.approx(3.4930, abs=1e-4)


def _hand_points(count_a: int, count_b: int, n: int, level: float) -> tuple[float, float]:
    """(α_hi, β_hi) through scipy.stats' beta quantiles (Clopper & Pearson 1934), an independent route."""
    alpha_hi = 1.0 if count_b == n else stats.beta.ppf(1.0 - level, count_b + 1, n - count_b)
    beta_hi = 1.0 if count_a == 0 else 1.0 - stats.beta.ppf(level, count_a, n - count_a + 1)
    return float(alpha_hi), float(beta_hi)


# The Laplace mechanism at ε = 1 on a count, base 0 against neighbour 1, event {T ≥ 1}: it has
# probability ½e⁻¹ ≈ 0.1839 under the base and ½ under the neighbour; 10,000 draws per side gave
# these counts.
LAPLACE_N, LAPLACE_BASE, LAPLACE_NEIGHBOUR = 10_000, 1_839, 5_000


def _laplace_event() -> ThresholdEvents:
    return ThresholdEvents(np.array([1.0]), np.array([LAPLACE_BASE]), np.array([LAPLACE_NEIGHBOUR]),
                           LAPLACE_N, LAPLACE_N)


def _by_hand(level: float):
    # Orientation 0: more likely under the neighbour (A = neighbour, B = base); 1: the reverse.
    return [_hand_points(LAPLACE_NEIGHBOUR, LAPLACE_BASE, LAPLACE_N, level),
            _hand_points(LAPLACE_BASE, LAPLACE_NEIGHBOUR, LAPLACE_N, level)]


def test_claim_usage_of_a_laplace_event_against_an_approximate_claim():
    claim, level = ApproxDP(0.5, 1e-5), 0.05
    points = _by_hand(level)
    epsilon = max(max(0.0, math.log((1 - 1e-5 - b) / a), math.log((1 - 1e-5 - a) / b)) for a, b in points)
    delta = max(max(0.0, 1 - b - math.exp(0.5) * a, 1 - a - math.exp(0.5) * b) for a, b in points)
    mu = max(max(0.0, stats.norm.ppf(1 - a) - stats.norm.ppf(b)) for a, b in points)
    usage = claim_usage(claim, _laplace_event().points(level, exact=True))
    # Tolerance: two routes to the same beta quantiles (Boost's inverse via scipy.special and via
    # scipy.stats), each within a few ulps; the logarithms keep it relative: 1e-9.
    assert usage.estimates == pytest.approx((epsilon, delta, mu), rel=1e-9)
    assert usage.value == pytest.approx(max(epsilon / 0.5, delta / 1e-5), rel=1e-9)
    # Orientation 0 is the informative one: (α_hi, β_hi) ≈ (0.1839 + 1.645·0.0039, 0.5 + 1.645·0.005)
    # = (0.1904, 0.5083), so ε ≈ ln(0.4917/0.1904) ≈ 0.949 at the claim's δ (true ε is 1), nearly
    # twice the claimed 0.5, and δ ≈ 0.4917 − e^0.5·0.1904 ≈ 0.178 at ε = 0.5, about 18,000 times
    # the claimed δ: that is the usage.
    assert usage.estimates == pytest.approx((0.949, 0.178, 0.856), abs=1e-3)
    assert usage.value == pytest.approx(delta / 1e-5, rel=1e-9)


def test_claim_usage_of_a_gdp_claim_is_mu_over_the_claimed_mu():
    claim, level = GaussianDP(0.5), 0.05
    mu = max(max(0.0, stats.norm.ppf(1 - a) - stats.norm.ppf(b)) for a, b in _by_hand(level))
    usage = claim_usage(claim, _laplace_event().points(level, exact=True))
    assert usage.estimates == pytest.approx((mu,), rel=1e-9)  # tolerance as above
    assert usage.value == pytest.approx(mu / 0.5, rel=1e-9)
    assert mu == pytest.approx(0.856, abs=1e-3)  # Φ⁻¹(1 − 0.1904) − Φ⁻¹(0.5083) ≈ 0.877 − 0.021


def test_events_without_evidence_use_nothing():
    events = ThresholdEvents(np.array([0.0, 1.0]), np.array([50, 10]), np.array([50, 10]), 50, 50)
    usage = claim_usage(ApproxDP(1.0, 1e-5), events.points(0.05))
    assert usage == ClaimUsage(0.0, (0.0, 0.0, 0.0))


# --- bit-identical to the old copies (frozen as they were) -------------------------------------

def _old_selection_points(count_a, count_b, n, level):  # audit/selection.py _points
    return cp_for_choosing(cp_upper, count_b, n, level), 1.0 - cp_for_choosing(cp_lower, count_a, n, level)


def _old_selection_scores(slot: str, alpha_hi, beta_hi):  # audit/selection.py _scores
    kind, _, value = slot.partition("@")
    if kind == "epsilon":
        return epsilon_lower_bound(alpha_hi, beta_hi, float(value))
    if kind == "delta":
        return delta_lower_bound(alpha_hi, beta_hi, float(value))
    if kind == "mu":
        return mu_lower_bound(alpha_hi, beta_hi)
    raise ValueError(slot)


@pytest.mark.parametrize("n", [300, 50_000, 1_450_000])
def test_choosing_points_and_slot_values_are_the_old_selections(n):
    rng = np.random.default_rng(SEED + n)
    count_a, count_b = rng.integers(0, n + 1, 3000), rng.integers(0, n + 1, 3000)
    count_a[:4], count_b[:4] = [0, n, 0, n], [0, 0, n, n]  # the ends
    level = 1e-4
    old = _old_selection_points(count_a, count_b, n, level)
    new = choosing_points(count_a, n, count_b, n, level)
    assert all(np.array_equal(o, x) for o, x in zip(old, new))
    for claim in CLAIMS:
        for slot in headline_slots(claim) + curve_slots(claim, DELTA_GRID):
            assert np.array_equal(slot_values(slot, *new), _old_selection_scores(slot.key, *old)), slot.key


def test_the_band_has_no_single_value():
    with pytest.raises(ValueError, match="`slot` must be a headline slot"):
        slot_values(TRADEOFF, np.array([0.1]), np.array([0.2]))


_TABLE_LIMIT = 200_000


@lru_cache(maxsize=4)
def _old_cp_table(n, level):  # audit/search.py _cp_table
    counts = np.arange(n + 1)
    return cp_upper(counts, n, level), cp_lower(counts, n, level)


def _old_score_candidate(t0, t1, claim, level=0.05):  # audit/search.py score_candidate after the statistic
    n = t0.size
    pooled = np.unique(np.concatenate([t0, t1]))
    if pooled.size > 2048:
        grid = pooled[np.linspace(0, pooled.size - 1, 2048).astype(np.int64)]
        extremes = [t0.max(), t1.max(), t0.min(), t1.min()]
        after = np.searchsorted(pooled, extremes, side="right")
        extremes += [pooled[i] for i in after if i < pooled.size]
        pooled = np.unique(np.concatenate([grid, extremes]))
    thresholds = pooled[1:]

    def tail(values):
        ordered = np.sort(values)
        return ordered.size - np.searchsorted(ordered, thresholds, side="left")

    c0, c1 = tail(t0), tail(t1)
    count_a, count_b = np.concatenate([c1, c0]), np.concatenate([c0, c1])
    if n <= _TABLE_LIMIT:
        upper, lower = _old_cp_table(n, level)
        alpha_hi, beta_hi = upper[count_b], 1.0 - lower[count_a]
    else:
        alpha_hi, beta_hi = cp_upper(count_b, n, level), 1.0 - cp_lower(count_a, n, level)
    if hasattr(claim, "mu"):
        slots = ("mu",)
    else:
        slots = (f"epsilon@{float(claim.reference_delta)!r}", f"delta@{float(claim.epsilon)!r}", "mu")
    estimates, fractions = [], []
    for slot in slots:
        kind, _, value = slot.partition("@")
        if kind == "epsilon":
            estimate = float(epsilon_lower_bound(alpha_hi, beta_hi, float(value)).max())
            fractions.append(estimate / claim.epsilon)
        elif kind == "delta":
            estimate = float(delta_lower_bound(alpha_hi, beta_hi, float(value)).max())
            if not isinstance(claim, PureDP):
                fractions.append(estimate / claim.delta)
        else:
            estimate = float(mu_lower_bound(alpha_hi, beta_hi).max())
            if isinstance(claim, GaussianDP):
                fractions.append(estimate / claim.mu)
        estimates.append(estimate)
    return max(fractions), tuple(estimates)


def _samples(rng, kind: str, n: int, shift: float):
    if kind == "continuous":  # more distinct values than thresholds: thinned by rank
        return rng.laplace(0.0, 1.0, n), rng.laplace(shift, 1.0, n)
    if kind == "discrete":  # a few atoms, every one a threshold
        return rng.poisson(3.0, n).astype(float), rng.poisson(3.0 + shift, n).astype(float)
    # One side never reaches the other's top: the extremes are kept.
    return rng.uniform(0.0, 1.0, n), rng.uniform(0.5, 1.0 + shift, n)


@pytest.mark.parametrize("claim", CLAIMS, ids=IDS)
@pytest.mark.parametrize("kind", ["continuous", "discrete", "disjoint"])
@pytest.mark.parametrize("n", [500, 20_000, 250_000])
def test_search_scores_are_the_old_ones(claim, kind, n):
    rng = np.random.default_rng([SEED, n, len(kind)])
    t0, t1 = _samples(rng, kind, n, 0.3)
    value, estimates = _old_score_candidate(t0, t1, claim)
    score = score_candidate(t0[:, None], t1[:, None], claim)
    # A curve claim's usage also takes its whole ε(δ) profile (tests/audit/test_usage.py checks that part).
    assert score.value == (value if math.isnan(score.profile) else max(value, score.profile))
    assert score.estimates == estimates


def test_threshold_events_count_the_draws_at_or_above_each_threshold():
    base, neighbour = np.array([3.0, 1.0, 2.0, 2.0]), np.array([2.0, 5.0, 4.0])
    events = threshold_events(base, neighbour, limit=2048, spacing=Spacing.RANKS)
    assert events.thresholds.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert events.base.tolist() == [4, 3, 1, 0, 0] and events.neighbour.tolist() == [3, 3, 2, 2, 1]
    assert (events.n_base, events.n_neighbour) == (4, 3)
    # A constant statistic still has its one (uninformative) event.
    constant = threshold_events(np.zeros(5), np.zeros(5), limit=2048, spacing=Spacing.QUANTILES)
    assert constant.thresholds.tolist() == [0.0] and claim_usage(PureDP(1.0), constant.points(0.05)).value == 0.0


@pytest.mark.parametrize("spacing", list(Spacing))
def test_thinned_thresholds_keep_about_the_limit(spacing):
    rng = np.random.default_rng(SEED)
    events = threshold_events(rng.normal(size=5000), rng.normal(1.0, 1.0, 5000), limit=100, spacing=spacing)
    assert 100 <= events.thresholds.size <= 108 and np.all(np.diff(events.thresholds) > 0)


def test_mu_slot_value_is_the_mu_bound():
    rng = np.random.default_rng(SEED)
    alpha_hi, beta_hi = rng.uniform(size=50), rng.uniform(size=50)
    assert np.array_equal(slot_values(MU, alpha_hi, beta_hi), mu_lower_bound(alpha_hi, beta_hi))
    assert np.array_equal(slot_values(Slot.epsilon_at(0.0), alpha_hi, beta_hi),
                          epsilon_lower_bound(alpha_hi, beta_hi, 0.0))
