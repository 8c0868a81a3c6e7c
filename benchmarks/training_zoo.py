"""The common-form trainer zoo audited by :func:`audit.training.audit_training` with its defaults.

Each trainer of tests/mechanisms/training_zoo.py (``train(X, y, seed) -> model``, at most ten
user lines) is audited on 31 synthetic rows against Opacus's RDP accountant at σ = 2, T = 4,
q = 1/⌈31/16⌉ = ½, δ = 1e-3 (claimed ε = 1.922), with the default budget (an anytime audit of at
most 1,000 trainings per side), in the views named.  Wall times were measured on a machine shared
with other work (2 cores, n_jobs = 1); each row records the load average when it started.

Run: ``python -m benchmarks.training_zoo --out benchmarks/results/training``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROWS = [("opacus_correct", "margin", True), ("func_correct", "margin", True), ("func_correct", "updates", True),
        ("hooked_correct", "updates", True),
        ("opacus_deterministic", "margin", False), ("func_unscaled_noise", "margin", False),
        ("func_unscaled_noise", "updates", False), ("hooked_unscaled_noise", "updates", False),
        ("func_noise_before_clipping", "margin", False), ("func_noise_before_clipping", "updates", False),
        ("hooked_noise_before_clipping", "updates", False), ("func_batch_clipping", "margin", False),
        ("opacus_unnoised_first_layer", "updates", False), ("opacus_unnoised_first_layer", "margin", False),
        ("opacus_correct", "updates", True), ("func_batch_clipping", "updates", False),
        ("func_virtual_steps", "updates", False), ("opacus_shuffled", "updates", None),
        ("opacus_mean_normaliser", "updates", None)]
#: "claim holds" of a row: True, False, or None where the trainer's true ε(δ) at this configuration is
#: unknown (docs/training.md: its Dirac view is within the claim, other coordinates may not be).


def doubling_limit(n: int = 500, delta: float = 1e-3, alpha: float = 0.05) -> list[str]:
    """What ``n`` trainings a side can certify against a trainer whose only fault doubles the
    sensitivity (batch clipping at best): outputs N(0, 1) and N(2μ_c, 1) for a claim μ_c-GDP (no
    subsampling, no other noise: the most favourable case), the best single threshold event at
    its *expected* counts with two-sided Clopper–Pearson bounds at level ``alpha`` (no budget spent
    on choosing the event), against the claim's ε(δ) and μ_c."""
    from scipy import stats

    from mechanisms.gdp import gdp_epsilon

    lines = ["| claimed μ | claimed ε(1e-3) | true μ | true ε(1e-3) | best ε_lb | best μ_lb | ε refutable | μ refutable |",
             "|---:|---:|---:|---:|---:|---:|---|---|"]
    for mu_c in (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0):
        thresholds = np.linspace(-3.0, 3.0 + 4 * mu_c, 600)
        k0 = np.round(stats.norm.sf(thresholds) * n)
        k1 = np.round(stats.norm.sf(thresholds - 2 * mu_c) * n)
        high = np.where(k0 < n, stats.beta.ppf(1 - alpha / 2, k0 + 1, np.maximum(n - k0, 1)), 1.0)
        low = np.where(k1 > 0, stats.beta.ppf(alpha / 2, np.maximum(k1, 1), n - k1 + 1), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            eps = np.where(low > delta, np.log((low - delta) / high), 0.0)
            mu = np.where((low > 0) & (high < 1), stats.norm.ppf(low) - stats.norm.ppf(high), 0.0)
        claimed = gdp_epsilon(delta, mu_c)
        lines.append(f"| {mu_c:g} | {claimed:.2f} | {2 * mu_c:g} | {gdp_epsilon(delta, 2 * mu_c):.2f} | {eps.max():.2f} | "
                     f"{mu.max():.2f} | {'yes' if eps.max() > claimed else 'no'} | {'yes' if mu.max() > mu_c else 'no'} |")
    return lines


def subsampled_limit(n: int = 500, delta: float = 1e-3, alpha: float = 0.05, draws: int = 1_000_000) -> list[str]:
    """The same limit at the zoo's configuration (σ = 2, T = 4) for a per-step sensitivity of C (the
    claim), √2·C (a Dirac canary orthogonal to the data's clipped sum, seen on both) and 2C (a
    canary opposed to it: the most a one-record change can move a sum clipped to C, by the
    triangle inequality), with every step's update visible: per step z_t + b_t·Δ/(σC), z_t standard
    normal, b_t ~ Bernoulli(q) with the canary, 0 without.  Two statistics, the sum Σ_t and the
    per-step likelihood ratio Σ_t log(1 − q + q·e^{Δz_t/σC − Δ²/2σ²C²}) (the optimal one for this
    mixture); their best single threshold event at expected counts (Monte Carlo tail
    probabilities from ``draws`` samples a side, seeded) with two-sided Clopper–Pearson bounds at
    level ``alpha``; the true ε(δ) from dp-accounting's PLD at σC/Δ; the claimed ε(δ) from Opacus's
    RDP accountant at σ."""
    from dp_accounting.pld import privacy_loss_distribution as pld
    from scipy import stats

    from mechanisms.training import accountant_claim

    rng = np.random.default_rng(0)
    sigma, steps = 2.0, 4

    def best(s0, s1):
        s0, s1 = np.sort(s0), np.sort(s1)
        th = np.unique(np.concatenate([np.quantile(s0, 1 - np.logspace(-6, -0.01, 400)), np.quantile(s1, np.linspace(0.001, 0.999, 400))]))
        k0 = np.round((1 - np.searchsorted(s0, th, side="right") / draws) * n)
        k1 = np.round((1 - np.searchsorted(s1, th, side="right") / draws) * n)
        high = np.where(k0 < n, stats.beta.ppf(1 - alpha / 2, k0 + 1, np.maximum(n - k0, 1)), 1.0)
        low = np.where(k1 > 0, stats.beta.ppf(alpha / 2, np.maximum(k1, 1), n - k1 + 1), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            eps = np.where(low > delta, np.log((low - delta) / high), 0.0)
            mu = np.where((low > 0) & (high < 1), stats.norm.ppf(low) - stats.norm.ppf(high), 0.0)
        return eps.max(), mu.max()

    lines = ["| q | per-step sensitivity | claimed ε(1e-3) (RDP) | true ε(1e-3) (PLD) | ε_lb: sum | ε_lb: per-step LR | μ_lb: per-step LR |",
             "|---:|---|---:|---:|---:|---:|---:|"]
    for q in (0.5, 1.0):
        claimed = accountant_claim("rdp", q, sigma, steps, delta).epsilon_at(delta)
        for name, shift in (("C", 1.0), ("√2·C", np.sqrt(2)), ("2C", 2.0)):
            d = shift / sigma
            z0 = rng.standard_normal((draws, steps))
            z1 = rng.standard_normal((draws, steps)) + d * (rng.random((draws, steps)) < q)
            ratio = (lambda z: np.log(1 - q + q * np.exp(d * z - d * d / 2)).sum(1)) if q < 1 else (lambda z: z.sum(1))
            e_sum, _ = best(z0.sum(1), z1.sum(1))
            e_lr, m_lr = best(ratio(z0), ratio(z1))
            true = pld.from_gaussian_mechanism(sigma / shift, sampling_prob=q, value_discretization_interval=1e-3,
                                               use_connect_dots=True).self_compose(steps).get_epsilon_for_delta(delta)
            lines.append(f"| {q:g} | {name} | {claimed:.3f} | {true:.3f} | {e_sum:.2f} | {e_lr:.2f} | {m_lr:.2f} |")
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/training")
    parser.add_argument("--rows", default=None, help="comma-separated row indices (default: all)")
    parser.add_argument("--limit-only", action="store_true", help="only the sensitivity-doubling limit (no training)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    limit, subsampled = doubling_limit(), subsampled_limit()
    (out / "zoo-limit.md").write_text(
        "# What 500 trainings a side can certify against a doubled sensitivity\n\n## Doubled sensitivity\n\n"
        "Command: `python -m benchmarks.training_zoo --limit-only`. " + " ".join(doubling_limit.__doc__.split())
        + "\n\n" + "\n".join(limit) + "\n\n## At the zoo's configuration\n\n" + " ".join(subsampled_limit.__doc__.split())
        + "\n\n" + "\n".join(subsampled) + "\n")
    print("\n".join(limit + [""] + subsampled))
    if args.limit_only:
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "mechanisms"))
    import training_zoo as zoo

    from audit.training import audit_training

    rng = np.random.default_rng(0)
    x = rng.standard_normal((31, 3)).astype(np.float32)
    y = (x[:, 0] + 0.5 * rng.standard_normal(31) > 0).astype(np.int64)
    claim = dict(noise_multiplier=zoo.SIGMA, steps=zoo.T, delta=1e-3, batch_size=zoo.B)
    chosen = ROWS if args.rows is None else [ROWS[int(i)] for i in args.rows.split(",")]
    lines = ["| trainer | claim holds | view | verdict | trainings per side | ε_lb | claimed ε | time (s) | load |",
             "|---|---|---|---|---:|---:|---:|---:|---:|"]
    for name, view, holds in chosen:
        load = os.getloadavg()[0]
        started = time.perf_counter()
        labels = y.astype(np.float32) if name.startswith("opacus") else y
        report = audit_training(getattr(zoo, name), x, labels, view=view, seed=2027, progress=False, **claim)
        row = (f"| {name} | {'unknown' if holds is None else 'yes' if holds else 'no'} | {view} | {report.verdict.value} | {report.draws['per_side']:,} | "
               f"{report.epsilon_lower_bound:.3f} | {report.claim.epsilon_at(1e-3):.3f} | "
               f"{time.perf_counter() - started:.0f} | {load:.1f} |")
        print(row, flush=True)
        lines.append(row)
    name = "zoo.md" if args.rows is None else f"zoo-{args.rows.replace(',', '-')}.md"
    (out / name).write_text("# The common-form trainer zoo\n\n## Default audit\n\nCommand: `python -m benchmarks.training_zoo`. "
                            + " ".join(__doc__.split("\n\n")[1].split()) + "\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
