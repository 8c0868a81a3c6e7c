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
        ("func_virtual_steps", "updates", False), ("opacus_shuffled", "updates", False),
        ("opacus_mean_normaliser", "updates", False)]


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


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/training")
    parser.add_argument("--rows", default=None, help="comma-separated row indices (default: all)")
    parser.add_argument("--limit-only", action="store_true", help="only the sensitivity-doubling limit (no training)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    limit = doubling_limit()
    (out / "zoo-limit.md").write_text(
        "# What 500 trainings a side can certify against a doubled sensitivity\n\n## Doubled sensitivity\n\n"
        "Command: `python -m benchmarks.training_zoo --limit-only`. " + " ".join(doubling_limit.__doc__.split())
        + "\n\n" + "\n".join(limit) + "\n")
    print("\n".join(limit))
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
        row = (f"| {name} | {'yes' if holds else 'no'} | {view} | {report.verdict.value} | {report.draws['per_side']:,} | "
               f"{report.epsilon_lower_bound:.3f} | {report.claim.epsilon_at(1e-3):.3f} | "
               f"{time.perf_counter() - started:.0f} | {load:.1f} |")
        print(row, flush=True)
        lines.append(row)
    name = "zoo.md" if args.rows is None else f"zoo-{args.rows.replace(',', '-')}.md"
    (out / name).write_text("# The common-form trainer zoo\n\n## Default audit\n\nCommand: `python -m benchmarks.training_zoo`. "
                            + " ".join(__doc__.split("\n\n")[1].split()) + "\n\n" + "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
