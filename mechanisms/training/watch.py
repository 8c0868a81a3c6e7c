"""A Dirac probe in a model the user's code builds, and its updates read from the parameters.

The user's training function builds its own model, so dpaudit cannot wrap it before training.
:class:`ParameterWatch` is a context manager around the call that works through torch's global
module hooks:

- **the probe** (``register_module_forward_hook``): on every ``nn.Linear`` whose input has
  ``width`` features (the user's p plus dpaudit's canary column, which real rows hold at 0), the
  output of a row whose canary column holds s ≠ 0 is replaced by s·W[:, −1] − (s·W[:, −1]).detach():
  its value is 0 whatever the weights, and its gradient reaches only the column W[:, −1] (not the
  bias, not the other columns, which the row's zero features leave untouched as well).  For a
  linear model (the layer is the output layer) the canary's logits are the constant 0, so its
  per-example gradient is s·(softmax(0) − e_c) on the column (−s/2 for a one-logit BCE with label
  1) at every step: the Dirac gradient canary of Nasr et al. (2023) without saturation.  In a
  deeper model the row's hidden pre-activation is the constant 0 and its gradient on the column
  is s times the back-propagated signal.  (Opacus computes a ``Linear``'s per-example gradients
  from its input and output gradient, and so also gives the canary a bias gradient: still one
  clipped, noised example, a valid canary.)
- **the reading** (``register_module_parameter_registration_hook``, ``register_module_forward_pre_hook``):
  every parameter registered while the watch is open is copied at the first forward call of any
  module, after the model's initialisation and before its first update.  After the call,
  :meth:`ParameterWatch.update_sum` finds the returned model's first parameter whose last axis
  has ``width`` entries and returns the change of its canary column, Σ_t Δw_t, whatever changed the
  weights (a torch optimizer's ``step()``, an Opacus ``DPOptimizer``, or a ``torch.func`` loop that
  writes its parameters back in place, e.g. by ``load_state_dict`` or ``p -= ...``): on row c if that
  layer is the model's last (a linear model), else the column's Euclidean norm.

torch is imported inside the methods: this module imports without it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["ParameterWatch"]


class ParameterWatch:
    """Context manager recording parameters and their values at the first forward call."""

    def __init__(self, width: int):
        self.width = int(width)
        self.parameters: list = []
        self.initial: dict[int, Any] = {}
        self._handles: list = []

    def __enter__(self) -> "ParameterWatch":
        from torch.nn.modules import module as nn_module  # optional extra: torch

        def registered(module, name, param):
            if param is not None:
                self.parameters.append(param)

        def forward(module, args):
            if not self.initial and self.parameters:
                for p in self.parameters:
                    self.initial[id(p)] = p.detach().clone()

        self._handles = [nn_module.register_module_parameter_registration_hook(registered),
                         nn_module.register_module_forward_pre_hook(forward),
                         nn_module.register_module_forward_hook(self._probe)]
        return self

    def _probe(self, module, args, output):
        import torch  # optional extra: torch

        if not isinstance(module, torch.nn.Linear) or module.in_features != self.width or not args:
            return None
        s = args[0][..., -1:]
        value = s * module.weight[:, -1]
        return torch.where(s != 0, value - value.detach(), output)

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def update_sum(self, model: Any, row: int, *, where: str) -> float:
        """w_T − w_0 on the canary column of ``model``'s first parameter with a last axis of
        ``width`` entries: on row ``row`` (or the only row) if it is the model's last 2-D
        parameter, else the column's Euclidean norm (module docstring)."""
        import torch  # optional extra: torch

        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"{where}: the white-box view reads a torch.nn.Module's parameters, got "
                            f"{type(model).__name__}")
        for param in model.parameters():
            if param.ndim == 2 and param.shape[-1] == self.width:
                break
        else:
            raise ValueError(f"{where}: no parameter of the returned model has a last axis of {self.width} entries "
                             f"(X's width with dpaudit's canary column); build the first layer from X.shape[1]")
        start = self.initial.get(id(param))
        if start is None:
            raise ValueError(f"{where}: the returned model's first-layer weight was not created, or never used in a "
                             "forward call, during the training call; return the model the call built and trained")
        change = param.detach()[:, -1].double() - start[:, -1].double()
        last = [p for p in model.parameters() if p.ndim == 2][-1] is param
        value = float(change[row if param.shape[0] > 1 else 0]) if last else float(torch.linalg.vector_norm(change))
        if not np.isfinite(value):
            raise ValueError(f"{where}: the canary coordinate's update is not finite")
        return value
