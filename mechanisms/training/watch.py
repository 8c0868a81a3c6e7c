"""Reading a canary coordinate's updates from the parameters of a model the user's code builds.

The user's training function builds its own model, so dpaudit cannot wrap it before training.
:class:`ParameterWatch` is a context manager around the call: through torch's global hooks
(``register_module_parameter_registration_hook`` and ``register_module_forward_pre_hook``) it
keeps every parameter registered on a module while it is open, and copies each one's value at the
first forward call of any module, which in a training loop comes after the model's initialisation
and before its first update.  After the call, :meth:`ParameterWatch.update_sum` finds the
parameter of the returned model whose last axis has ``width`` entries (the first layer's weight,
whose last column only the canary touches) and returns that column's final value minus its
initial one: Σ_t Δw_t, the sum of the coordinate's updates over the training, whatever changed
the weights (a torch optimizer's ``step()``, an Opacus ``DPOptimizer``, or a ``torch.func`` loop
that writes its parameters back in place, e.g. by ``load_state_dict`` or ``p.copy_``).

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
                         nn_module.register_module_forward_pre_hook(forward)]
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def update_sum(self, model: Any, row: int, *, where: str) -> float:
        """w_T − w_0 on the canary column (row ``row``, or the only row) of ``model``'s first
        parameter with a last axis of ``width`` entries."""
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
        line = row if param.shape[0] > 1 else 0
        value = float(param.detach()[line, -1].double() - start[line, -1].double())
        if not np.isfinite(value):
            raise ValueError(f"{where}: the canary coordinate's update is not finite")
        return value
