"""The common-form trainer zoo audited by :func:`audit.training.audit_training` with its defaults.

Each trainer of tests/mechanisms/training_zoo.py (``train(X, y, seed) -> model``) is audited on
31 synthetic rows against Opacus's RDP accountant at σ = 2, T = 4, q = 1/⌈31/16⌉ = ½, δ = 1e-3
(claimed ε = 1.922), with the default budget (an anytime audit of at most 1,000 trainings per
side), in the views named; where a row says so, against dp-accounting's PLD accountant (claimed
ε = 1.621) with 4,000 trainings per side, or against your own μ-GDP claim μ = √T/σ = 1 for
full-batch DP-GD (Dong, Roth & Su 2022: the Gaussian mechanism of sensitivity C and noise σC is
1/σ-GDP, and T of them compose to √T/σ-GDP), and on crafted rows (mechanisms.training.crafted)
instead of the synthetic ones; the virtual view's rows name their k (``physical_steps``), and
its k = 16 row, like the shuffled view's rows, has a budget of 4,000 trainings per side.  Wall
times were measured on a machine shared with other work (2 cores, n_jobs = 1, or 2 where a row's
options say so: the virtual view at k = 16); each row records the load average when it started.

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
        ("opacus_mean_normaliser", "updates", False),
        ("full_batch_correct", "margin", True, dict(crafted=True, mu=1.0)),
        ("full_batch_clipping", "margin", False, dict(crafted=True, mu=1.0)),
        ("opacus_correct", "energy", True), ("opacus_mean_normaliser", "energy", False),
        ("opacus_correct", "shuffled", True, dict(crafted=True, trainings=4000)),
        ("opacus_shuffled", "shuffled", False, dict(crafted=True, trainings=4000)),
        ("func_correct", "virtual", True, dict(physical_steps=1)),
        ("func_virtual_steps", "virtual", False, dict(physical_steps=4)),
        ("func_virtual_steps_16", "virtual", False, dict(physical_steps=16, trainings=4000, n_jobs=2))]
#: A row: trainer, view, whether its claim holds (docs/training.md gives the truth of each fault),
#: and the options that differ from the zoo's default audit (the RDP claim, the default budget).


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


def virtual_steps_limit(delta: float = 1e-3, alpha: float = 0.05, draws: int = 400_000) -> list[str]:
    """What a budget of ``n`` trainings a side can certify against virtual steps at the zoo's
    configuration (σ = 2, T = 4, q = ½): each logical batch of Poisson rate q is cut into k physical
    steps, each noised σC/√k and applied, and the canary (in the batch with probability q) is in one
    of them, uniformly.  In units of the physical noise a logical step is k coordinates
    z_j + b·Δ·[j = J], Δ = √k/σ, J uniform, b ~ Bernoulli(q) with the canary and 0 without; the
    likelihood ratio per logical step is 1 − q + (q/k)·Σ_j e^{Δz_j − Δ²/2}, its log summed over T
    steps is the privacy loss L and the optimal statistic, which ``view="virtual"`` with
    ``physical_steps=k`` reads from a trainer's T·k parameter writes (mechanisms.training.virtual).  The true ε(δ) is a Monte Carlo estimate
    (``draws`` samples a side, seeded) of the smallest ε with max(E_{D′}[(1 − e^{ε − L})₊],
    E_D[(1 − e^{ε + L})₊]) ≤ δ; the best single threshold event on L at its expected counts
    (Monte Carlo tail probabilities) with two-sided Clopper–Pearson bounds at level ``alpha``, for n
    trainings a side, against Opacus's RDP claim at σ."""
    from scipy import optimize, special, stats

    from mechanisms.training import accountant_claim

    rng = np.random.default_rng(1)
    sigma, steps, q = 2.0, 4, 0.5
    claimed = accountant_claim("rdp", q, sigma, steps, delta).epsilon_at(delta)
    lines = ["| physical steps k | claimed ε(1e-3) (RDP) | true ε(1e-3) (Monte Carlo) | best ε_lb at 500 | best ε_lb at 1,000 | "
             "best ε_lb at 4,000 |", "|---:|---:|---:|---:|---:|---:|"]
    for k in (1, 4, 16, 64):
        shift = np.sqrt(k) / sigma

        def loss(z):
            per = special.logsumexp(shift * z - shift**2 / 2, axis=2) - np.log(k)
            return np.logaddexp(np.log1p(-q), np.log(q) + per).sum(axis=1)

        z0 = rng.standard_normal((draws, steps, k))
        z1 = rng.standard_normal((draws, steps, k))
        inside = rng.random((draws, steps)) < q
        z1[np.arange(draws)[:, None], np.arange(steps)[None, :], rng.integers(0, k, (draws, steps))] += shift * inside
        l0, l1 = np.sort(loss(z0)), np.sort(loss(z1))

        def gap(eps):
            return max(np.mean(np.maximum(1 - np.exp(eps - l1), 0)), np.mean(np.maximum(1 - np.exp(eps + l0), 0))) - delta

        true = optimize.brentq(gap, 0.0, 50.0) if gap(0.0) > 0 else 0.0
        th = np.unique(np.quantile(l1, np.linspace(0.001, 0.999, 500)))
        bounds = []
        for n in (500, 1000, 4000):
            k0 = np.round((1 - np.searchsorted(l0, th, side="right") / draws) * n)
            k1 = np.round((1 - np.searchsorted(l1, th, side="right") / draws) * n)
            high = np.where(k0 < n, stats.beta.ppf(1 - alpha / 2, k0 + 1, np.maximum(n - k0, 1)), 1.0)
            low = np.where(k1 > 0, stats.beta.ppf(alpha / 2, np.maximum(k1, 1), n - k1 + 1), 0.0)
            with np.errstate(divide="ignore", invalid="ignore"):
                bounds.append(np.where(low > delta, np.log((low - delta) / high), 0.0).max())
        lines.append(f"| {k} | {claimed:.3f} | {true:.2f} | {bounds[0]:.2f} | {bounds[1]:.2f} | {bounds[2]:.2f} |")
    return lines


def trainer_lines(zoo) -> list[str]:
    """Lines of user code of each trainer of the zoo, counted honestly: the non-blank, non-comment
    lines of its body (signature excluded) plus those of every shared template of the zoo it calls
    (a user who writes one such trainer writes its template too), and the lines the audit needs on
    top (one ``audit_training`` call)."""
    import ast
    import inspect

    source = inspect.getsource(zoo)
    tree = ast.parse(source)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    lines = source.splitlines()

    def own(node) -> int:
        body = [line.strip() for line in lines[node.body[0].lineno - 1:node.end_lineno]]
        return sum(1 for line in body if line and not line.startswith("#"))

    def called(node) -> set:
        return {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                and n.func.id in functions and n.func.id != node.name}

    table = ["| trainer | its own lines | template | template's lines | lines of training code | lines for the audit |",
             "|---|---:|---|---:|---:|---:|"]
    for name in dict.fromkeys(row[0] for row in ROWS):
        node = functions[name]
        templates, frontier = set(), called(node)
        while frontier:
            templates |= frontier
            frontier = set().union(*(called(functions[t]) for t in frontier)) - templates
        templates = sorted(templates)
        shared = sum(own(functions[t]) for t in templates)
        table.append(f"| {name} | {own(node)} | {', '.join(templates) or '—'} | {shared} | {own(node) + shared} | 1 |")
    return table


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="benchmarks/results/training")
    parser.add_argument("--rows", default=None, help="comma-separated row indices (default: all)")
    parser.add_argument("--limit-only", action="store_true", help="only the sensitivity-doubling limit (no training)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.rows is None or args.limit_only:
        limit, subsampled, virtual = doubling_limit(), subsampled_limit(), virtual_steps_limit()
        (out / "zoo-limit.md").write_text(
            "# What 500 trainings a side can certify against a doubled sensitivity\n\n## Doubled sensitivity\n\n"
            "Command: `python -m benchmarks.training_zoo --limit-only`. " + " ".join(doubling_limit.__doc__.split())
            + "\n\n" + "\n".join(limit) + "\n\n## At the zoo's configuration\n\n"
            + " ".join(subsampled_limit.__doc__.split()) + "\n\n" + "\n".join(subsampled)
            + "\n\n## Virtual steps\n\n" + " ".join(virtual_steps_limit.__doc__.split()) + "\n\n" + "\n".join(virtual) + "\n")
        print("\n".join(limit + [""] + subsampled + [""] + virtual))
    if args.limit_only:
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "mechanisms"))
    import training_zoo as zoo

    from audit.training import audit_training

    rng = np.random.default_rng(0)
    x = rng.standard_normal((31, 3)).astype(np.float32)
    y = (x[:, 0] + 0.5 * rng.standard_normal(31) > 0).astype(np.int64)
    accounted = dict(noise_multiplier=zoo.SIGMA, steps=zoo.T, delta=1e-3, batch_size=zoo.B)
    chosen = ROWS if args.rows is None else [ROWS[int(i)] for i in args.rows.split(",")]
    lines = ["| trainer | claim holds | view | crafted rows | claim | verdict | trainings per side | lower bound | claimed | "
             "time (s) | load |", "|---|---|---|---|---|---|---:|---:|---:|---:|---:|"]
    for name, view, holds, *extra in chosen:
        options = dict(extra[0]) if extra else {}
        claim = {"mu": options.pop("mu")} if "mu" in options else dict(accounted, accountant=options.pop("accountant", "rdp"))
        load = os.getloadavg()[0]
        started = time.perf_counter()
        labels = y.astype(np.float32) if name.startswith(("opacus", "full_batch")) else y
        report = audit_training(getattr(zoo, name), x, labels, view=view, seed=2027, progress=False, **claim, **options)
        if "mu" in claim:
            bound, claimed = f"μ {report.mu_lower_bound:.3f}", f"μ {claim['mu']:g}"
            source = "yours, μ-GDP"
        else:
            bound, claimed = f"ε {report.epsilon_lower_bound:.3f}", f"ε {report.claim.epsilon_at(1e-3):.3f}"
            source = claim["accountant"].upper()
        shown = f"{view} k={options['physical_steps']}" if "physical_steps" in options else view
        row = (f"| {name} | {'yes' if holds else 'no'} | {shown} | {'yes' if options.get('crafted') else 'no'} | {source} | "
               f"{report.verdict.value} | {report.draws['per_side']:,} | {bound} | {claimed} | "
               f"{time.perf_counter() - started:.0f} | {load:.1f} |")
        print(row, flush=True)
        lines.append(row)
    name = "zoo.md" if args.rows is None else f"zoo-{args.rows.replace(',', '-')}.md"
    (out / name).write_text("# The common-form trainer zoo\n\n## Default audit\n\nCommand: `python -m benchmarks.training_zoo`. "
                            + " ".join(__doc__.split("\n\n")[1].split()) + "\n\n" + "\n".join(lines)
                            + "\n\n## Lines of user code\n\n" + " ".join(trainer_lines.__doc__.split()) + "\n\n"
                            + "\n".join(trainer_lines(zoo)) + "\n")


if __name__ == "__main__":
    main()
