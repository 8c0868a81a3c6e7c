"""Choosing early (audit/allocation.py, audit/stages.py): a main audit with a single look chooses its events on
the first part of its selection draws and, if they already predict a refutation, certifies on the
rest of the draws too, at a budget favouring the slot that refutes."""

from __future__ import annotations

import pytest
from scipy import stats

import scenarios
from audit import Verdict, run_audit, stages
from audit.allocation import EARLY_CHOICE_SHARE, MIN_EARLY_CHOICE, allocate
from audit.selection import FAVOURED_SHARES, JOINT_FACTOR, Budget, headline_slots
from mechanisms import LaplaceMechanism
from mechanisms.claims import ApproxDP, PureDP

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


@pytest.mark.parametrize("claim", [PureDP(1.0), ApproxDP(1.0, 1e-5)])
@pytest.mark.parametrize("favoured", [None, 1, 0])
def test_a_favouring_budget_still_sums_to_the_failure_budget(claim, favoured):
    budget = Budget(0.05, headline_slots(claim), n_pairs=3)
    if favoured is not None:
        budget = budget.favouring(budget.headline_slots[favoured])
    headline = sum(2 * budget.headline_level_of(slot) for slot in budget.headline_slots)
    curves = budget.curve_level * budget.curve_bounds_per_pair * budget.n_pairs
    assert headline + curves == pytest.approx(0.05, rel=1e-12)
    if favoured is not None:
        slot = budget.headline_slots[favoured]
        assert budget.headline_level_of(slot) == pytest.approx(0.05 * FAVOURED_SHARES[0] * FAVOURED_SHARES[1] / 2)


def test_a_clear_violation_moves_the_rest_of_selection_to_certification_before_certifying():
    # Scale ¼ on a count: true ε 4 against a claimed 1, 180 draws per side.
    mechanism = _Recording(LaplaceMechanism(epsilon=1.0, sensitivity=0.25))
    report = run_audit(mechanism, [scenarios.counting(1).pairs[0]], claim=PureDP(1.0), samples=180, seed=SEED,
                       progress=False, accuracy=False, n_jobs=1)
    allocation = stages.plan_stages(180, 1, "auto", PureDP(1.0), 1, 0.05, early_stopping=True)[1].allocation
    moved = allocation.selection - allocation.early_choice
    # Probe, pilot, the first selection segment, then certification with the moved draws: the
    # decision came before any certification draw, and the rest of the selection was never drawn.
    sides = lambda size: [size, size]  # noqa: E731
    assert mechanism.sizes == (sides(stages.PROBE_DRAWS) + sides(allocation.pilot)
                               + sides(allocation.early_choice) + sides(allocation.certification + moved))
    assert report.verdict is Verdict.VIOLATED
    phases = report.draws["per_pair_per_side"]
    assert phases["selection"] == allocation.early_choice
    assert phases["certification"] == allocation.certification + moved
    assert report.draws["per_side"] == 180 + stages.PROBE_DRAWS
    assert report.draws["looks"]["chose_early"] == {"selection": allocation.early_choice,
                                                    "planned": allocation.selection}
    assert f"chose its events early, on {allocation.early_choice} of {allocation.selection}" in report.summary()
    own = next(e for e in report.evidence if e["slot"] == headline_slots(PureDP(1.0))[0])
    assert own["level"] == pytest.approx(JOINT_FACTOR * 0.05 * FAVOURED_SHARES[0] * FAVOURED_SHARES[1] / 2)


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
    assert mechanism.sizes[4:8] == [allocation.early_choice] * 2 + [allocation.selection - allocation.early_choice] * 2


def test_choosing_early_keeps_the_false_alarm_rate_at_a_tight_claim():
    # Laplace at exactly its claim (ε = 1 on the worst pair): with the guarantee, false VIOLATED
    # ~ Bin(runs, p) with p ≤ 0.05; the test fails (a false failure has probability < 1e-3) when the
    # count exceeds the 0.999 quantile of Bin(runs, 0.05).
    runs = 200
    false_alarms = sum(
        run_audit(LaplaceMechanism(epsilon=1.0), [scenarios.counting(1).pairs[0]], claim=PureDP(1.0), samples=180,
                  seed=SEED + r, progress=False, accuracy=False).verdict is Verdict.VIOLATED
        for r in range(runs))
    assert false_alarms <= stats.binom.ppf(0.999, runs, 0.05)

