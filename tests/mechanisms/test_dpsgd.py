"""DP-SGD as a mechanism: accountant, exact truth, canary distributions, audits (tiny configs)."""

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats

import scenarios
from audit.spec import load_spec
from audit import run_audit
from mechanisms.dpsgd import DPSGD, SMALL_CONFIGURATION
from mechanisms.dpsgd.accounting import poisson_gaussian_delta, poisson_gaussian_epsilon
from mechanisms.dpsgd.canary import GradientCanary, InputCanary, projection_sum_survival
from mechanisms.zoo.faulty import exact_truth
from scenarios.faulty_cases import FAULTY_TRAINERS

SEED = 20261123
TINY = {"q": 0.5, "sigma": 1.0, "steps": 2, "clip": 1.0, "delta": 1e-3, "n": 20}
EMPTY, CANARY, NULL = np.zeros((0, 1)), np.ones((1, 1)), np.zeros((1, 1))


# -- the accountant, against a second route -----------------------------------------------------
def _hockey_stick(q, sigma, epsilon):
    """δ(ε) of one Poisson-subsampled Gaussian step by quadrature, max over add and remove:
    P = N(0, σ²), Q = (1 − q)P + qN(1, σ²); ∫(Q − e^ε P)₊ and ∫(P − e^ε Q)₊."""
    p = lambda y: stats.norm.pdf(y, 0.0, sigma)  # noqa: E731
    mix = lambda y: (1 - q) * p(y) + q * stats.norm.pdf(y, 1.0, sigma)  # noqa: E731
    add = integrate.quad(lambda y: max(0.0, mix(y) - math.exp(epsilon) * p(y)), -40, 40, limit=400, points=[0.5])[0]
    remove = integrate.quad(lambda y: max(0.0, p(y) - math.exp(epsilon) * mix(y)), -40, 40, limit=400, points=[0.5])[0]
    return max(add, remove)


@pytest.mark.parametrize("q, sigma, epsilon", [(0.1, 1.0, 0.3), (0.5, 0.8, 1.0), (0.5, 1.0, 2.0)])
def test_one_step_profile_is_bracketed_by_the_pld_estimates(q, sigma, epsilon):
    exact = _hockey_stick(q, sigma, epsilon)
    upper = poisson_gaussian_delta(q, sigma, 1, epsilon)
    lower = poisson_gaussian_delta(q, sigma, 1, epsilon, pessimistic=False)
    # The pessimistic estimate is an upper bound and the optimistic one a lower bound; both are
    # within the discretization error (relative 1e-2 is far wider than dp-accounting's 1e-4 grid).
    assert lower <= exact * (1 + 1e-6) and exact <= upper * (1 + 1e-6)
    assert upper - lower <= 1e-2 * exact


def test_composed_bracket_is_tight_and_ordered():
    lower = poisson_gaussian_epsilon(0.1, 1.0, 10, 1e-5, pessimistic=False)
    upper = poisson_gaussian_epsilon(0.1, 1.0, 10, 1e-5)
    assert lower <= upper <= lower * 1.001
    assert poisson_gaussian_epsilon(0.1, 1.0, 20, 1e-5) > upper  # more steps, more privacy loss


def test_accountant_rejects_bad_parameters():
    with pytest.raises(ValueError, match="`q`"):
        poisson_gaussian_epsilon(1.5, 1.0, 10, 1e-5)
    with pytest.raises(ValueError, match="`steps`"):
        poisson_gaussian_epsilon(0.1, 1.0, 0, 1e-5)
    with pytest.raises(ValueError, match="`delta`"):
        poisson_gaussian_epsilon(0.1, 1.0, 10, 0.0)


# -- the mechanism ------------------------------------------------------------------------------
def test_claim_and_exact_truth_of_the_correct_trainer():
    mechanism = DPSGD(**TINY)
    assert mechanism.claim.epsilon == poisson_gaussian_epsilon(0.5, 1.0, 2, 1e-3)
    low, high = mechanism.exact_epsilon_bracket(1e-3)
    assert low <= mechanism.epsilon_for_delta(1e-3) == high == mechanism.claim.epsilon
    assert float(mechanism.privacy_profile(mechanism.claim.epsilon)) <= 1e-3 * (1 + 1e-9)


def test_validation_names_the_parameter():
    with pytest.raises(ValueError, match="`q`"):
        DPSGD(q=0.0)
    with pytest.raises(ValueError, match="`view`"):
        DPSGD(view="gradients")
    with pytest.raises(ValueError, match="final-loss"):
        DPSGD(view="final-loss")
    with pytest.raises(ValueError, match="`clipping`"):
        DPSGD(clipping="none")
    with pytest.raises(TypeError, match="`canary`"):
        DPSGD(canary="dirac")
    with pytest.raises(ValueError, match="dataset"):
        DPSGD(**TINY)(np.full((1, 1), 2.0), 3, np.random.default_rng(SEED))


@pytest.mark.parametrize("view, canary, width", [("updates", GradientCanary(), 2 * 6),
                                                 ("final-model", GradientCanary(), 6),
                                                 ("final-loss", InputCanary(), 1)])
def test_shapes_and_determinism(view, canary, width):
    mechanism = DPSGD(**TINY, view=view, canary=canary)
    first = mechanism(CANARY, 7, np.random.default_rng(SEED))
    assert first.shape == (7, width) == (7, mechanism.output_dim) and first.dtype == np.float64
    np.testing.assert_array_equal(first, mechanism(CANARY, 7, np.random.default_rng(SEED)))
    assert np.isfinite(first).all()


@pytest.mark.statistical
def test_dirac_canary_coordinate_has_the_subsampled_gaussian_law():
    # Per step the canary coordinate is N(0, s²) without the canary and (1 − q)N(0, s²) + qN(c, s²)
    # with it: the projection sum has mean T q c and variance T(s² + q(1 − q)c²).  Tolerances:
    # 5 standard errors of the mean and of the variance (normal approximation).
    mechanism = DPSGD(**dict(TINY, steps=3, clip=2.0))
    score, runs = mechanism.projection_score(), 40_000
    s, c, q, T = mechanism.noise_std, mechanism.canary_shift, 0.5, 3
    for dataset, mean, var in ((EMPTY, 0.0, T * s**2), (NULL, 0.0, T * s**2),
                               (CANARY, T * q * c, T * (s**2 + q * (1 - q) * c**2))):
        values = score(mechanism(dataset, runs, np.random.default_rng(SEED)))
        assert abs(values.mean() - mean) <= 5 * math.sqrt(var / runs)
        assert abs(values.var() - var) <= 5 * var * math.sqrt(3.0 / runs)  # kurtosis ≤ 3(1 + small)


@pytest.mark.statistical
def test_projection_sum_survival_matches_simulation():
    base_sf, neighbour_sf = projection_sum_survival(0.5, 3, 1.0, 1.0)
    rng = np.random.default_rng(SEED)
    runs = 200_000
    sums = (rng.random((runs, 3)) < 0.5).sum(axis=1) + rng.standard_normal((runs, 3)).sum(axis=1)
    for t in (-1.0, 1.5, 4.0):
        p = float(neighbour_sf(np.array([t]))[0])
        assert abs((sums >= t).mean() - p) <= 5 * math.sqrt(p * (1 - p) / runs)
    assert float(base_sf(np.array([0.0]))[0]) == 0.5


@pytest.mark.statistical
def test_input_canary_loss_is_lower_when_trained_on():
    mechanism = DPSGD(**TINY, canary=InputCanary(), view="final-loss")
    without = mechanism(EMPTY, 20_000, np.random.default_rng(SEED))[:, 0]
    with_canary = mechanism(CANARY, 20_000, np.random.default_rng(SEED + 1))[:, 0]
    spread = math.sqrt((without.var() + with_canary.var()) / 20_000)
    assert with_canary.mean() < without.mean() - 5 * spread
    with pytest.raises(NotImplementedError, match="unknown"):
        mechanism.epsilon_for_delta(1e-3)


# -- faulty trainers ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(FAULTY_TRAINERS))
def test_faulty_trainer_registry(name):
    case = FAULTY_TRAINERS[name]
    assert case.name == name and "\n" not in case.fault
    mechanism, scenario = case()
    assert scenario.relation == mechanism.claim.relation and scenario.d == mechanism.d == 1
    if case.truth == "exact":
        truth = exact_truth(mechanism)
        assert truth["exact_epsilon"] > 1.1 * truth["claimed_epsilon"]
    else:
        with pytest.raises(NotImplementedError, match="unknown"):
            mechanism.epsilon_for_delta(mechanism.delta)


def test_accountant_half_steps_truth_is_the_full_accountant():
    mechanism, _ = FAULTY_TRAINERS["dpsgd-accountant-half-steps"]()
    assert mechanism.claim.epsilon == poisson_gaussian_epsilon(0.5, 1.0, 2, 1e-3)
    assert mechanism.epsilon_for_delta(1e-3) == poisson_gaussian_epsilon(0.5, 1.0, 4, 1e-3)


def test_unscaled_noise_truth_uses_sigma_over_clip():
    mechanism, _ = FAULTY_TRAINERS["dpsgd-unscaled-noise"]()
    assert mechanism.noise_std == 1.0 and mechanism.canary_shift == 2.0
    assert mechanism.epsilon_for_delta(1e-3) == poisson_gaussian_epsilon(0.5, 0.5, 4, 1e-3)


@pytest.mark.statistical
def test_shuffling_puts_the_canary_in_exactly_one_batch_per_epoch():
    mechanism = DPSGD(**dict(TINY, steps=4), sampling="shuffle")  # q = 0.5: 2 batches, 2 epochs
    out = mechanism(CANARY, 2_000, np.random.default_rng(SEED)).reshape(2_000, 4, -1)[:, :, -1]
    # canary coordinate = c·[in batch] + N(0, s²): per epoch the two steps' sum has mean exactly c
    epoch_sums = out.reshape(2_000, 2, 2).sum(axis=2)
    assert abs(epoch_sums.mean() - 1.0) <= 5 * math.sqrt(2.0 / 4_000)


# -- audits through the engine ------------------------------------------------------------------
def _audit(mechanism, samples, seed, statistic=None):
    pair = scenarios.from_pairs([(EMPTY, CANARY, "add the canary")])
    return run_audit(mechanism, pair, samples=samples, seed=seed, progress=False,
                     statistic=statistic or mechanism.projection_score())


@pytest.mark.statistical
def test_correct_trainer_audits_below_its_truth_and_unscaled_noise_is_refuted():
    correct = DPSGD(**TINY)
    report = _audit(correct, 20_000, SEED)
    assert report.verdict.value == "NOT_REFUTED"
    assert 0 < report.epsilon_lower_bound <= report.exact_epsilon
    faulty = DPSGD(**dict(TINY, clip=2.0), noise="unscaled")  # effective multiplier 0.5
    assert _audit(faulty, 20_000, SEED).verdict.value == "VIOLATED"


@pytest.mark.statistical
def test_quick_validity_of_the_correct_trainer():
    # 8 audits at γ = 0.05: false alarms are Binomial(8, ≤ 0.05); P(≥ 3) < 0.006.
    correct = DPSGD(**TINY)
    alarms = sum(_audit(correct, 5_000, SEED + i).verdict.value == "VIOLATED" for i in range(8))
    assert alarms <= 2


def test_small_configuration_is_what_the_benchmark_documents():
    assert round(DPSGD(**SMALL_CONFIGURATION).claim.epsilon, 3) == 4.481


# -- the scenario files -------------------------------------------------------------------------
DPSGD_FILES = sorted((Path(scenarios.__file__).parent / "suite" / "dpsgd").glob("*.toml"))


@pytest.mark.parametrize("path", DPSGD_FILES, ids=[p.stem for p in DPSGD_FILES])
def test_dpsgd_scenario_files_state_the_exact_truth(path):
    spec = load_spec(path)
    assert spec.name == path.stem and spec.scenario.checked and spec.note
    exact = spec.mechanism.epsilon_for_delta(spec.claim.delta)
    assert spec.expected == ("violated" if exact > spec.claim.epsilon * (1 + 1e-9) else "holds")
    header = path.read_text(encoding="utf-8").split("\nexpected")[0]
    assert "Exact truth" in header and ("VIOLATED" in header) == (spec.expected == "violated")


def test_there_are_dpsgd_scenario_files():
    assert {p.stem for p in DPSGD_FILES} >= {"dpsgd-correct", "dpsgd-unscaled-noise"}


def test_single_event_limit_is_below_the_truth_and_grows_with_runs():
    from benchmarks.dpsgd import projection_limit

    mechanism = DPSGD(**SMALL_CONFIGURATION)
    small, large = (projection_limit(mechanism, n).epsilon for n in (10_000, 1_000_000))
    assert 0 < small < large < mechanism.epsilon_for_delta(mechanism.delta)


# -- shuffled batches (mechanisms.dpsgd.shuffle) -------------------------------------------------
from mechanisms.dpsgd.shuffle import ShuffledCanaryPair, batch_sizes  # noqa: E402


@pytest.mark.statistical
@pytest.mark.parametrize("background", [None, -1.0, 0.5])
def test_shuffled_canary_lands_in_exactly_one_batch_per_epoch(background):
    # σ = 1e-4: the canary coordinate of each update is its mean to within 1e-3 (10 standard
    # deviations), so each epoch's vector must be E[y | D] + d_J for exactly one J.
    config = dict(q=0.25, sigma=1e-4, steps=8, clip=1.0, delta=1e-3, n=18)  # K = 4, 2 epochs
    mechanism = DPSGD(**config, sampling="shuffle", background=background)
    pair = mechanism.shuffled_pair()
    base, shifts = np.asarray(pair.base), np.asarray(pair.shifts)
    runs = 3_000
    y = mechanism(CANARY, runs, np.random.default_rng(SEED)).reshape(runs, 8, -1)[:, :, -1]
    for epoch in (y[:, :4], y[:, 4:]):
        distance = np.abs((epoch - base)[:, None, :] - shifts[None, :, :]).max(axis=2)  # (runs, K)
        assert ((distance < 1e-3).sum(axis=1) == 1).all()
        which = distance.argmin(axis=1)
        # J ~ P(J = j) = s_j(n + 1)/(n + 1): 5 binomial standard deviations per batch
        expected = batch_sizes(19, 4) / 19
        assert np.all(np.abs(np.bincount(which, minlength=4) / runs - expected)
                      <= 5 * np.sqrt(expected * (1 - expected) / runs))
    empty = mechanism(EMPTY, 50, np.random.default_rng(SEED)).reshape(50, 8, -1)[:, :, -1]
    assert np.abs(empty - np.tile(base, 2)).max() < 1e-3


def test_batch_sizes_follow_the_trainer_rule():
    assert batch_sizes(50, 2).tolist() == [25, 25] and batch_sizes(51, 2).tolist() == [26, 25]
    assert batch_sizes(19, 4).sum() == 19 and batch_sizes(19, 4).max() - batch_sizes(19, 4).min() <= 1


@pytest.mark.statistical
@pytest.mark.parametrize("epochs", [1, 3])
def test_shuffled_pair_routes_agree_on_a_gaussian(epochs):
    # K = 1: the pair is N(0, σ²) against N(d, σ²) per epoch, the Gaussian mechanism with
    # μ = d√E/σ, whose ε(δ) dp_accounting's get_epsilon_gaussian gives (exact, to 1e-12).
    from dp_accounting import get_epsilon_gaussian

    pair = ShuffledCanaryPair(epochs, 1.0, (0.0,), ((1.5,),), (1.0,))
    exact = get_epsilon_gaussian(1.0 / (1.5 * math.sqrt(epochs)), 1e-3)
    grid = pair.grid_lower_bound(1e-3, step=0.01, bins=4000)
    # grid: a lower bound (post-processing); rounding to cells of 0.01σ and 4000 loss groups costs
    # well under 1% here (it is 1e-3 at step 0.01 on the mixture pairs below).
    assert exact * (1 - 1e-2) <= grid <= exact * (1 + 1e-9)
    assert pair.event_lower_bound(1e-3) <= exact * (1 + 1e-9)
    estimate = pair.epsilon(1e-3, draws=200_000, seed=SEED, confidence=0.9999)
    assert estimate.low <= exact <= estimate.high  # a 99.99% CLT interval: fails w.p. ≈ 1e-4


@pytest.mark.statistical
@pytest.mark.parametrize("background, below_claim", [(-1.0, False), (None, True)])
def test_shuffled_pair_epsilon_by_quadrature_and_monte_carlo(background, below_claim):
    mechanism = DPSGD(**SMALL_CONFIGURATION, sampling="shuffle", background=background)
    pair = mechanism.shuffled_pair()
    grid = pair.grid_lower_bound(1e-3, step=0.05, bins=1000)
    estimate = pair.epsilon(1e-3, draws=200_000, seed=SEED, confidence=0.9999)
    # The grid value is a lower bound that moved by < 2e-3 from step 0.05 to 0.01 (benchmark
    # notes), so the Monte Carlo interval (99.99%) must reach it and start at most 0.01 above it.
    assert estimate.low <= grid + 0.01 and grid <= estimate.high
    assert pair.event_lower_bound(1e-3) <= grid
    claim = mechanism.claim.epsilon  # the Poisson accountant's 4.481
    if below_claim:   # logistic data, Dirac canary: "one of K shifted" is more private than Poisson
        assert estimate.high < claim
    else:             # crafted data: the closed-form lower bounds already exceed the claim
        assert pair.event_lower_bound(1e-3) > 1.5 * claim and grid > 2 * claim


def test_shuffled_pair_validation():
    with pytest.raises(ValueError, match="`background`"):
        DPSGD(**TINY, background=1.5)
    with pytest.raises(ValueError, match="`background`"):
        DPSGD(**TINY, background=-1.0, canary=InputCanary(), view="final-loss")
    with pytest.raises(ValueError, match="sampling='shuffle'"):
        DPSGD(**TINY, background=-1.0).shuffled_pair()
    with pytest.raises(ValueError, match="`weights`"):
        ShuffledCanaryPair(2, 1.0, (0.0, 0.0), ((1.0, 0.0), (0.0, 1.0)), (0.5, 0.6))
    with pytest.raises(ValueError, match="`noise`"):
        ShuffledCanaryPair(2, 0.0, (0.0,), ((1.0,),), (1.0,))
    gaussian = ShuffledCanaryPair(1, 1.0, (0.0,), ((1.0,),), (1.0,))
    with pytest.raises(ValueError, match="`step`"):
        gaussian.grid_lower_bound(1e-3, step=-0.1)
    with pytest.raises(ValueError, match="`bins`"):
        gaussian.grid_lower_bound(1e-3, bins=1)
    with pytest.raises(ValueError, match="`delta`"):
        gaussian.epsilon(0.0, draws=1_000, seed=1)
    with pytest.raises(ValueError, match="`thresholds`"):
        gaussian.event_lower_bound(1e-3, thresholds=np.array([np.nan]))
    with pytest.raises(ValueError, match="`y`"):
        gaussian.loss(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="background"):
        DPSGD(**TINY, background=-1.0).one_run_scores(10, np.random.default_rng(SEED))
    with pytest.raises(NotImplementedError, match="unknown"):
        DPSGD(**TINY, background=-1.0).epsilon_for_delta(1e-3)


@pytest.mark.statistical
def test_shuffling_is_refuted_and_poisson_is_not_on_the_crafted_data_set():
    # The zoo entry at 20,000 runs per side with the shuffled pair's likelihood ratio (fixed before
    # the audit); the correct trainer on the same data with the same statistic holds its claim.
    shuffled, scenario = FAULTY_TRAINERS["dpsgd-shuffling"]()
    statistic = shuffled.shuffled_likelihood_ratio_score()
    report = _audit(shuffled, 20_000, SEED, statistic)
    assert report.verdict.value == "VIOLATED" and report.epsilon_lower_bound > shuffled.claim.epsilon
    poisson = DPSGD(**SMALL_CONFIGURATION, background=-1.0)
    assert poisson.claim == shuffled.claim
    assert _audit(poisson, 20_000, SEED, statistic).verdict.value == "NOT_REFUTED"


# -- the one-hidden-layer network (mechanisms.dpsgd.mlp) -----------------------------------------
from mechanisms.dpsgd.mlp import OneHiddenLayer  # noqa: E402


def test_network_gradients_match_finite_differences_and_clip_to_c():
    network = OneHiddenLayer(5)
    rng = np.random.default_rng(SEED)
    x, y = rng.normal(size=(3, 6)), np.array([1.0, 0.0, 1.0])
    theta = rng.normal(size=(2, network.size(6)))

    def loss(th):
        f = network.output(th[None, :], x)[0]
        return np.sum(np.logaddexp(0.0, f) - y * f)

    exact = network.clipped_sum(theta, x, y, np.linalg.norm(x, axis=1), np.ones((2, 3)), None)
    for r in range(2):  # central differences with h = 1e-6: error O(h²) plus rounding O(1e-16/h)
        numeric = [(loss(theta[r] + 1e-6 * e) - loss(theta[r] - 1e-6 * e)) / 2e-6 for e in np.eye(theta.shape[1])]
        np.testing.assert_allclose(exact[r], numeric, atol=1e-7)
    for i in range(3):  # each example alone, clipped to C = 0.1: norm min(‖g_i‖, C)
        mask = np.zeros((2, 3))
        mask[:, i] = 1.0
        raw = network.clipped_sum(theta, x, y, np.linalg.norm(x, axis=1), mask, None)
        clipped = network.clipped_sum(theta, x, y, np.linalg.norm(x, axis=1), mask, 0.1)
        np.testing.assert_allclose(np.linalg.norm(clipped, axis=1),
                                   np.minimum(np.linalg.norm(raw, axis=1), 0.1), rtol=1e-12)


@pytest.mark.statistical
def test_network_dirac_canary_has_the_subsampled_gaussian_law():
    # As for logistic regression: the canary weight W_{0,p−1} sees N(0, s²) per step without the
    # canary and (1 − q)N(0, s²) + qN(c, s²) with it.  Tolerances: 5 standard errors (normal approx.).
    mechanism = DPSGD(**dict(TINY, steps=3), model="mlp", hidden=4)
    assert mechanism.output_dim == 3 * (4 * 6 + 4)
    assert mechanism.epsilon_for_delta(1e-3) == DPSGD(**dict(TINY, steps=3)).epsilon_for_delta(1e-3)
    score, runs, T, q = mechanism.projection_score(), 20_000, 3, 0.5
    for dataset, mean, var in ((EMPTY, 0.0, T * 1.0), (CANARY, T * q, T * (1.0 + q * (1 - q)))):
        values = score(mechanism(dataset, runs, np.random.default_rng(SEED)))
        assert abs(values.mean() - mean) <= 5 * math.sqrt(var / runs)
        assert abs(values.var() - var) <= 5 * var * math.sqrt(3.0 / runs)


@pytest.mark.statistical
def test_network_trainer_audits_like_logistic_regression():
    correct = DPSGD(**TINY, model="mlp", hidden=4)
    report = _audit(correct, 10_000, SEED)
    assert report.verdict.value == "NOT_REFUTED" and report.epsilon_lower_bound <= report.exact_epsilon
    faulty = DPSGD(**dict(TINY, clip=2.0), noise="unscaled", model="mlp", hidden=4)
    assert _audit(faulty, 10_000, SEED).verdict.value == "VIOLATED"
    loss = DPSGD(**TINY, model="mlp", hidden=4, canary=InputCanary(), view="final-loss")
    without = loss(EMPTY, 2_000, np.random.default_rng(SEED))[:, 0]
    with_canary = loss(CANARY, 2_000, np.random.default_rng(SEED + 1))[:, 0]
    assert with_canary.mean() < without.mean() - 5 * math.sqrt((without.var() + with_canary.var()) / 2_000)


def test_network_validation():
    with pytest.raises(ValueError, match="`model`"):
        DPSGD(**TINY, model="cnn")
    with pytest.raises(ValueError, match="`hidden`"):
        DPSGD(**TINY, model="mlp", hidden=0)
    with pytest.raises(ValueError, match="model='mlp'"):
        DPSGD(**TINY, model="mlp").one_run_scores(10, np.random.default_rng(SEED))
    with pytest.raises(ValueError, match="`direction`"):
        DPSGD(**TINY, model="mlp", canary=GradientCanary(direction=(1.0, 0.0)))
