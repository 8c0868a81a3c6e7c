"""Tightness of the issue-16 reference mechanisms: certified ε against exact ε and the limit.

For each mechanism (its bundled scenario file, audited at 95% confidence) the table prints the
certified lower bound ε_lb at the claim's reference δ, the exact ε there, and the single-threshold
statistical limit of :mod:`benchmarks.limits` at the same sample count and the same per-bound
Clopper–Pearson level as the engine's headline ε slot (:func:`benchmarks.tightness.levels_for`).
The limit uses the exact output law of the scenario's worst pair with the output itself as the
statistic (the engine's statistic for these 1-D outputs), so ε_lb/limit says how much of the
reachable bound the audit certified, and limit/exact how much any single threshold can reach.

Run: ``nice -n 10 python -m benchmarks.reference_mechanisms [--samples 10000000] [--jobs 2]``;
writes ``benchmarks/results/reference_mechanisms.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Callable, Optional

import numpy as np
from scipy import special, stats

from .limits import single_threshold_limit
from .tightness import levels_for
from audit.spec import load_spec

__all__ = ["CASES", "run_case", "main"]

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "scenarios" / "suite"
RESULTS = ROOT / "benchmarks" / "results"


def _lattice_survival(log_pmf: np.ndarray, support: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """t ↦ P(Y ≥ t) for a pmf on the integers ``support`` (log-probabilities)."""
    tail = np.cumsum(np.exp(log_pmf)[::-1])[::-1]

    def survival(t: np.ndarray) -> np.ndarray:
        index = np.searchsorted(support, np.ceil(np.asarray(t) - 1e-9))
        return np.where(index < support.size, tail[np.minimum(index, support.size - 1)], 0.0)

    return survival


def _worst_pair(mechanism, base_count: int):
    """(base survival, neighbour survival, thresholds) of the outputs for counts c and c + 1."""
    from mechanisms import (DiscreteGaussianMechanism, DiscreteLaplaceMechanism, ExponentialMechanism,
                            PoissonSubsampledGaussian, RandomizedResponse)

    if isinstance(mechanism, PoissonSubsampledGaussian):  # empty base: N(0, σ²) vs mixture
        sigma, q = mechanism.noise_multiplier, mechanism.sampling_probability
        base = lambda t: stats.norm.sf(t, 0, sigma)  # noqa: E731
        neighbour = lambda t: (1 - q) * stats.norm.sf(t, 0, sigma) + q * stats.norm.sf(t, 1, sigma)  # noqa: E731
        return base, neighbour, np.linspace(-12 * sigma, 12 * sigma + 1, 40001)
    if isinstance(mechanism, (RandomizedResponse, ExponentialMechanism)):
        support = np.arange(mechanism.log_pmf(0).size)
        if isinstance(mechanism, RandomizedResponse):
            pmfs = [mechanism.log_pmf(c % mechanism.k) for c in (base_count, base_count + 1)]
        else:
            pmfs = [mechanism.log_pmf(c) for c in (base_count, base_count + 1)]
    else:
        width = 60 if isinstance(mechanism, DiscreteLaplaceMechanism) else int(14 * mechanism.sigma) + 20
        x = np.arange(-width, width + 1, dtype=np.float64)
        if isinstance(mechanism, DiscreteGaussianMechanism):
            log_weight = -x * x / (2 * float(mechanism.sigma_squared))
        else:
            log_weight = -float(mechanism.rate) * np.abs(x)
        log_pmf = log_weight - special.logsumexp(log_weight)
        support = np.arange(-width, width + 2) + base_count
        pmfs = [np.append(log_pmf, -np.inf), np.insert(log_pmf, 0, -np.inf)]
    survivals = [_lattice_survival(p, support) for p in pmfs]
    return survivals[0], survivals[1], np.arange(support[0], support[-1] + 2) - 0.5


#: Scenario files audited (stem: file in scenarios/suite/).
CASES = ("discrete-gaussian", "discrete-laplace", "randomized-response", "exponential", "subsampled-gaussian")


def run_case(stem: str, samples: int, *, n_jobs: int = 2, seed: int = 2026) -> dict:
    """Audit one bundled file at ``samples`` (95% confidence) and compute its limit."""
    import scenarios
    from audit import run_audit

    spec = load_spec(SUITE / f"{stem}.toml")
    started = time.perf_counter()
    report = run_audit(spec.mechanism, spec.scenario, claim=spec.claim, samples=samples, confidence=0.95,
                       seed=seed, n_jobs=n_jobs, progress=False, accuracy=False)
    wall = time.perf_counter() - started
    base_count = int(spec.scenario.pairs[0].base.sum())
    base_sf, neighbour_sf, thresholds = _worst_pair(spec.mechanism, base_count)
    eps_level, mu_level = levels_for(spec.claim)
    limit = single_threshold_limit(base_sf, neighbour_sf, thresholds, samples=samples,
                                   delta=float(spec.claim.reference_delta), epsilon_level=eps_level,
                                   mu_level=mu_level)
    exact = report.exact_epsilon
    return {"case": stem, "mechanism": report.mechanism, "claim": str(spec.claim), "samples": samples,
            "delta": float(spec.claim.reference_delta), "epsilon_lb": report.epsilon_lower_bound,
            "epsilon_exact": exact, "epsilon_limit": limit.epsilon,
            "lb_over_limit": report.epsilon_lower_bound / limit.epsilon if limit.epsilon > 0 else None,
            "limit_over_exact": limit.epsilon / exact if exact else None,
            "verdict": str(report.verdict), "wall_time_s": wall}


def _table(rows: list[dict]) -> str:
    header = ("| case | claim | δ | ε_lb | exact ε | limit ε | ε_lb/limit | limit/exact | verdict | time |\n"
              "|---|---|---|---|---|---|---|---|---|---|")
    lines = [header]
    for r in rows:
        claim = r["claim"] if len(r["claim"]) <= 40 else r["claim"][:38] + "…"
        lines.append(f"| {r['case']} | {claim} | {r['delta']:g} | {r['epsilon_lb']:.4f} | "
                     f"{r['epsilon_exact']:.4f} | {r['epsilon_limit']:.4f} | {r['lb_over_limit']:.3f} | "
                     f"{r['limit_over_exact']:.3f} | {r['verdict']} | {r['wall_time_s']:.0f}s |")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows = []
    for stem in args.cases.split(","):
        rows.append(run_case(stem, args.samples, n_jobs=args.jobs))
        print(json.dumps(rows[-1]), flush=True)
    table = _table(rows)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "reference_mechanisms.json").write_text(json.dumps(rows, indent=2) + "\n")
    (args.out / "reference_mechanisms.md").write_text(
        f"# Reference mechanisms of issue 16 at {args.samples:,} samples per side (95%)\n\n"
        f"`python -m benchmarks.reference_mechanisms --samples {args.samples}`\n\n{table}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
