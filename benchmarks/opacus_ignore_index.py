"""Whether Opacus's fast gradient clipping of masked sequences (meta-pytorch/opacus#808) bounds a record.

Opacus 1.5.x's ``DPLossFastGradientClipping`` formed a sequence's loss, under
``loss_reduction="mean"``, as the mean over all L positions, the ones masked by the criterion's
``ignore_index`` (loss 0) included; 1.6.0 divides by the n_valid positions not masked (#808, issue
#792).  Both backward passes differentiate that same per-sample loss ℓ_i: the first computes the
norms ‖∇ℓ_i‖ and the coefficients c_i = min(1, C/‖∇ℓ_i‖), the second the step Σ_i c_i·∇ℓ_i.  A
record's contribution has norm min(‖∇ℓ_i‖, C) ≤ C under either divisor, and the noise σC is
calibrated to C, so the claim holds on both sides of the fix; the old divisor shrinks ∇ℓ_i by
n_valid/L before clipping (the utility loss #792 reports), not the bound.

Measured here: one sequence of L = 6 tokens, five masked, a Linear(2, 3) and cross-entropy, one
deterministic step (no Poisson sampling, σ = 0, lr = 1, a batch of that one sequence, so
expected_batch_size = 1) through ``make_private``'s ghost clipping at C = 0.5, with large and small
inputs.  The step's norm is the record's clipped contribution; beside it the unclipped gradient
norms of ℓ under each divisor (by autograd, a second route).  Run it in each release's environment::

    ~/.cache/dpaudit/envs/opacus-1.5.4-3.11-site/bin/python -m benchmarks.opacus_ignore_index
    python -m benchmarks.opacus_ignore_index        # the installed 1.6.0

Results: ``benchmarks/results/opacus_ignore_index.md``.
"""

from __future__ import annotations

import warnings

TOKENS, CLASSES, CLIP = 6, 3, 0.5


def step_norm(x, target) -> tuple[float, float, float]:
    """The norm of one ghost-clipped step on the sequence (x, target), and ‖∇ℓ‖ with ℓ divided by
    L (before #808) and by n_valid (after)."""
    import torch
    from opacus import PrivacyEngine

    model = torch.nn.Linear(2, CLASSES)
    with torch.no_grad():
        model.weight.mul_(0.01)
        model.bias.zero_()
    start = [p.detach().clone() for p in model.parameters()]
    per_token = torch.nn.CrossEntropyLoss(ignore_index=-100, reduction="none")(model(x).view(-1, CLASSES),
                                                                               target.view(-1))
    valid = int((target != -100).sum())
    gradients = [torch.autograd.grad(per_token.sum() / divisor, list(model.parameters()), retain_graph=True)
                 for divisor in (TOKENS, valid)]
    by_tokens, by_valid = (float(torch.sqrt(sum((g ** 2).sum() for g in grads))) for grads in gradients)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, target), batch_size=1)
    module, optimizer, criterion, loader = PrivacyEngine().make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=1.0), data_loader=loader,
        criterion=torch.nn.CrossEntropyLoss(ignore_index=-100), noise_multiplier=0.0, max_grad_norm=CLIP,
        poisson_sampling=False, grad_sample_mode="ghost", loss_reduction="mean")
    for xb, yb in loader:
        optimizer.zero_grad()
        logits = module(xb)
        criterion(logits.view(-1, CLASSES), yb.view(-1), shape=logits.shape).backward()
        optimizer.step()
    moved = float(torch.sqrt(sum(((p.detach() - s) ** 2).sum() for p, s in zip(module.parameters(), start))))
    return moved, by_tokens, by_valid


def main() -> None:
    import opacus
    import torch

    warnings.filterwarnings("ignore")  # Opacus's secure-RNG warning
    torch.manual_seed(0)
    x = torch.randn(1, TOKENS, 2)
    target = torch.full((1, TOKENS), -100)
    target[0, 2] = 1
    print(f"| Opacus | input scale | ‖∇ℓ‖, ℓ / L | ‖∇ℓ‖, ℓ / n_valid | step norm | ≤ C = {CLIP} |")
    print("|---|---|---|---|---|---|")
    for scale in (50.0, 0.02):
        moved, by_tokens, by_valid = step_norm(x * scale, target)
        print(f"| {opacus.__version__} | {scale} | {by_tokens:.4f} | {by_valid:.4f} | {moved:.6f} | "
              f"{'yes' if moved <= CLIP * (1 + 1e-5) else '**no**'} |")


if __name__ == "__main__":
    main()
