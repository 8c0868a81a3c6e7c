"""Choosing events (audit/selection.py): scoring only the distinct candidates chooses what scoring
every threshold would."""

import numpy as np
import pytest

from audit import selection
from audit.scoring import choosing_points, slot_values
from audit.selection import Budget, PairCounts, select_events
from audit.slots import MU, Slot, headline_slots
from mechanisms.claims import ApproxDP, GaussianDP, PureDP

BINS = 2**15 + 2


def _counts(rng, discrete: bool, n: int) -> PairCounts:
    if discrete:  # a handful of atoms: most thresholds repeat their neighbour's counts
        atoms = rng.choice(BINS, 6, replace=False)
        base = np.bincount(rng.choice(atoms, n), minlength=BINS)
        neighbour = np.bincount(rng.choice(atoms, n, p=[0.3, 0.1, 0.2, 0.1, 0.2, 0.1]), minlength=BINS)
    else:
        base = np.bincount(np.clip(rng.normal(BINS / 2, 3000, n).astype(int), 0, BINS - 1), minlength=BINS)
        neighbour = np.bincount(np.clip(rng.normal(BINS / 2 + 4000, 3000, n).astype(int), 0, BINS - 1),
                                minlength=BINS)
    return PairCounts(base, neighbour, n)


def _brute_force(counts: PairCounts, slot: Slot, n_certify: int, level: float) -> tuple[int, int]:
    """The first maximiser over every (orientation, threshold), as before candidates were compressed."""
    count_a, count_b = selection._predicted(*counts.tails(), counts.n, n_certify)
    scores = slot_values(slot, *choosing_points(count_a, n_certify, count_b, n_certify, level))
    o, j = np.unravel_index(int(np.argmax(scores)), scores.shape)
    return int(o), int(j) + 1


@pytest.mark.parametrize("discrete", [True, False])
@pytest.mark.parametrize("n", [300, 50_000])
@pytest.mark.parametrize("claim", [ApproxDP(1.0, 1e-5), PureDP(1.0), GaussianDP(1.0)])
def test_compressed_candidates_choose_the_brute_force_events(discrete, n, claim):
    counts = _counts(np.random.default_rng(n + discrete), discrete, n)
    budget = Budget(0.05, headline_slots(claim), 1)
    events = select_events([counts], claim, budget, 3 * n)
    for event in events:
        if event.band:
            continue
        level = selection._joint_proxy_level(event.level) if event.family == "headline" else event.level
        orientation, index = _brute_force(counts, event.slot, 3 * n, level)
        if event.family == "headline":  # moved to the middle of the brute force's run of empty bins
            count_a, count_b = counts.tails()
            assert event.orientation == orientation and event.index >= index, event.slot
            assert (count_a[orientation, event.index - 1], count_b[orientation, event.index - 1]) == \
                (count_a[orientation, index - 1], count_b[orientation, index - 1]), event.slot
            continue
        assert (event.orientation, event.index) == (orientation, index), event.slot


def test_a_headline_threshold_sits_in_the_middle_of_its_empty_run():
    # The base's draws end at bin 100, the neighbour's one-sided region starts at bin 301: the
    # events {bin ≥ j} for j = 101..301 hold the same selection draws; the middle, 201, is chosen.
    base, neighbour = np.zeros(BINS, dtype=np.int64), np.zeros(BINS, dtype=np.int64)
    base[1:101], neighbour[1:101] = 100, 99
    neighbour[301:311] = 10
    counts = PairCounts(base, neighbour, 10_000)
    claim = ApproxDP(1.0, 1e-3)
    events = select_events([counts], claim, Budget(0.05, headline_slots(claim), 1), 30_000, curves=False)
    assert events[0].orientation == 0 and events[0].index == 201


def test_among_near_ties_the_entry_with_the_widest_empty_run_wins():
    # Two statistics of one pair find the same 100 one-sided draws (the same selection counts): the
    # first right above the other side's bulk, the second far beyond it.
    def counts(gap):
        base, neighbour = np.zeros(BINS, dtype=np.int64), np.zeros(BINS, dtype=np.int64)
        base[1:1001], neighbour[1:1001] = 10, 10
        neighbour[1001 + gap] = 100
        return PairCounts(base, neighbour, 10_000)

    claim = ApproxDP(1.0, 1e-3)
    entries = [counts(1), counts(5000)]
    events = select_events(entries, claim, Budget(0.05, headline_slots(claim), 1), 30_000, curves=False,
                           curve_pairs=[0])
    assert events[0].pair == 1 and events[0].index == 1001 + 2500


def test_an_early_look_builds_no_joint_test_for_a_slot_that_cannot_refute_the_claim():
    # μ cannot refute an (ε, δ) claim, and an early look reports no bounds: its test is skipped,
    # while the slots that can refute are tested exactly as at the last look.
    rng = np.random.default_rng(3)
    claim = ApproxDP(1.0, 1e-5)
    selection_counts, certification = _counts(rng, False, 5_000), _counts(rng, False, 15_000)
    budget = Budget(0.05, headline_slots(claim), 1)
    events = select_events([selection_counts], claim, budget, 15_000, curves=False)
    binning = type("Edges", (), {"edge": staticmethod(float)})()
    tests: dict = {}
    early = selection.certify(events, [certification], [binning], claim, bounds=False, joint_tests=tests)
    assert {key[0] for key in tests} == set(headline_slots(claim)) - {MU}
    last = selection.certify(events, [certification], [binning], claim, joint_tests={})
    assert [c.refutes for c in early] == [c.refutes for c in last]
    mu_last = next(c for c in last if c.event.slot == MU)
    assert mu_last.bound > 0  # the last look (and a stopping one) still certifies the μ bound
