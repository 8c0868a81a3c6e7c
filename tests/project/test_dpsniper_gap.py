"""The DP-Sniper gap study (``benchmarks/dpsniper_gap.py``): its events and best cut against closed
forms, DP-Sniper's bound definition against its own published output, the simulation against a
second route, and the command's resume rules.

Closed forms (second routes, not the benchmark's search):

* OneTimeRappor (f = 0.95) on DP-Sniper's witness pair: 6 Bloom bits differ, each reported as set
  with probability 1 − f/2 = 0.525 where it is set and f/2 = 0.475 where it is not, so the top
  likelihood-ratio atom has A = 0.525⁶ and B = 0.475⁶, ratio 6·ln(0.525/0.475) = 0.6005.  Its B is
  above DP-Sniper's floor c = 0.01, so DP-Sniper's event is that atom with tie weight q = c/B.
* ReportNoisyMax3 (k = 5, b = 20) on q = 0 against q = 1: for c ≤ 0, P_q(max < c) =
  Π_j ½e^{(c − q_j)/b}, so P_0(max < 0) = 2⁻⁵ and the ratio is e^{k/b} = e^{0.25} exactly on every
  such tail (docstring of ``ReportNoisyMax3``), including DP-Sniper's, whose B = c = 0.01 puts its
  cut far below 0.
"""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

import benchmarks.dpsniper_gap as gap
from audit.joint_bounds import JointTest
from audit.slots import Slot
from benchmarks.dpsniper_gap import best_expected, definition_bound, dpsniper_event, ideal_event, simulate
from benchmarks.literature import DPSNIPER_FINAL_DRAWS


def test_one_time_rappor_events_are_the_closed_form_atom():
    event = ideal_event("one-time-rappor")
    assert event["A"] == pytest.approx(0.525 ** 6, rel=1e-12)
    assert event["B"] == pytest.approx(0.475 ** 6, rel=1e-12)
    assert event["exact"] == pytest.approx(6 * math.log(0.525 / 0.475), rel=1e-12)
    dpsniper = dpsniper_event("one-time-rappor")
    assert dpsniper["full"] == (0.0, 0.0)
    assert dpsniper["tie"] == pytest.approx((0.525 ** 6, 0.475 ** 6), rel=1e-12)
    assert dpsniper["q"] == pytest.approx(0.01 / 0.475 ** 6, rel=1e-12)


def test_report_noisy_max3_events_are_left_tails():
    event = ideal_event("report-noisy-max3")
    # The best cut c is a little above 0: more counts, a ratio a little below e^{0.25}.  For 0 < c < 1,
    # ln P_0(max < c) = 5 ln(1 − ½e^{−x}) = 5(−ln 2 + x − x² + O(x³)), x = c/b, while P_1 keeps its
    # exact form, so the ratio falls short of 0.25 by about 5x²; A ≤ 1.01·2⁻⁵ means 5(x − x²) ≤ ln 1.01,
    # c ≤ 0.04, so the shortfall is at most 5(0.04/20)² = 2e-5.
    assert 2 ** -5 <= event["A"] <= 2 ** -5 * 1.01
    assert 0.25 - 2e-5 <= math.log(event["A"] / event["B"]) <= 0.25 + 1e-12
    dpsniper = dpsniper_event("report-noisy-max3")
    a, b = (dpsniper["full"][i] + dpsniper["q"] * dpsniper["tie"][i] for i in (0, 1))
    assert b == pytest.approx(0.01, rel=1e-12)
    assert math.log(a / b) == pytest.approx(0.25, rel=1e-12)


def test_definition_bound_reproduces_dpsnipers_published_bounds():
    # DP-Sniper's final estimates as its run logged them (eth-sri/dp-sniper,
    # eval_sp2021/reference-results/dd_search_mlp_data.log): p1, p2 and eps_lcb, on n_final = 2·10⁸.
    for p1, p2, published in ((0.012805799641753214, 0.009963288036288327, 0.2488099442765046),
                              (0.018166549585485425, 0.009950947911231725, 0.5998986783208569)):
        counts = int(p1 * DPSNIPER_FINAL_DRAWS), int(p2 * DPSNIPER_FINAL_DRAWS)
        assert float(definition_bound(*counts, DPSNIPER_FINAL_DRAWS)) == pytest.approx(published, abs=1e-9)


@pytest.mark.statistical
def test_simulated_bounds_centre_on_the_delta_method_and_repeat_with_the_seed():
    # Second route: for counts of millions, ln CP_lo(k) ≈ ln p − z·√((1 − p)/(np)) (and the upper bound
    # symmetric), z = Φ⁻¹(0.95), with a relative error O(1/(np)) < 1e-6 here; so the bound at the
    # expected counts is ln(A/B) − z(√((1 − A)/(nA)) + √((1 − B)/(nB))) within 1e-5.  The simulated
    # mean is that value up to sd/√draws; |t| > 5 has probability about 1e-5 at 400 draws.
    event = {"A": 0.525 ** 6, "B": 0.475 ** 6, "exact": 0.6005}
    draws, n, z = 400, DPSNIPER_FINAL_DRAWS, stats.norm.ppf(0.95)
    result = simulate(event, 0.5999, draws=draws, seed=7)
    assert simulate(event, 0.5999, draws=draws, seed=7) == result
    ideal = result["ideal"]
    delta = math.log(event["A"] / event["B"]) - z * sum(math.sqrt((1 - p) / (n * p)) for p in (event["A"], event["B"]))
    assert ideal["expected"] == pytest.approx(delta, abs=1e-5)
    assert abs(ideal["mean"] - ideal["expected"]) <= 5 * ideal["sd"] / math.sqrt(draws) + 1e-5


@pytest.mark.statistical
def test_simulated_joint_test_centres_on_its_expectation():
    # The joint bound is smooth in the counts (relative sd ~1e-2 at n = 10⁶), so its mean over 40
    # draws is its value at the expected counts up to sd/√40 (|t₃₉| > 5: probability ~1e-5), plus an
    # O(1/n) curvature bias well below 1e-4.
    event = {"A": 0.525 ** 6, "B": 0.475 ** 6, "exact": 0.6005}
    result = simulate(event, 0.5999, draws=40, seed=7, certification=(1_000_000, 0.048), slot=Slot.epsilon_at(0.0))
    joint = result["dpaudit"]
    assert abs(joint["mean"] - joint["expected"]) <= 5 * joint["sd"] / math.sqrt(40) + 1e-4
    assert joint["reaches_published"]["of"] == 40
    with pytest.raises(ValueError, match="certification"):
        simulate(event, 0.5999, draws=2, seed=7, certification=(1_000_000, 0.048))


def test_best_expected_finds_the_left_tail_at_zero():
    # At c = 0, A = 2⁻⁵ and B = 2⁻⁵e^{−1/4} in closed form, a cut at least as good as any other's
    # neighbourhood; no event's bound at its expected counts exceeds its ratio, at most e^{1/4}.
    n, level, slot = 14_803_392, 0.048, Slot.epsilon_at(0.0)
    at_zero = JointTest(slot, round(n / 32), round(n * math.exp(-0.25) / 32), n, level).lower_bound()
    assert at_zero - 1e-12 <= best_expected("report-noisy-max3", n, level, slot) <= 0.25


def test_command_resumes_by_seed_and_restarts_at_another_n(tmp_path, monkeypatch):
    calls = []

    def fake_audit(mechanism, scenario, *, samples, seed, **options):
        calls.append((samples, seed))
        evidence = {"event": "e", "family": "headline", "test": "joint", "level": 0.048, "n": 1_000_000,
                    "count_more_likely": 20_939, "count_other": 11_486}
        return SimpleNamespace(epsilon_lower_bound=0.59, verdict=SimpleNamespace(value="NOT_REFUTED"),
                               to_dict=lambda: {"witness": {"epsilon": {"evidence": 0}}, "evidence": [evidence]})

    monkeypatch.setattr(gap, "run_audit", fake_audit)
    run = ["--only", "one-time-rappor", "--draws", "3", "--samples", "1000", "--out", str(tmp_path)]
    assert gap.main(run + ["--seeds", "2"]) == 0
    assert gap.main(run + ["--seeds", "3"]) == 0  # only the third seed is new
    seeds = [seed for _, seed in calls]
    assert len(calls) == 3 and len(set(seeds)) == 3
    row = json.loads((tmp_path / "gap.json").read_text())["rows"]["one-time-rappor"]
    assert row["samples"] == 1000 and len(row["seeds"]) == 3
    assert row["simulation"]["dpaudit"]["n"] == 1_000_000
    assert "| OneTimeRappor |" in (tmp_path / "gap.md").read_text()
    assert gap.main(run[:-4] + ["--samples", "2000", "--out", str(tmp_path), "--seeds", "1"]) == 0
    row = json.loads((tmp_path / "gap.json").read_text())["rows"]["one-time-rappor"]
    assert row["samples"] == 2000 and len(row["seeds"]) == 1 and calls[-1][0] == 2000
    with pytest.raises(SystemExit):
        gap.main(run + ["--seeds", "-1"])
