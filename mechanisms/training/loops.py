"""The training functions dpaudit runs, and the contract a user's own training function meets.

A training function is ``train(model, data, config, *, generator) -> None``: it trains ``model``
(a ``torch.nn.Module``, already wrapped by :func:`~mechanisms.training.probe.probed`) in place on
``data`` (a ``torch.utils.data.TensorDataset`` of features and int64 labels, canary rows
included) with the hyper-parameters of ``config`` (:class:`DPConfig`), drawing every random number
(batches, noise) from ``generator`` (a seeded ``torch.Generator``; model initialisation happens
before the call, from torch's global generator, seeded by the caller).  It must update the weights
through a torch optimizer's ``step()``: the white-box adversary reads the probe after every step of
an optimizer that holds it (a global step hook; Opacus's ``DPOptimizer`` is seen through its inner
optimizer, so a step it skips to accumulate gradients is no update).  Its loss must be the cross-entropy of the model's logits,
which the Dirac canary relies on; the summed loss keeps the canary's gradient independent of the
batch size (a mean loss divides it by |B|, still far above any clip norm).

:func:`opacus_sgd` is the correct control: Opacus's ``PrivacyEngine.make_private`` with Poisson
sampling (``DPDataLoader``), per-example clipping to C and noise N(0, σ²C²) per coordinate
(``DPOptimizer``), summed loss (``loss_reduction="sum"``) and SGD at learning rate η/B, so each
step moves the weights by −(η/B)(Σ clipped gradients + noise) whatever the data set's size.
(Opacus's default ``loss_reduction="mean"`` divides instead by ``int(len(dataset) · sample_rate)``
in Opacus 1.0–1.6, which depends on the private data set's size:
:func:`mechanisms.zoo.trainers.opacus_mean_reduction` audits that.)

References
----------
Abadi et al. (2016), *Deep learning with differential privacy*, CCS, Algorithm 1; Yousefpour et
al. (2021), *Opacus: user-friendly differential privacy library in PyTorch*.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..validation import check_finite_positive, check_int

__all__ = ["DPConfig", "opacus_sgd", "make_private", "run_steps"]


@dataclass(frozen=True)
class DPConfig:
    """A DP-SGD configuration: noise multiplier σ, clip norm C, (expected) batch size B, T steps
    and learning rate η (the update is −η/B times the noisy sum of clipped gradients)."""

    noise_multiplier: float = 1.0
    max_grad_norm: float = 1.0
    batch_size: int = 25
    steps: int = 4
    learning_rate: float = 0.5

    def __post_init__(self) -> None:
        object.__setattr__(self, "noise_multiplier", check_finite_positive("noise_multiplier", self.noise_multiplier))
        object.__setattr__(self, "max_grad_norm", check_finite_positive("max_grad_norm", self.max_grad_norm))
        object.__setattr__(self, "batch_size", check_int("batch_size", self.batch_size, minimum=1))
        object.__setattr__(self, "steps", check_int("steps", self.steps, minimum=1))
        object.__setattr__(self, "learning_rate", check_finite_positive("learning_rate", self.learning_rate))


def make_private(model, data, config: DPConfig, generator, *, poisson_sampling: bool = True,
                 loss_reduction: str = "sum", shuffle: bool = False, noise_multiplier=None):
    """Opacus's ``PrivacyEngine().make_private`` on a ``DataLoader(data, batch_size=B)``, SGD at
    η/B (summed loss) or η (mean loss), noise and batches from ``generator``."""
    import torch  # optional extra: torch
    from opacus import PrivacyEngine

    loader = torch.utils.data.DataLoader(data, batch_size=config.batch_size, shuffle=shuffle, generator=generator)
    rate = config.learning_rate / (config.batch_size if loss_reduction == "sum" else 1.0)
    optimizer = torch.optim.SGD(model.parameters(), lr=rate)
    return PrivacyEngine().make_private(
        module=model, optimizer=optimizer, data_loader=loader,
        noise_multiplier=config.noise_multiplier if noise_multiplier is None else noise_multiplier,
        max_grad_norm=config.max_grad_norm, poisson_sampling=poisson_sampling, noise_generator=generator,
        loss_reduction=loss_reduction)


def run_steps(model, optimizer, loader, steps: int, reduction: str = "sum") -> None:
    """T optimizer steps of cross-entropy training over ``loader``, starting a new epoch (a new
    pass of the loader) whenever one ends."""
    import torch  # optional extra: torch

    criterion = torch.nn.CrossEntropyLoss(reduction=reduction)
    done = 0
    while done < steps:
        for x, y in loader:
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
            done += 1
            if done == steps:
                return
        if len(loader) == 0:  # pragma: no cover - a loader with no batches never ends
            raise ValueError("the data loader yields no batches")


def opacus_sgd(model, data, config: DPConfig, *, generator) -> None:
    """Correct DP-SGD with Opacus (module docstring)."""
    model, optimizer, loader = make_private(model, data, config, generator)
    run_steps(model, optimizer, loader, config.steps)


opacus_sgd.exact_multiplier = lambda config: config.noise_multiplier  # the Dirac view's exact σ
opacus_sgd.label = "opacus"

