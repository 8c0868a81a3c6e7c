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


def test_without_lanes_a_near_tie_between_pairs_goes_to_the_widest_run_and_a_clear_lead_to_the_best():
    # Two pairs of a multi-pair audit (no lanes; both get curves): with the same 100 one-sided draws
    # the pair whose draws lie beyond the wider empty run is certified, as intended and documented
    # (docs/statistics.md); with 110 draws right above the bulk, pair 0 leads by more than NEAR_TIE
    # and is certified although its run is narrow.
    def counts(gap, one_sided=100):
        base, neighbour = np.zeros(BINS, dtype=np.int64), np.zeros(BINS, dtype=np.int64)
        base[1:1001], neighbour[1:1001] = 10, 10
        neighbour[1001 + gap] = one_sided
        return PairCounts(base, neighbour, 10_000)

    claim = ApproxDP(1.0, 1e-3)
    budget = Budget(0.05, headline_slots(claim), 2)
    tied = select_events([counts(1), counts(5000)], claim, budget, 30_000, curves=False)
    assert {(e.pair, e.index) for e in tied} == {(1, 1001 + 2500)}
    led = select_events([counts(1, 110), counts(5000)], claim, budget, 30_000, curves=False)
    assert {(e.pair, e.index) for e in led} == {(0, 1001)} and len(led) == len(tied)


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


# --- several statistics of one pair (lanes): contenders share the slot's level ----------------------

def _tail_entry(one_sided: int, other: int, at: int = 2000) -> PairCounts:
    """A bulk both sides share, then ``one_sided`` neighbour draws and ``other`` base draws in one bin."""
    base, neighbour = np.zeros(BINS, dtype=np.int64), np.zeros(BINS, dtype=np.int64)
    base[1:1001], neighbour[1:1001] = 2000, 2000
    neighbour[at] += one_sided
    base[at] += other
    return PairCounts(base, neighbour, 2_000_000)


def _epsilon_events(entries, alternates):
    claim = ApproxDP(1.0, 1e-5)
    budget = Budget(0.05, headline_slots(claim), 1)
    events = select_events(entries, claim, budget, 6_000_000, curves=False, slots=(Slot.epsilon_at(1e-5),),
                           curve_pairs=[0], alternates=alternates)
    return events, budget.headline_level_of(Slot.epsilon_at(1e-5))


def test_lanes_that_the_selection_draws_cannot_rank_are_all_certified_at_a_share_of_the_level():
    # The far-tail Laplace at 10⁷ draws: the binned lane's event held 46 against 1 selection draws,
    # the linear lane's 47 against 1 (certified: 270 against 19, and 224 against 1).  Their predicted
    # values overlap by far within a standard deviation; both are certified, at half the level each.
    events, level = _epsilon_events([_tail_entry(46, 1), _tail_entry(47, 1, at=2500)], {1})
    assert sorted(e.pair for e in events) == [0, 1]
    assert all(e.level == pytest.approx(level / 2, rel=1e-12) for e in events)


def test_a_lane_clearly_behind_the_best_is_not_certified():
    # 200 against 0 draws and 12 against 3: the second's optimistic value (counts one standard
    # deviation in its favour) is far below the first's pessimistic one.
    events, level = _epsilon_events([_tail_entry(200, 0), _tail_entry(12, 3)], {1})
    assert [e.pair for e in events] == [0] and events[0].level == level


def test_two_lanes_holding_the_same_selection_draws_count_once():
    # The same region through two statistics (equal counts on both sides): one event, the whole level.
    events, level = _epsilon_events([_tail_entry(60, 1), _tail_entry(60, 1, at=3000)], {1})
    assert len(events) == 1 and events[0].level == level


def test_at_most_max_contenders_share_a_slot():
    entries = [_tail_entry(40 + k, 1, at=2000 + 100 * k) for k in range(5)]
    events, level = _epsilon_events(entries, {1, 2, 3, 4})
    assert len(events) == selection.MAX_CONTENDERS
    assert sorted(e.pair for e in events) == [2, 3, 4]  # the best scores
    assert all(e.level == pytest.approx(level / selection.MAX_CONTENDERS, rel=1e-12) for e in events)
