"""The common form's per-step direction at each iterate (mechanisms.training.watch), and the
crafted-data, energy and shuffled views of :class:`mechanisms.training.UserTraining`.

Tiny trainings (31 rows, 3 features, a few steps); the audits stop early on clear faults and the
correct trainers run 48 trainings a side.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the torch extra (torch, opacus) is not installed")
pytest.importorskip("opacus", reason="the torch extra (torch, opacus) is not installed")

from mechanisms.training import UserTraining  # noqa: E402
from mechanisms.training.watch import ParameterWatch  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import training_zoo as zoo  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal((31, 3)).astype(np.float32)
Y = (X[:, 0] + 0.5 * RNG.standard_normal(31) > 0).astype(np.int64)


def _batchnorm_loop(X, y, seed, *, states=None, steps=4):
    """Full-batch SGD on a network with BatchNorm and dropout; ``states`` collects a deep copy of
    the model (parameters and running statistics) before each step."""
    torch.manual_seed(seed)
    model = torch.nn.Sequential(torch.nn.Linear(X.shape[1], 6), torch.nn.BatchNorm1d(6, momentum=0.5),
                                torch.nn.Tanh(), torch.nn.Dropout(0.5), torch.nn.Linear(6, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    for _ in range(steps):
        if states is not None:
            states.append(copy.deepcopy(model))
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(torch.as_tensor(X)), torch.as_tensor(y), reduction="sum").backward()
        opt.step()
    return model


def test_the_per_step_direction_reads_each_iterates_buffers_in_eval_mode():
    """d_t of a network with BatchNorm and dropout is the canary's descent direction on the column
    at the iterate before step t: that step's parameters *and running statistics*, in eval mode
    (second route: a deep copy of the model taken before each step, in eval mode, with the probe's
    gradient written out by hand: the column's pre-activation s·w − (s·w).detach() is 0 and its
    gradient is s times the back-propagated signal).  Reading the final model's buffers, or
    BatchNorm in train mode on the one canary row, does not give these directions."""
    mechanism = UserTraining(_batchnorm_loop, X, Y, mu=1.0, view="updates")
    x, y = mechanism._data(1)
    row, label = mechanism._canary_row
    states: list = []
    watch = ParameterWatch(x.shape[1])
    with watch:
        model = _batchnorm_loop(torch.as_tensor(x), torch.as_tensor(y), 3, states=states)
    (steps,) = watch.steps.values()
    assert len(steps) == len(states) == 4
    expected = 0.0
    for (u, _), before in zip(steps, states):
        before.eval()
        column = before[0].weight[:, -1].detach().clone().requires_grad_(True)
        s = float(row[-1])
        hidden = s * column - (s * column).detach() + 0.0 * before[0].bias.detach()
        logits = before[4](before[3](before[2](before[1](hidden[None]))))
        loss = torch.nn.functional.cross_entropy(logits, torch.tensor([label]))
        gradient = torch.autograd.grad(loss, column)[0].double()
        expected += float(u @ (-gradient / torch.linalg.vector_norm(gradient)))
    assert watch.step_sum(model, label, row, where="test") == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert model.training  # the pass restores the modules' modes
    # the final model's running statistics give other directions (what the watch read before)
    final = sum(float(u @ watch._descent(model, watch.parameters[0], {**state, **{id(b): b for b in watch.buffers}},
                                         label, row)) for u, state in steps)
    assert abs(final - expected) > 1e-3 * abs(expected)
