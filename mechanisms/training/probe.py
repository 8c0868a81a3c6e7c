"""The model wrapper that carries Dirac gradient canaries, and the named model factories.

:func:`probed` wraps a user's classifier ``base`` (any ``torch.nn.Module`` mapping (B, p) features
to (B, K) logits) so that its input is (features, probe columns, flag):

    logits(z) = base(x)                                   if flag = 0 (a real example)
              = (probe(c) − probe(c).detach(), 0, …, 0)   if flag = 1 (a canary row)

with ``probe`` a bias-free ``Linear(P, 1)`` initialised at zero.  The value of a canary's logits is
the constant 0 (the detached copy cancels it), so its cross-entropy with label 1 has derivative
1/K with respect to the first logit whatever the weights, and the per-example gradient of a canary
row with probe input c is c/K on the probe and exactly zero on ``base`` (``torch.where`` sends no
gradient into the branch it does not select).  A real row has c = 0, so its gradient on the probe
is zero.  Opacus computes the per-example gradients of ``Linear`` layers from activations and
backpropagated gradients, which these identities make exact.

torch is imported inside the functions: :mod:`mechanisms.training` imports without it.
"""

from __future__ import annotations

import functools
from typing import Callable

__all__ = ["probed", "model_factory", "MODELS"]

MODELS = ("logreg", "mlp")


@functools.lru_cache(maxsize=1)
def _probed_class():
    import torch  # optional extra: torch

    class Probed(torch.nn.Module):
        """``base`` with a probe for Dirac gradient canaries (module docstring)."""

        def __init__(self, base: torch.nn.Module, features: int, probe: int, classes: int):
            super().__init__()
            self.base = base
            self.features, self.classes = int(features), int(classes)
            self.probe = torch.nn.Linear(int(probe), 1, bias=False)
            torch.nn.init.zeros_(self.probe.weight)

        def forward(self, z):
            x, c, flag = z[:, : self.features], z[:, self.features: -1], z[:, -1:] > 0.5
            logits = self.base(x)
            value = self.probe(c)
            canary = torch.nn.functional.pad(value - value.detach(), (0, self.classes - 1))
            return torch.where(flag, canary, logits)

    return Probed


def probed(base, features: int, probe: int, classes: int):
    """``base`` wrapped with a ``probe``-coordinate probe and a flag column (module docstring)."""
    return _probed_class()(base, features, probe, classes)


def model_factory(model) -> Callable[[int, int], object]:
    """A factory ``(features, classes) -> torch.nn.Module``: the given callable, or by name
    "logreg" (one linear layer) or "mlp" (linear, tanh, linear with 16 hidden units)."""
    if callable(model):
        return model
    if model == "logreg":
        return _logreg
    if model == "mlp":
        return _mlp
    raise ValueError(f"`model` must be one of {MODELS} or a callable (features, classes) -> nn.Module, "
                     f"got {model!r}")


def _logreg(features: int, classes: int):
    import torch  # optional extra: torch

    return torch.nn.Linear(features, classes)


def _mlp(features: int, classes: int):
    import torch  # optional extra: torch

    return torch.nn.Sequential(torch.nn.Linear(features, 16), torch.nn.Tanh(), torch.nn.Linear(16, classes))
