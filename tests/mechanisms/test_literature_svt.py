"""Sparse vector variants (mechanisms.literature.svt): samplers against quadrature, and the truths.

Monte Carlo checks allow Z = 5 standard deviations plus one count (CLT: a correct formula fails
one check with probability below 6e-7).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from mechanisms.literature.svt import (ABOVE, BELOW, HALTED, SVT4_WITNESS, SVT6_PATTERN, SVT6_WITNESS,
                                       NumericalSVT, SparseVectorTechnique1, SparseVectorTechnique2,
                                       SparseVectorTechnique3, SparseVectorTechnique4,
                                       SparseVectorTechnique5, SparseVectorTechnique6, SVT34Parallel,
                                       halting_patterns)

Z = 5.0


def assert_binomial(count: int, n: int, p: float) -> None:
    tolerance = Z * math.sqrt(n * p * (1 - p)) + 1
    assert abs(count - n * p) <= tolerance, (count, n * p, tolerance)


def pattern_counts(out: np.ndarray, pattern) -> int:
    return int(np.all(out == np.asarray(pattern), axis=1).sum())


@pytest.mark.statistical
@pytest.mark.parametrize("mechanism, x", [
    (SparseVectorTechnique1(threshold=0.5), (0.0,) * 5 + (1.0,) * 5),
    (SparseVectorTechnique2(), (1.0,) * 5 + (0.0,) * 5),
    (SparseVectorTechnique4(), SVT4_WITNESS[1]),
], ids=["svt1", "svt2", "svt4"])
def test_halting_samplers_match_pattern_quadrature(mechanism, x):
    n = 300_000
    out = mechanism(np.array(x), n, np.random.default_rng(11))
    total = 0.0
    for pattern in halting_patterns(10):
        p = mechanism.pattern_probability(pattern, x)
        total += p
        assert_binomial(pattern_counts(out, pattern), n, p)
    assert total == pytest.approx(1.0, abs=1e-9)


def test_svt4_lower_value_is_a_pattern_ratio_and_below_lyu_upper_bound():
    mech = SparseVectorTechnique4()
    assert mech.truth.epsilon == pytest.approx(mech.pair_epsilon(*SVT4_WITNESS), rel=1e-12)
    assert 0.1 < mech.truth.epsilon <= mech.truth.upper == pytest.approx(0.175)


@pytest.mark.statistical
def test_svt6_pattern_probabilities_by_monte_carlo():
    """The pattern behind SVT6's lower value 0.4145, under both inputs of the witness pair."""
    mech, n = SparseVectorTechnique6(), 2_000_000
    for seed, x in enumerate(SVT6_WITNESS):
        out = mech(np.array(x), n, np.random.default_rng(60 + seed))
        assert_binomial(pattern_counts(out, SVT6_PATTERN), n, mech.pattern_probability(SVT6_PATTERN, x))
    assert mech.truth.epsilon == pytest.approx(0.4145, abs=5e-5)
    assert mech.truth.upper == pytest.approx(0.5)


def test_svt6_pointwise_upper_bound_holds_on_random_neighbours():
    """Every pattern's probability changes by at most e^{k·ε₂} (module docstring), checked by quadrature."""
    mech, rng = SparseVectorTechnique6(queries=4), np.random.default_rng(2)
    patterns = [tuple(float(b) for b in np.binary_repr(i, 4)) for i in range(16)]
    for _ in range(5):
        q = rng.uniform(-10, 10, 4)
        q2 = q + rng.uniform(-1, 1, 4)
        for pattern in patterns:
            ratio = math.log(mech.pattern_probability(pattern, q) / mech.pattern_probability(pattern, q2))
            assert abs(ratio) <= 4 * mech.eps2 + 1e-9


def test_svt3_density_ratio_closed_form_by_numerical_integration():
    """Output (⊥ on 9 queries, ⊤ with value v on the 10th): loss (k − 2 + 2v)/s_ν for v ∈ [0, 1]."""
    mech = SparseVectorTechnique3()
    s_rho, s_nu, T = mech.rho_scale, mech.nu_scale, mech.threshold
    assert (s_rho, s_nu) == (20.0, 20.0)

    def cdf(x):
        return 0.5 * math.exp(x / s_nu) if x < 0 else 1 - 0.5 * math.exp(-x / s_nu)

    def density(q, v):
        def integrand(r):
            value = math.exp(-abs(r) / s_rho) / (2 * s_rho)
            for qi in q[:-1]:
                value *= cdf(r + T - qi)
            return value
        mass = integrate.quad(integrand, -3000, v - T, epsabs=0, epsrel=1e-12, limit=200,
                              points=[min(0.0, v - T - 1e-9)])[0]
        return mass * math.exp(-abs(v - q[-1]) / s_nu) / (2 * s_nu)

    q, q2 = [1.0] * 10, [2.0] * 9 + [0.0]
    for v in (0.25, 0.5, 0.999):
        loss = math.log(density(q, v) / density(q2, v))
        assert loss == pytest.approx((10 - 2 + 2 * v) / s_nu, rel=1e-8)
    assert mech.truth.epsilon == pytest.approx(10 / s_nu)


def test_svt3_releases_noisy_values_only_with_above():
    out = SparseVectorTechnique3()(np.ones(10), 50_000, np.random.default_rng(4))
    flags, values = out[:, :10], out[:, 10:]
    assert np.all(values[flags != ABOVE] == 0.0)
    assert np.all((flags == ABOVE).sum(axis=1) <= 1)


@pytest.mark.statistical
def test_svt5_support_argument():
    mech, n = SparseVectorTechnique5(), 400_000
    constant = mech(np.ones(10), n, np.random.default_rng(51))
    assert np.all(constant == constant[:, :1])  # only all-⊤ or all-⊥
    out = mech(np.array([2.0] * 5 + [0.0] * 5), n, np.random.default_rng(52))
    pattern = (ABOVE,) * 5 + (BELOW,) * 5
    assert_binomial(pattern_counts(out, pattern), n, 1 - math.exp(-1 / 20))
    assert mech.pattern_probability(pattern, [2.0] * 5 + [0.0] * 5) == pytest.approx(1 - math.exp(-1 / 20), rel=1e-9)


def _svt2_reference(q, size, rng, c, T, s_rho, s_nu):
    """A per-sample transcription of Lyu et al.'s Alg. 2, for distribution checks."""
    rows = []
    for _ in range(size):
        rho, count, row = rng.laplace(0, s_rho), 0, []
        for qi in q:
            if count >= c:
                row.append(HALTED)
                continue
            if qi + rng.laplace(0, s_nu) >= rho + T:
                row.append(ABOVE)
                count += 1
                rho = rng.laplace(0, s_rho)
            else:
                row.append(BELOW)
        rows.append(tuple(row))
    return rows


@pytest.mark.statistical
def test_svt2_redraw_with_cutoff_two_matches_a_per_sample_reference():
    """Frequencies of the vectorized sampler against a scalar transcription (two-sample binomial)."""
    mech, q, n = SparseVectorTechnique2(cutoff=2, queries=4), [1.0, 0.0, 2.0, 1.0], 20_000
    fast = mech(np.array(q), n, np.random.default_rng(21))
    slow = _svt2_reference(q, n, np.random.default_rng(22), 2, 1.0, mech.rho_scale, mech.nu_scale)
    patterns = {}
    for row in slow:
        patterns[row] = patterns.get(row, 0) + 1
    for pattern, count in patterns.items():
        p = count / n
        if p < 0.01:
            continue
        fast_count = pattern_counts(fast, pattern)
        sd = math.sqrt(2 * n * p * (1 - p))
        assert abs(fast_count - count) <= Z * sd + 1, (pattern, fast_count, count)
    assert np.all((fast == ABOVE).sum(axis=1) <= 2)


def test_svt34_parallel_and_numerical_svt_layout():
    out = SVT34Parallel(cutoff=2)(np.ones(10), 10_000, np.random.default_rng(1))
    assert out.shape == (10_000, 30)
    assert np.all((out[:, :10] == ABOVE).sum(axis=1) <= 2) and np.all((out[:, 20:] == ABOVE).sum(axis=1) <= 2)
    svt = SVT34Parallel(cutoff=2)
    assert svt.truth.epsilon == pytest.approx(10 * 0.05 / 2) and svt.claim.epsilon == pytest.approx(0.2)
    out = NumericalSVT(cutoff=2)(np.ones(10), 10_000, np.random.default_rng(1))
    flags, values = out[:, :10], out[:, 10:]
    assert np.all((flags == ABOVE).sum(axis=1) <= 2) and np.all(values[flags != ABOVE] == 0.0)


@pytest.mark.slow
def test_svt6_lower_value_is_the_exact_epsilon_of_the_witness_pair():
    """All 1024 patterns by quadrature (about 10 s): ⊤⁵⊥⁵ is the pair's worst pattern."""
    mech = SparseVectorTechnique6()
    assert mech.pair_epsilon(*SVT6_WITNESS) == pytest.approx(mech.truth.epsilon, rel=1e-12)


def test_svt5_pair_epsilon_is_infinite_on_its_witness():
    assert SparseVectorTechnique5().pair_epsilon([2.0] * 5 + [0.0] * 5, [1.0] * 10) == math.inf
