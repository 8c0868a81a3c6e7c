"""The scores that choose statistics (audit/scoring.py): held-out usage, curve claims' profile
usage, and the separation that breaks ties for weak signals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from audit.bounds import delta_lower_bound, epsilon_lower_bound
from audit.intervals import cp_lower, cp_upper
from audit.scoring import (PROFILE_DELTAS, USAGE_LEVEL, claim_usage, held_out_usage, separation, states_curve,
                           statistic_usage)
from audit.selection import DELTA_GRID
from mechanisms.claims import ZCDP, ApproxDP, GaussianDP, ProfileClaim, PureDP, RenyiDP

SEED = 20261126


def test_the_profile_grid_is_the_reported_curves():
    assert np.array_equal(PROFILE_DELTAS, DELTA_GRID)


@pytest.mark.parametrize("claim, curve", [
    (ApproxDP(1.0, 1e-5), False), (PureDP(0.5), False), (GaussianDP(1.0), False), (ZCDP(0.3), True),
    (RenyiDP((2.0, 8.0), (0.4, 1.1)), True), (ProfileClaim.from_table([0.0, 0.5, 2.0], [0.2, 1e-3, 1e-7]), True)])
def test_only_claims_stated_as_a_curve_bound_epsilon_below_their_reference_delta(claim, curve):
    assert states_curve(claim) is curve


def test_a_curve_claims_usage_takes_its_whole_profile():
    # Hand computation: the largest ε(δ)/ε_claim(δ) over the grid where the claim allows a finite,
    # positive ε, at the events' pessimistic points; the headline fractions as for any claim.
    rng = np.random.default_rng(SEED)
    claim = ZCDP(0.05)
    alpha, beta = rng.uniform(0.0, 0.3, (2, 40)), rng.uniform(0.2, 1.0, (2, 40))
    usage = claim_usage(claim, (alpha, beta))
    ratios = [float(epsilon_lower_bound(alpha, beta, d).max()) / claim.epsilon_at(float(d)) for d in DELTA_GRID
              if 0 < claim.epsilon_at(float(d)) < math.inf]
    assert usage.profile == max(ratios)
    headline = [usage.estimates[0] / claim.epsilon, usage.estimates[1] / claim.delta]
    assert usage.value == max(headline + [usage.profile])
    assert math.isnan(claim_usage(ApproxDP(1.0, 1e-5), (alpha, beta)).profile)


def test_held_out_usage_measures_the_event_chosen_on_the_first_half_on_the_second():
    # Scores: the base is always 0; the neighbour scores 1 on 30 of the first 500 draws and on 20
    # of the second 500.  Every quantity chooses {T >= 1}, more likely under the neighbour, on the
    # first half; on the second it has 20 of 500 neighbour draws and 0 of 500 base draws.
    base = np.zeros(1000)
    neighbour = np.zeros(1000)
    neighbour[:30] = 1.0
    neighbour[500:520] = 1.0
    claim = ApproxDP(1.0, 1e-3)
    usage = held_out_usage(claim, base, neighbour)
    alpha_hi, beta_hi = cp_upper(0, 500, USAGE_LEVEL), 1.0 - cp_lower(20, 500, USAGE_LEVEL)
    alpha_lo, beta_lo = cp_lower(0, 500, USAGE_LEVEL), 1.0 - cp_upper(20, 500, USAGE_LEVEL)
    epsilon = float(epsilon_lower_bound(np.array([alpha_hi]), np.array([beta_hi]), 1e-3)[0])
    delta = float(delta_lower_bound(np.array([alpha_hi]), np.array([beta_hi]), 1.0)[0])
    assert usage.estimates[:2] == (epsilon, delta)
    assert usage.lower == max(epsilon / 1.0, delta / 1e-3)
    # The optimistic point has no base draw to spare: ε unbounded.
    assert alpha_lo == 0.0 and beta_lo < beta_hi and usage.upper == math.inf


@pytest.mark.statistical
@pytest.mark.parametrize("claim", [PureDP(0.1), ApproxDP(1.0, 1e-5), GaussianDP(0.5)], ids=["pure", "approx", "gdp"])
def test_held_out_usage_of_no_signal_is_rarely_positive(claim):
    # Both sides N(0, 1): every event has equal probabilities.  A quantity's pessimistic value on the
    # second half is positive only if its one-sided bounds at level 0.05 both err, in opposite
    # directions, on two independent counts: probability ≤ 0.05 per quantity (much less, in fact),
    # hence ≤ 0.15 per run over the at most three quantities.  Tolerance: the 0.999 quantile of
    # Binomial(40, 0.15).  The winner's curse is gone: statistic_usage, which scores the maximum
    # over the same ~2,000 thresholds, is positive in most runs.
    rng = np.random.default_rng([SEED, len(str(claim))])
    runs, positive, cursed = 40, 0, 0
    for _ in range(runs):
        t0, t1 = rng.normal(size=20_000), rng.normal(size=20_000)
        positive += held_out_usage(claim, t0, t1).lower > 0
        cursed += statistic_usage(claim, t0, t1, exact=False).value > 0
    assert positive <= stats.binom.ppf(0.999, runs, 0.15)
    assert cursed > positive


@pytest.mark.statistical
def test_separation_estimates_the_standardised_shift_with_its_standard_error():
    # T ~ N(0, 1) against N(0.1, 1): d = 0.1, SE = √(2/n); 5 SE tolerance (two-sided 6e-7).
    rng = np.random.default_rng(SEED)
    n = 200_000
    t0, t1 = rng.normal(size=n), rng.normal(0.1, 1.0, n)
    d = separation(t0, t1)
    assert d.standard_error == pytest.approx(math.sqrt(2.0 / n), rel=1e-12)
    assert abs(d.value - 0.1) <= 5 * d.standard_error
    # Paired with a noisier copy of itself: the difference's SE is that of the added noise alone.
    u0, u1 = t0 + rng.normal(size=n), t1 + rng.normal(size=n)
    paired = separation(u0, u1, reference=(t0, t1))
    spread_t, spread_u = math.sqrt(0.5 * (t0.var() + t1.var())), math.sqrt(0.5 * (u0.var() + u1.var()))
    by_hand = math.sqrt(np.var(u0 / spread_u - t0 / spread_t) / n + np.var(u1 / spread_u - t1 / spread_t) / n)
    assert paired.standard_error == pytest.approx(by_hand, rel=1e-9)
    assert paired.standard_error < d.standard_error
