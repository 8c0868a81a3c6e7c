"""A zoo of trainers written the common way, ``train(X, y, seed) -> model``, for the tests of
:func:`audit.training.audit_training` (tests/mechanisms/test_training_user.py).

Each is what a user writes, in one of three forms: an Opacus ``PrivacyEngine`` loop, a hand-written
``torch.func``/``vmap`` loop, or a loop that exposes a ``grad_canary`` hook.  Most trainers are one
line that calls a shared template, and a user who writes one trainer writes its template too:
counted so (benchmarks/training_zoo.py, ``trainer_lines``), a trainer is 12 to 25 lines of training
code (the ``torch.func`` template carries every variant's options and the hook's three lines), and
the audit adds one ``audit_training`` call; nothing else is written for dpaudit.  Every trainer
builds its own model, seeds itself from ``seed`` (or not at all), and takes numpy or torch data.
The configuration: σ = 2, C = 1, B = 16 expected rows of n = 31 (Opacus's q = 1/⌈31/16⌉ = ½),
T = 4 steps, SGD on the summed loss at rate 1/B (so the noise moves each weight by σC/B·LR).
A comment names each fault; where the true ε(δ) of a faulty trainer at this configuration is known
only in part, docs/training.md gives what its views can show.
"""

from __future__ import annotations

import torch
from opacus import PrivacyEngine
from torch import nn
from torch.func import functional_call, grad, vmap
from torch.nn.functional import binary_cross_entropy_with_logits as bce
from torch.nn.functional import cross_entropy

SIGMA, C, B, T, LR = 2.0, 1.0, 16, 4, 16.0


def _tensors(X, y, label_dtype=torch.float32):
    return torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=label_dtype)


# -- an Opacus PrivacyEngine loop (BCE, one logit) -------------------------------------------------
def opacus_bce(X, y, seed, *, fixed_seed=False, poisson=True, reduction="sum"):
    torch.manual_seed(0 if fixed_seed else seed)
    model = nn.Linear(X.shape[1], 1)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*_tensors(X, y)), batch_size=B, shuffle=not poisson)
    model, opt, loader = PrivacyEngine().make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=LR / B if reduction == "sum" else LR), data_loader=loader,
        noise_multiplier=SIGMA, max_grad_norm=C, poisson_sampling=poisson, loss_reduction=reduction)
    for _ in range(T // len(loader)):
        for xb, yb in loader:
            opt.zero_grad(); bce(model(xb)[:, 0], yb, reduction=reduction).backward(); opt.step()
    return model


def opacus_correct(X, y, seed):
    return opacus_bce(X, y, seed)


def opacus_deterministic(X, y, seed):      # torch.manual_seed(0): the same noise in every training
    return opacus_bce(X, y, seed, fixed_seed=True)


# -- a torch.func loop (cross-entropy, two logits, one hidden layer), per-example gradients by vmap -------------------
def func_dpsgd(X, y, seed, *, clip="example", bound=C, noise=C * SIGMA, before=False, k=1, grad_canary=None):
    g = torch.Generator().manual_seed(seed); torch.manual_seed(seed)
    X, y = _tensors(X, y, torch.int64)
    model = nn.Sequential(nn.Linear(X.shape[1], 16), nn.Tanh(), nn.Linear(16, 2))
    params = dict(model.named_parameters())
    loss = lambda p, x, t: cross_entropy(functional_call(model, p, (x[None],)), t[None], reduction="sum")
    for _ in range(T):
        s = torch.nonzero(torch.rand(len(X), generator=g) < 0.5)[:, 0]
        hooked = grad_canary is not None and bool(torch.rand(1, generator=g) < 0.5)
        for part in range(k):      # k > 1: the batch cut into k physical steps (virtual steps)
            rows = s[part::k]
            grads = vmap(grad(loss), in_dims=(None, 0, 0))({n: v.detach() for n, v in params.items()}, X[rows], y[rows])
            flat = torch.cat([v.flatten(1) for v in grads.values()], 1)
            if hooked and part == 0:
                flat = torch.cat([flat, torch.cat([v.reshape(1, -1) for v in grad_canary(params)], 1)])
            if before: flat = flat + noise * torch.randn(flat.shape, generator=g)
            if clip == "example": flat = flat * (bound / (flat.norm(dim=1, keepdim=True) + 1e-12)).clamp(max=1)
            total = flat.sum(0)
            if clip == "batch": total = total * min(1.0, C / (float(total.norm()) + 1e-12))
            if not before: total = total + noise / k ** 0.5 * torch.randn(total.shape, generator=g)
            with torch.no_grad():
                for v, u in zip(params.values(), torch.split(total, [v.numel() for v in params.values()])):
                    v -= LR / B * u.reshape(v.shape)
    return model


def func_correct(X, y, seed):
    return func_dpsgd(X, y, seed)


def func_unscaled_noise(X, y, seed):       # clip norm 8, noise σ instead of σ·8
    return func_dpsgd(X, y, seed, bound=8.0, noise=SIGMA)


def func_noise_before_clipping(X, y, seed):   # noise added to each example's gradient, then clipped
    return func_dpsgd(X, y, seed, before=True)


def func_virtual_steps(X, y, seed):       # each batch in 4 physical steps, each noised σ/2 and applied (true ε ≥ 2.21)
    return func_dpsgd(X, y, seed, k=4)


def func_virtual_steps_16(X, y, seed):    # each batch in 16 physical steps, each noised σ/4 and applied (true ε ≈ 6.2)
    return func_dpsgd(X, y, seed, k=16)


def opacus_shuffled(X, y, seed):           # shuffled fixed-size batches, accounted as Poisson sampling (true ε unknown)
    return opacus_bce(X, y, seed, poisson=False)


def opacus_mean_normaliser(X, y, seed):    # loss_reduction="mean": Opacus divides by int(n·q), which depends on n (true ε unknown)
    return opacus_bce(X, y, seed, reduction="mean")


def func_batch_clipping(X, y, seed):       # the batch's summed gradient clipped to C, not each example's
    return func_dpsgd(X, y, seed, clip="batch")


def hooked_correct(X, y, seed, grad_canary=None):
    return func_dpsgd(X, y, seed, grad_canary=grad_canary)


def hooked_noise_before_clipping(X, y, seed, grad_canary=None):
    return func_dpsgd(X, y, seed, before=True, grad_canary=grad_canary)


def hooked_unscaled_noise(X, y, seed, grad_canary=None):   # clip norm 8, noise σ instead of σ·8
    return func_dpsgd(X, y, seed, bound=8.0, noise=SIGMA, grad_canary=grad_canary)


# -- full-batch DP-GD (BCE, one logit, linear), per-example gradients by vmap; a user's own μ-GDP claim μ = √T/σ ---
def full_batch(X, y, seed, *, clip="example"):
    torch.manual_seed(seed)
    X, y = _tensors(X, y)
    model = nn.Linear(X.shape[1], 1)
    params = dict(model.named_parameters())
    loss = lambda p, x, t: bce(functional_call(model, p, (x[None],))[:, 0], t[None], reduction="sum")
    for _ in range(T):
        grads = vmap(grad(loss), in_dims=(None, 0, 0))({n: v.detach() for n, v in params.items()}, X, y)
        flat = torch.cat([v.reshape(len(X), -1) for v in grads.values()], 1)
        if clip == "example": flat = flat * (C / (flat.norm(dim=1, keepdim=True) + 1e-12)).clamp(max=1)
        total = flat.sum(0)
        if clip == "batch": total = total * min(1.0, C / (float(total.norm()) + 1e-12))
        total = total + SIGMA * C * torch.randn(total.shape)
        with torch.no_grad():
            for v, u in zip(params.values(), torch.split(total, [v.numel() for v in params.values()])):
                v -= LR / B * u.reshape(v.shape)
    return model


def full_batch_correct(X, y, seed):
    return full_batch(X, y, seed)


def full_batch_clipping(X, y, seed):       # the full batch's summed gradient clipped to C (true μ = 2√T/σ on crafted rows)
    return full_batch(X, y, seed, clip="batch")


def opacus_unnoised_first_layer(X, y, seed):   # the first layer trained by a plain SGD beside Opacus's
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(X.shape[1], 8), nn.Tanh(), nn.Linear(8, 1))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*_tensors(X, y)), batch_size=B)
    model[0].requires_grad_(False)
    dp_model, opt, loader = PrivacyEngine().make_private(
        module=model, optimizer=torch.optim.SGD(model[2].parameters(), lr=LR / B), data_loader=loader,
        noise_multiplier=SIGMA, max_grad_norm=C, loss_reduction="sum")
    plain = torch.optim.SGD(model[0].requires_grad_(True).parameters(), lr=LR / B)
    for _ in range(T // len(loader)):
        for xb, yb in loader:
            opt.zero_grad(); plain.zero_grad(); bce(dp_model(xb)[:, 0], yb, reduction="sum").backward(); opt.step(); plain.step()
    return model
