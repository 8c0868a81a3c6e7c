"""Composition: claims by basic composition, exact √k·μ for Gaussians (docs/ground-truth.md §6)."""

import math
import pickle

import numpy as np
import pytest
from scipy import special

from mechanisms import (
    ApproxDP,
    Composition,
    GaussianDP,
    GaussianMechanism,
    LaplaceMechanism,
    PureDP,
    TruncatedLaplaceMechanism,
)
from mechanisms.composition import GaussianComposition, compose_claim
from mechanisms.gdp import gdp_epsilon

SEED = 90210


# -- claims ---------------------------------------------------------------------------------------------

def test_claims_compose():
    # Dwork & Roth Cor. B.2 (kε, kδ); pure kε; Dong–Roth–Su √k·μ.
    assert Composition(GaussianMechanism(1.0, 1e-5, relation="replace"), 4).claim == ApproxDP(4.0, 4e-5, "replace")
    assert Composition(LaplaceMechanism(0.5), 3).claim == PureDP(1.5)
    assert Composition(GaussianMechanism(sigma=2.0), 9).claim == GaussianDP(1.5)
    assert compose_claim(None, 5) is None


def test_vacuous_approx_claim_is_an_error():
    with pytest.raises(ValueError, match=r"kδ = 1\.2 >= 1.*got k=3"):
        Composition(TruncatedLaplaceMechanism(1.0, 0.4), 3)
    assert Composition(TruncatedLaplaceMechanism(1.0, 0.4), 2).claim == ApproxDP(2.0, 0.8)


# -- exact truth ------------------------------------------------------------------------------------------

def test_gaussian_composition_is_exactly_sqrt_k_mu():
    inner = GaussianMechanism(1.0, 1e-5, d=2)
    comp = Composition(inner, 4)
    assert isinstance(comp, GaussianComposition)  # chosen by Composition for a Gaussian-shaped inner
    assert comp.exact_mu() == pytest.approx(2 * inner.exact_mu(), rel=1e-15)
    # k runs of N(0, σ²) = one run with σ/√k (Dong, Roth & Su): same profile and ε(δ)
    single = GaussianMechanism(sigma=inner.sigma / 2, d=2)
    eps = np.array([0.0, 0.5, 2.0, 5.0])
    np.testing.assert_allclose(comp.privacy_profile(eps), single.privacy_profile(eps), rtol=1e-12)
    assert comp.epsilon_for_delta(4e-5) == pytest.approx(single.epsilon_for_delta(4e-5), rel=1e-12)
    np.testing.assert_allclose(comp.tradeoff([0.01, 0.3]), single.tradeoff([0.01, 0.3]), rtol=1e-12)
    # the gap an audit shows: basic composition claims (4, 4e-5); the truth is far smaller
    exact = comp.epsilon_for_delta(4e-5)
    assert exact == pytest.approx(gdp_epsilon(4e-5, 2 * math.sqrt(2) / inner.sigma), rel=1e-12)
    assert exact < 0.6 * comp.claim.epsilon


def test_reference_sqrt_k():
    # μ = 1/2 per run, k = 4 -> μ = 1: docs/ground-truth.md §1 reference ε(1e-5) = 4.3771780957.
    comp = Composition(GaussianMechanism(sigma=2.0), 4)
    assert comp.epsilon_for_delta(1e-5) == pytest.approx(4.3771780957, rel=1e-9)


def test_non_gaussian_truth_unknown():
    comp = Composition(LaplaceMechanism(1.0), 3)
    assert not hasattr(comp, "exact_mu")  # Gaussian-shapedness by the presence of exact_mu
    for call in (lambda: comp.privacy_profile(0.5), lambda: comp.epsilon_for_delta(1e-5),
                 lambda: comp.tradeoff(0.1)):
        with pytest.raises(NotImplementedError, match="Gaussian-shaped.*truth unknown"):
            call()
    # pure ε composes exactly (ess sup of a sum of independent losses = sum of ess sups)
    assert comp.epsilon_for_delta(0.0) == pytest.approx(3.0, rel=1e-15)
    np.testing.assert_array_equal(comp.privacy_profile([3.0, 4.0]), 0.0)
    assert Composition(TruncatedLaplaceMechanism(1.0, 0.1), 2).epsilon_for_delta(0.0) == math.inf
    # k = 1 is the inner mechanism itself
    single = Composition(LaplaceMechanism(1.0), 1)
    assert single.epsilon_for_delta(0.1) == LaplaceMechanism(1.0).epsilon_for_delta(0.1)


def test_nested_composition():
    comp = Composition(Composition(GaussianMechanism(sigma=3.0), 4), 9)
    assert comp.exact_mu() == pytest.approx(math.sqrt(36) / 3.0, rel=1e-15)
    assert comp.claim == GaussianDP(2.0)
    assert comp(np.zeros(1), 3, np.random.default_rng(0)).shape == (3, 36)


# -- sampling -------------------------------------------------------------------------------------------

class CountingMechanism:
    """A user mechanism (no claim, no truth) that counts its calls."""

    def __init__(self):
        self.calls = []

    def __call__(self, dataset, size, rng):
        self.calls.append(size)
        return np.column_stack([rng.standard_normal(size), np.full(size, 7.0)])


def test_one_vectorized_inner_call():
    inner = CountingMechanism()
    comp = Composition(inner, 5)
    out = comp(np.zeros((2, 1)), 8, np.random.default_rng(SEED))
    assert inner.calls == [40] and out.shape == (8, 10)
    np.testing.assert_array_equal(out[:, 1::2], 7.0)  # run j occupies columns 2j, 2j+1
    assert comp.claim is None and comp.name.startswith("Composition(")


@pytest.mark.statistical
def test_runs_are_independent_and_deterministic():
    inner = GaussianMechanism(sigma=1.5, d=2)
    comp = Composition(inner, 3)
    data = np.array([[1.0, 0.0], [1.0, 1.0]])
    n = 100_000
    out = comp(data, n, np.random.default_rng(SEED))
    assert out.shape == (n, 6) and out.dtype == np.float64
    np.testing.assert_array_equal(out, comp(data, n, np.random.default_rng(SEED)))
    noise = out - comp.true_answer(data)
    # CLT: mean s.e. σ/√n; variance s.e. σ²√(2/(n−1)); a correlation of independent columns has
    # s.e. 1/√n.  5 standard errors: false failure probability < 1e-6 per check.
    assert np.all(np.abs(noise.mean(axis=0)) < 5 * 1.5 / math.sqrt(n))
    assert np.all(np.abs(noise.var(axis=0, ddof=1) - 2.25) < 5 * 2.25 * math.sqrt(2 / (n - 1)))
    corr = np.corrcoef(noise.T)
    off_diagonal = corr[~np.eye(6, dtype=bool)]
    assert np.all(np.abs(off_diagonal) < 5 / math.sqrt(n))


# -- accuracy -----------------------------------------------------------------------------------------

def test_accuracy_is_tiled():
    inner = TruncatedLaplaceMechanism(1.0, 1e-5)
    comp = Composition(inner, 4)
    np.testing.assert_array_equal(comp.noise_variance(), np.tile(inner.noise_variance(), 4))
    np.testing.assert_array_equal(comp.true_answer([[0.5], [1.0]]), [1.5] * 4)
    assert comp.output_dim == 4 and comp.query_columns == (0, 1, 2, 3)
    assert comp.d == 1 and comp.row_dim == 1
    assert comp.worst_case_error() == inner.bound
    assert Composition(GaussianMechanism(sigma=1.0, d=3), 2).query_columns == (0, 1, 2, 3, 4, 5)
    assert Composition(GaussianMechanism(sigma=1.0), 2).worst_case_error() is None


def test_error_bound_union_across_runs():
    # k = 10 runs of N(0, 4), max over all 10 queries: union bound σΦ⁻¹(1 − α/(2k)) = 5.61407
    # (docs/ground-truth.md §4), conservative against the exact 5.59925.
    comp = Composition(GaussianMechanism(sigma=2.0), 10)
    assert comp.error_bound(0.05, k=10) == pytest.approx(2.0 * special.ndtri(1 - 0.05 / 20), rel=1e-12)
    assert comp.error_bound(0.05, k=10) > GaussianMechanism(sigma=2.0).error_bound(0.05, k=10)
    # one query is one run's single query: exact
    assert comp.error_bound(0.05) == GaussianMechanism(sigma=2.0).error_bound(0.05)
    # d = 3 per run, 6 queries: at most 6 runs, each with at most 3 queries
    wide = Composition(GaussianMechanism(sigma=2.0, d=3), 10)
    assert wide.error_bound(0.05, k=6) == GaussianMechanism(sigma=2.0, d=3).error_bound(0.05 / 6, k=3)


def test_missing_inner_accuracy_is_not_implemented():
    comp = Composition(CountingMechanism(), 2)
    with pytest.raises(NotImplementedError, match="has no `noise_variance`"):
        comp.noise_variance()
    with pytest.raises(NotImplementedError, match="has no `error_bound`"):
        comp.error_bound(0.05)


# -- bad input ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("k", "error", "match"),
                         [(1.5, TypeError, r"`k` must be an integer, got 1\.5"),
                          (2.0, TypeError, r"`k` must be an integer, got 2\.0"),
                          (True, TypeError, r"`k`.*got True"),
                          ("3", TypeError, r"`k`.*got '3'"),
                          (0, ValueError, r"`k` must be an integer >= 1, got 0"),
                          (-4, ValueError, r"`k`.*got -4")])
def test_bad_k(k, error, match):
    with pytest.raises(error, match=match):
        Composition(GaussianMechanism(sigma=1.0), k)


def test_bad_mechanism_and_sampling_input():
    with pytest.raises(TypeError, match="`mechanism` must be callable"):
        Composition(3.0, 2)
    comp = Composition(GaussianMechanism(sigma=1.0, d=2), 2)
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        comp(np.zeros((1, 3)), 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="`size`"):
        comp(np.zeros((1, 2)), 0, np.random.default_rng(0))
    with pytest.raises(TypeError, match="`rng`"):
        comp(np.zeros((1, 2)), 1, None)
    with pytest.raises(ValueError, match="`alpha`"):
        comp.error_bound(0.0)


def test_value_semantics():
    comp = Composition(GaussianMechanism(1.0, 1e-5), 3)
    assert comp.name == "Composition(Gaussian[analytic](ε=1, δ=1e-05, d=1), k=3)"
    clone = pickle.loads(pickle.dumps(comp))
    assert clone == comp and isinstance(clone, GaussianComposition)
    assert Composition(LaplaceMechanism(1.0), 2) != Composition(LaplaceMechanism(1.0), 3)
    with pytest.raises(AttributeError, match="immutable"):
        comp.k = 5
