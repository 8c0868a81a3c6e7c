"""The DP-Sniper gap study (``benchmarks/dpsniper_gap.py``): its ideal events and best cut against
closed forms, DP-Sniper's bound definition against its code's formula, and the simulation against
its expectation.

Closed forms (second routes, not the benchmark's search):

* OneTimeRappor (f = 0.95) on DP-Sniper's witness pair: 6 Bloom bits differ, each reported as set
  with probability 1 − f/2 = 0.525 where it is set and f/2 = 0.475 where it is not, so the top
  likelihood-ratio atom has A = 0.525⁶ and B = 0.475⁶, ratio 6·ln(0.525/0.475) = 0.6005.
* ReportNoisyMax3 (k = 5, b = 20) on q = 0 against q = 1: for c ≤ 0, P_q(max < c) =
  Π_j ½e^{(c − q_j)/b}, so P_0(max < 0) = 2⁻⁵ and the ratio is e^{k/b} = e^{0.25} exactly on every
  such tail (docstring of ``ReportNoisyMax3``).  The best cut at DP-Sniper's definition lies a little
  above 0, where the ratio is at most 0.25 and the probability a little above 2⁻⁵.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit.joint_bounds import JointTest
from audit.slots import Slot
from benchmarks.dpsniper_gap import best_expected, definition_bound, ideal_event, simulate


def test_one_time_rappor_ideal_event_is_the_closed_form_atom():
    event = ideal_event("one-time-rappor")
    assert event["A"] == pytest.approx(0.525 ** 6, rel=1e-12)
    assert event["B"] == pytest.approx(0.475 ** 6, rel=1e-12)
    assert event["exact"] == pytest.approx(6 * math.log(0.525 / 0.475), rel=1e-12)


def test_report_noisy_max3_ideal_event_is_the_left_tail():
    event = ideal_event("report-noisy-max3")
    assert event["exact"] == 0.25
    assert 0.25 - 1e-3 <= math.log(event["A"] / event["B"]) <= 0.25 + 1e-12
    assert 2 ** -5 <= event["A"] <= 2 ** -5 * 1.01


def test_definition_bound_is_dpsnipers_two_clopper_pearson_bounds():
    # DP-Sniper: ln(lcb(n, k1, 0.05)) − ln(ucb(n, k2, 0.05)), each the Beta quantile form.
    from scipy import stats

    n, k1, k2 = 1000, 300, 200
    expected = math.log(stats.beta.ppf(0.05, k1, n - k1 + 1) / stats.beta.ppf(0.95, k2 + 1, n - k2))
    assert float(definition_bound(k1, k2, n)) == pytest.approx(expected, rel=1e-9)


@pytest.mark.statistical
@pytest.mark.parametrize("part, draws", [("definition", 400), ("dpaudit", 40)])
def test_simulated_bounds_centre_on_their_expectation_and_repeat_with_the_seed(part, draws):
    event = {"A": 0.525 ** 6, "B": 0.475 ** 6, "exact": 0.6005}
    certification = (1_000_000, 0.048) if part == "dpaudit" else None
    result = simulate(event, 0.5999, draws=draws, seed=7, certification=certification, slot=Slot.epsilon_at(0.0))
    if part == "definition":
        assert simulate(event, 0.5999, draws=draws, seed=7) == result
    # The bounds are smooth in the counts (relative sd ~1e-2 at these n), so their mean is the value
    # at the expected counts up to the sampling error sd/√draws; 5 of those bound the miss with
    # probability < 1e-6 (CLT), and 1e-4 absorbs the O(1/n) curvature bias.
    part = result[part]
    assert abs(part["mean"] - part["expected"]) <= 5 * part["sd"] / np.sqrt(draws) + 1e-4
    assert part["reaches_published"]["of"] == draws


def test_best_expected_finds_the_left_tail_at_zero():
    # At c = 0, A = 2⁻⁵ and B = 2⁻⁵e^{−1/4} in closed form: the best cut at these draws (the ratio
    # is e^{1/4} for every c ≤ 0 and falls above 0, while larger tails have more counts).
    n, level, slot = 14_803_392, 0.048, Slot.epsilon_at(0.0)
    at_zero = JointTest(slot, round(n / 32), round(n * math.exp(-0.25) / 32), n, level).lower_bound()
    found = best_expected("report-noisy-max3", n, level, slot)
    assert at_zero - 1e-12 <= found <= at_zero + 1e-4
