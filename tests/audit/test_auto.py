"""``statistic="auto"``: the rules that choose, what the report says, the affordable classifier, and
the rare one-sided violation the default settings must refute."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from audit import Verdict, run_audit
from audit.scoring import Separation, UsageInterval
from audit.statistics import TrainingData, TrainingPlan
from audit.statistics.adaptive import split_fine_bins
from audit.statistics import auto as auto_module
from audit.statistics.auto import fit_auto
from audit.statistics.base import Statistic
from audit.statistics.binned import fit_binned
from audit.statistics.lanes import Lanes
from audit.statistics.linear import LinearStatistic
from audit.statistics.classifier import fit_classifier, predicted_seconds, require_sklearn
from audit.statistics.features import fit_feature_map
from audit.render.witness import witness_lines
from audit.testing import DEFAULT_SEED, _run
from mechanisms import GaussianDP, GaussianMechanism, PureDP
from scenarios.faulty_cases import FAULTY_MECHANISMS

SEED = 20261128


# --- the rules, on hand-made scores ---------------------------------------------------------------

def _usage(lower, upper):
    return UsageInterval(lower, upper, ())


def _choose(usage, d, structural="flag-value", se=0.001):
    """_choose with separations d (value, and the standard error of any paired difference)."""
    scores = {name: (np.zeros(4), np.full(4, value)) for name, value in d.items()}
    separations = {name: Separation(value, se) for name, value in d.items()}
    original = auto_module.separation
    auto_module.separation = lambda *a, **k: Separation(0.0, se)
    try:
        return auto_module._choose(usage, scores, separations, structural)
    finally:
        auto_module.separation = original


def test_a_candidate_that_clearly_uses_more_of_the_claim_wins():
    usage = {"linear": _usage(0.1, 0.4), "binned": _usage(0.5, 0.9), "flag-value": _usage(0.45, 2.0)}
    choice, rule = _choose(usage, {"linear": 0.05, "binned": 0.01, "flag-value": 0.09})
    assert choice == "binned" and rule.startswith("clearly uses more")


def test_when_usage_cannot_rank_the_structural_candidate_wins_unless_outseparated():
    usage = {"linear": _usage(0.0, 0.3), "additive": _usage(0.0, 0.2), "flag-value": _usage(0.0, 0.25)}
    assert _choose(usage, {"linear": 0.020, "additive": 0.0201, "flag-value": 0.0205})[0] == "flag-value"
    # Linear ahead by more than 2 standard errors of the paired difference: linear.
    assert _choose(usage, {"linear": 0.030, "additive": 0.02, "flag-value": 0.0205})[0] == "linear"
    # Another candidate ahead of the structural one by 2 standard errors: that one; by less: still
    # the structural one.
    assert _choose(usage, {"linear": 0.020, "additive": 0.0226, "flag-value": 0.0205})[0] == "additive"
    assert _choose(usage, {"linear": 0.020, "additive": 0.0224, "flag-value": 0.0205})[0] == "flag-value"


def test_a_structural_candidate_clearly_behind_in_usage_is_not_chosen():
    usage = {"linear": _usage(0.6, 0.9), "flag-value": _usage(0.0, 0.5), "additive": _usage(0.5, 1.2)}
    choice, rule = _choose(usage, {"linear": 0.02, "flag-value": 0.05, "additive": 0.02})
    assert choice == "linear" and "flag-value is clearly behind" in rule


# --- fit_auto on training draws -------------------------------------------------------------------

def _training(draw, n, plan):
    return TrainingData.fold([plan.reduce(draw(n))], plan)


def test_auto_notes_list_what_was_tried_skipped_and_why(monkeypatch):
    # Four independent Laplace columns shifted by a tenth of their scale: a weak signal.
    monkeypatch.setattr(auto_module, "_sklearn", lambda: False)
    rng = np.random.default_rng(SEED)
    plan = TrainingPlan(moments=True, atom_limit=auto_module.AUTO_ATOMS, rows_per_chunk=8192, columns=True)
    base = _training(lambda n: rng.laplace(0.0, 10.0, (n, 4)), 40_000, plan)
    neighbour = _training(lambda n: rng.laplace(1.0, 10.0, (n, 4)), 40_000, plan)
    statistic, notes = fit_auto(base, neighbour, claim=PureDP(0.1), output_dim=4, seed=1, samples=10**6)
    auto = notes["auto"]
    assert set(auto["tried"]) == {"linear", "binned", "additive"}
    assert auto["skipped"]["classifier"].startswith("scikit-learn is not installed")
    assert "distinct outputs" in auto["skipped"]["categorical"] and "⊤/⊥" in auto["skipped"]["flag-value"]
    assert auto["held_out"] == [4096, 4096] and auto["structure"] == "additive"
    for entry in auto["tried"].values():
        lower, upper = entry["usage"]
        assert lower <= (math.inf if upper is None else upper) and entry["separation_se"] > 0
    assert notes["auto_choice"] in auto["tried"] and statistic.kind == notes["auto_choice"] or \
        (notes["auto_choice"] == "linear" and statistic.kind == "fisher-discriminant")


def _correlated_normals(rng, mean, factor, n):
    """n draws of mean + L·Z, Z standard normal, L lower triangular, computed column by column with
    elementwise products and sums: the same numbers on every platform (rng.multivariate_normal
    factors the covariance through LAPACK/BLAS, whose result depends on the CPU's kernel)."""
    z = rng.standard_normal((n, factor.shape[0]))
    return np.column_stack([mean[i] + sum(factor[i, j] * z[:, j] for j in range(i + 1))
                            for i in range(factor.shape[0])])


@pytest.mark.statistical
def test_auto_keeps_linear_for_a_correlated_gaussian_shift():
    # Lebeda-like correlated noise: columns strongly correlated, so no additive structure.  Fisher's
    # discriminant is the likelihood ratio here; the binned statistic of the same projection is
    # (nearly) monotone in it, so it has the same threshold events and may be chosen as well.
    rng = np.random.default_rng(SEED)
    plan = TrainingPlan(moments=True, atom_limit=auto_module.AUTO_ATOMS, rows_per_chunk=65536, columns=True)
    # Σ = ½I + ½J: its Cholesky factor in closed form (L Lᵀ = Σ), so no LAPACK call either.
    factor = np.array([[1.0, 0.0, 0.0],
                       [0.5, math.sqrt(0.75), 0.0],
                       [0.5, 0.25 / math.sqrt(0.75), math.sqrt(2.0 / 3.0)]])
    assert np.allclose(factor @ factor.T, 0.5 * np.eye(3) + 0.5, rtol=0, atol=1e-15)
    base = _training(lambda n: _correlated_normals(rng, np.zeros(3), factor, n), 65536, plan)
    neighbour = _training(lambda n: _correlated_normals(rng, np.array([1.0, 0.0, 0.0]), factor, n), 65536, plan)
    statistic, notes = fit_auto(base, neighbour, claim=GaussianDP(1.5), output_dim=3, seed=1, samples=10**6)
    assert notes["auto"]["structure"] == "linear" and notes["auto_choice"] in ("linear", "binned")
    # The sum of columns is clearly worse.  Separations d on the 32,768 held-out draws per side: Fisher's
    # is the shift's Mahalanobis length √(δᵀΣ⁻¹δ) = √1.5 = 1.2247; the additive statistic is a function of
    # x₁ (d = 1 for the unit shift) plus per-column estimates for x₂ and x₃, whose marginals are the same
    # on both sides (noise only).  Each d has standard error ≈ √(2/32768) = 0.008, so a gap of 0.22 is
    # below 0.1 only about 15 standard errors out (measured on six seeds: 0.20–0.23).
    tried = notes["auto"]["tried"]
    assert tried["linear"]["separation"] == pytest.approx(math.sqrt(1.5), abs=5 * 0.008)
    assert tried["linear"]["separation"] - tried["additive"]["separation"] > 0.1


# --- the affordable classifier -------------------------------------------------------------------

def test_logistic_classifier_is_scored_by_its_linear_form_exactly():
    require_sklearn()
    rng = np.random.default_rng(SEED)
    base = np.where(rng.random((4000, 2)) < 0.2, -1.0, rng.normal(0.0, 1.0, (4000, 2)))
    neighbour = np.where(rng.random((4000, 2)) < 0.3, -1.0, rng.normal(0.3, 1.0, (4000, 2)))
    statistic = fit_classifier(base, neighbour, seed=3)  # logistic, values + sentinel flags + bits
    assert statistic.linear is not None and statistic.features.bits and any(statistic.features.sentinels)
    fresh = np.vstack([base[:500] + 0.125, neighbour[:500]])
    expected = statistic.model.decision_function(statistic.features(fresh))
    assert np.allclose(statistic(fresh), expected, rtol=1e-9, atol=1e-9)


def test_the_cost_model_grows_with_what_is_scored_and_boosting_costs_more():
    features = fit_feature_map(np.zeros((10, 2)), "values")
    small, large = (predicted_seconds("logistic", features, 20_000, n) for n in (10**6, 10**8))
    assert 0 < small < large
    assert predicted_seconds("boosting", features, 20_000, 10**6) > 10 * small
    assert predicted_seconds(object(), features, 20_000, 10**6) is None


# --- the case: a violation in a rare region one side never produces ------------------------

@pytest.mark.statistical
def test_default_settings_refute_a_sparse_histogram_with_a_low_threshold_at_a_million_draws():
    # A new bin of count 1 is released with probability p = e/2000 = 1.359e-3 under the neighbour
    # and never under the base, against a claimed δ = 1e-3 (exact δ(1) = p).  With 10⁶ samples the
    # main audit certifies on ≈ 5.7·10⁵ draws per side, ≈ 780 of them in the event, where the joint
    # test needs roughly 600 to certify δ > 10⁻³ at its level: a margin of 6 standard deviations.
    # It looks first after 1/4 of them (≈ 1.44·10⁵, ≈ 195 expected in the event), where the joint
    # test of both counts may already reject the claim while the one-number δ bound of the stopping
    # look is within a standard deviation (≈ 7·10⁻⁵) of 10⁻³ on either side: so the verdict, the slot
    # it refutes and bounds ≤ truth are asserted, not which side of 10⁻³ that bound falls on.
    mechanism, scenario = FAULTY_MECHANISMS["sparse-histogram-low-threshold"]()
    report = run_audit(mechanism, scenario, samples=1_000_000, seed=SEED, n_jobs=1, progress=False, accuracy=False)
    assert report.verdict is Verdict.VIOLATED
    assert [v.slot.key for v in report.violations] == ["delta@1.0"]
    assert report.delta_lower_bound <= mechanism.release_probability  # bounds ≤ truth


# --- lanes: every candidate's events compete on the selection draws ----------------------------------

class _Blind(Statistic):
    """A statistic that sees nothing: every output scores 0."""

    kind = "blind"

    def __call__(self, outputs):
        return np.zeros(outputs.shape[0])


@pytest.mark.statistical
def test_an_alternate_lane_refutes_what_the_primary_statistic_cannot_see():
    # Laplace with half the noise its 1-DP claim needs (exact ε = 2).  The blind primary statistic
    # certifies ε = 0; the linear alternate's events, chosen on the same selection draws, refute
    # the claim (at 2·10⁵ draws the linear statistic alone certifies ε ≈ 1.9, far above 1).
    from mechanisms import LaplaceMechanism
    from scenarios import builders

    mechanism = LaplaceMechanism(2.0)
    statistic = Lanes(_Blind(), (LinearStatistic(),), ("blind", "linear"))
    report = run_audit(mechanism, builders.counting(1), claim=PureDP(1.0), samples=200_000, seed=SEED,
                       n_jobs=1, progress=False, accuracy=False, statistic=statistic)
    assert report.verdict is Verdict.VIOLATED and report.epsilon_lower_bound > 1.0
    headline = [e for e in report.evidence if e["family"] == "headline" and e["slot"].startswith("epsilon")]
    assert headline and all(e.get("lane") == 1 for e in headline)
    assert all("lane" not in e for e in report.evidence if e["family"] == "curve")  # curves: the primary only
    assert report.statistic["pairs"][0]["lanes"] == ["blind", "linear"]
    # The witness names the statistic its event is a threshold of: the linear lane's, not the primary's.
    assert report.statistic["pairs"][0]["alternates"] == [LinearStatistic().to_dict()]
    lines = witness_lines(report.to_dict())
    statistic = next(line for line in lines if line.strip().startswith("statistic: "))
    assert statistic.strip() == ("statistic: linear (one of auto's lanes; auto chose blind): "
                                 "the output itself (linear statistic of a 1-D output)"), lines
    assert any(line.strip().startswith("event: output >= ") for line in lines), lines


class _Overflowing(Statistic):
    """The output itself, but −∞ below 3: a statistic that overflows on part of the outputs."""

    kind = "overflowing"

    def __call__(self, outputs):
        values = np.asarray(outputs, dtype=np.float64)[:, 0]
        return np.where(values < 3.0, -np.inf, values)


@pytest.mark.statistical
def test_an_alternate_lane_whose_scores_overflow_stays_comparable():
    # As above, with an alternate that is −∞ wherever the output is below 3: Laplace(5, 1/2) (the
    # base count is 5, the neighbour's 6) puts ½e⁻⁴ ≈ 0.9% of the base's draws there, so the pilot (≈ 6,000 draws a side) meets −∞ except
    # with probability below e⁻⁵⁰.  Its histogram is placed on the finite scores, the overflowing
    # ones fall in its underflow bin (a fixed monotone map, so its threshold events are a
    # statistic's), and the events of the upper tail stay as fine as the linear lane's: {output ≥ 6}
    # holds half the neighbour's mass and ½e⁻² of the base's, a ratio e².  The quick look, the
    # smallest stage that can stop the audit, certifies on ≈ 17,600 draws a side (≈ 8,800 against
    # 1,190): the log-ratio has standard deviation √(1/8,800 + 1/1,190) ≈ 0.031 and the bound is
    # ≈ 1.9 (1.92 at this seed), so it falls below 1.5 only ≈ 13 standard deviations low.  Placed on the range of a pilot that held −∞ (±a quarter of the largest float),
    # every finite score shared one bin: the lane compared nothing and the audit certified ε = 0.
    from mechanisms import LaplaceMechanism
    from scenarios import builders

    statistic = Lanes(_Blind(), (_Overflowing(),), ("blind", "overflowing"))
    report = run_audit(LaplaceMechanism(2.0), builders.counting(1), claim=PureDP(1.0), samples=200_000, seed=SEED,
                       n_jobs=1, progress=False, accuracy=False, statistic=statistic)
    assert report.verdict is Verdict.VIOLATED and report.epsilon_lower_bound > 1.5, report.epsilon_lower_bound
    headline = [e for e in report.evidence if e["family"] == "headline" and e["slot"].startswith("epsilon")]
    assert headline and all(e.get("lane") == 1 and 3.0 < e["threshold"] < 15.0 for e in headline), headline


class _OnlyInfinite(Statistic):
    """+∞ where the output exceeds 5.5, −∞ elsewhere: a statistic with no finite score at all."""

    kind = "only-infinite"

    def __call__(self, outputs):
        return np.where(np.asarray(outputs, dtype=np.float64)[:, 0] > 5.5, np.inf, -np.inf)


@pytest.mark.statistical
def test_an_alternate_lane_with_no_finite_score_keeps_its_two_values_apart():
    # The event {output > 5.5} holds 1 − ½e⁻¹ ≈ 0.82 of the neighbour's mass (Laplace(6, 1/2)) and
    # ½e⁻¹ ≈ 0.18 of the base's (Laplace(5, 1/2)), a ratio e^1.49.  On the quick look's ≈ 17,600
    # draws a side (≈ 14,400 against 3,200) the log-ratio has standard deviation
    # √(0.18/14,400 + 0.82/3,200) ≈ 0.016 and the bound is ≈ 1.45 (1.44 at this seed), so it falls
    # below 1.3 only ≈ 9 standard deviations low.  With no finite
    # pilot score the lane's bins sit at 0, and its two values fall in its underflow and overflow
    # bins; placed on the range of ±a quarter of the largest float, its bins overflowed (width ∞).
    from mechanisms import LaplaceMechanism
    from scenarios import builders

    statistic = Lanes(_Blind(), (_OnlyInfinite(),), ("blind", "only-infinite"))
    report = run_audit(LaplaceMechanism(2.0), builders.counting(1), claim=PureDP(1.0), samples=200_000, seed=SEED,
                       n_jobs=1, progress=False, accuracy=False, statistic=statistic)
    assert report.verdict is Verdict.VIOLATED and report.epsilon_lower_bound > 1.3, report.epsilon_lower_bound


def test_the_binned_statistic_ranks_a_region_only_one_side_reaches_first():
    # Bulk: both sides alike on [0, 1); beyond 1, three draws of the neighbour only.  Three draws are
    # far from significant on their own (χ² ≈ 3 < ≈ 20 for 4,096 cut positions), yet the region is a
    # bin of its own and outranks every other bin.
    rng = np.random.default_rng(SEED)
    base, neighbour = rng.random(20_000), np.concatenate([rng.random(19_997), [1.5, 1.7, 1.9]])
    statistic = fit_binned(base, neighbour)
    tail = statistic(np.array([[1.6]]))[0]
    assert tail > statistic(np.array([[1.0 - 1e-9]]))[0]
    assert tail > np.max(statistic(np.sort(base)[:, None]))


def test_one_draw_where_its_share_predicts_none_does_not_split_a_bin():
    # The shape of the classical Gaussian's top end at (7, 0.1) (training, plugin seed): 600 fine
    # bins of ratio ≈ 1,200 (28 neighbour draws each, a base draw in every 43rd), then one fine bin
    # of 1 base and 3 neighbour draws beside the neighbour's one-sided run (0 and 848).  Pearson's χ²
    # of the cut before that fine bin is ≈ 270 (the base's share predicts 0.003 draws there), far
    # above its critical value ≈ 19 for 601 cut positions, but Fisher's exact p-value is ≈ 0.003,
    # far above 0.05/601: the fine bin is not a bin of its own (it would score near 0 between
    # two bins of ratio ≈ 1,200 and more, and turn the tie-breaker of the bin below it the wrong way).
    base = np.concatenate([np.where(np.arange(600) % 43 == 0, 1, 0), [1, 0]])
    neighbour = np.concatenate([np.full(600, 28), [3, 848]])
    groups = split_fine_bins(base, neighbour, one_sided=True)
    assert 601 in groups.starts and 600 not in groups.starts
    assert not groups.significant  # the one-sided run is cut anyway, whatever its χ²


@pytest.mark.statistical
def test_auto_keeps_the_classical_gaussians_tail_events_at_a_million_draws():
    # Gaussian[classical] at (7, 0.1), σ = 0.321, the plugin's seed and 10⁶ draws.  The best
    # ε-at-δ = 0.1 threshold event is {output ≥ t} near t = 1.29 (neighbour ≈ 0.18, base ≈ 3·10⁻⁵);
    # the neighbour's one-sided end run alone certifies only ε ≈ 6.5 (its neighbour share is
    # barely above δ).  Second route: over thresholds t, the joint test's bound at the expected
    # counts (n·p_A(t), n·p_B(t)) from the exact Gaussian tails, on auto's certification draws n and
    # at the slot's whole level (the sum over its contenders' shares), is ε* ≈ 7.57.  A certified
    # bound moves with the estimate ε̂ = ln((p̂_A − δ)/p̂_B) of its event, whose standard error at
    # the optimum is, by the delta method on two independent binomial proportions,
    # √(p_A(1 − p_A)/(n (p_A − δ)²) + (1 − p_B)/(n p_B)) ≈ 0.17 (≈ 36 base draws).  Auto must reach
    # ε* − 3 standard errors: a one-sided normal tail of 0.13% for an audit that certifies the
    # optimal event; choosing a slightly worse one on the selection draws costs part of the margin.
    # With the end run's neighbouring fine bin split off on one base draw, this seed gave 7.075,
    # 2.97 standard errors below ε*: a loss of that size is at the edge of what these draws can tell
    # from bad luck, and the test's earlier tolerance (3% of the linear statistic's bound, 7.43 on
    # 4 base draws) rested on six seeds' measured spread, not on a bound.
    from scipy import stats

    from audit.joint_bounds import JointTest
    from audit.slots import Slot

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the classical calibration's own warning at ε ≥ 1
        mechanism = GaussianMechanism(7.0, 0.1, calibration="classical")
        auto = _run(mechanism, samples=1_000_000, seed=DEFAULT_SEED)
    assert auto.verdict is Verdict.VIOLATED
    headline = [e for e in auto.evidence if e["family"] == "headline" and e["slot"] == "epsilon@0.1"]
    n, level = headline[0]["n"], sum(e["level"] for e in headline)
    best = (-math.inf, 0.0, 0.0)
    for t in np.linspace(1.1, 1.5, 17):
        p_a, p_b = stats.norm.sf((t - 1.0) / mechanism.sigma), stats.norm.sf(t / mechanism.sigma)
        value = JointTest(Slot.epsilon_at(0.1), round(n * p_a), round(n * p_b), n, level).lower_bound()
        best = max(best, (value, p_a, p_b))
    optimum, p_a, p_b = best
    standard_error = math.sqrt(p_a * (1 - p_a) / (n * (p_a - 0.1) ** 2) + (1 - p_b) / (n * p_b))
    assert 7.3 < optimum < 7.8 and 0.1 < standard_error < 0.25  # the numbers the comment states
    assert auto.epsilon_lower_bound >= optimum - 3.0 * standard_error
    assert auto.epsilon_lower_bound <= mechanism.epsilon_for_delta(0.1)  # a bound, never above the truth (8.02)


@pytest.mark.statistical
def test_auto_certifies_the_linear_lane_where_the_selection_draws_cannot_rank_it_first():
    # The auto-choice benchmark's far-tail Laplace at δ = 10⁻⁵: Geng's truncated Laplace at ε = 1
    # whose bound τ puts 1.7·10⁻⁵ of the neighbour's mass beyond the base's support, the
    # benchmark's seed, here at 1.5·10⁷ draws.  The binned primary statistic's event (its top bins,
    # from output ≈ 15.716) and the linear lane's {output ≥ 15.825} cannot be ranked on the
    # selection draws; choosing one certified the binned one at the benchmark's 10⁷ (ε_lb 1.36,
    # against 2.58 for the linear statistic alone).  Both are certified now, each at half the
    # slot's level, and the report keeps the larger bound.  The linear event lies inside the binned
    # one, which adds a stretch below it holding the base's last mass before its support ends: on
    # the 2.07·10⁷ certification draws a side their exact expected counts (the mechanism's cdf
    # over each event) are 355 against 1.11 (linear) and 355 + 64.6 against 1.11 + 23.8 (binned).
    # Miss probability of the certification, given the events this seed's selection draws fix
    # (other seeds fix others: at 10⁷, seeds 1 and 2 found one contender, pure), the counts
    # Poisson and the shared region's counts shared (summed over
    # their law with the joint test's bounds; the sums, cut at 6 standard deviations, leave out
    # 8·10⁻¹⁰ of the mass): the linear event holds more than 7 base
    # draws with probability 2.2·10⁻⁵, the binned one at most 7 with 2.5·10⁻⁵, and the linear
    # event's bound is not above the binned one's with probability 2.5·10⁻⁷; in all ≤ 4.8·10⁻⁵.
    # At the benchmark's 10⁷ the same sum (at most 5 base draws against more) gave 1.3·10⁻³, the
    # order 1.5·10⁻⁴ of it; at 2·10⁷ the binned event holds 8.8 expected base draws and at 3·10⁷
    # none, so more draws than 1.5·10⁷ no longer give the two events this test is about.
    from mechanisms.truncated_laplace import TruncatedLaplaceMechanism
    from scenarios import builders

    mass = 1.7e-5
    r = 2.0 * mass / (math.e - 1.0 + 2.0 * mass)  # δ_∞ = r(e − 1)/(2(1 − r)) = mass for r = e^{−τ}
    mechanism = TruncatedLaplaceMechanism(1.0, 1e-5, bound=-math.log(r))
    report = run_audit(mechanism, builders.counting(1), claim=mechanism.claim, samples=15_000_000,
                       seed=20261128, n_jobs=1, progress=False, accuracy=False, early_stopping=False)
    assert report.verdict is Verdict.VIOLATED
    headline = [e for e in report.evidence if e["family"] == "headline" and e["slot"] == "epsilon@1e-05"]
    lanes = {(e["pair"], e.get("lane", 0)): e for e in headline}
    assert len(lanes) == 2, lanes  # two contenders, each at half the slot's level
    assert len({e["level"] for e in headline}) == 1
    purest, other = sorted(headline, key=lambda e: e["count_other"])
    assert purest["count_other"] <= 7 < other["count_other"]
    assert report.epsilon_lower_bound == purest["bound"] > other["bound"]
