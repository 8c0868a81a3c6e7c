"""Choosing early (audit/allocation.py, audit/stages.py): a main audit with a single look chooses its events on
the first part of its selection draws and, if they already predict a refutation, certifies on the
rest of the draws too, at a budget favouring the slot that refutes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import scenarios
from audit import Verdict, run_audit, stages
from audit.allocation import EARLY_CHOICE_SHARE, MIN_EARLY_CHOICE, allocate
from audit.selection import (FAVOURED_HEADLINE_SHARE, FAVOURED_SLOT_SHARE, JOINT_FACTOR, Budget, PairCounts,
                             predicted_to_refute)
from audit.slots import headline_slots
from mechanisms import GaussianMechanism, LaplaceMechanism
from mechanisms.claims import ApproxDP, GaussianDP, PureDP

SEED = 20261123


class _Recording:
    """A Laplace mechanism that records the size of every call, in order."""

    def __init__(self, inner):
        self.inner, self.name, self.claim, self.sizes = inner, inner.name, inner.claim, []

    def __call__(self, dataset, size, rng):
        self.sizes.append(int(size))
        return self.inner(dataset, size, rng)


def test_only_a_main_audit_with_a_single_look_and_early_stopping_chooses_early():
    claim = PureDP(1.0)
    small = stages.plan_stages(180, 1, "auto", claim, 1, 0.05, early_stopping=True)[1].allocation
    assert small.looks == 1 and small.early_choice == round(EARLY_CHOICE_SHARE * small.selection)
    assert small.selection_segments() == (small.early_choice, small.selection)
    quick, main = stages.plan_stages(2_000_000, 1, "auto", claim, 1, 0.05, early_stopping=True)
    assert quick.looks == 1 and quick.allocation.early_choice == 0  # measured: no gain there, a cost
    assert main.looks > 1 and main.allocation.early_choice == 0
    full = stages.plan_stages(180, 1, "auto", claim, 1, 0.05, early_stopping=False)[1].allocation
    assert full.early_choice == 0 and full.selection_segments() == full.selection_ends
    tiny = allocate(40, 0, (1.0,), early_choice=True)  # a first segment under MIN_EARLY_CHOICE
    assert round(EARLY_CHOICE_SHARE * tiny.selection) < MIN_EARLY_CHOICE and tiny.early_choice == 0


@pytest.mark.parametrize("claim", [PureDP(1.0), ApproxDP(1.0, 1e-5), GaussianDP(1.0)])
@pytest.mark.parametrize("favoured", [None, 0, -1])
@pytest.mark.parametrize("pairs", [1, 3])
def test_a_favouring_budget_still_sums_to_the_failure_budget(claim, favoured, pairs):
    budget = Budget(0.05, headline_slots(claim), n_pairs=pairs)
    if favoured is not None:
        budget = budget.favouring(budget.headline_slots[favoured])
    headline = sum(2 * budget.headline_level_of(slot) for slot in budget.headline_slots)
    curves = budget.curve_level * budget.curve_bounds_per_pair * budget.n_pairs
    assert headline + curves == pytest.approx(0.05, rel=1e-12)
    if favoured is not None and len(budget.headline_slots) > 1:
        slot = budget.headline_slots[favoured]
        assert budget.headline_level_of(slot) == pytest.approx(0.05 * FAVOURED_HEADLINE_SHARE * FAVOURED_SLOT_SHARE / 2)


@pytest.mark.statistical
def test_a_clear_violation_moves_the_rest_of_selection_to_certification_before_certifying():
    # Scale ¼ on a count: true ε 4 against a claimed 1, 180 draws per side.
    mechanism = _Recording(LaplaceMechanism(epsilon=1.0, sensitivity=0.25))
    report = run_audit(mechanism, [scenarios.counting(1).pairs[0]], claim=PureDP(1.0), samples=180, seed=SEED,
                       progress=False, accuracy=False, n_jobs=1)
    allocation = stages.plan_stages(180, 1, "auto", PureDP(1.0), 1, 0.05, early_stopping=True)[1].allocation
    moved = allocation.selection - allocation.early_choice
    # Probe (and the base dataset once more from an equal generator: the reproducibility check),
    # pilot, the first selection segment, then certification with the moved draws: the decision
    # came before any certification draw, and the rest of the selection was never drawn.
    sides = lambda size: [size, size]  # noqa: E731
    assert mechanism.sizes == (sides(stages.PROBE_DRAWS) + [stages.PROBE_DRAWS] + sides(allocation.pilot)
                               + sides(allocation.early_choice) + sides(allocation.certification + moved))
    assert report.verdict is Verdict.VIOLATED
    phases = report.draws["per_pair_per_side"]
    assert phases["selection"] == allocation.early_choice
    assert phases["certification"] == allocation.certification + moved
    assert report.draws["per_side"] == 180 + stages.PROBE_DRAWS
    assert report.draws["looks"]["chose_early"] == {"selection": allocation.early_choice,
                                                    "planned": allocation.selection,
                                                    "favoured": headline_slots(PureDP(1.0))[0].key}
    assert f"chose its events early, on {allocation.early_choice} of {allocation.selection}" in report.summary()
    own = next(e for e in report.evidence if e["slot"] == headline_slots(PureDP(1.0))[0].key)
    assert own["level"] == pytest.approx(JOINT_FACTOR * 0.05 * FAVOURED_HEADLINE_SHARE * FAVOURED_SLOT_SHARE / 2)


@pytest.mark.statistical
def test_a_claim_with_room_to_spare_draws_all_its_selection():
    # True ε ¼ against a claimed 1.  (At a claim that holds exactly, 21% of 600 runs chose early,
    # which costs no level: see benchmarks/efficiency.py.)
    mechanism = _Recording(LaplaceMechanism(epsilon=0.25))
    report = run_audit(mechanism, [scenarios.counting(1).pairs[0]], claim=PureDP(1.0), samples=180, seed=SEED,
                       progress=False, accuracy=False, n_jobs=1)
    allocation = stages.plan_stages(180, 1, "auto", PureDP(1.0), 1, 0.05, early_stopping=True)[1].allocation
    assert report.verdict is Verdict.NOT_REFUTED
    assert report.draws["per_pair_per_side"]["selection"] == allocation.selection
    assert "chose_early" not in report.draws["looks"]
    assert mechanism.sizes[5:9] == [allocation.early_choice] * 2 + [allocation.selection - allocation.early_choice] * 2


@pytest.mark.statistical
def test_choosing_early_keeps_the_false_alarm_rate_at_a_tight_claim():
    # A smoke test of the whole path at a claim that holds exactly (the Laplace at ε = 1 on its
    # worst pair): false VIOLATED ~ Bin(runs, p) with p ≤ 0.05, so the count exceeds the 0.999
    # quantile of Bin(runs, 0.05) with probability < 1e-3.  It only catches gross breaks (an engine
    # that certified on its choosing draws gave 11/200 in review, under the threshold); the
    # guarantee rests on the call-order test above.  Some runs must choose early, or the path
    # would not be tested at all.
    runs, false_alarms, early = 200, 0, 0
    for r in range(runs):
        report = run_audit(LaplaceMechanism(epsilon=1.0), [scenarios.counting(1).pairs[0]], claim=PureDP(1.0),
                           samples=180, seed=SEED + r, progress=False, accuracy=False)
        false_alarms += report.verdict is Verdict.VIOLATED
        early += "chose_early" in report.draws["looks"]
    assert false_alarms <= stats.binom.ppf(0.999, runs, 0.05)
    assert early >= 10  # 21% of 4,000 runs chose early (benchmarks/efficiency.py); P(Bin(200, 0.21) < 10) ≈ 3e-11


def _counts(base, neighbour):
    return PairCounts(np.asarray(base, dtype=np.int64), np.asarray(neighbour, dtype=np.int64), int(np.sum(base)))


def test_the_prediction_reads_only_the_selection_counts_it_is_given():
    claim, budget = PureDP(1.0), Budget(0.05, headline_slots(PureDP(1.0)), n_pairs=1)
    # Histogram bins 0..3 (and the two overflow bins): 16 draws per side.
    separated = _counts([0, 14, 2, 0, 0, 0], [0, 0, 2, 14, 0, 0])  # the neighbour's outputs lie higher
    alike = _counts([0, 4, 4, 4, 4, 0], [0, 4, 4, 4, 4, 0])
    assert predicted_to_refute([separated], claim, budget, 159) == headline_slots(claim)[0]
    assert predicted_to_refute([alike], claim, budget, 159) is None
    # With too few certification draws nothing can be predicted to refute.
    assert predicted_to_refute([separated], claim, budget, 4) is None


@pytest.mark.statistical
def test_two_pairs_and_a_gdp_claim_choose_early_and_account_for_every_draw():
    # The analytic Gaussian (ε = 1, δ = 1e-5) calibrated for sensitivity 1/10 on a count (μ ≈ 2.7)
    # against a claim of μ = 0.5: a clear violation.
    mechanism = _Recording(GaussianMechanism(1.0, 1e-5, sensitivity=0.1))
    report = run_audit(mechanism, scenarios.counting(1), claim=GaussianDP(0.5), samples=180, seed=SEED,
                       progress=False, accuracy=False, n_jobs=1)
    looks = report.draws["looks"]
    assert report.verdict is Verdict.VIOLATED and looks["chose_early"]["favoured"] == "mu"
    allocation = stages.plan_stages(180, 1, "auto", GaussianDP(0.5), 2, 0.05, early_stopping=True)[1].allocation
    # Every call was drawn and counted: 2 pairs, and the certification draws (moved between the
    # pairs if one looked silent) add up to twice the enlarged certification; the probe draws the
    # first base dataset once more (the reproducibility check), which certifies nothing.
    assert sum(mechanism.sizes) == report.draws["per_side"] * 2 + stages.PROBE_DRAWS
    certification = report.draws.get("certification_per_pair", [report.draws["per_pair_per_side"]["certification"]] * 2)
    assert 2 * allocation.early_certification - 2 <= sum(certification) <= 2 * allocation.early_certification


@pytest.mark.statistical
def test_an_interrupted_audit_that_chose_early_resumes_to_the_same_report(tmp_path, interrupt_chunks):
    path = tmp_path / "audit.ckpt.npz"
    mechanism = LaplaceMechanism(epsilon=1.0, sensitivity=0.25)
    kwargs = dict(claim=PureDP(1.0), samples=180, seed=SEED, progress=False, accuracy=False, n_jobs=1)
    pair = [scenarios.counting(1).pairs[0]]
    reference = run_audit(mechanism, pair, **kwargs)
    assert "chose_early" in reference.draws["looks"]

    with interrupt_chunks(5):  # pilot 2, first selection 2, then one certification
        with pytest.raises(KeyboardInterrupt):
            run_audit(mechanism, pair, checkpoint=path, **kwargs)
    resumed = run_audit(mechanism, pair, checkpoint=path, **kwargs)
    assert resumed.evidence == reference.evidence and resumed.draws == reference.draws
