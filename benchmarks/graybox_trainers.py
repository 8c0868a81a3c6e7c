"""A PyTorch trainer that adds the noise to each example's gradient *before* clipping it.

The mistake: per-example gradients g_i + N(0, σ²C²) are clipped to C and summed, with no noise
after the sum, so the release is Σ_i clip(g_i + n_i): each term has norm ≤ C, and the noise,
drawn per example, is mostly clipped away (for σC ≫ C every term is close to C·n_i/‖n_i‖).  The
accountant is told the sum carries N(0, σ²C²).  It is written here, apart from the training
engineer's :mod:`mechanisms.zoo.trainers`, for the gray-box benchmark and tests: the noise call's
shape follows the sampled batch (one noise vector per example), which a replay names at its line.
"""

from __future__ import annotations

__all__ = ["noise_before_clipping"]


def noise_before_clipping(model, data, config, *, generator) -> None:
    """Poisson-sampled DP-SGD written by hand with the noise added before per-example clipping."""
    import torch  # optional extra: torch
    from torch.func import functional_call, grad, vmap

    x_all, y_all = data.tensors
    q = 1.0 / -(-len(data) // config.batch_size)
    names = [name for name, _ in model.named_parameters()]
    params = [p for _, p in model.named_parameters()]
    optimizer = torch.optim.SGD(params, lr=config.learning_rate / config.batch_size)
    std = config.noise_multiplier * config.max_grad_norm

    def loss(values, x, y):
        out = functional_call(model, dict(zip(names, values)), (x[None, :],))
        return torch.nn.functional.cross_entropy(out, y[None], reduction="sum")

    per_example = vmap(grad(loss), in_dims=(None, 0, 0))
    for _ in range(config.steps):
        chosen = torch.rand(len(data), generator=generator) < q
        x, y = x_all[chosen], y_all[chosen]
        values = [p.detach() for p in params]
        if len(x):
            grads = per_example(values, x, y)
            grads = [g + std * torch.randn(g.shape, generator=generator) for g in grads]  # the mistake
            norms = torch.sqrt(sum(g.reshape(len(x), -1).pow(2).sum(1) for g in grads))
            factor = (config.max_grad_norm / (norms + 1e-6)).clamp(max=1.0)
            sums = [torch.einsum("i,i...->...", factor, g) for g in grads]
        else:
            sums = [torch.zeros_like(v) for v in values]
        for p, s in zip(params, sums):
            p.grad = s
        optimizer.step()


noise_before_clipping.label = "noise before clipping"
