"""A Dirac probe in a model the user's code builds, and its per-step updates read from the parameters.

The user's training function builds its own model, so dpaudit cannot wrap it before training.
:class:`ParameterWatch` is a context manager around the call that works through torch's global
module and optimizer hooks:

- **the probe** (``register_module_forward_hook``): on every ``nn.Linear`` whose input has
  ``width`` features (the user's p plus dpaudit's canary column, which real rows hold at 0), the
  output of a row whose canary column holds s ≠ 0 is replaced by s·W[:, −1] − (s·W[:, −1]).detach():
  its value is 0 whatever the weights, and its gradient reaches only the column W[:, −1] (not the
  bias, not the other columns, which the row's zero features leave untouched as well).  For a
  linear model (the layer is the output layer) the canary's logits are the constant 0, so its
  per-example gradient is s·(softmax(0) − e_c) on the column (−s/2 for a one-logit BCE with label
  1) at every step: the Dirac gradient canary of Nasr et al. (2023) without saturation.  In a
  deeper model the row's hidden pre-activation is the constant 0 and its gradient on the column
  is s times the back-propagated signal, which depends on the later layers' weights at that step.
  (Opacus computes a ``Linear``'s per-example gradients from its input and output gradient, and so
  also gives the canary a bias gradient: still one clipped, noised example, a valid canary.)
- **the per-step reading** (``register_module_parameter_registration_hook``,
  ``register_module_forward_pre_hook``, ``register_optimizer_step_post_hook``): every parameter
  registered while the watch is open is watched.  At every forward call of any module and after
  every step of any torch optimizer (an Opacus ``DPOptimizer`` steps its wrapped optimizer), the
  watch compares the canary column of each watched 2-D parameter of last axis ``width`` with its
  last copy; a change is one parameter write, u_t = W_t[:, −1] − W_{t−1}[:, −1], recorded with a
  copy of every watched parameter and buffer (``register_module_buffer_registration_hook``: e.g.
  BatchNorm's running statistics) as they stood before it.  So every write is seen, whatever made it: a torch
  optimizer's ``step()``, an Opacus loop, or a ``torch.func`` loop that writes its parameters back
  in place (``p -= ...``, ``load_state_dict``) between forward calls.  Writes made without a
  forward call or optimizer step in between are read as one (their sum).

**The statistic** (:meth:`ParameterWatch.step_sum`): Σ_t ⟨u_t, d_t⟩, where d_t is the unit
direction a descent step on the canary alone moves the column at step t.  With a Dirac canary of
known gradient g_t the update of a correct DP-SGD step is u_t = −η(b_t·clip(g_t) + σC·z_t)/B with
b_t ∈ {0, 1} the canary's inclusion and z_t standard normal, so the likelihood ratio of "the
canary is in every step" against "in none" is a function of Σ_t ⟨u_t, d_t⟩ (Nasr et al. 2023, the
white-box Dirac audit; the projection statistic of docs/dpsgd.md).  d_t is

- for a linear model: constant, e_c − 1/K normalised (K ≥ 2 logits; both rows move), or +1 for
  one logit;
- for a deeper model: −∇(the canary's loss)/‖·‖ on the column at the iterate before step t (its
  parameters and buffers), computed after the training by one forward and backward pass of the
  returned model on the canary row (cross-entropy with label c for K ≥ 2 logits, BCE with label c
  for one), with the probe on and every module in eval mode (no dropout; BatchNorm on the
  iterate's running statistics, not on a batch of one row), so d_t is deterministic; the loss of the user's own loop may differ, which costs power, not validity: d_t is a
  function of the released iterates only;
- for the trainer's own ``grad_canary`` hook: the constant e_row, the hook's coordinate.

The total-only reading, Σ_t u_t = W_T − W_0, is the same number for a constant d_t; per step it
follows a deeper model's canary direction, which the norm of W_T − W_0 diluted over the column.
It reads every intermediate model: the threat model of DP-SGD's accountants, which bound the
release of all iterates.

Cost: one copy of the parameters per step (the states d_t needs), and for a deeper model one
forward and backward pass per step after the training; meant for the small models of an audit.

torch is imported inside the methods: this module imports without it.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Optional

import numpy as np

__all__ = ["ParameterWatch"]


class ParameterWatch:
    """Context manager recording every write of the canary column of a user's model."""

    def __init__(self, width: int, *, dirac_row: Optional[int] = None, noise_columns: int = 0):
        self.width = int(width)
        self.dirac_row = dirac_row
        self.tail = 1 + int(noise_columns)  # the noise columns, then the canary column, last
        self.parameters: list = []
        self.buffers: list = []
        self.initial: dict[int, Any] = {}
        self.steps: dict[int, list] = {}
        self._last: dict[int, Any] = {}
        self._state: dict[int, Any] = {}
        self._handles: list = []

    def __enter__(self) -> "ParameterWatch":
        from torch.nn.modules import module as nn_module  # optional extra: torch
        from torch.optim import optimizer as optim_module

        def registered(module, name, param):
            if param is not None:
                self.parameters.append(param)

        def buffered(module, name, buffer):
            if buffer is not None:
                self.buffers.append(buffer)

        self._handles = [nn_module.register_module_parameter_registration_hook(registered),
                         nn_module.register_module_buffer_registration_hook(buffered),
                         nn_module.register_module_forward_pre_hook(lambda module, args: self._check()),
                         optim_module.register_optimizer_step_post_hook(lambda opt, args, kwargs: self._check()),
                         nn_module.register_module_forward_hook(self._probe)]
        return self

    def _columns(self):
        return [p for p in self.parameters if p.ndim == 2 and p.shape[-1] == self.width]

    def _snapshot(self) -> None:
        """The iterate as it stands: every watched parameter and buffer (e.g. BatchNorm's running
        statistics, which a step's forward call updates)."""
        self._state = {id(p): p.detach().clone() for p in self.parameters + self.buffers}

    def _check(self) -> None:
        """Record a write of any watched canary column since the last check (module docstring)."""
        import torch  # optional extra: torch

        if not self.parameters:
            return
        if not self.initial:
            self._snapshot()
            self.initial = dict(self._state)
            self._last = {id(p): p.detach()[:, -self.tail:].clone() for p in self._columns()}
            return
        changed = False
        for p in self._columns():
            column = p.detach()[:, -self.tail:]
            last = self._last.get(id(p))
            if last is None:
                self._last[id(p)] = column.clone()
            elif not torch.equal(column, last):
                self.steps.setdefault(id(p), []).append((column.double() - last.double(), self._state))
                self._last[id(p)] = column.clone()
                changed = True
        if changed:
            self._snapshot()

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
        if exc[0] is None and self.initial:
            self._check()  # the last write, made after the last forward call

    def step_sum(self, model: Any, row: int, canary: np.ndarray, *, where: str) -> float:
        """Σ_t ⟨u_t, d_t⟩ on the canary column of ``model``'s first parameter with a last axis of
        ``width`` entries (module docstring); ``row`` is the canary's label c, ``canary`` its input row."""
        total = float(np.sum(self.projections(model, row, canary, where=where)))
        if not np.isfinite(total):
            raise ValueError(f"{where}: the canary coordinate's update is not finite")
        return total

    def projections(self, model: Any, row: int, canary: np.ndarray, *, where: str) -> np.ndarray:
        """The per-step projections ⟨u_t, d_t⟩, t = 1, ..., T (their sum is :meth:`step_sum`)."""
        import torch  # optional extra: torch

        param = self._first(model, where)
        steps = self.steps.get(id(param), [])
        k = param.shape[0]
        last = [p for p in model.parameters() if p.ndim == 2][-1] is param
        if self.dirac_row is not None or last:
            direction = torch.zeros(k, dtype=torch.float64)
            if self.dirac_row is not None or k == 1:
                direction[(self.dirac_row or 0) if k > 1 else 0] = 1.0
            else:
                direction[:] = -1.0 / k
                direction[row] += 1.0
                direction /= torch.linalg.vector_norm(direction)
            return np.array([float(u[:, -1] @ direction) for u, _ in steps])
        return np.array([float(u[:, -1] @ self._descent(model, param, state, row, canary)) for u, state in steps])

    def noise_energy(self, model: Any, *, where: str) -> np.ndarray:
        """The mean square of each step's update of the noise columns (the ``noise_columns``
        columns before the canary column, which no row uses: pure noise), t = 1, ..., T."""
        if self.tail < 2:
            raise ValueError(f"{where}: the watch has no noise columns (noise_columns=0)")
        param = self._first(model, where)
        return np.array([float((u[:, :-1] ** 2).mean()) for u, _ in self.steps.get(id(param), [])])

    def _first(self, model: Any, where: str):
        """The returned model's first parameter with a last axis of ``width`` entries, watched."""
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
        if id(param) not in self.initial:
            raise ValueError(f"{where}: the returned model's first-layer weight was not created, or never used in a "
                             "forward call, during the training call; return the model the call built and trained")
        return param

    def _descent(self, model, param, state: dict, row: int, canary: np.ndarray):
        """The unit descent direction of the canary's loss on ``param``'s canary column at the
        parameters ``state`` (module docstring), or 0 where its gradient vanishes."""
        import torch  # optional extra: torch
        from torch.func import functional_call
        from torch.nn.functional import binary_cross_entropy_with_logits, cross_entropy
        from torch.nn.modules import module as nn_module

        base = getattr(model, "_module", model)  # an Opacus GradSampleModule wraps the user's model
        named = {name: p for name, p in base.named_parameters()}
        values = {name: state[id(p)].clone().requires_grad_(p is param) for name, p in named.items() if id(p) in state}
        values.update({name: state[id(b)] for name, b in base.named_buffers() if id(b) in state})  # the step's buffers
        target = next(name for name, p in named.items() if p is param)
        handle = nn_module.register_module_forward_hook(self._probe)
        stashed = _stash_hooks(base)  # e.g. Opacus's per-sample gradient hooks, which this pass must not feed
        modes = [(module, module.training) for module in base.modules()]
        base.eval()  # a deterministic direction of the iterate: no dropout, BatchNorm on its running statistics
        try:
            x = torch.as_tensor(canary[None, :], dtype=param.dtype)
            logits = functional_call(base, values, (x,)).reshape(1, -1)
            if logits.shape[1] == 1:
                loss = binary_cross_entropy_with_logits(logits[:, 0], torch.full((1,), float(row), dtype=logits.dtype))
            else:
                loss = cross_entropy(logits, torch.tensor([row]))
            gradient = torch.autograd.grad(loss, values[target])[0][:, -1].double()
        finally:
            handle.remove()
            _restore_hooks(stashed)
            for module, training in modes:
                module.training = training
        norm = torch.linalg.vector_norm(gradient)
        return -gradient / norm if norm > 0 else gradient


_HOOKS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks",
          "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs", "_forward_hooks_always_called")


def _stash_hooks(model) -> list:
    """Empty every module's own hooks, returning them for :func:`_restore_hooks`."""
    stashed = []
    for module in model.modules():
        for name in _HOOKS:
            if hasattr(module, name):
                stashed.append((module, name, getattr(module, name)))
                setattr(module, name, OrderedDict())
    return stashed


def _restore_hooks(stashed: list) -> None:
    for module, name, hooks in stashed:
        setattr(module, name, hooks)
