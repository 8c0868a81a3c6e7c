"""Reproduce: opacus PrivacyEngine.attach [noise_multiplier=4.0, max_grad_norm=1.0, rows=8, batch_size=4, epochs=1]

Found on 2 release(s), each by its own sweep:
- The sweep of opacus 0.14.0 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for PrivacyEngine.attach
  [noise_multiplier=4.0, max_grad_norm=1.0, rows=8, batch_size=4, epochs=1], which claims (0.904351,
  1e-05)-DP under add-remove: certified epsilon >= 1.353 at delta = 1e-05, at confidence 0.998611
  (the sweep's Bonferroni share). Witness pair: add a row with gradient norm C (at the clip norm).
- The sweep of opacus 0.15.0 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for PrivacyEngine.attach
  [noise_multiplier=4.0, max_grad_norm=1.0, rows=8, batch_size=4, epochs=1], which claims (0.904351,
  1e-05)-DP under add-remove: certified epsilon >= 1.353 at delta = 1e-05, at confidence 0.998611
  (the sweep's Bonferroni share). Witness pair: add a row with gradient norm C (at the clip norm).

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: w after epoch 1, b after epoch 1; each block of capacity c is [size, leading dimension, non-finite count, c values].
output[0] is w after epoch 1.

Event: output[0] >= 3.7285165302455425  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: uncertain: no simple event's excess is certain on the choosing draws and the
audit's certified event is not one numpy can restate; carrying the simple event of the largest
excess in standard deviations.
"""
import inspect
import warnings

import numpy as np
import torch
from opacus import PrivacyEngine


def rdp_orders():
    """The RDP orders Opacus 0.x's examples pass to the engine (1.0 made them ``DEFAULT_ALPHAS``)."""
    return [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))


def known_warnings():
    """The warnings (``warnings.filterwarnings`` message patterns) every run of a 0.x release gives:
    its engine's "Secure RNG turned off"; the last, smaller shuffled batch (0.9-0.11); the batch and
    sample sizes that make the budget "incorrect" and the ``sample_rate`` that overrides them (0.12
    on); torch's deprecation of the non-full backward hooks 0.x computes per-sample gradients with
    (the clipped gradients they give are exact on a linear model, measured with σ = 0)."""
    return ("Secure RNG turned off", "PrivacyEngine expected a batch of size .* but the last step received",
            "The sample rate will be defined from", "A ``sample_rate`` has been provided",
            "Using a non-full backward hook")


def train(data, random_state, *, noise_multiplier, max_grad_norm, batch_size, epochs, sample_rate=0.0,
          loss_reduction="mean", lr=1.0):
    """``epochs`` epochs of DP-SGD by Opacus 0.x's ``PrivacyEngine`` attached to SGD on a linear model
    f(x) = w·x + b started at 0, loss −y·f(x) per row (gradient −y·(x, 1)) reduced by ``loss_reduction``;
    rows of ``data`` are (x, y).  ``sample_rate`` 0: the shuffled ``DataLoader(batch_size=batch_size,
    shuffle=True)`` (the last batch smaller); else Poisson batches of ``UniformWithReplacementSampler``
    (0.12 on; ``poisson=True`` where the engine takes it).  The release is (w, b) after each epoch."""
    # Two seeds: the batches' generator and torch's default one (the noise) must not share a stream.
    batch_seed, noise_seed = (int(v) for v in random_state.randint(2**31, size=2))
    generator = torch.Generator().manual_seed(batch_seed)
    x = torch.tensor(data[:, :-1], dtype=torch.float32)
    y = torch.tensor(data[:, -1], dtype=torch.float32)
    dataset = torch.utils.data.TensorDataset(x, y)
    model = torch.nn.Linear(x.shape[-1], 1)
    torch.nn.init.zeros_(model.weight)
    torch.nn.init.zeros_(model.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    accepted = inspect.signature(PrivacyEngine.__init__).parameters
    if sample_rate:
        from opacus.utils.uniform_sampler import UniformWithReplacementSampler
        sampler = UniformWithReplacementSampler(num_samples=len(dataset), sample_rate=sample_rate, generator=generator)
        loader = torch.utils.data.DataLoader(dataset, batch_sampler=sampler)
        batches = {"sample_rate": sample_rate, "sample_size": len(dataset),
                   **({"poisson": True} if "poisson" in accepted else {})}
    else:
        loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size, shuffle=True, generator=generator)
        batches = {"batch_size": batch_size, "sample_size": len(dataset)}
    with warnings.catch_warnings():  # what every run of these releases says; any other warning is shown
        for message in known_warnings():
            warnings.filterwarnings("ignore", message=message)
        engine = PrivacyEngine(model, alphas=rdp_orders(), noise_multiplier=noise_multiplier,
                               max_grad_norm=max_grad_norm, loss_reduction=loss_reduction, **batches)
        engine.attach(optimizer)
        torch.manual_seed(noise_seed)  # the engine's noise comes from torch's default generator, seeded from os.urandom
        trajectory = []
        for _ in range(epochs):
            for xb, yb in loader:
                optimizer.zero_grad()
                loss = -(model(xb).squeeze(-1) * yb)
                (loss.mean() if loss_reduction == "mean" else loss.sum()).backward()
                optimizer.step()
            trajectory.append(torch.cat([p.detach().ravel() for p in model.parameters()]).numpy().copy())
    return np.concatenate(trajectory)



release = train
PARAMS = {'noise_multiplier': 4.0, 'max_grad_norm': 1.0, 'batch_size': 4, 'epochs': 1, 'sample_rate': 0.0, 'loss_reduction': 'mean'}
D = np.array([[0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0]])
D_PRIME = np.array([[0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.5, 0.0], [0.0, 1.0]])  # add a row with gradient norm C (at the clip norm)
N = 263
EPSILON, DELTA = 0.9043513273150833, 1e-05  # the library's claim, at its reference delta


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(2), 1.0)


def event(output):
    return bool(output[0] >= 3.7285165302455425)


if __name__ == "__main__":
    random_state = np.random.RandomState(2026)
    hits = {name: sum(event(draw(data, random_state)) for _ in range(N)) for name, data in (("D", D), ("D_PRIME", D_PRIME))}
    p, q = hits["D_PRIME"] / N, hits["D"] / N
    print(f"P[event | D_PRIME] = {p:.4f}  ({hits['D_PRIME']} of {N} releases)")
    print(f"P[event | D] = {q:.4f}  ({hits['D']} of {N} releases)")
    allowed = min(1.0, float(np.exp(EPSILON)) * q + DELTA)
    print(f"the claim allows P[event | D_PRIME] <= e^eps * {q:.4f} + delta = {allowed:.4f}: "
          + ("exceeded" if p > allowed else "not exceeded on these draws"))
    print(f"excess over the claim: {p - allowed:+.4f}")
    # A point estimate on these draws: its standard error says how far from noise it is.  Each
    # frequency's variance is estimated with half a release added to its count, so that it is not 0
    # when every release or none is in the event.
    p_half, q_half = (hits["D_PRIME"] + 0.5) / (N + 1), (hits["D"] + 0.5) / (N + 1)
    error = float(np.sqrt(p_half * (1 - p_half) / N + float(np.exp(2 * EPSILON)) * q_half * (1 - q_half) / N))
    print(f"its standard error: {error:.4f} ({(p - allowed) / error:+.1f} standard errors)")
