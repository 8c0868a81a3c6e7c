"""PyTorch/Opacus training audits (mechanisms.training, mechanisms.zoo.trainers).

Skipped, with the reason, when torch or opacus is absent; CI installs both.  Each test trains
tiny models for a few steps (about 25 s in all on one core).
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

torch = pytest.importorskip("torch", reason="the torch extra (torch, opacus) is not installed")
pytest.importorskip("opacus", reason="the torch extra (torch, opacus) is not installed")

import scenarios  # noqa: E402
from audit import run_audit  # noqa: E402
from mechanisms.dpsgd import DPSGD  # noqa: E402
from mechanisms.training import (DiracCanary, InputCanary, TorchTraining, accountant_claim,  # noqa: E402
                                 accountant_epsilon, opacus_sample_rate)
from mechanisms.zoo.trainers import (TORCH_FAULTS, faulty_training, loader_batch_sizes,  # noqa: E402
                                     shuffled_loader_pair)

PAIR = scenarios.from_pairs([(np.zeros((0, 1)), np.ones((1, 1)), "add the canary")])
#: Two-sided binomial and chi-square checks at this level: each fails a correct trainer with
#: probability 1e-4.
LEVEL = 1e-4


def test_import_mechanisms_does_not_import_torch():
    code = ("import sys, mechanisms, mechanisms.training, mechanisms.zoo, mechanisms.zoo.trainers, scenarios, audit; "
            "assert 'torch' not in sys.modules and 'opacus' not in sys.modules, sorted(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.statistical
def test_dirac_canary_coordinate_is_exact():
    """With noise 1e-6·C the canary coordinate of the correct Opacus trainer is C when the canary
    is in the batch and 0 otherwise; inclusions are Binomial(T·runs, q)."""
    mechanism = TorchTraining(noise_multiplier=1e-6, max_grad_norm=1.5, steps=4, n=49, batch_size=25)
    runs = 40
    view = mechanism(np.ones((1, 1)), runs, np.random.default_rng(3))[:, 0::2]
    assert np.all((np.abs(view) < 1e-3) | (np.abs(view - 1.5) < 1e-3))
    included = int(np.sum(view > 0.75))
    low, high = stats.binom.interval(1 - LEVEL, runs * 4, mechanism.sample_rate)
    assert low <= included <= high
    without = mechanism(np.zeros((0, 1)), 5, np.random.default_rng(4))[:, 0::2]
    assert np.max(np.abs(without)) < 1e-3


@pytest.mark.statistical
def test_noise_is_sigma_c_per_coordinate():
    """No canary: every probe coordinate of v_t is N(0, σ²C²); the sum of squares of the canary
    coordinate over runs × T draws is σ²C² χ² with runs × T degrees of freedom."""
    mechanism = TorchTraining(noise_multiplier=0.7, max_grad_norm=2.0, steps=4)
    runs = 30
    view = mechanism(np.zeros((0, 1)), runs, np.random.default_rng(5))
    values = view[:, 0::2].ravel()
    scaled = np.sum(values**2) / (0.7 * 2.0) ** 2
    low, high = stats.chi2.interval(1 - LEVEL, values.size)
    assert low <= scaled <= high
    # the other 15 probe coordinates: E[log mean square] = log(σ²C²) + E[log(χ²₁₅/15)]
    energy = view[:, 1::2].ravel()
    expected = np.log((0.7 * 2.0) ** 2) + (stats.chi2(15).expect(np.log) - np.log(15))
    spread = np.sqrt(stats.chi2(15).expect(lambda v: np.log(v) ** 2) - stats.chi2(15).expect(np.log) ** 2)
    assert abs(energy.mean() - expected) <= stats.norm.isf(LEVEL / 2) * spread / np.sqrt(energy.size)


def test_same_seed_same_outputs_and_shapes():
    mechanism = TorchTraining(steps=2)
    first = mechanism(np.ones((1, 1)), 3, np.random.default_rng(11))
    again = mechanism(np.ones((1, 1)), 3, np.random.default_rng(11))
    assert first.shape == (3, 4) and np.array_equal(first, again)
    loss = TorchTraining(steps=2, canary=InputCanary(scale=2.0), data="digits", n=30, batch_size=10)
    out = loss(np.ones((1, 1)), 2, np.random.default_rng(1))
    assert out.shape == (2, 1) and np.isfinite(out).all()


def test_accountant_claims_match_the_accountants():
    q = opacus_sample_rate(49, 25)
    assert q == 0.5 and opacus_sample_rate(50, 25) == 0.5 and opacus_sample_rate(51, 25) == 1 / 3
    from opacus.accountants import PRVAccountant, RDPAccountant

    for name, engine in (("rdp", RDPAccountant()), ("prv", PRVAccountant())):
        engine.history = [(1.0, q, 4)]
        reported = engine.get_epsilon(1e-3)
        claim = accountant_claim(name, q, 1.0, 4, 1e-3)
        assert claim.epsilon_at(1e-3) == pytest.approx(reported, rel=1e-6)
        assert accountant_epsilon(name, q, 1.0, 4, 1e-3) == pytest.approx(reported, rel=1e-12)
    # dp-accounting's PLD: the same value by the numpy trainer's accountant (a second route)
    pld = accountant_claim("pld", q, 1.0, 4, 1e-3).epsilon_at(1e-3)
    assert pld == pytest.approx(DPSGD(q=0.5, sigma=1.0, steps=4, delta=1e-3).claim.epsilon, rel=1e-3)
    # the exact truth of the correct trainer's Dirac view is the subsampled Gaussian's
    mechanism = TorchTraining(accountant="pld")
    low, high = mechanism.exact_epsilon_bracket(1e-3)
    assert low <= 4.4815 and high >= 4.4813  # docs/dpsgd.md: PLD bracket [4.4813, 4.4815]
    with pytest.raises(NotImplementedError):
        TorchTraining(canary=DiracCanary(background=-1.0)).epsilon_for_delta(1e-3)


def test_one_run_scores():
    mechanism = TorchTraining(noise_multiplier=1e-6, steps=3)
    scores, included = mechanism.one_run_scores(12, np.random.default_rng(2))
    assert scores.shape == included.shape == (12,)
    assert np.all(np.abs(scores[~included]) < 1e-3)  # no canary: only noise of 1e-6·C
    counts = scores[included] / mechanism.max_grad_norm  # C per step in which the canary was sampled
    assert np.allclose(counts, np.round(counts), atol=1e-3) and np.all((counts >= 0) & (counts <= 3))


def test_one_run_training_sets_have_n_plus_m_rows_whatever_the_coins(monkeypatch):
    mechanism = TorchTraining(noise_multiplier=1e-6, steps=2)
    sizes = []
    original = TorchTraining._train

    def recording(self, x, y, seeds, examples=None):
        sizes.append(len(x))
        return original(self, x, y, seeds, examples=examples)

    monkeypatch.setattr(TorchTraining, "_train", recording)
    for seed in (1, 2):
        mechanism.one_run_scores(8, np.random.default_rng(seed))
    rows = mechanism._rows[0].shape[0]  # the user's data with the canary probe's rows
    assert sizes == [rows + 8, rows + 8]  # excluded canaries are null rows: one size whatever the coins
    assert mechanism.one_run_sample_rate(8) == 1.0 / -(-(rows + 8) // mechanism.batch_size)


def test_one_run_input_canaries_score_by_final_loss():
    mechanism = TorchTraining(view="final-loss", canary=InputCanary(scale=4.0), data="digits", n=99,
                              noise_multiplier=1e-6, steps=3)
    scores, included = mechanism.one_run_scores(16, np.random.default_rng(3))
    assert scores.shape == included.shape == (16,) and np.all(np.isfinite(scores)) and np.all(scores <= 0)
    with pytest.raises(ValueError, match="random examples"):
        TorchTraining(view="final-loss", canary=InputCanary(y=1), data="digits", n=99).one_run_scores(
            4, np.random.default_rng(0))


def test_loader_batches_and_shuffled_pair():
    assert loader_batch_sizes(49, 25).tolist() == [25, 24] and loader_batch_sizes(50, 25).tolist() == [25, 25]
    pair = shuffled_loader_pair(49, 25, 4, background=-1.0, clip=1.0, noise=2.0)
    # no canary: batch sums −25, −24; the canary (+1) displaces a −1 in batch J
    assert pair.base == (-25.0, -24.0)
    assert pair.shifts == ((2.0, -1.0), (0.0, 1.0)) and pair.weights == (0.5, 0.5)
    with pytest.raises(ValueError, match="number of batches"):
        shuffled_loader_pair(50, 25, 4, background=-1.0, clip=1.0, noise=2.0)


def test_bad_input_is_reported():
    with pytest.raises(ValueError, match="view='final-loss' needs an InputCanary"):
        TorchTraining(view="final-loss")
    with pytest.raises(ValueError, match="score"):
        TorchTraining(score="nope")
    with pytest.raises(ValueError, match="accountant"):
        TorchTraining(accountant="moments")
    with pytest.raises(ValueError, match=r"lie in \[0, 1\]"):
        TorchTraining()(np.full((1, 1), 2.0), 1, np.random.default_rng(0))

    def broken(model, data, config, *, generator):
        raise ArithmeticError("boom")

    with pytest.raises(RuntimeError, match="broken raised ArithmeticError: boom"):
        TorchTraining(train=broken)(np.ones((1, 1)), 1, np.random.default_rng(0))

    def idle(model, data, config, *, generator):
        return None

    with pytest.raises(ValueError, match="made 0 weight updates, expected observed_steps=4"):
        TorchTraining(train=idle)(np.ones((1, 1)), 1, np.random.default_rng(0))


@pytest.mark.statistical
def test_an_unnoised_group_is_refuted_and_the_control_is_not():
    """The probe outside the DP optimizer moves only when the canary is sampled: refuted at 300
    runs per side; the correct trainer, audited the same way, is not (its claim holds, so this
    fails with probability at most 1 − confidence)."""
    faulty = faulty_training("unnoised-parameter-group", steps=2)
    report = run_audit(faulty, PAIR, samples=300, seed=1, statistic="linear", progress=False, accuracy=False)
    assert report.verdict.value == "VIOLATED"
    control = faulty_training("opacus-correct", steps=2)
    report = run_audit(control, PAIR, samples=300, seed=1, statistic="linear", progress=False, accuracy=False)
    assert report.verdict.value == "NOT_REFUTED"
    assert set(TORCH_FAULTS) >= {"shuffled-batches", "mean-reduction", "batch-clipping", "unscaled-noise",
                                 "virtual-steps", "unnoised-parameter-group"}
