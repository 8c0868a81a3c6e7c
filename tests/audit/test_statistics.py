"""Learned test statistics: conversion of outputs, atoms, the statistics' power and validity.

Power assertions compare the certified bound with the bound that the ideal event would certify
at counts 3 standard deviations below their means (a ≤ 0.14% event per count by the normal
approximation to the binomial, stated where used); validity assertions rest on the engine's
guarantee (a true claim is VIOLATED with probability ≤ 1 − confidence).
"""

import math

import numpy as np
import pytest

import scenarios
from audit import MechanismError, Verdict, run_audit
from audit.intervals import cp_lower, cp_upper
from audit.sampling import _PILOT_CAP, _finite, _reduce_alternate, draw_outputs
from audit.selection import Budget
from audit.slots import headline_slots
from audit.statistics import (MIN_AUTO_TRAINING, CategoricalStatistic, Classifier, TrainingData,
                              check_statistic, fit_statistic, needs_training)
from audit.statistics.atoms import count_atoms, merge_atoms, row_keys
from audit.statistics.categorical import fit_categorical
from audit.statistics.classifier import require_sklearn
from benchmarks.statistics import randomized_response, scale_gaussian
from mechanisms import ApproxDP, GaussianMechanism, PureDP
from mechanisms.floating_point import NaiveLaplace, SnappingLaplace

SEED = 20261123


# --- outputs of any real dtype, 1-D or 2-D -----------------------------------------------------

def _const(value):
    return lambda data, size, rng: np.full(size, value) if np.ndim(value) == 0 else np.tile(value, (size, 1))


@pytest.mark.parametrize("value", [np.int64(3), np.True_, np.float32(0.5), np.array([1, 2], dtype=np.int8)])
def test_integer_boolean_and_1d_outputs_convert_exactly(value):
    out = draw_outputs(_const(value), None, 4, np.random.default_rng(0), "here", "m")
    assert out.dtype == np.float64 and out.shape == (4, np.size(value))
    assert np.array_equal(out, np.tile(np.asarray(value, dtype=np.float64).reshape(1, -1), (4, 1)))


def test_integers_beyond_2_53_are_refused():
    with pytest.raises(MechanismError, match=r"beyond ±2\*\*53.*\(here\)"):
        draw_outputs(_const(np.int64(2**53 + 1)), None, 3, np.random.default_rng(0), "here", "m")


def test_complex_outputs_are_refused():
    with pytest.raises(MechanismError, match="dtype complex128"):
        draw_outputs(_const(np.complex128(1)), None, 3, np.random.default_rng(0), "here", "m")


# --- atoms ------------------------------------------------------------------------------------

def test_row_keys_separate_rows_and_merge_signed_zeros():
    rows = np.array([[0.0, 1.0], [-0.0, 1.0], [1.0, 0.0], [0.0, 1.0 + 2**-52]])
    keys = row_keys(rows)
    assert keys[0] == keys[1] and len(set(keys.tolist())) == 3
    one_d = np.array([[1.5], [-0.0], [0.0]])
    assert row_keys(one_d)[0] == np.float64(1.5).view(np.uint64) and row_keys(one_d)[1] == row_keys(one_d)[2]


def test_atom_counts_merge_in_chunks_and_overflow():
    rng = np.random.default_rng(1)
    rows = rng.integers(0, 4, size=(1000, 2)).astype(float)
    merged = merge_atoms([count_atoms(rows[:400], 16), count_atoms(rows[400:], 16)], 16)
    whole = count_atoms(rows, 16)
    assert np.array_equal(merged.keys, whole.keys) and np.array_equal(merged.counts, whole.counts)
    assert merged.n == 1000 and merged.counts.sum() == 1000
    assert count_atoms(rows, 15) is None and merge_atoms([whole, None], 16) is None


def test_categorical_scores_rank_by_likelihood_ratio_and_unseen_rows_score_zero():
    base = count_atoms(np.array([[0.0]] * 60 + [[1.0]] * 30 + [[2.0]] * 10), 8)
    neighbour = count_atoms(np.array([[0.0]] * 10 + [[1.0]] * 30 + [[2.0]] * 60), 8)
    statistic = fit_categorical(base, neighbour)
    scores = statistic(np.array([[2.0], [1.0], [0.0], [7.0]]))
    assert scores[0] > scores[1] > scores[2] and scores[3] == 0.0
    assert abs(scores[1]) < 1e-12  # equal counts: smoothed ratio exactly 1
    assert "atoms ranked 1–1 of 3" in statistic.describe(scores[0])


# --- the statistic option ------------------------------------------------------------------------

def test_statistic_option_is_validated_with_a_suggestion():
    with pytest.raises(ValueError, match="did you mean 'categorical'"):
        check_statistic("categorial")
    with pytest.raises(TypeError, match="`statistic` must be one of"):
        check_statistic(3)
    with pytest.raises(ValueError, match="`features`"):
        Classifier(features="bytes")


def test_missing_scikit_learn_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "sklearn", None)
    with pytest.raises(ImportError, match=r"pip install 'dpaudit\[learn\]'"):
        require_sklearn()


def test_user_statistic_is_used_and_checked():
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    pair = scenarios.counting(1)
    report = run_audit(mech, pair, samples=20_000, seed=SEED, progress=False, accuracy=False,
                       statistic=lambda outputs: outputs[:, 0] * 2.0)
    assert report.statistic["pairs"][0]["kind"] == "callable"
    with pytest.raises(ValueError, match=r"must return shape \(\d+,\)"):
        run_audit(mech, pair, samples=20_000, seed=SEED, progress=False, accuracy=False,
                  statistic=lambda outputs: outputs[:5, 0])


def test_categorical_needs_few_atoms():
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    with pytest.raises(ValueError, match="statistic='categorical'.*distinct output rows"):
        # 2·10⁶ draws per side: the quick look's 7,812 training draws fit, but the main audit's
        # 1,875,000 give 117,187 (1/16), more distinct values than the limit of 65,536 atoms.
        run_audit(mech, scenarios.counting(1), samples=2_000_000, seed=SEED, progress=False,
                  accuracy=False, statistic="categorical")


# --- power: discrete outputs --------------------------------------------------------------------

def _floor_epsilon(p, q, n, level, z=3.0):
    """ε certified by the event of probabilities (p, q) at counts z SDs below/above their means."""
    count_p = math.floor(n * p - z * math.sqrt(n * p * (1 - p)))
    count_q = math.ceil(n * q + z * math.sqrt(n * q * (1 - q)))
    return math.log(float(cp_lower(count_p, n, level)) / float(cp_upper(count_q, n, level)))


@pytest.mark.statistical
def test_categorical_audits_randomized_response_wherever_the_labels_sit():
    k, epsilon, n = 7, 1.0, 200_000
    claim = PureDP(epsilon)
    level = Budget(0.05, headline_slots(claim), 1).headline_level
    p = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    floor = _floor_epsilon(p, 1 / (math.exp(epsilon) + k - 1), n, level)
    bounds = []
    for pair in (([3], [4]), ([0], [6])):
        report = run_audit(randomized_response(k, epsilon), scenarios.custom([pair]), claim=claim,
                           samples=n, seed=SEED, progress=False, statistic="auto")
        if pair == ([3], [4]):  # at the ends of the index range a threshold is as good
            assert report.statistic["pairs"][0]["auto_choice"] == "categorical"
        assert report.verdict == Verdict.NOT_REFUTED
        bounds.append(report.epsilon_lower_bound)
    assert min(bounds) >= floor, (bounds, floor)


@pytest.mark.statistical
def test_linear_statistic_is_weak_on_a_middle_label():
    """The reason for the categorical statistic: with the labels 3 and 4 of 7, no threshold of
    the index isolates the two atoms whose ratio is e^ε."""
    k, epsilon, n = 7, 1.0, 200_000
    claim = PureDP(epsilon)
    level = Budget(0.05, headline_slots(claim), 1).headline_level
    floor = _floor_epsilon(math.exp(epsilon) / (math.exp(epsilon) + k - 1), 1 / (math.exp(epsilon) + k - 1), n, level)
    linear = run_audit(randomized_response(k, epsilon), scenarios.custom([([3], [4])]), claim=claim,
                       samples=n, seed=SEED, progress=False, statistic="linear")
    assert linear.epsilon_lower_bound < floor


@pytest.mark.statistical
def test_randomized_response_with_the_wrong_epsilon_is_refuted():
    # Claimed ε = 0.7, true ε = 1: the floor at 2e5 samples (≈ 0.9) exceeds the claim.
    report = run_audit(randomized_response(5, 1.0), scenarios.custom([([1], [3])]), claim=PureDP(0.7),
                       samples=200_000, seed=SEED, progress=False, statistic="categorical")
    assert report.verdict == Verdict.VIOLATED
    assert "atoms ranked" in report.evidence[0]["event"]


# --- power: a data-dependent scale needs a two-sided event --------------------------------------

@pytest.mark.statistical
def test_data_dependent_scale_is_refuted_by_auto_at_1e6():
    # The one-sided events cannot exceed δ ≈ 0.034 < 0.05; the two-sided event's δ(1) = 0.067 is
    # 17 standard errors (√(2·0.3/1e6) ≈ 8e-4) above the claim's 0.05.
    report = run_audit(scale_gaussian, scenarios.custom([([0.0], [1.0])]), claim=ApproxDP(1.0, 0.05),
                       samples=1_000_000, seed=SEED, progress=False, n_jobs=2)
    assert report.statistic["pairs"][0]["auto_choice"] == "binned"
    assert report.verdict == Verdict.VIOLATED and report.delta_lower_bound > 0.05


@pytest.mark.statistical
def test_auto_keeps_the_linear_statistic_for_a_gaussian_shift():
    report = run_audit(GaussianMechanism(epsilon=1.0, delta=1e-5), scenarios.counting(1),
                       samples=400_000, seed=SEED, progress=False, accuracy=False)
    assert {p.get("auto_choice") for p in report.statistic["pairs"]} == {"linear"}


# --- reproducibility and resumption with learned statistics ---------------------------------------

@pytest.mark.parametrize("statistic", ["categorical", "auto"])
def test_learned_statistics_give_the_same_report_for_any_worker_count(statistic):
    mech, scenario = randomized_response(5, 1.0), scenarios.custom([([1], [3])])
    kwargs = dict(claim=PureDP(1.0), samples=100_000, seed=SEED, progress=False, statistic=statistic)
    one = run_audit(mech, scenario, n_jobs=1, **kwargs).to_dict(include_runtime=False)
    two = run_audit(mech, scenario, n_jobs=2, **kwargs).to_dict(include_runtime=False)
    assert one == two


def test_training_phase_resumes_from_a_checkpoint(tmp_path):
    mech, scenario = randomized_response(5, 1.0), scenarios.custom([([1], [3])])
    kwargs = dict(claim=PureDP(1.0), samples=50_000, seed=SEED, progress=False, statistic="auto")
    path = tmp_path / "ckpt.npz"
    first = run_audit(mech, scenario, checkpoint=path, **kwargs)
    again = run_audit(mech, scenario, checkpoint=path, **kwargs)  # everything read from the file
    assert first.to_dict(include_runtime=False) == again.to_dict(include_runtime=False)


# --- floating-point Laplace: the leak is in the low-order bits --------------------------------------

@pytest.mark.statistical
def test_classifier_with_bit_features_refutes_naive_floating_point_laplace():
    pytest.importorskip("sklearn")
    report = run_audit(NaiveLaplace(0.1, "numpy-legacy"), scenarios.custom([([0.0], [1.0])]), claim=PureDP(0.1),
                       samples=50_000, seed=SEED, progress=False, statistic="classifier")
    assert report.verdict == Verdict.VIOLATED
    assert "64-bit patterns" in report.statistic["pairs"][0]["features"]


def test_classifier_accepts_a_fresh_128_bit_seed():
    # seed=None draws 128 bits of entropy (and the quick look derives a 128-bit seed); scikit-learn
    # takes random_state below 2**32.
    pytest.importorskip("sklearn")
    report = run_audit(NaiveLaplace(0.1, "numpy-legacy"), scenarios.custom([([0.0], [1.0])]), claim=PureDP(0.1),
                       samples=5_000, seed=None, progress=False, statistic="classifier", early_stopping=False)
    assert report.statistic["pairs"][0]["kind"] == "classifier"
    # The seed the classifier was trained under is SeedSequence's fresh entropy, 128 random bits:
    # at least 2**32 (what scikit-learn cannot take as it is) except with probability 2**-96.
    assert 2**32 <= report.seed < 2**128


@pytest.mark.statistical
def test_snapping_laplace_is_not_refuted_by_the_classifier():
    # Mironov's fix: outputs are multiples of Λ = 16, so the bit patterns carry no extra signal;
    # a VIOLATED here would be a ≤ 5% event if the snapping claim holds.
    pytest.importorskip("sklearn")
    report = run_audit(SnappingLaplace(0.1), scenarios.custom([([0.0], [1.0])]), samples=50_000,
                       seed=SEED, progress=False, statistic="classifier")
    assert report.verdict == Verdict.NOT_REFUTED


def test_fit_statistic_passes_a_fitted_statistic_through():
    fitted = CategoricalStatistic(np.array([1], dtype=np.uint64), np.array([0.5]), np.array([[1.0]]))
    empty = TrainingData(0, None, None, np.empty((0, 1)))
    assert fit_statistic(fitted, empty, empty, claim=PureDP(1.0), seed=1, label="p", output_dim=1)[0] is fitted


def test_auto_with_a_tiny_budget_keeps_the_linear_statistic_and_draws_no_training():
    # 1/16 of 600 draws per side would be 37 training draws: too few to compare statistics on
    # held-out halves, so "auto" is the linear statistic and those draws go to the other phases.
    report = run_audit(randomized_response(5, 1.0), scenarios.custom([([1], [3])]), claim=PureDP(1.0),
                       samples=600, seed=SEED, progress=False, early_stopping=False)
    assert report.statistic["pairs"][0]["auto_choice"] == "linear"
    phases = report.draws["per_pair_per_side"]
    assert "training" not in phases and report.draws["looks"]["planned"]["training"] == 0
    assert phases["pilot"] + phases["selection"] + phases["certification"] == 600


def test_auto_is_learned_on_1d_outputs_only_from_enough_draws():
    assert not needs_training("auto", 1, MIN_AUTO_TRAINING - 1)
    assert needs_training("auto", 1, MIN_AUTO_TRAINING) and needs_training("auto", 1)
    assert needs_training("auto", 3, 10)  # a vector output's linear statistic is Fisher's direction
    assert needs_training("binned", 1, 10) and not needs_training("linear", 1, 10_000)


def test_an_alternate_lanes_overflow_is_mapped_to_finite_scores_not_an_error():
    """A fixed map of a statistic is a statistic: ±inf and NaN of an alternate lane become finite
    scores in a fixed order (NaN lowest), whose differences do not overflow."""
    scores = _finite(np.array([np.inf, -np.inf, np.nan, 1.0]))
    assert np.isfinite(scores).all() and np.isfinite(scores[0] - scores[1])
    assert scores[2] <= scores[1] < scores[3] < scores[0]
    # monotone on the finite floats too: one beyond the clip ties with +inf instead of passing it
    huge = _finite(np.array([1e307, 1e308, np.inf, -1e308, -np.inf]))
    assert np.all(np.diff(huge[:3]) >= 0) and huge[1] == huge[2] and huge[3] == huge[4]


def test_an_alternate_lanes_pilot_places_its_bins_on_its_finite_scores():
    """The pilot range of an alternate lane leaves out its overflowing scores (and finite ones too
    large to place bins on), so they land in its outer bins; with none left the range is empty."""
    from audit.sampling import Phase

    pilot = type("Task", (), {"phase": Phase.PILOT})()
    scores = np.array([np.inf, -np.inf, np.nan, 1e308, -2.0, 3.0])
    assert _reduce_alternate(None, pilot, scores, 0) == (-2.0, 3.0)
    assert _reduce_alternate(None, pilot, np.array([np.inf, -np.inf, 2 * _PILOT_CAP]), 0) == (np.inf, -np.inf)
