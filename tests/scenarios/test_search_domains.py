"""Search domains, proposals and the exact truth of the search example mechanisms (issue 13)."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

import scenarios
from mechanisms.zoo.search_examples import ClippedBoxMean, ExponentialMedian, ThresholdHistogram
from scenarios import domains
from scenarios.search import is_valid, mutate, random_candidates, structured_candidates

RNG_SEED = 20261123


# -- domains -----------------------------------------------------------------------------------
def test_box_corners_and_membership():
    box = domains.Box([-3, -1], [1, 2], n=2)
    corners = box.corners()
    assert {tuple(c) for c in corners} == {(-3, -1), (1, -1), (-3, 2), (1, 2)}
    rest = np.array([[0.0, 0.0], [1.0, 2.0]])
    assert box.pair_problem(rest, np.vstack([rest, [[-3, 2]]]), "add-remove") is None
    assert "outside the box" in box.pair_problem(rest, np.vstack([rest, [[-4, 2]]]), "add-remove")
    assert "outside the domain's sizes" in box.pair_problem(rest[:1], rest, "add-remove")
    assert "do not differ by one" in box.pair_problem(rest, rest, "add-remove")


def test_finite_rows_and_sizes():
    cats = domains.categories(3, n=(0, 2))
    assert cats.sizes == (0, 1, 2)
    assert cats.pair_problem(np.zeros((0, 1)), [[2.0]], "add-remove") is None
    assert "outside its set" in cats.pair_problem([[0.0]], [[0.0], [3.0]], "add-remove")
    with pytest.raises(ValueError, match="n_min <= n_max"):
        domains.integers(0, 5, n=(3, 1))
    with pytest.raises(TypeError, match="`n`"):
        domains.Box(0, 1, n=2.5)


@pytest.mark.parametrize("norm", domains.NORMS)
def test_answer_vectors_fit_never_exceeds_sensitivity(norm):
    space = domains.AnswerVectors(5, lo=0, hi=10, norm=norm, sensitivity=1.0)
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(200):
        base = space.random_rows(rng, 1)[0]
        neighbor = space.fit(base, rng.normal(size=5))
        assert space.distance(base, neighbor) <= 1.0
        assert space.pair_problem(base, neighbor, "add-remove") is None
    assert "exceeds the declared sensitivity" in space.pair_problem(np.zeros(5), np.full(5, 1.5), "replace")
    with pytest.raises(ValueError, match="`norm`"):
        domains.AnswerVectors(3, norm="l3")


DOMAIN_CASES = [
    (domains.Box([-1, 0], [1, 2], n=(0, 2)), "add-remove"),
    (domains.Box([-1, 0], [1, 2], n=3), "replace"),
    (domains.categories(4, n=(1, 3)), "add-remove"),
    (domains.integers(0, 3, d=2, n=2), "replace"),
    (domains.GeneratedRows(lambda rng, size: rng.normal(size=(size, 2)), d=2, n=(1, 2)), "add-remove"),
    (domains.AnswerVectors(4, norm="l2", sensitivity=2.0), "add-remove"),
]


@pytest.mark.parametrize("domain,relation", DOMAIN_CASES)
def test_every_proposal_is_a_checked_neighbour_pair(domain, relation):
    spec = scenarios.search(domain, relation, budget=10)
    rng = np.random.default_rng(RNG_SEED)
    proposals = structured_candidates(spec, rng) + random_candidates(spec, rng, 20)
    proposals += [mutate(spec, c, rng, 0.3) for c in proposals[:20]]
    valid = [is_valid(spec, c) for c in proposals]
    # Structured and random proposals are valid by construction; a mutation may occasionally
    # make the replaced row equal the new one, which the search then discards, and fail no other way.
    assert all(valid[: len(proposals) - 20])
    for candidate, ok in zip(proposals[-20:], valid[-20:]):
        assert ok or (relation == "replace" and np.array_equal(candidate.base, candidate.neighbor)), candidate


def test_statdp_patterns_present():
    spec = scenarios.search(domains.AnswerVectors(5, sensitivity=1.0, norm="per-coordinate"))
    kinds = {c.kind.split(" (")[0] for c in structured_candidates(spec, np.random.default_rng(0))}
    assert {"StatDP one above", "StatDP one below", "StatDP all above", "StatDP half-half"} <= kinds


def test_search_spec_validation():
    with pytest.raises(ValueError, match="`budget`"):
        scenarios.search(domains.categories(2), budget=2, m=3)
    with pytest.raises(TypeError, match="`domain`"):
        scenarios.search("box")
    with pytest.raises(ValueError, match="`explore_samples`"):
        scenarios.search(domains.categories(2), explore_samples=10)
    spec = scenarios.search(domains.categories(2), budget=101, rounds=4)
    assert sum(spec.round_sizes()) == 101


# -- exact truth of the examples, each by a second route ------------------------------------------
def _median_distribution_brute(values, epsilon, top):
    """Straight-line second route: utility of each output from the definition."""
    weights = []
    for r in range(top + 1):
        below = sum(1 for v in values if v < r)
        above = sum(1 for v in values if v > r)
        weights.append(math.exp(-epsilon * abs(below - above) / 2.0))
    total = sum(weights)
    return [w / total for w in weights]


def test_exponential_median_truth_matches_brute_force():
    epsilon, top, max_size = 1.5, 3, 3
    mechanism = ExponentialMedian(epsilon, top=top, max_size=max_size)
    worst, worst_delta = 0.0, 0.0
    for n in range(0, max_size):  # ordered tuples, not multisets: a different enumeration
        for values in itertools.product(range(top + 1), repeat=n):
            p = _median_distribution_brute(values, epsilon, top)
            for added in range(top + 1):
                q = _median_distribution_brute(values + (added,), epsilon, top)
                for a, b in ((p, q), (q, p)):
                    worst = max(worst, max(math.log(x / y) for x, y in zip(a, b)))
                    worst_delta = max(worst_delta, sum(max(x - math.exp(0.5) * y, 0.0) for x, y in zip(a, b)))
    assert mechanism.epsilon_for_delta(0.0) == pytest.approx(worst, rel=1e-12)
    assert float(mechanism.privacy_profile(0.5)) == pytest.approx(worst_delta, rel=1e-12)
    delta = 1e-3
    eps = mechanism.epsilon_for_delta(delta)
    assert float(mechanism.privacy_profile(eps)) == pytest.approx(delta, rel=1e-9)
    assert worst <= epsilon  # the claim holds


@pytest.mark.statistical
def test_exponential_median_sampler_matches_distribution():
    mechanism = ExponentialMedian(2.0, top=5, max_size=4)
    data = np.array([[0.0], [0.0], [5.0]])
    draws = mechanism(data, 200_000, np.random.default_rng(RNG_SEED))[:, 0]
    expected = np.array(_median_distribution_brute([0, 0, 5], 2.0, 5))
    observed = np.bincount(draws.astype(int), minlength=6)
    # Pearson chi-square with 5 degrees of freedom; fails with probability 1e-4 when correct.
    chi2 = float(((observed - 200_000 * expected) ** 2 / (200_000 * expected)).sum())
    assert chi2 < stats.chi2.ppf(1 - 1e-4, 5)


def test_threshold_histogram_release_probability():
    mechanism = ThresholdHistogram(bins=3, scale=1.5, threshold=5.0)
    # Second route: scipy's Laplace survival function at τ − 1.
    assert mechanism.release_probability == pytest.approx(stats.laplace.sf(4.0, scale=1.5), rel=1e-12)
    assert float(mechanism.privacy_profile(1.0)) == mechanism.release_probability
    assert mechanism.epsilon_for_delta(mechanism.release_probability / 2) == math.inf
    with pytest.raises(NotImplementedError):
        mechanism.privacy_profile(0.1)
    with pytest.raises(NotImplementedError):
        mechanism.epsilon_for_delta(0.5)
    out = mechanism(np.array([[0.0], [0.0]]), 1000, np.random.default_rng(1))
    assert np.all(out[:, 1:] == 0.0)  # empty bins are never released


def test_clipped_box_mean_sensitivity_by_corner_enumeration():
    lo, hi, n = np.array([-3.0, -1.0, 0.5]), np.array([1.0, 2.0, 4.0]), 5
    mechanism = ClippedBoxMean(lo, hi, n=n, sigma=2.0)
    corners = [np.where(bits, hi, lo) for bits in itertools.product([0, 1], repeat=3)]
    add = max(np.linalg.norm(c) for c in corners) / n
    replace = max(np.linalg.norm(a - b) for a in corners for b in corners) / n
    assert mechanism.sensitivity("add-remove") == pytest.approx(add, rel=1e-14)
    assert mechanism.sensitivity("replace") == pytest.approx(replace, rel=1e-14)
    base, neighbour = mechanism.worst_pair()
    shift = np.clip(neighbour, lo, hi).sum(0) / n - np.clip(base, lo, hi).sum(0) / n
    assert np.linalg.norm(shift) == pytest.approx(add, rel=1e-12)
