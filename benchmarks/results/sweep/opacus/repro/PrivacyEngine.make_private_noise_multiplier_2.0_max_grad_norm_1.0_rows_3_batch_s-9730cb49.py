"""Reproduce: opacus PrivacyEngine.make_private [noise_multiplier=2.0, max_grad_norm=1.0, rows=3, batch_size=2, steps=2, loss_reduction=mean]

The sweep of opacus 1.6.0 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for
PrivacyEngine.make_private [noise_multiplier=2.0, max_grad_norm=1.0, rows=3, batch_size=2,
steps=2, loss_reduction=mean], which claims Opacus PRV accountant under add-remove: certified
epsilon >= 2.199 at delta = 1e-05, at confidence 0.997222 (the sweep's Bonferroni share).
Witness pair: add a row with gradient norm ≈ 1000 (clipped to C).

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: w after step 1, b after step 1, w after step 2, b after step 2; each block of capacity c is [size, leading dimension, non-finite count, c values].
output[1] is b after step 1.

Event: output[1] <= -2.314430922269821  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: uncertain: no simple event's excess is certain on the choosing draws and the
audit's certified event is not one numpy can restate; carrying the simple event of the largest
excess in standard deviations.
"""
import contextlib
import inspect
import logging

import numpy as np
import torch
from opacus import PrivacyEngine
from opacus.utils.batch_memory_manager import BatchMemoryManager

logging.getLogger('opacus.data_loader').setLevel(logging.ERROR)  # empty Poisson batches


def train(data, random_state, *, noise_multiplier, max_grad_norm, batch_size, steps, lr=1.0, loss_reduction="sum",
          clipping="flat", grad_sample_mode="hooks", physical_batch_size=0, tokens=0, **optimizer_options):
    """T = ``steps`` steps of DP-SGD with Opacus's ``PrivacyEngine.make_private`` (Poisson sampling,
    sample rate 1/len(data_loader)) on a linear model f(x) = w·x + b, started at 0, with the loss
    −y·f(x) per example (gradient −y·(x, 1)), reduced by ``loss_reduction``; rows of ``data`` are
    (x, y).  With ``tokens`` = L > 0 a row is a sequence (x_1..x_L, y_1..y_L) of L one-feature tokens:
    the model maps (batch, L, 1) to (batch, L, 1) and a sequence's loss is Σ_t −y_t·f(x_t) (the privacy
    unit is the sequence, its gradient −Σ_t y_t·(x_t, 1)).  ``clipping``, ``grad_sample_mode`` and ``optimizer_options`` go to ``make_private``
    ("per_layer" takes one clip norm per parameter, "adaptive" AdaClip's options, "ghost" fast gradient
    clipping through the criterion it returns); ``physical_batch_size`` > 0 splits each Poisson batch
    with ``BatchMemoryManager``.  The release is the parameters (w, b) after every optimizer step:
    the whole trajectory the accountant accounts for."""
    generator = torch.Generator().manual_seed(int(random_state.randint(2**31)))
    if tokens:
        x = torch.tensor(data[:, :tokens], dtype=torch.float32).reshape(len(data), tokens, 1)
        y = torch.tensor(data[:, tokens:], dtype=torch.float32)
    else:
        x = torch.tensor(data[:, :-1], dtype=torch.float32)
        y = torch.tensor(data[:, -1], dtype=torch.float32)
    model = torch.nn.Linear(x.shape[-1], 1)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    class Loss(torch.nn.Module):
        """−y·f(x) per example (summed over a sequence's tokens), reduced as ``reduction`` says (ghost
        clipping sets it to "none")."""
        reduction = loss_reduction

        def forward(self, output, target):
            loss = -(output.squeeze(-1) * target)
            loss = loss.sum(-1) if loss.dim() > 1 else loss
            return loss if self.reduction == "none" else loss.sum() if self.reduction == "sum" else loss.mean()

    # make_private's DPDataLoader samples with the original loader's generator (no secure_mode).
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=batch_size,
                                         generator=generator)
    # Releases before 1.5.3 take no `criterion` (only ghost clipping needs it); pass it where accepted.
    # There (1.5-1.5.2) ghost clipping is make_private(grad_sample_mode="ghost", clipping="ghost") and
    # the two backward passes of opacus.utils.fast_gradient_clipping_utils.double_backward.
    accepted = inspect.signature(PrivacyEngine.make_private).parameters
    two_pass = grad_sample_mode == "ghost" and "criterion" not in accepted
    private = PrivacyEngine().make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=noise_multiplier,
        max_grad_norm=max_grad_norm, poisson_sampling=True, loss_reduction=loss_reduction, noise_generator=generator,
        clipping="ghost" if two_pass else clipping, grad_sample_mode=grad_sample_mode, **optimizer_options,
        **({"criterion": Loss()} if "criterion" in accepted else {}))
    if grad_sample_mode == "ghost" and not two_pass:
        model, optimizer, criterion, loader = private
    else:
        (model, optimizer, loader), criterion = private, Loss()
    batches = (BatchMemoryManager(data_loader=loader, max_physical_batch_size=physical_batch_size, optimizer=optimizer)
               if physical_batch_size else contextlib.nullcontext(loader))
    trajectory = []
    with batches as physical:
        while len(trajectory) < steps:
            for xb, yb in physical:
                optimizer.zero_grad()
                if two_pass:  # double_backward, its first pass reduced as loss_reduction says (1.5.2 fixes "mean")
                    criterion.reduction = "none"
                    per_sample = criterion(model(xb), yb)
                    (per_sample.sum() if loss_reduction == "sum" else per_sample.mean()).backward(retain_graph=True)
                    optimizer.zero_grad()
                    model.disable_hooks()
                    (model.get_coeff() * per_sample).sum().backward()  # Σ_i min(1, C/‖g_i‖)·loss_i
                    model.enable_hooks()
                else:
                    criterion(model(xb), yb).backward()
                optimizer.step()
                if optimizer._is_last_step_skipped:  # BatchMemoryManager: a physical batch, not a step yet
                    continue
                trajectory.append(torch.cat([p.detach().ravel() for p in model.parameters()]).numpy().copy())
                if len(trajectory) == steps:
                    break
    return np.concatenate(trajectory)



release = train
PARAMS = {'noise_multiplier': 2.0, 'max_grad_norm': 1.0, 'batch_size': 2, 'steps': 2, 'loss_reduction': 'mean'}
D = np.array([[0.5, 0.0], [0.5, 0.0], [0.5, 0.0]])
D_PRIME = np.array([[0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [100.0, 10.0]])  # add a row with gradient norm ≈ 1000 (clipped to C)
N = 626
EPSILON, DELTA = 1.8437264957265143, 1e-05  # the library's claim, at its reference delta


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(4), 1.0)


def event(output):
    return bool(output[1] <= -2.314430922269821)


if __name__ == "__main__":
    random_state = np.random.RandomState(2026)
    hits = {name: sum(event(draw(data, random_state)) for _ in range(N)) for name, data in (("D", D), ("D_PRIME", D_PRIME))}
    p, q = hits["D"] / N, hits["D_PRIME"] / N
    print(f"P[event | D] = {p:.4f}  ({hits['D']} of {N} releases)")
    print(f"P[event | D_PRIME] = {q:.4f}  ({hits['D_PRIME']} of {N} releases)")
    allowed = min(1.0, float(np.exp(EPSILON)) * q + DELTA)
    print(f"the claim allows P[event | D] <= e^eps * {q:.4f} + delta = {allowed:.4f}: "
          + ("exceeded" if p > allowed else "not exceeded on these draws"))
    print(f"excess over the claim: {p - allowed:+.4f}")
    # A point estimate on these draws: its standard error says how far from noise it is.  Each
    # frequency's variance is estimated with half a release added to its count, so that it is not 0
    # when every release or none is in the event.
    p_half, q_half = (hits["D"] + 0.5) / (N + 1), (hits["D_PRIME"] + 0.5) / (N + 1)
    error = float(np.sqrt(p_half * (1 - p_half) / N + float(np.exp(2 * EPSILON)) * q_half * (1 - q_half) / N))
    print(f"its standard error: {error:.4f} ({(p - allowed) / error:+.1f} standard errors)")
