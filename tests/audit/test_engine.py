"""The audit engine: reproducibility, resumption, validity, power and bad input.

Every statistical assertion here follows from a stated bound: a valid claim is VIOLATED with
probability at most 1 − confidence per audit (Bonferroni accounting of audit/selection.py), so a
seeded single audit that is wrongly VIOLATED would be a ≤ 5% event, and repeated audits are compared
with a binomial quantile.
"""


import math

import numpy as np
import pytest
from scipy import special, stats

import scenarios
from audit import CheckpointError, MechanismError, Verdict, run_audit
from audit.intervals import cp_upper
from audit.selection import Budget
from audit.slots import headline_slots
from mechanisms import (ApproxDP, Composition, CorrelatedGaussianMechanism, GaussianDP, GaussianMechanism,
                        LaplaceMechanism, PureDP, TruncatedLaplaceMechanism)

SEED = 20261121


def ideal_mu_lower_bound(exact_mu: float, samples: int, level: float) -> tuple[float, float]:
    """(expected certified μ, its standard deviation) for the ideal single-threshold test.

    The derivation of ideal_mu_margin in test_validity_quick.py: for two unit Gaussians μ apart
    the half-way threshold has α = β = Φ(−μ/2); at the mean counts nα the engine certifies
    α_hi = β_hi = CP_upper(nα, n, level) and μ_lb = −2Φ⁻¹(α_hi); by the delta method each of the
    two independent counts moves −Φ⁻¹(α̂) with standard deviation √(α(1 − α)/n)/φ(Φ⁻¹(α)).
    """
    alpha = float(special.ndtr(-exact_mu / 2))
    alpha_hi = float(cp_upper(round(samples * alpha), samples, level))
    density = math.exp(-special.ndtri(alpha) ** 2 / 2) / math.sqrt(2 * math.pi)
    return -2.0 * float(special.ndtri(alpha_hi)), math.sqrt(2 * alpha * (1 - alpha) / samples) / density


def _reproducible(report):
    return report.to_dict(include_runtime=False)


# --- reproducibility ---------------------------------------------------------------------------

def test_identical_reports_for_one_and_two_workers(ones_pair_1d):
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    one = run_audit(mech, ones_pair_1d, samples=300_000, seed=SEED, progress=False, n_jobs=1)
    two = run_audit(mech, ones_pair_1d, samples=300_000, seed=SEED, progress=False, n_jobs=2)
    assert _reproducible(one) == _reproducible(two)
    assert one.runtime["n_jobs"] == 1 and two.runtime["n_jobs"] == 2


def test_vector_outputs_identical_across_backends():
    mech = CorrelatedGaussianMechanism(mu=1.0, d=9)
    scenario = scenarios.counting(9)
    loky = run_audit(mech, scenario, samples=50_000, seed=SEED, progress=False, n_jobs=2)
    threads = run_audit(mech, scenario, samples=50_000, seed=SEED, progress=False, n_jobs=2,
                        backend="threading")
    assert _reproducible(loky) == _reproducible(threads)


def test_different_seeds_differ(ones_pair_1d):
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    a = run_audit(mech, ones_pair_1d, samples=20_000, seed=1, progress=False, accuracy=False)
    b = run_audit(mech, ones_pair_1d, samples=20_000, seed=2, progress=False, accuracy=False)
    assert a.evidence != b.evidence


def test_resumed_checkpoint_gives_the_same_report(tmp_path, ones_pair_1d, interrupt_chunks):
    path = tmp_path / "audit.ckpt.npz"
    mechanism = GaussianMechanism(epsilon=1.0, delta=1e-5)
    kwargs = dict(samples=3_000_000, seed=SEED, progress=False, accuracy=False, n_jobs=1)
    reference = run_audit(mechanism, ones_pair_1d, **kwargs)
    # Chunk calls (one per chunk and side): the quick look's 8 (training, pilot, selection,
    # certification; not checkpointed), then the main audit's training 8 (the quick look's four
    # chunks re-drawn, audit.stages.QUICK_LOOK_TRAINS_MAIN), pilot 2, first-look selection 2 and
    # certification 2, second-look selection 2, and one chunk into the last certification segment:
    # interrupted there, with the earlier looks' counts on disk.
    with interrupt_chunks(8 + 8 + 2 + 2 + 2 + 2 + 1):
        with pytest.raises(KeyboardInterrupt):
            run_audit(mechanism, ones_pair_1d, checkpoint=path, **kwargs)
    assert path.exists()
    with np.load(path) as saved:
        assert {"selection_counts_1", "certification_counts_0"} <= set(saved.files)
    resumed = run_audit(GaussianMechanism(epsilon=1.0, delta=1e-5), ones_pair_1d, checkpoint=path, **kwargs)
    assert _reproducible(resumed) == _reproducible(reference)


def test_checkpoint_of_another_audit_is_refused(tmp_path, ones_pair_1d):
    path = tmp_path / "audit.ckpt.npz"
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    run_audit(mech, ones_pair_1d, samples=10_000, seed=1, progress=False, accuracy=False, checkpoint=path)
    with pytest.raises(CheckpointError, match="different audit"):
        run_audit(mech, ones_pair_1d, samples=10_000, seed=2, progress=False, accuracy=False, checkpoint=path)


# --- validity ------------------------------------------------------------------------------------

VALID = [
    ("gaussian-analytic", lambda: GaussianMechanism(epsilon=1.0, delta=1e-5), lambda: scenarios.counting(1)),
    ("gaussian-classical", lambda: GaussianMechanism(epsilon=0.5, delta=1e-5, calibration="classical"),
     lambda: scenarios.counting(1)),
    ("gaussian-d4", lambda: GaussianMechanism(epsilon=2.0, delta=1e-6, d=4), lambda: scenarios.counting(4)),
    ("laplace", lambda: LaplaceMechanism(epsilon=1.0), lambda: scenarios.counting(1)),
    ("truncated-laplace", lambda: TruncatedLaplaceMechanism(epsilon=1.0, delta=1e-5), lambda: scenarios.counting(1)),
    ("correlated", lambda: CorrelatedGaussianMechanism(mu=1.0, d=16), lambda: scenarios.counting(16)),
    ("composition", lambda: Composition(GaussianMechanism(epsilon=1.0, delta=1e-6), 3),
     lambda: scenarios.counting(1)),
]


@pytest.mark.statistical
@pytest.mark.parametrize("label,make_mechanism,make_scenario", VALID, ids=[v[0] for v in VALID])
def test_valid_claims_are_not_refuted_and_bounds_are_below_truth(label, make_mechanism, make_scenario):
    mech = make_mechanism()
    scenario = make_scenario()
    report = run_audit(mech, scenario, samples=200_000, seed=SEED, progress=False)
    assert report.verdict is Verdict.NOT_REFUTED, report.summary()
    if report.exact_epsilon is not None:
        assert report.epsilon_lower_bound <= report.exact_epsilon
        exact_curve = np.array(report.epsilon_curve.exact)
        assert np.all(np.array(report.epsilon_curve.lower_bounds) <= exact_curve + 1e-12)
    if report.exact_delta is not None:
        assert report.delta_lower_bound <= report.exact_delta
    if report.exact_mu is not None:
        assert report.mu_lower_bound <= report.exact_mu
        # Power: the certified μ is not far below what the ideal test (known direction and
        # half-way threshold, same Bonferroni level) certifies on average.  5 SD: the CLT miss
        # probability is 2.9e-7; the engine also loses a little by choosing direction and threshold
        # on the selection samples (seen here: within 1.1 SD of the ideal in every case).
        level = Budget(1 - report.confidence, headline_slots(mech.claim), len(scenario.pairs)).headline_level
        expected, sd = ideal_mu_lower_bound(report.exact_mu, report.samples, level)
        assert report.mu_lower_bound > expected - 5 * sd, (expected, sd)
    # Every mechanism here declares its accuracy, so the accuracy audit must have run (and pass).
    assert report.accuracy is not None and report.accuracy.verdict is Verdict.NOT_REFUTED


@pytest.mark.statistical
def test_repeated_audits_false_alarm_rate_is_within_binomial_bound(ones_pair_1d):
    # A GDP claim that is exactly tight (the analytic Gaussian has T = G_μ exactly), audited at
    # confidence 0.8 so that false alarms, if the accounting were wrong, would be frequent.  Each audit
    # is falsely VIOLATED with probability ≤ 0.2; over R = 40 independent seeds the count is
    # stochastically ≤ Binomial(40, 0.2), whose 0.999 quantile is the threshold (failing with
    # probability ≤ 1e-3 if the engine is valid).
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    claim = GaussianDP(mech.exact_mu())
    runs = 40
    false_alarms = sum(
        run_audit(mech, ones_pair_1d, claim=claim, samples=20_000, confidence=0.8, seed=seed,
                  progress=False, accuracy=False).verdict is Verdict.VIOLATED
        for seed in range(runs))
    assert false_alarms <= stats.binom.ppf(0.999, runs, 0.2)


# --- power ---------------------------------------------------------------------------------------

@pytest.mark.statistical
def test_classical_calibration_at_large_epsilon_is_violated():
    # docs/ground-truth.md §1: classical ε = 7, δ = 0.1 has exact ε 8.02 > 7.
    with pytest.warns(Warning):
        mech = GaussianMechanism(epsilon=7.0, delta=0.1, calibration="classical")
    report = run_audit(mech, scenarios.counting(1), samples=1_000_000, seed=SEED, progress=False, accuracy=False)
    assert report.verdict is Verdict.VIOLATED
    assert report.epsilon_lower_bound > 7.0
    assert report.epsilon_lower_bound <= report.exact_epsilon
    # The headline ε test refutes the claim: its message names the bound and the claimed value.
    assert report.violations and "certifies ε at δ = 0.1 ≥" in report.violations[0].message
    assert "allows at most 7" in report.violations[0].message


@pytest.mark.statistical
def test_algorithm_one_under_replacement_is_violated():
    # docs/ground-truth.md §5: under replacement μ_rep = 2μ·√(√d/(√d+1)) > μ.
    mech = CorrelatedGaussianMechanism(mu=1.0, d=16, relation="replace")
    report = run_audit(mech, scenarios.counting(16, relation="replace"), samples=100_000, seed=SEED,
                       progress=False, accuracy=False)
    assert report.verdict is Verdict.VIOLATED
    assert 1.0 < report.mu_lower_bound <= report.exact_mu


@pytest.mark.statistical
def test_no_cap_on_epsilon(ones_pair_1d):
    # μ = 12: exact ε(1e-5) ≈ 75; a cap at ln(1/0.01) = 4.6 would hide it.  Far above 4.6 with 1e6 samples.
    mech = GaussianMechanism(sigma=1 / 12)
    # Without early stopping: the first look (1/16 of the draws) already refutes the claim, and
    # would report its own, weaker bound.
    report = run_audit(mech, ones_pair_1d, claim=PureDP(1.0), samples=1_000_000, seed=SEED,
                       progress=False, accuracy=False, early_stopping=False)
    assert report.verdict is Verdict.VIOLATED
    assert report.epsilon_lower_bound > 10.0


@pytest.mark.statistical
def test_impossible_region_bounds_delta():
    # A truncated Laplace whose bound τ is a quarter of Geng's has a large tail of outputs impossible
    # under the neighbour: δ(ε) ≥ δ_∞ for every ε, far above the claimed 1e-5.
    geng = TruncatedLaplaceMechanism(epsilon=1.0, delta=1e-5)
    mech = TruncatedLaplaceMechanism(epsilon=1.0, delta=1e-5, bound=geng.bound / 4)
    report = run_audit(mech, scenarios.counting(1), samples=200_000, seed=SEED, progress=False, accuracy=False)
    assert report.verdict is Verdict.VIOLATED
    assert report.delta_lower_bound > 1e-3
    assert report.delta_lower_bound <= report.exact_delta


@pytest.mark.statistical
def test_plain_user_callable_with_explicit_claim(ones_pair_1d):
    def noisy_sum(dataset, size, rng):
        total = float(np.asarray(dataset).sum())
        return total + rng.laplace(scale=1.0, size=(size, 1))

    report = run_audit(noisy_sum, ones_pair_1d, claim=PureDP(0.5), samples=200_000, seed=SEED, progress=False)
    assert report.mechanism == "noisy_sum"
    assert report.verdict is Verdict.VIOLATED  # true ε = 1
    assert report.exact_epsilon is None and report.exact_mu is None and report.accuracy is None


def test_reverse_pairs_are_audited_once():
    report = run_audit(GaussianMechanism(epsilon=1.0, delta=1e-5), scenarios.counting(1), samples=10_000,
                       seed=SEED, progress=False, accuracy=False)
    assert len(report.pairs) == 2
    assert all(len(pair.also_covers) == 1 for pair in report.pairs)


@pytest.mark.statistical
def test_report_serialises_to_strict_json(ones_pair_1d):
    import json

    report = run_audit(TruncatedLaplaceMechanism(epsilon=1.0, delta=1e-5), ones_pair_1d, samples=20_000,
                       seed=SEED, progress=False)
    data = json.loads(report.to_json())
    assert data["verdict"] == "NOT_REFUTED"
    assert len(data["epsilon_curve"]["deltas"]) == len(data["epsilon_curve"]["lower_bounds"])
    assert "ε lower bound" in report.summary()


# --- bad input -----------------------------------------------------------------------------------

class _Broken:
    name = "broken"
    claim = ApproxDP(1.0, 1e-5)

    def __init__(self, output):
        self.output = output

    def __call__(self, dataset, size, rng):
        return self.output(size)


@pytest.mark.parametrize("output,match", [
    (lambda size: np.zeros((size, 1), dtype=np.complex64), "dtype complex64"),
    (lambda size: np.zeros((size, 1), dtype=np.int64) + 2**60, "beyond"),
    (lambda size: np.zeros((size + 1, 1)), "shape"),
    (lambda size: np.zeros(size + 1), "shape"),
    (lambda size: np.zeros((size, 1, 1)), "shape"),
    (lambda size: np.full((size, 1), np.nan), "NaN"),
    (lambda size: np.full((size, 1), np.inf), "inf"),
    (lambda size: [0.0] * size, "numpy array"),
    (lambda size: 1 / 0, "ZeroDivisionError"),
])
def test_protocol_violations_name_the_mechanism_and_pair(output, match, ones_pair_1d):
    with pytest.raises(MechanismError, match=match) as info:
        run_audit(_Broken(output), ones_pair_1d, samples=1000, seed=1, progress=False)
    assert "'broken'" in str(info.value) and "add all-ones row" in str(info.value)


def test_inconsistent_output_dimension_is_reported(ones_pair_1d):
    def changing(dataset, size, rng):
        return np.zeros((size, 1 + int(np.asarray(dataset).shape[0] % 2)))

    with pytest.raises(MechanismError, match="shape"):
        run_audit(changing, ones_pair_1d, claim=PureDP(1.0), samples=1000, seed=1, progress=False)


@pytest.mark.parametrize("kwargs,error,match", [
    ({"samples": 0}, ValueError, "samples"),
    ({"samples": 2.5}, TypeError, "samples"),
    ({"samples": 3}, ValueError, "too small"),
    ({"confidence": 1.0}, ValueError, "confidence"),
    ({"confidence": "high"}, TypeError, "confidence"),
    ({"seed": -1}, ValueError, "seed"),
    ({"seed": 1.5}, TypeError, "seed"),
    ({"n_jobs": 0}, ValueError, "n_jobs"),
    ({"n_jobs": "2"}, TypeError, "n_jobs"),
    ({"claim": "1-DP"}, TypeError, "claim"),
    ({"claim": ApproxDP(1.0, 1e-5, "replace")}, ValueError, "not a neighbour pair under 'replace'"),
])
def test_invalid_arguments(kwargs, error, match, ones_pair_1d):
    mech = GaussianMechanism(epsilon=1.0, delta=1e-5)
    with pytest.raises(error, match=match):
        run_audit(mech, ones_pair_1d, **{"progress": False, **kwargs})


def test_claim_and_scenario_relations_must_agree():
    with pytest.raises(ValueError, match="relation"):
        run_audit(GaussianMechanism(epsilon=1.0, delta=1e-5), scenarios.counting(1),
                  claim=ApproxDP(1.0, 1e-5, "replace"), progress=False)


def test_missing_claim_and_bad_scenario(ones_pair_1d):
    with pytest.raises(ValueError, match="no `claim`"):
        run_audit(lambda d, s, r: np.zeros((s, 1)), ones_pair_1d, samples=100, progress=False)
    with pytest.raises(TypeError, match="scenario"):
        run_audit(GaussianMechanism(epsilon=1.0, delta=1e-5), "counting", progress=False)
    with pytest.raises(ValueError):
        run_audit(GaussianMechanism(epsilon=1.0, delta=1e-5), [(np.zeros((2, 1)), np.zeros((2, 1)))],
                  progress=False)
