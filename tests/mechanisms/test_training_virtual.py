"""The virtual view of :class:`mechanisms.training.UserTraining`: the per-logical-step likelihood
ratio of k physical steps each noised σC/√k (:mod:`mechanisms.training.virtual`).

The ratio is checked against the mixture's densities written out by hand and, by Monte Carlo,
against the identities every likelihood ratio meets; the view's unit on the zoo's trainers; the
correct trainer (k = 1) not refuted; and the k = 16 fault refuted.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from mechanisms.training.virtual import virtual_steps_loss

SIGMA, STEPS = 2.0, 4


def _by_hand(v: np.ndarray, q: float, sigma: float, k: int) -> np.ndarray:
    """log Π_t p₁(v_t)/p₀(v_t) from the normal densities: p₀ = Π_j φ(v_j), p₁ = (1 − q)·p₀ +
    (q/k)·Σ_J φ(v_J − Δ)·Π_{j≠J} φ(v_j), Δ = √k/σ (the law of mechanisms.training.virtual)."""
    shift = np.sqrt(k) / sigma
    out = np.zeros(v.shape[0])
    for t in range(v.shape[1] // k):
        block = v[:, t * k:(t + 1) * k]
        p0 = np.prod(stats.norm.pdf(block), axis=1)
        moved = sum(stats.norm.pdf(block[:, j] - shift) * np.prod(np.delete(stats.norm.pdf(block), j, axis=1), axis=1)
                    for j in range(k))
        out += np.log(((1 - q) * p0 + q / k * moved) / p0)
    return out


@pytest.mark.parametrize("k", [1, 4, 16])
@pytest.mark.parametrize("q", [0.5, 1.0, 0.01])
def test_the_ratio_is_the_mixtures_density_ratio(k, q):
    """Second route: the normal densities multiplied out (tolerance: float64 rounding of products
    of up to 16 densities, relative 1e-9); for k = 1 also the Poisson-subsampled Gaussian's
    per-step ratio 1 − q + q·e^{v/σ − 1/(2σ²)} in closed form."""
    v = np.random.default_rng(7).standard_normal((50, STEPS * k)) * 1.5 + 0.5
    loss = virtual_steps_loss(v, sample_rate=q, noise_multiplier=SIGMA, physical_steps=k)
    assert loss == pytest.approx(_by_hand(v, q, SIGMA, k), rel=1e-9, abs=1e-12)
    if k == 1:
        closed = np.log(1 - q + q * np.exp(v / SIGMA - 1 / (2 * SIGMA**2))).sum(axis=1)
        assert loss == pytest.approx(closed, rel=1e-12, abs=1e-14)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="physical_steps = 4"):
        virtual_steps_loss(np.zeros((1, 6)), sample_rate=0.5, noise_multiplier=2.0, physical_steps=4)
    with pytest.raises(ValueError, match="sample_rate"):
        virtual_steps_loss(np.zeros((1, 4)), sample_rate=1.5, noise_multiplier=2.0, physical_steps=1)
    with pytest.raises(ValueError, match="noise_multiplier"):
        virtual_steps_loss(np.zeros((1, 4)), sample_rate=0.5, noise_multiplier=0.0, physical_steps=1)
    with pytest.raises(ValueError, match="physical_steps"):
        virtual_steps_loss(np.zeros((1, 4)), sample_rate=0.5, noise_multiplier=2.0, physical_steps=0)


@pytest.mark.statistical
def test_the_ratio_has_mean_one_under_each_law():
    """E₀[e^L] = 1 and E₁[e^{−L}] = 1 for any likelihood ratio; a wrong Δ²/2 or 1/k breaks them
    (without the Δ²/2, E₀[e^L] = 1 − q + q·e^{1/2} = 1.32).  k = 4, σ = 2 (Δ = 1), q = ½, one
    logical step, 200,000 seeded draws a side from the law (standard normals, plus Δ on a uniform
    one of the k with probability q).  Var₀(e^L) = q²(e^{Δ²} − 1)/k = 0.107 and
    Var₁(e^{−L}) ≤ E₀[e^{−L}] ≤ 1/(1 − q) = 2: the means lie within 5 standard errors of 1,
    5·√(0.107/2e5) = 0.0037 and 5·√(2/2e5) = 0.016 (a normal tail of 6e-7 each)."""
    rng = np.random.default_rng(20261128)
    n, k, q = 200_000, 4, 0.5
    z0 = rng.standard_normal((n, k))
    z1 = rng.standard_normal((n, k))
    z1[np.arange(n), rng.integers(0, k, n)] += (np.sqrt(k) / SIGMA) * (rng.random(n) < q)
    l0 = virtual_steps_loss(z0, sample_rate=q, noise_multiplier=SIGMA, physical_steps=k)
    l1 = virtual_steps_loss(z1, sample_rate=q, noise_multiplier=SIGMA, physical_steps=k)
    assert abs(np.mean(np.exp(l0)) - 1) < 0.0037
    assert abs(np.mean(np.exp(-l1)) - 1) < 0.016


def test_the_miss_bound_stated_below_is_that_of_the_measurement():
    """The k = 16 test's miss probability is stated from benchmarks/results/training/virtual-miss.json
    (``python -m benchmarks.virtual_miss``): 0 misses in the 400 seeds 4000 to 4399 at 16,000 a
    side, every one refuted by 6,937 draws.  The one-sided 95% Clopper–Pearson bound from 0 of n is
    the Beta(1, n) quantile, 1 − 0.05^{1/n} in closed form: 0.746% at n = 400; from 2 of 59 (the
    budget of 4,000), 10.3%.  Reads a file and computes: no draws."""
    import json

    from benchmarks.virtual_miss import RESULTS, TEST_SAMPLES, upper_bound

    data = json.loads((RESULTS / "virtual-miss.json").read_text())
    rows = data["rows"]
    assert data["samples"] == TEST_SAMPLES == 16_000 and [r["seed"] for r in rows] == list(range(4000, 4400))
    assert all(r["verdict"] == "VIOLATED" for r in rows) and max(r["draws"] for r in rows) == 6_937
    assert upper_bound(0, len(rows)) == pytest.approx(1 - 0.05 ** (1 / 400), rel=1e-9)
    assert 0.0074 < upper_bound(0, len(rows)) < 0.0075 and 0.1025 < upper_bound(2, 59) < 0.1035


# -- the view on the zoo's trainers ---------------------------------------------------------------------
torch = pytest.importorskip("torch", reason="the torch extra (torch, opacus) is not installed")
pytest.importorskip("opacus", reason="the torch extra (torch, opacus) is not installed")

from mechanisms.training import UserTraining  # noqa: E402
from mechanisms.training.watch import ParameterWatch  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import training_zoo as zoo  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal((31, 3)).astype(np.float32)
Y = (X[:, 0] + 0.5 * RNG.standard_normal(31) > 0).astype(np.int64)
CLAIM = dict(noise_multiplier=zoo.SIGMA, steps=zoo.T, delta=1e-3, batch_size=zoo.B)


def test_the_view_is_refused_without_its_inputs():
    with pytest.raises(ValueError, match="physical_steps"):
        UserTraining(zoo.func_correct, X, Y, view="updates", physical_steps=4, **CLAIM)
    with pytest.raises(ValueError, match="needs the accountant's claim"):
        UserTraining(zoo.func_correct, X, Y, view="virtual", mu=1.0)
    with pytest.raises(ValueError, match="physical_steps"):
        UserTraining(zoo.func_correct, X, Y, view="virtual", physical_steps=0, **CLAIM)
    with pytest.raises(ValueError, match="noise_columns"):
        UserTraining(zoo.func_correct, X, Y, view="virtual", noise_columns=0, **CLAIM)
    mechanism = UserTraining(zoo.func_correct, X, Y, view="virtual", physical_steps=4, **CLAIM)
    assert "virtual k=4" in mechanism.name
    with pytest.raises(ValueError, match="4 × 4 = 16 parameter writes, the trainer made 4"):
        mechanism(np.ones((1, 1)), 1, np.random.default_rng(0))


@pytest.mark.statistical
@pytest.mark.parametrize("trainer, k", [("func_virtual_steps_16", 16), ("func_correct", 1)])
def test_the_views_values_are_in_units_of_the_physical_noise(trainer, k):
    """Without the canary every write of the canary column is noise alone, so the projections
    divided by the noise columns' root mean square are standard normal: over 12 trainings of
    T·k writes (768 values at k = 16, 48 at k = 1) the mean lies within 4/√N and the variance
    within 1 ± 4·√(2/N) (normal approximations, tails of 6e-5; the scale's own error, below 0.5%
    from 12·1024·T·k squares, adds at most 0.01)."""
    train = getattr(zoo, trainer)
    mechanism = UserTraining(train, X, Y, view="virtual", physical_steps=k, **CLAIM)
    x, y = mechanism._data(0)
    row, label = mechanism._canary_row
    values = []
    for seed in range(12):
        watch = ParameterWatch(x.shape[1], noise_columns=mechanism.noise_columns)
        with watch, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = train(x, y, 500 + seed)
        scale = np.sqrt(watch.noise_energy(model, where="test").mean())
        steps = watch.projections(model, label, row, where="test")
        assert steps.size == zoo.T * k
        values.append(steps / scale)
    v = np.concatenate(values)
    assert abs(v.mean()) < 4 / np.sqrt(v.size), v.mean()
    assert abs(v.var() - 1) < 4 * np.sqrt(2 / v.size) + 0.01, v.var()


@pytest.mark.statistical
def test_the_correct_trainer_is_not_refuted_by_the_virtual_view():
    """k = 1: the per-step ratio of the Poisson-subsampled Gaussian on the correct torch.func
    trainer, whose claim holds: not refuted at 48 trainings a side (fails with probability at most
    5%; the benchmark's run at 1,002 a side is in benchmarks/results/training/zoo.md)."""
    from audit.training import audit_training

    report = audit_training(zoo.func_correct, X, Y, view="virtual", trainings=48, seed=11, progress=False, **CLAIM)
    assert report.verdict.value == "NOT_REFUTED"


@pytest.mark.statistical
@pytest.mark.parametrize("trainer, k", [("func_virtual_steps_16", 16), ("func_correct", 1)])
def test_the_view_follows_the_law_of_its_trainer(trainer, k):
    """End to end: the view's output on 30 trainings a side of the zoo's trainer has the mean of
    L under the law of mechanisms.training.virtual (the canary clipped to C, in one of k physical
    steps noised σC/√k: shift √k/σ = 2 at k = 16, 1/σ at k = 1, the correct trainer), estimated
    from 200,000 seeded draws a side of that law.  Each mean lies within 4 standard errors of the
    law's, 4·sd/√30 (the law's sd; the Monte Carlo's own error, 4·sd/√2e5, is added), a two-sided
    normal tail of 6e-5.  At k = 16 the law's means are −0.42 and 0.61 (sd 0.77 and 1.34), and
    a unit off by a factor 2 (noise read as twice its scale) would move the first to 8.8."""
    rng = np.random.default_rng(20261129)
    n = 200_000
    z0, z1 = rng.standard_normal((n, zoo.T, k)), rng.standard_normal((n, zoo.T, k))
    z1[np.arange(n)[:, None], np.arange(zoo.T)[None, :], rng.integers(0, k, (n, zoo.T))] += \
        np.sqrt(k) / zoo.SIGMA * (rng.random((n, zoo.T)) < 0.5)
    mechanism = UserTraining(getattr(zoo, trainer), X, Y, view="virtual", physical_steps=k, **CLAIM)
    for copies, z in ((0, z0), (1, z1)):
        law = virtual_steps_loss(z.reshape(n, -1), sample_rate=0.5, noise_multiplier=zoo.SIGMA, physical_steps=k)
        seen = mechanism(np.ones((copies, 1)), 30, np.random.default_rng(40 + copies))[:, 0]
        tolerance = 4 * law.std() * (1 / np.sqrt(30) + 1 / np.sqrt(n))
        assert abs(seen.mean() - law.mean()) < tolerance, (copies, seen.mean(), law.mean(), tolerance)


@pytest.mark.statistical
def test_the_ratio_refutes_sixteen_virtual_steps():
    """The audit of audit_training (anytime, at most 16,000 a side, the linear statistic) on the
    view's law at k = 16, drawn directly (:class:`benchmarks.virtual_miss.VirtualLaw`: the
    trainer's L without the training, which the test above checks it follows; true ε(1e-3) 6.22,
    RDP claim 1.922; the limit table's single event at expected counts certifies 2.12 at 1,000
    and 2.90 at 4,000): refuted.  This seed, 2028, stops at 1,455 draws a side.

    Miss probability: measured, not derived, and bounded only at 0.75%.  The probability that
    another stream of draws (another seed, another NumPy) leaves the law unrefuted has no closed
    form (the audit learns its events from the draws, and L's law is a mixture over where the
    canary falls in each logical step), so ``python -m benchmarks.virtual_miss`` runs this same
    audit (:func:`benchmarks.virtual_miss.audit_law`) at seeds 4000 to 4399: all 400 refuted,
    every one by 6,937 draws a side (benchmarks/results/training/virtual-miss.md).  From 0 misses
    in 400, the miss probability is at most 0.75% at 95% confidence (one-sided Clopper–Pearson),
    so a change of random streams may flip this test with a probability known only to that bound,
    far weaker than the derived tails (6·10⁻⁵ or less) of this file's moment checks.  A bound of
    10⁻³ would need 0 misses in 2,995 seeds (about 33 minutes of one core, at the 0.66 s a seed
    measured); the seeds still unrefuted falling by half or more a round from 2,842 draws on (34
    beyond 2,842, 12 beyond 3,552, 3 beyond 4,440, 1 beyond 5,550) suggest about 10⁻⁴ at 15,984,
    an extrapolation, not a bound.  At the limit table's 4,000 a side, 2 of 59 seeds (3000 to
    3058) were not refuted (3.4%; at most 10.3%, one-sided Clopper–Pearson at 95%;
    benchmarks/results/training/virtual-miss-4000/), which is why the budget is 16,000; it costs
    this seed nothing, as it stops where it did at 4,000.  The zoo's trainer itself is audited so
    by the benchmark (benchmarks/results/training/zoo.md)."""
    from benchmarks.virtual_miss import audit_law

    report = audit_law(2028, 16_000)
    assert report.verdict.value == "VIOLATED", report.epsilon_lower_bound
    assert report.epsilon_lower_bound <= 6.22
