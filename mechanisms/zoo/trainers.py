"""Faulty DP-SGD trainers written in real PyTorch/Opacus, each with the audit that refutes it.

Each trainer is a training function of the contract of :mod:`mechanisms.training.loops`
(``train(model, data, config, *, generator)``), audited as
:class:`~mechanisms.training.TorchTraining` against the claim of the accountant its author relies
on, computed from the configuration (q, σ, T) it was given.  :data:`TORCH_FAULTS` pairs each with
the configuration, canary and score that expose it; :func:`faulty_training` builds the mechanism.
The controls are :func:`mechanisms.training.opacus_sgd` (Opacus) and :func:`manual_dpsgd`
(hand-written per-example DP-SGD with ``torch.func``), which meet their claims.

The mistakes (B the batch size, C the clip norm, σ the noise multiplier):

- :func:`shuffled_batches` — ``make_private(poisson_sampling=False)`` on a shuffled
  ``DataLoader``: fixed-size batches of a random permutation, accounted as Poisson sampling at
  q = 1/len(loader) (Annamalai et al., NDSS 2026, report guarantees overstated up to 4×; the
  crafted training set is that of Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang, ICML 2024).
- :func:`opacus_mean_reduction` — Opacus's ``loss_reduction="mean"`` as in Opacus 1.0–1.6: the
  noisy sum is divided by ``int(len(dataset) · sample_rate)`` (``privacy_engine.py`` of Opacus
  1.6.0), a number that changes when one example is added or removed.  This follows the report
  "Potential mismatch between FEASGM-style normalization and SGM-based privacy accounting" (Opacus
  issue 819, May 2026, related to issue 571): the floor-based expected-batch-size normalisation
  differs between neighbouring data sets, and with many output coordinates the scale of the
  noise tells them apart almost surely.  The trainer sets that normaliser itself, so it stays
  faulty under an Opacus release that fixes it.
- :func:`batch_clipping` — the batch's summed gradient is clipped to C instead of each example's
  (hand-written, ``torch.nn.utils.clip_grad_norm_``): one example can move the clipped sum by 2C.
- :func:`unscaled_noise` — per-example clipping to C with noise N(0, σ²) instead of N(0, σ²C²)
  (hand-written with ``torch.func``): exact noise multiplier σ/C.
- :func:`virtual_steps` — each logical Poisson batch is processed as k physical micro-batches, in
  index order as Opacus's ``BatchMemoryManager`` cuts them, and Opacus's ``DPOptimizer`` adds noise
  and updates the weights at every physical step, with the noise of one logical step split over
  its k physical steps (multiplier σ/√k each, so that the k noises add up to the accountant's σ).
  The issue names this mistake only ("virtual-step accumulation adding noise once per physical
  step"); this is the reading under which it breaks the claim: every physical step is released, so
  the canary, always in the last micro-batch (the data set's last row), meets noise σ/√k.  Exact
  noise multiplier σ/√k.
- :func:`unnoised_parameter_group` — the model's last module (a module added to the model, such as
  an adapter) is frozen while ``make_private`` wraps the model, then unfrozen and trained by a plain
  ``torch.optim.SGD`` beside the Opacus optimizer of the other parameters: its gradients are
  neither clipped nor noised.  A white-box Dirac canary exposes a left-out group when its
  coordinate lies in that group; here it does, since the probe is the wrapped model's last module
  (an auditor places a canary coordinate in each parameter group).  An input canary seen through
  the final loss did not separate a left-out first layer from the correct trainer in a pilot of 40
  runs per side (the noise of the other layers dominates the loss), so the black-box adversary is
  not used for this mistake.

torch and opacus are imported inside the functions; :mod:`mechanisms.zoo` does not import this module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..dpsgd.shuffle import ShuffledCanaryPair, ShuffledLikelihoodRatio
from ..training import TorchTraining, UserTraining, opacus_sgd
from ..training.loops import make_private, run_steps
from ..validation import check_finite_positive, check_int

__all__ = ["shuffled_batches", "opacus_mean_reduction", "batch_clipping", "unscaled_noise", "virtual_steps",
           "unnoised_parameter_group", "manual_dpsgd", "TorchFault", "TORCH_FAULTS", "faulty_training", "fault_statistic",
           "loader_batch_sizes", "shuffled_loader_pair", "VIRTUAL_STEPS", "seeded_at_zero", "common_form"]

#: Physical micro-batches per logical batch in :func:`virtual_steps`.
VIRTUAL_STEPS = 4


# -- Opacus-based trainers ------------------------------------------------------------------------
def shuffled_batches(model, data, config, *, generator) -> None:
    """Opacus without Poisson sampling: a shuffled ``DataLoader`` of fixed-size batches."""
    model, optimizer, loader = make_private(model, data, config, generator, poisson_sampling=False, shuffle=True)
    run_steps(model, optimizer, loader, config.steps)


shuffled_batches.label = "shuffled batches"


def opacus_mean_reduction(model, data, config, *, generator) -> None:
    """Opacus with ``loss_reduction="mean"`` and Opacus 1.0–1.6's normaliser
    ``int(len(dataset) · sample_rate)`` (module docstring)."""
    model, optimizer, loader = make_private(model, data, config, generator, loss_reduction="mean")
    sample_rate = 1.0 / -(-len(data) // config.batch_size)  # 1/len(data_loader), as make_private
    optimizer.expected_batch_size = int(len(data) * sample_rate)  # privacy_engine.py, Opacus 1.6.0
    run_steps(model, optimizer, loader, config.steps, reduction="mean")


opacus_mean_reduction.label = "mean reduction (Opacus 1.0-1.6 normaliser)"


def virtual_steps(model, data, config, *, generator) -> None:
    """Opacus, each logical batch cut into k physical steps that each add noise σ/√k (module docstring)."""
    import torch  # optional extra: torch

    k = VIRTUAL_STEPS
    model, optimizer, loader = make_private(model, data, config, generator,
                                            noise_multiplier=config.noise_multiplier / math.sqrt(k))
    criterion = torch.nn.CrossEntropyLoss(reduction="sum")
    done = 0
    while done < config.steps:
        for x, y in loader:
            for xs, ys in zip(torch.tensor_split(x, k), torch.tensor_split(y, k)):
                optimizer.zero_grad()
                criterion(model(xs), ys).backward()
                optimizer.step()
            done += 1
            if done == config.steps:
                return


virtual_steps.label = f"virtual steps, noise per physical step (k={VIRTUAL_STEPS})"
virtual_steps.exact_multiplier = lambda config: config.noise_multiplier / math.sqrt(VIRTUAL_STEPS)


def unnoised_parameter_group(model, data, config, *, generator) -> None:
    """Opacus for every parameter but those of the model's last module, which a plain SGD trains
    (module docstring).

    That module is frozen while ``make_private`` wraps the model (so Opacus neither computes its
    per-example gradients nor noises it), then unfrozen and handed to its own optimizer."""
    import torch  # optional extra: torch
    from opacus import PrivacyEngine

    head = list(list(model.children())[-1].parameters())
    for p in head:
        p.requires_grad_(False)
    chosen = {id(p) for p in head}
    private = [p for p in model.parameters() if id(p) not in chosen]
    rate = config.learning_rate / config.batch_size
    loader = torch.utils.data.DataLoader(data, batch_size=config.batch_size, generator=generator)
    dp_model, optimizer, loader = PrivacyEngine().make_private(
        module=model, optimizer=torch.optim.SGD(private, lr=rate), data_loader=loader,
        noise_multiplier=config.noise_multiplier, max_grad_norm=config.max_grad_norm, poisson_sampling=True,
        noise_generator=generator, loss_reduction="sum")
    for p in head:
        p.requires_grad_(True)
    plain = torch.optim.SGD(head, lr=rate)
    criterion = torch.nn.CrossEntropyLoss(reduction="sum")
    done = 0
    while done < config.steps:
        for x, y in loader:
            optimizer.zero_grad()
            plain.zero_grad()
            criterion(dp_model(x), y).backward()
            optimizer.step()
            plain.step()
            done += 1
            if done == config.steps:
                return


unnoised_parameter_group.label = "last module outside the DP optimizer"


# -- hand-written DP-SGD (torch.func per-example gradients) ----------------------------------------
def _manual(model, data, config, generator, *, clipping: str, noise: str) -> None:
    """Poisson-sampled DP-SGD written by hand: per-example gradients with ``torch.func``, clipping
    per example (or of the batch's sum), noise σC (or σ), SGD at η/B."""
    import torch  # optional extra: torch
    from torch.func import functional_call, grad, vmap

    x_all, y_all = data.tensors
    q = 1.0 / -(-len(data) // config.batch_size)
    names = [name for name, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    optimizer = torch.optim.SGD(params, lr=config.learning_rate / config.batch_size)
    std = config.noise_multiplier * (config.max_grad_norm if noise == "scaled" else 1.0)

    def loss(values, x, y):
        out = functional_call(model, dict(zip(names, values)), (x[None, :],))
        return torch.nn.functional.cross_entropy(out, y[None], reduction="sum")

    per_example = vmap(grad(loss), in_dims=(None, 0, 0))
    for _ in range(config.steps):
        chosen = torch.rand(len(data), generator=generator) < q
        x, y = x_all[chosen], y_all[chosen]
        values = [p.detach() for p in params]
        if len(x):
            grads = per_example(values, x, y)
            if clipping == "per-example":
                norms = torch.sqrt(sum(g.reshape(len(x), -1).pow(2).sum(1) for g in grads))
                factor = (config.max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
                sums = [torch.einsum("i,i...->...", factor, g) for g in grads]
            else:
                sums = [g.sum(0) for g in grads]
                total = torch.sqrt(sum(s.pow(2).sum() for s in sums))
                sums = [s * min(1.0, config.max_grad_norm / (float(total) + 1e-6)) for s in sums]
        else:
            sums = [torch.zeros_like(v) for v in values]
        for p, s in zip(params, sums):
            p.grad = s + std * torch.randn(s.shape, generator=generator)
        optimizer.step()


def manual_dpsgd(model, data, config, *, generator) -> None:
    """Correct hand-written DP-SGD (the control of :func:`batch_clipping` and :func:`unscaled_noise`)."""
    _manual(model, data, config, generator, clipping="per-example", noise="scaled")


manual_dpsgd.label = "hand-written DP-SGD"
manual_dpsgd.exact_multiplier = lambda config: config.noise_multiplier


def batch_clipping(model, data, config, *, generator) -> None:
    """Hand-written DP-SGD that clips the batch's summed gradient, not each example's."""
    _manual(model, data, config, generator, clipping="batch", noise="scaled")


batch_clipping.label = "batch clipping"


def unscaled_noise(model, data, config, *, generator) -> None:
    """Hand-written DP-SGD with noise N(0, σ²) instead of N(0, σ²C²)."""
    _manual(model, data, config, generator, clipping="per-example", noise="unscaled")


unscaled_noise.label = "noise not scaled by C"
unscaled_noise.exact_multiplier = lambda config: config.noise_multiplier / config.max_grad_norm


# -- the shuffled loader's canary pair --------------------------------------------------------------
def loader_batch_sizes(total: int, batch_size: int) -> np.ndarray:
    """Sizes of the batches a ``DataLoader(batch_size=B)`` cuts ``total`` examples into."""
    total, batch_size = check_int("total", total, minimum=1), check_int("batch_size", batch_size, minimum=1)
    sizes = np.full(-(-total // batch_size), batch_size)
    sizes[-1] = total - batch_size * (sizes.size - 1)
    return sizes


def shuffled_loader_pair(n: int, batch_size: int, steps: int, *, background: float, clip: float,
                         noise: float) -> ShuffledCanaryPair:
    """The canary coordinate's law under :func:`shuffled_batches` on a crafted training set.

    n rows of clipped gradient g·C (g = clip(``background``) to [−1, 1]) and, under D', the canary
    (+C) at a uniformly random place of the permutation; a ``DataLoader`` cuts it into batches of
    :func:`loader_batch_sizes`.  Needs the same number of batches with and without the canary
    (n not a multiple of B).  Batch J holds the canary with probability s_J(n + 1)/(n + 1), where
    it takes a crafted row's slot (the law of :mod:`mechanisms.dpsgd.shuffle`).
    """
    without, with_canary = loader_batch_sizes(n, batch_size), loader_batch_sizes(n + 1, batch_size)
    if without.size != with_canary.size:
        raise ValueError(f"adding the canary changes the number of batches ({without.size} -> {with_canary.size}); "
                         f"choose n not a multiple of batch_size, got n={n}, batch_size={batch_size}")
    g = float(np.clip(background, -1.0, 1.0)) * check_finite_positive("clip", clip)
    k = without.size
    base = g * without
    means = g * (with_canary[None, :] - np.eye(k)) + clip * np.eye(k)
    return ShuffledCanaryPair(steps, noise, tuple(base), tuple(map(tuple, means - base[None, :])),
                              tuple(with_canary / (n + 1)))


@dataclass(frozen=True)
class _ShuffledScore:
    """The shuffled loader pair's log-likelihood ratio of one training's update view."""

    pair: ShuffledCanaryPair

    def __call__(self, view: np.ndarray) -> np.ndarray:
        return ShuffledLikelihoodRatio((1.0, 0.0), self.pair)(view)


# -- the registry -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TorchFault:
    """A trainer with the audit that exposes it: ``options`` of :class:`TorchTraining`, the
    statistic for ``run_audit`` and whether its claim holds."""

    train: Callable
    options: dict
    statistic: Any = "linear"
    holds: bool = False
    note: str = ""
    extra: dict = field(default_factory=dict)


#: σ = 2, q = 1/2, T = 4, C = 1, δ = 1e-3 on 49 synthetic rows: PLD ε = 1.62, PRV 1.63, RDP 1.92.
BASE = {"noise_multiplier": 2.0, "max_grad_norm": 1.0, "batch_size": 25, "steps": 4, "learning_rate": 0.5,
        "delta": 1e-3, "n": 49}

TORCH_FAULTS: dict[str, TorchFault] = {
    "opacus-correct": TorchFault(opacus_sgd, dict(BASE, accountant="rdp"), "linear", True,
                                 "Opacus make_private, Poisson sampling, summed loss; exact ε = PLD at σ"),
    "manual-correct": TorchFault(manual_dpsgd, dict(BASE, accountant="pld", canary={"kind": "dirac", "background": -1.5}),
                                 "linear", True, "hand-written DP-SGD on the crafted data of batch clipping"),
    "opacus-correct-shuffle-data": TorchFault(opacus_sgd, dict(BASE, accountant="prv", canary={"kind": "dirac", "background": -1.0}),
                                              "shuffled", True, "Opacus, Poisson, on the crafted data of shuffling"),
    "opacus-correct-input": TorchFault(opacus_sgd, dict(BASE, accountant="rdp", data="digits", n=99, model="mlp",
                                                        canary={"kind": "input", "scale": 4.0}, steps=8),
                                       "auto", True, "Opacus, black-box input canary on digits"),
    "shuffled-batches": TorchFault(shuffled_batches, dict(BASE, accountant="prv", canary={"kind": "dirac", "background": -1.0}),
                                   "shuffled", False, "fixed-size shuffled batches accounted as Poisson"),
    "mean-reduction": TorchFault(opacus_mean_reduction, dict(BASE, accountant="rdp", data="digits", n=99, batch_size=10,
                                                            steps=10, canary={"kind": "dirac", "probe": 1024}),
                                 "linear", False, "Opacus 1.0-1.6 normaliser int(len(dataset)·q)"),
    "batch-clipping": TorchFault(batch_clipping, dict(BASE, accountant="pld", canary={"kind": "dirac", "background": -1.5}),
                                 "linear", False, "batch clipping, crafted data 1.5·C against the canary"),
    "unscaled-noise": TorchFault(unscaled_noise, dict(BASE, accountant="pld", max_grad_norm=2.0),
                                 "linear", False, "noise σ instead of σC, C = 2: exact σ/C"),
    "virtual-steps": TorchFault(virtual_steps, dict(BASE, accountant="rdp", observed_steps=BASE["steps"] * VIRTUAL_STEPS),
                                "linear", False, "noise σ/√k at each of k physical steps"),
    "unnoised-parameter-group": TorchFault(unnoised_parameter_group, dict(BASE, accountant="rdp"),
                                           "linear", False, "last module trained without clipping or noise"),
}


def faulty_training(fault: str, **overrides) -> TorchTraining:
    """The :class:`TorchTraining` of :data:`TORCH_FAULTS` entry ``fault`` (options overridden by
    keyword).  Scenario files name it as ``callable = "mechanisms.zoo.trainers:faulty_training"``."""
    if fault not in TORCH_FAULTS:
        raise ValueError(f"`fault` must be one of {sorted(TORCH_FAULTS)}, got {fault!r}")
    entry = TORCH_FAULTS[fault]
    options = dict(entry.options, **overrides)
    mechanism = TorchTraining(train=entry.train, **options)
    if entry.statistic == "shuffled":
        pair = shuffled_loader_pair(mechanism._rows[0].shape[0], mechanism.batch_size, mechanism.steps,
                                    background=mechanism.canary.background, clip=mechanism.max_grad_norm,
                                    noise=mechanism.noise_multiplier * mechanism.max_grad_norm)
        mechanism = TorchTraining(train=entry.train, **dict(options, score=_ShuffledScore(pair)))
    return mechanism


def fault_statistic(fault: str) -> str:
    """The engine statistic of ``fault``'s audit ("linear" for a fixed score of one column)."""
    statistic = TORCH_FAULTS[fault].statistic
    return "linear" if statistic == "shuffled" else statistic


# -- the common form: train(X, y, seed) -> model ------------------------------------------------------
def seeded_at_zero(X, y, seed):
    """A user's Opacus trainer of the common form that calls ``torch.manual_seed(0)`` (not
    ``seed``): deterministic given its data, so the two worlds give two fixed models."""
    import torch  # optional extra: torch
    from opacus import PrivacyEngine

    torch.manual_seed(0)
    model = torch.nn.Linear(X.shape[1], 1)
    data = torch.utils.data.TensorDataset(torch.as_tensor(X), torch.as_tensor(y))
    model, optimizer, loader = PrivacyEngine().make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=1.0), loss_reduction="sum",
        data_loader=torch.utils.data.DataLoader(data, batch_size=16), noise_multiplier=2.0, max_grad_norm=1.0)
    for _ in range(2):
        for xb, yb in loader:
            optimizer.zero_grad()
            torch.nn.functional.binary_cross_entropy_with_logits(model(xb)[:, 0], yb, reduction="sum").backward()
            optimizer.step()
    return model


def common_form(trainer: str = "seeded-at-zero", **options):
    """A factory of a :class:`~mechanisms.training.UserTraining` for a scenario file: the trainer of
    the common form named ``trainer`` on 31 synthetic rows of 3 features (float32, labels 0/1 as
    float32), against Opacus's RDP accountant at σ = 2, T = 4, B = 16 (q = 1/⌈31/16⌉ = ½), δ = 1e-3;
    ``options`` override :class:`UserTraining`'s keywords (e.g. ``view``)."""
    trainers = {"seeded-at-zero": seeded_at_zero}
    if trainer not in trainers:
        raise ValueError(f"`trainer` must be one of {sorted(trainers)}, got {trainer!r}")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((31, 3)).astype(np.float32)
    y = (x[:, 0] + 0.5 * rng.standard_normal(31) > 0).astype(np.float32)
    settings = dict(noise_multiplier=2.0, steps=4, delta=1e-3, batch_size=16, accountant="rdp")
    return UserTraining(trainers[trainer], x, y, **dict(settings, **options))
