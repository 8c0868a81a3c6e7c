"""Auditing training code of the common form ``train(X, y, seed) -> model`` (mechanisms.training.user,
audit.training) and the black-box scores that do not saturate (mechanisms.training.scores).

The trainers are those of tests/mechanisms/training_zoo.py.  Each audit trains tiny models (31 rows,
3 features, 4 steps; 5 to 15 ms a training on one core, more with the per-step view of a network);
the audits stop early on clear faults and the correct trainers run 48 trainings a side, so the file
takes about 25 s of CPU.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import special

import scenarios
from scenarios import files as scenario_files

torch = pytest.importorskip("torch", reason="the torch extra (torch, opacus) is not installed")
pytest.importorskip("opacus", reason="the torch extra (torch, opacus) is not installed")

from audit import run_audit  # noqa: E402
from audit.training import audit_training, training_pair  # noqa: E402
from mechanisms.training import (InputCanary, TorchTraining, UserTraining, accountant_claim,  # noqa: E402
                                 canary_score, opacus_sgd)

sys.path.insert(0, str(Path(__file__).parent))
import training_zoo as zoo  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal((31, 3)).astype(np.float32)
Y = (X[:, 0] + 0.5 * RNG.standard_normal(31) > 0).astype(np.int64)
#: The accountant's claim of the zoo's configuration: σ = 2, T = 4, q = 1/⌈31/16⌉ = ½, δ = 1e-3.
CLAIM = dict(noise_multiplier=zoo.SIGMA, steps=zoo.T, delta=1e-3, batch_size=zoo.B)


# -- scores ------------------------------------------------------------------------------------------
def test_scores_are_exact_in_float64_where_float32_saturates():
    # BCE at signed logit z: softplus(−z) = −log σ(z) (scipy's log_expit, a second route)
    z = np.array([-800.0, -30.0, 0.0, 17.5, 40.0, 700.0])
    for label, sign in ((1, 1.0), (0, -1.0)):
        loss = canary_score(sign * z, np.full(z.size, label), "loss")
        assert np.allclose(loss, -special.log_expit(z), rtol=1e-13, atol=0)
        assert np.array_equal(canary_score(sign * z, np.full(z.size, label), "margin"), z)
    assert canary_score([40.0], [1], "loss")[0] > 0  # float32's cross-entropy is 0.0 here
    assert torch.nn.functional.cross_entropy(torch.tensor([[0.0, 40.0]]), torch.tensor([1])).item() == 0.0
    # cross-entropy of K logits: logsumexp − l_y (scipy's logsumexp); margin over the best other class
    logits = np.array([[1.0, 45.0, -3.0], [0.5, 0.25, 2.0]])
    labels = np.array([1, 0])
    assert np.allclose(canary_score(logits, labels, "loss"), special.logsumexp(logits, axis=1) - logits[[0, 1], labels],
                       rtol=1e-12, atol=1e-300)
    assert canary_score(logits, labels, "loss")[0] == pytest.approx(np.exp(-44.0) + np.exp(-48.0), rel=1e-9)
    assert canary_score(logits, labels, "margin").tolist() == [44.0, -1.5]
    assert canary_score(logits, labels, "logit").tolist() == [45.0, 0.5]
    assert canary_score(logits, labels, lambda l, y: l[:, 2]).tolist() == [-3.0, 2.0]
    with pytest.raises(ValueError, match="not finite"):
        canary_score([[np.inf, 0.0]], [0], "margin")
    with pytest.raises(ValueError, match="must lie in"):
        canary_score(logits, [0, 3], "loss")
    with pytest.raises(ValueError, match="must return 2 numbers"):
        canary_score(logits, labels, lambda l, y: l)


def _deterministic(model, data, config, *, generator):
    """Opacus with torch.manual_seed(0): the model's initialisation and the noise never change."""
    torch.manual_seed(0)
    for module in model.base.modules():
        if hasattr(module, "reset_parameters"):
            module.reset_parameters()
    opacus_sgd(model, data, config, generator=torch.Generator().manual_seed(0))


@pytest.mark.parametrize("view", ["final-loss", "final-logit", "final-margin"])
def test_a_deterministic_trainer_gives_two_values_and_the_scores_keep_them_apart(view):
    """A confident deterministic trainer: one output per world, different in float64 (the float32
    loss of a canary classified with a logit gap above 17 was 0.0 in both)."""
    mechanism = TorchTraining(train=_deterministic, noise_multiplier=2.0, data="digits", n=99, model="mlp",
                              canary=InputCanary(scale=4.0), steps=4, learning_rate=8.0, view=view)
    without = mechanism(np.zeros((0, 1)), 2, np.random.default_rng(1))[:, 0]
    with_canary = mechanism(np.ones((1, 1)), 2, np.random.default_rng(2))[:, 0]
    assert without[0] == without[1] and with_canary[0] == with_canary[1] and without[0] != with_canary[0]


@pytest.mark.statistical
def test_a_deterministic_trainer_is_refuted_through_torch_training_by_the_default_view():
    """The same trainer through TorchTraining's default black-box view (the final loss, now in
    float64): refuted by an anytime audit within 500 trainings a side."""
    mechanism = TorchTraining(train=_deterministic, noise_multiplier=2.0, n=49, canary=InputCanary(scale=4.0),
                              steps=4, learning_rate=8.0)
    assert mechanism.view == "final-loss"
    report = run_audit(mechanism, training_pair(), samples=500, anytime=True, seed=6, statistic="linear", progress=False,
                       accuracy=False)
    assert report.verdict.value == "VIOLATED"


# -- the common form ---------------------------------------------------------------------------------
@pytest.mark.statistical
def test_a_deterministic_trainer_is_refuted_by_the_default_black_box_view():
    report = audit_training(zoo.opacus_deterministic, X, Y.astype(np.float32), seed=1, progress=False, **CLAIM)
    assert report.verdict.value == "VIOLATED"
    assert report.draws["per_side"] < 500


@pytest.mark.statistical
def test_a_layer_outside_the_dp_optimizer_is_refuted_by_the_white_box_view_of_an_opacus_loop():
    """The first layer trained by a plain SGD: its canary column moves only when the canary is in
    (exactly 0 otherwise), which the update view of an Opacus loop reads from the parameters."""
    report = audit_training(zoo.opacus_unnoised_first_layer, X, Y.astype(np.float32), view="updates", seed=5,
                            progress=False, **CLAIM)
    assert report.verdict.value == "VIOLATED" and report.draws["per_side"] < 300


@pytest.mark.statistical
def test_a_gradient_canary_hook_is_a_first_class_canary():
    """The trainer's own grad_canary hook: clip norm 8 with noise σ, not 8σ, is refuted; the same
    loop with the right noise is not at 48 trainings a side (its claim holds, so this fails with
    probability at most 1 − confidence)."""
    report = audit_training(zoo.hooked_unscaled_noise, X, Y, view="updates", seed=2, progress=False, **CLAIM)
    assert report.verdict.value == "VIOLATED" and report.draws["per_side"] < 300
    report = audit_training(zoo.hooked_correct, X, Y, view="updates", trainings=48, seed=3, progress=False, **CLAIM)
    assert report.verdict.value == "NOT_REFUTED"


@pytest.mark.statistical
@pytest.mark.parametrize("trainer, view", [(zoo.opacus_correct, "margin"), (zoo.func_correct, "updates")])
def test_correct_trainers_are_not_refuted(trainer, view):
    """A PrivacyEngine loop and a torch.func loop, correct: NOT_REFUTED at 48 trainings a side (the
    claim holds, so this fails with probability at most 1 − confidence = 5%; the full budget's rows
    are in benchmarks/results/training/zoo.md)."""
    labels = Y.astype(np.float32) if trainer is zoo.opacus_correct else Y
    report = audit_training(trainer, X, labels, view=view, trainings=48, seed=4, progress=False, **CLAIM)
    assert report.verdict.value == "NOT_REFUTED"


def test_the_data_reaches_the_trainer_as_given_with_the_canary_row():
    seen = []

    def recording(X, y, seed):
        seen.append((type(X), X.dtype, tuple(X.shape), type(y), y.dtype, seed))
        return torch.nn.Linear(X.shape[1], 1)

    for data, labels in ((X, Y.astype(np.float32)), (torch.from_numpy(X), torch.from_numpy(Y))):
        mechanism = UserTraining(recording, data, labels, epsilon=1.0, delta=1e-5)
        mechanism(np.zeros((0, 1)), 1, np.random.default_rng(0))
        mechanism(np.ones((1, 1)), 1, np.random.default_rng(0))
    assert seen[0][:5] == (np.ndarray, np.float32, (31, 3), np.ndarray, np.float32)
    assert seen[1][2] == (32, 3) and seen[0][5] == seen[1][5]  # the canary row; one seed per rng
    assert seen[2][:5] == (torch.Tensor, torch.float32, (31, 3), torch.Tensor, torch.int64)
    assert seen[3][2] == (32, 3)
    white = UserTraining(recording, X, Y, epsilon=1.0, delta=1e-5, view="updates")
    with pytest.raises(ValueError, match="forward call"):
        white(np.ones((1, 1)), 1, np.random.default_rng(0))
    assert seen[-1][2] == (32, 4)  # a zero column that only the canary uses


@pytest.mark.statistical
def test_noise_before_clipping_is_refuted_by_the_per_step_view_of_a_torch_func_loop():
    """Noise added to each example's gradient, then clipped, in a two-layer network: the per-step
    projections on the canary's descent direction refute it within 500 trainings a side (the
    benchmark's run, another seed, stopped at 196 of its 1,000)."""
    report = audit_training(zoo.func_noise_before_clipping, X, Y, view="updates", seed=7, progress=False, **CLAIM)
    assert report.verdict.value == "VIOLATED" and report.draws["per_side"] < 500


def _sgd_loop(X, y, seed, steps=3, lr=0.5):
    torch.manual_seed(seed)
    model = torch.nn.Linear(X.shape[1], 2)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        opt.zero_grad(); torch.nn.functional.cross_entropy(model(torch.as_tensor(X)), torch.as_tensor(y)).backward(); opt.step()
    return model


def test_the_per_step_view_of_an_optimizer_loop_is_the_known_canary_update():
    """Full-batch SGD at rate η on the mean cross-entropy of n + 1 rows, two logits, canary scale 1:
    the probe gives the canary the gradient (softmax(0) − e_1)/(n + 1) = (½, −½)/32 on the column
    at every step, so each of the 3 steps moves it by u = η(−½, ½)/32, whose projection on
    d = (e_1 − ½)/‖e_1 − ½‖ is η/(32√2); real rows (0 on the column) add nothing, so without the
    canary the view is exactly 0."""
    from mechanisms.training.watch import ParameterWatch

    mechanism = UserTraining(_sgd_loop, X, Y, mu=1.0, view="updates", canary_scale=1.0)
    assert mechanism(np.ones((1, 1)), 1, np.random.default_rng(5))[0, 0] == pytest.approx(3 * 0.5 / (32 * np.sqrt(2)), rel=1e-5)
    assert mechanism(np.zeros((0, 1)), 1, np.random.default_rng(5))[0, 0] == 0.0
    x, _ = mechanism._data(1)
    watch = ParameterWatch(4)
    with watch:
        model = _sgd_loop(x, np.append(Y, 1), 0, steps=5)
    assert [len(v) for v in watch.steps.values()] == [5]


def test_the_per_step_view_of_a_deeper_model_follows_the_canary_direction_before_each_step():
    """A noise-free torch.func loop in a two-layer network: the canary's clipped gradient is the only
    thing that moves the column, along its descent direction at the parameters *before* the step,
    so each projection ⟨u_t, d_t⟩ is the update's full length ‖u_t‖ (a direction taken after the
    step would fall short of it)."""
    from mechanisms.training.watch import ParameterWatch

    mechanism = UserTraining(zoo.func_correct, X, Y, mu=1.0, view="updates")
    x, y = mechanism._data(1)
    watch = ParameterWatch(x.shape[1])
    with watch:
        model = zoo.func_dpsgd(x, y, 11, noise=0.0)
    row, label = mechanism._canary_row
    (steps,) = watch.steps.values()
    lengths = sum(float(torch.linalg.vector_norm(u)) for u, _ in steps)
    assert len(steps) >= 1 and lengths > 0
    assert watch.step_sum(model, label, row, where="test") == pytest.approx(lengths, rel=1e-5)


def test_the_watch_leaves_no_global_hook_behind():
    """The probe and the per-step reading are torch-global hooks: gone after a call, also one that raises."""
    from torch.nn.modules import module as nn_module
    from torch.optim import optimizer as optim_module

    def hooks():
        return (len(nn_module._global_forward_hooks), len(nn_module._global_forward_pre_hooks),
                len(nn_module._global_parameter_registration_hooks), len(optim_module._global_optimizer_post_hooks))

    before = hooks()

    def failing(X, y, seed):
        _sgd_loop(X, y, seed)
        raise ArithmeticError("late")

    UserTraining(_sgd_loop, X, Y, mu=1.0, view="updates")(np.ones((1, 1)), 1, np.random.default_rng(0))
    with pytest.raises(RuntimeError, match="failing raised ArithmeticError: late"):
        UserTraining(failing, X, Y, mu=1.0, view="updates")(np.ones((1, 1)), 1, np.random.default_rng(0))
    assert hooks() == before


def test_the_white_box_view_reads_the_updates_of_any_loop():
    """No noise (σ = 0 in the loop): the canary column moves only when the canary is in, the same
    for a loop that writes its parameters in place (torch.func, Poisson-sampled: the canary is in
    some step with probability 15/16) and one that steps an optimizer (full batch, one logit layer:
    the canary's label row moves up)."""
    def quiet(X, y, seed):
        return zoo.func_dpsgd(X, y, seed, noise=0.0)

    for trainer in (quiet, _sgd_loop):
        mechanism = UserTraining(trainer, X, Y, mu=1.0, view="updates", canary_scale=1.0)
        assert np.all(mechanism(np.zeros((0, 1)), 3, np.random.default_rng(5)) == 0)
        assert np.count_nonzero(mechanism(np.ones((1, 1)), 3, np.random.default_rng(5))) >= 1
    moved = UserTraining(_sgd_loop, X, Y, mu=1.0, view="updates", canary_scale=1.0)(np.ones((1, 1)), 2,
                                                                                            np.random.default_rng(5))
    assert np.all(moved > 0)


def test_claims_are_labelled_as_whose_they_are():
    mine = UserTraining(zoo.opacus_correct, X, Y, epsilon=2.0, delta=1e-5)
    assert mine.claim.epsilon == 2.0 and "claim: yours, (2, 1e-05)-DP" in mine.name
    assert "claim: yours, 0.5-GDP" in UserTraining(zoo.opacus_correct, X, Y, mu=0.5).name
    iterates = UserTraining(zoo.opacus_correct, X, Y, mu=0.5, view="updates").name  # white box: every iterate
    assert "claim: yours, 0.5-GDP, read as a bound on every iterate" in iterates
    derived = UserTraining(zoo.opacus_correct, X, Y, **CLAIM)
    assert derived.sample_rate_used == 0.5 and "q = 1/⌈31/16⌉" in derived.name and "Opacus RDP" in derived.name
    given = UserTraining(zoo.opacus_correct, X, Y, noise_multiplier=2.0, steps=4, delta=1e-3, sample_rate=0.3,
                         accountant="pld")
    assert given.sample_rate_used == 0.3 and "q given" in given.name
    assert given.claim.epsilon_at(1e-3) == pytest.approx(accountant_claim("pld", 0.3, 2.0, 4, 1e-3).epsilon_at(1e-3))


def test_bad_input_is_reported():
    with pytest.raises(ValueError, match="exactly one claim"):
        UserTraining(zoo.opacus_correct, X, Y)
    with pytest.raises(ValueError, match="exactly one claim"):
        UserTraining(zoo.opacus_correct, X, Y, epsilon=1.0, delta=1e-5, noise_multiplier=1.0)
    with pytest.raises(ValueError, match="`sample_rate`.*`batch_size`"):
        UserTraining(zoo.opacus_correct, X, Y, noise_multiplier=1.0, steps=4, delta=1e-5)
    with pytest.raises(ValueError, match="needs its `delta`"):
        UserTraining(zoo.opacus_correct, X, Y, epsilon=1.0)
    with pytest.raises(ValueError, match=r"`X` must be \(n, p\)"):
        UserTraining(zoo.opacus_correct, X[:, 0], Y, mu=1.0)
    with pytest.raises(ValueError, match="`view`"):
        UserTraining(zoo.opacus_correct, X, Y, mu=1.0, view="final")
    with pytest.raises(ValueError, match="grad_canary"):
        UserTraining(zoo.hooked_correct, X, Y, mu=1.0)
    with pytest.raises(ValueError, match="canary weights"):
        UserTraining(zoo.opacus_correct, X, Y, mu=1.0)(np.full((1, 1), 0.5), 1, np.random.default_rng(0))

    def broken(X, y, seed):
        raise ArithmeticError("boom")

    with pytest.raises(RuntimeError, match="broken raised ArithmeticError: boom"):
        UserTraining(broken, X, Y, mu=1.0)(np.ones((1, 1)), 1, np.random.default_rng(0))

    def nothing(X, y, seed):
        return None

    with pytest.raises(TypeError, match="returned None"):
        UserTraining(nothing, X, Y, mu=1.0)(np.ones((1, 1)), 1, np.random.default_rng(0))


def test_a_missing_torch_extra_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "opacus", None)  # import opacus now raises ImportError
    for build in (lambda: TorchTraining(), lambda: UserTraining(zoo.opacus_correct, X, Y, mu=1.0)):
        with pytest.raises(ImportError, match=r"needs the optional `torch` extra \(opacus is missing\): "
                                              r'pip install "dpaudit\[torch\]"'):
            build()


def test_a_bundled_torch_file_run_without_the_extra_names_it(tmp_path):
    code = ("import sys; sys.modules['opacus'] = None\nfrom audit.cli import main\n"
            f"sys.argv = ['dpaudit', 'run', 'scenarios/suite/torch/batch-clipping.toml', '--out', {str(tmp_path)!r}]\nsys.exit(main())")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert 'needs the optional `torch` extra (opacus is missing): pip install "dpaudit[torch]"' in done.stderr


def test_a_bundled_torch_file_names_the_extra():
    paths = sorted((Path(scenarios.__file__).parent / "suite" / "torch").glob("*.toml"))
    assert len(paths) >= 11
    for path in paths:
        assert 'pip install -e ".[torch]"' in path.read_text(), path.name


def test_the_training_page_keeps_the_editable_install_and_sets_q_for_its_one_run_snippet():
    text = (Path(__file__).resolve().parents[2] / "docs" / "training.md").read_text(encoding="utf-8")
    commands = [line for line in text.splitlines() if line.startswith("pip install")]
    assert any('pip install -e ".[torch]"' in line for line in commands)
    assert not any('pip install ".[torch]"' in line for line in commands)  # it would replace the editable install
    call = text.index("scores, included = trainer.one_run_scores(1000")
    assert "trainer = TorchTraining(batch_size=525" in text[call - 200: call]
    assert TorchTraining(batch_size=525).one_run_sample_rate(1000) == 0.5  # n = 49: 1/⌈1049/525⌉


def test_a_scenario_file_names_a_factory_of_the_common_form():
    """The bundled file's mechanism comes from a factory, with the accountant's claim at Opacus's q."""
    spec = scenario_files.read(Path(scenarios.__file__).parent / "suite" / "torch" / "seeded-at-zero.toml")
    assert isinstance(spec.mechanism, UserTraining) and spec.expected == "violated"
    assert spec.mechanism.sample_rate_used == 0.5 and spec.claim is spec.mechanism.claim


def test_torch_training_takes_the_sample_rate_the_user_states():
    """The claim at the stated q; the exact truth stays at the q Opacus's loader uses, 1/⌈49/25⌉."""
    stated = TorchTraining(accountant="pld", sample_rate_claimed=0.3)
    assert stated.sample_rate == 0.3 and "q=0.3 given" in stated.name
    assert stated.claim.epsilon_at(1e-3) == pytest.approx(accountant_claim("pld", 0.3, 1.0, 4, 1e-3).epsilon_at(1e-3))
    assert stated.exact_sample_rate == 0.5 == TorchTraining().sample_rate
    assert stated.epsilon_for_delta(1e-3) == TorchTraining(accountant="pld").epsilon_for_delta(1e-3)
    with pytest.raises(ValueError, match="sample_rate_claimed"):
        TorchTraining(sample_rate_claimed=1.5)
