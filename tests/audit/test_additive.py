"""Column summaries, adaptive bins, and the additive and flag-and-value statistics."""

from __future__ import annotations

import numpy as np
import pytest

from audit.scoring import separation
from audit.statistics import AdditiveStatistic, FlagValueStatistic, TrainingData, TrainingPlan
from audit.statistics.adaptive import split_fine_bins, value_bins
from audit.statistics.additive import fit_additive, fit_flag_value
from audit.statistics.binned import fit_binned
from audit.statistics.columns import (CONTINUOUS, bin_edges, bin_keys, columns_from_arrays, columns_to_arrays,
                                      count_columns, merge_columns, ordered_keys, pattern_codes)
from audit.statistics.training import TrainingChunk
from mechanisms.literature import NumericalSVT, SVT34Parallel

SEED = 20261127


# --- column summaries ----------------------------------------------------------------------------

def test_ordered_keys_sort_like_the_values_and_bins_hold_their_values():
    values = np.array([-np.inf, -1e300, -1000.5, -3.3, -1e-300, -0.0, 0.0, 1e-300, 0.7, 7.25, 1e20, np.inf])
    assert np.all(np.diff(ordered_keys(values).astype(np.float64)) >= 0)
    assert ordered_keys(np.array([-0.0]))[0] == ordered_keys(np.array([0.0]))[0]
    finite = values[np.isfinite(values)]
    lowest = bin_edges(bin_keys(finite))
    assert np.all(lowest <= finite) and np.array_equal(bin_keys(lowest), bin_keys(finite))
    # A bin spans 2⁻⁶ of its values' magnitude: 7.25 and 7.3 share one, 7.25 and 7.4 do not.
    assert bin_keys(np.array([7.3]))[0] == bin_keys(np.array([7.25]))[0] != bin_keys(np.array([7.4]))[0]


def test_patterns_keep_integers_and_mark_every_other_value():
    outputs = np.array([[1.0, 0.0, -1.0, 3.7], [0.0, 2.0 ** 40, 0.5, -2.0]])
    assert pattern_codes(outputs).tolist() == [[1.0, 0.0, -1.0, CONTINUOUS], [0.0, CONTINUOUS, CONTINUOUS, -2.0]]


def test_column_counts_merge_exactly_and_survive_a_checkpoint():
    rng = np.random.default_rng(SEED)
    outputs = np.where(rng.random((3000, 3)) < 0.3, -1.0, rng.laplace(0.0, 5.0, (3000, 3)))
    outputs[:, 2] = rng.integers(0, 5000, 3000)  # more integers than a column keeps as atoms
    whole = count_columns(outputs)
    parts = merge_columns([count_columns(outputs[:1000]), count_columns(outputs[1000:])])
    for a, b in zip(whole, parts):
        assert np.array_equal(a.atom_values, b.atom_values) and np.array_equal(a.atom_counts, b.atom_counts)
        assert np.array_equal(a.keys, b.keys) and np.array_equal(a.key_counts, b.key_counts)
        assert a.total == b.total == 3000
    assert whole[0].atom_values.tolist() == [-1.0] and not whole[0].binned_atoms
    back = columns_from_arrays(columns_to_arrays(whole, "x"), "x")
    assert all(np.array_equal(a.keys, b.keys) and a.binned_atoms == b.binned_atoms for a, b in zip(whole, back))


def test_a_training_chunk_keeps_its_raw_rows_out_of_the_summaries():
    rng = np.random.default_rng(SEED)
    outputs = rng.normal(size=(500, 2))
    chunk = TrainingPlan(moments=True, atom_limit=16, rows_per_chunk=100, columns=True).reduce(outputs)
    assert chunk.rows.shape == (100, 2) and chunk.moments[0] == 400
    assert sum(c.total for c in chunk.columns) == 2 * 400
    restored = TrainingChunk.from_arrays(chunk.to_arrays("p"), "p")
    data = TrainingData.fold([restored], TrainingPlan(True, 16, 100, True))
    everything = data.with_rows()
    assert everything.moments[0] == 500 and np.allclose(everything.moments[1], outputs.mean(axis=0))
    assert everything.columns[0].total == 500 and everything.atoms is None  # continuous: no atoms


# --- adaptive bins ---------------------------------------------------------------------------------

def test_a_rare_one_sided_region_is_a_group_of_its_own():
    # Ten balanced fine bins and, at the top, 50 draws of the neighbour alone (χ² ≈ 50, far above
    # the Bonferroni critical value of ≈ 9 for 10 cut positions).
    base = np.array([1000] * 10 + [0])
    neighbour = np.array([1000] * 10 + [50])
    groups = split_fine_bins(base, neighbour)
    assert groups.significant and groups.starts.tolist() == [0, 10]
    # Identical counts: nothing to cut, not even a forced cut (χ² = 0 everywhere).
    assert split_fine_bins(base[:10], base[:10]).starts.tolist() == [0]


def test_without_a_significant_cut_the_forced_cut_avoids_the_ends():
    # Pure noise but for a weak step in the middle: the forced cut is among the trimmed positions.
    rng = np.random.default_rng(SEED)
    base, neighbour = rng.poisson(500, 400), rng.poisson(500, 400)
    groups = split_fine_bins(base, neighbour)
    assert not groups.significant and groups.starts.size == 2
    assert 0.05 * 400 <= groups.starts[1] <= 0.95 * 400


def test_binned_keeps_a_sentinel_and_a_one_sided_tail_apart():
    rng = np.random.default_rng(SEED)
    n = 60_000
    base = np.where(rng.random(n) < 2e-3, 7.0 + rng.exponential(1.0, n), -1.0)  # released 0.2% of the time
    neighbour = np.full(n, -1.0)
    edges, c0, c1 = value_bins(base, neighbour)
    assert c0.sum() == c1.sum() == n
    statistic = fit_binned(base, neighbour)
    released = statistic(np.array([[7.5], [9.0]]))
    assert np.all(released < statistic(np.array([[-1.0]]))[0] - 3.0)  # scored as base-only outputs


# --- additive and flag-and-value ------------------------------------------------------------------

def _training(draw, n):
    plan = TrainingPlan(moments=False, atom_limit=0, rows_per_chunk=0, columns=True)
    return TrainingData.fold([plan.reduce(draw(min(n, 50_000))) for _ in range(max(1, n // 50_000))], plan)


def _laplace_cdf(x, location, scale):
    z = (np.asarray(x, dtype=np.float64) - location) / scale
    return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1.0 - 0.5 * np.exp(-np.maximum(z, 0)))


def _exact_separation(statistic, locations, scale):
    """d of an additive statistic of independent q_j + Lap(scale) columns, exactly: each column's
    score is a step function, so its mean and variance under each side follow from the Laplace CDF
    at the steps' edges; the columns' variances add."""
    moments = []
    for location in locations:
        mean = var = 0.0
        for column in statistic.columns:
            edges = np.concatenate([[-np.inf], column.edges, [np.inf]])
            p = np.diff(_laplace_cdf(edges, location, scale))
            m = float(p @ column.scores)
            mean, var = mean + m, var + float(p @ (column.scores - m) ** 2)
        moments.append((mean, var))
    return (moments[1][0] - moments[0][0]) / np.sqrt(0.5 * (moments[0][1] + moments[1][1]))


@pytest.mark.statistical
def test_additive_pools_weak_parallel_columns_into_the_sign_statistic():
    # 20 copies of q + Lap(200), q = 1 against 0 (LaplaceParallel): each column's log-ratio is a clamp
    # from −ε₀/2 to +ε₀/2 across [0, 1], too weak to cut one column significantly at 400,000 draws per
    # side (z ≈ 3.5 against a Bonferroni critical z ≈ 4), so the columns share the shape of their
    # pooled ranks, oriented together.  The
    # fitted statistic's exact separation (from the Laplace CDF at its cuts) is then close to that of
    # the count of outputs below ½ (the likelihood ratio up to the [0, 1] ramp), d_sign = 20·(p₁ − p₀)
    # /√(20·p(1 − p)) with p₀,₁ = P(q + L < ½), and above the sum of the outputs' (the linear
    # statistic), d_linear = 20/√(20·2·200²), which is 1/√2 of it.  The pooled cut lands within a few
    # hundredths of rank ½ (the CUSUM's drift of ε₀/2 per unit rank against its noise, √(2/8·10⁶) per
    # √rank, puts it 0.02–0.04 off at this size), which costs up to 15% of d; each misoriented column
    # would cost another 2/20.
    rng = np.random.default_rng(SEED)
    draw = lambda q: (lambda n: q + rng.laplace(0.0, 200.0, (n, 20)))  # noqa: E731
    base, neighbour = _training(draw(1.0), 400_000), _training(draw(0.0), 400_000)
    statistic = fit_additive(base.columns, neighbour.columns, base.n, neighbour.n)
    assert isinstance(statistic, AdditiveStatistic) and len(statistic.columns) == 20
    d = _exact_separation(statistic, (1.0, 0.0), 200.0)
    p0, p1 = (float(_laplace_cdf(0.5, q, 200.0)) for q in (1.0, 0.0))
    p = 0.5 * (p0 + p1)
    d_sign = 20 * (p1 - p0) / np.sqrt(20 * p * (1 - p))
    d_linear = 20 / np.sqrt(20 * 2 * 200.0 ** 2)
    assert d >= 0.8 * d_sign and d >= 1.15 * d_linear


@pytest.mark.statistical
def test_flag_value_finds_the_blocks_of_svt34_parallel():
    # SVT3 (flags and released values) and SVT4 (flags) run independently side by side: their
    # patterns form two blocks, and SVT3's released values get a log-ratio of their own.  The
    # correlation between flags of the two halves is 0 in truth; within SVT3 the shared threshold
    # noise and the cutoff make the flags strongly dependent (|r| ≫ 0.01 at 80,000 draws).
    mechanism = SVT34Parallel()
    rng = np.random.default_rng(SEED)
    q0, q1 = np.ones(10), np.array([2.0] * 5 + [0.0] * 5)
    base = _training(lambda n: mechanism(q0, n, rng), 80_000)
    neighbour = _training(lambda n: mechanism(q1, n, rng), 80_000)
    statistic = fit_flag_value(base.columns, neighbour.columns, base.patterns, neighbour.patterns)
    assert isinstance(statistic, FlagValueStatistic)
    blocks = sorted(sorted(b.columns) for b in statistic.blocks)
    assert len(blocks) == 2 and blocks[1] == list(range(20, 30))
    assert set(blocks[0]) <= set(range(20)) and set(range(10)) <= set(blocks[0])
    assert {c.column for c in statistic.columns} <= set(range(10, 20))
    # Unseen patterns score 0; the statistic is finite everywhere and stated in its own terms.
    scores = statistic(mechanism(q0, 1000, rng))
    assert np.isfinite(scores).all() and "pattern score" in statistic.describe(0.0)


@pytest.mark.statistical
def test_flag_value_is_close_to_the_likelihood_ratio_of_numerical_svt():
    # The exact log-likelihood ratio of NumericalSVT on (2,…,2) against (1,…,1) is the pattern's
    # (quadrature) plus each released value's Laplace log-ratio; its separation d is 0.0261 (exact
    # distributions of the pattern and the clamped value log-ratios, computed once for this test's
    # note).  Fitted on 200,000 draws per side the statistic reaches 80% of it (0.0228 was measured at
    # 400,000); tolerance 3 SE of d on 200,000 fresh draws per side (one-sided 0.13%).
    mechanism = NumericalSVT()
    rng = np.random.default_rng(SEED)
    q0, q1 = np.full(10, 2.0), np.full(10, 1.0)
    base = _training(lambda n: mechanism(q0, n, rng), 200_000)
    neighbour = _training(lambda n: mechanism(q1, n, rng), 200_000)
    statistic = fit_flag_value(base.columns, neighbour.columns, base.patterns, neighbour.patterns)
    x0, x1 = mechanism(q0, 200_000, rng), mechanism(q1, 200_000, rng)
    d = separation(statistic(x0), statistic(x1))
    assert d.value >= 0.8 * 0.0261 - 3 * d.standard_error
