"""The δ of Opacus 0.x's summed-loss shuffled pair, where the added record adds a step to each epoch.

The grid point ``loss_reduction=sum`` of ``scenarios/libraries/opacus_legacy.py`` trains on shuffled
batches of B = 4 from n = 8 = kB records (k = 2) and adds one record of clipped gradient C in the
bias: D takes k steps an epoch, D′ takes k + 1 (its last batch holds one record).  With the summed
loss nothing is divided (0.10–0.13 and 0.15; 0.9 divides as for a mean, 0.14.0's GradSampleModule
drops the reduction without effect on this pair), so in units of σC each epoch's change of the
parameters (w, b) is

    D:  w, b ~ N(0, k)               D′:  w ~ N(0, k + 1),  b ~ N(1/σ, k + 1),

independently over E epochs (the release, the parameters after each epoch, is an invertible linear
map of these increments).  The privacy loss of the 2E coordinates is
L(z) = Σ log N(z; m_i, k + 1) − log N(z; 0, k), and the pair's δ at ε, in both orders, is its
hockey-stick divergence (docs/ground-truth.md §3; Balle, Barthe & Gaboardi 2018):
δ_{Q‖P}(ε) = ∫ (q − e^ε p)₊ = E_Q[(1 − e^{ε − L})₊] and δ_{P‖Q}(ε) = E_P[(1 − e^{ε + L})₊].

Monte Carlo (95%, lower and upper): with Z = (1 − e^{ε ∓ L})₊ ∈ [0, 1] and an independent uniform U
per draw, 1{U < Z} is Bernoulli(δ), so one-sided Clopper–Pearson bounds on its count are exact 95%
bounds on δ.  ``tests/audit/test_opacus_added_step.py`` checks the draws against a quadrature of one
coordinate (a second route).

The claims are the ones the range sweep recorded (``benchmarks/results/range-opacus/*/sweep.json``):
0.x's ``get_privacy_spent(1e-5)`` for D′'s steps at q = B/(n + 1); 0.9.0 and 0.9.1 are left out,
as their summed loss is divided as a mean (another pair).

Run::

    python -m benchmarks.opacus_added_step

Results: ``benchmarks/results/opacus_added_step.md`` and ``.json``.

References
----------
Balle, Barthe & Gaboardi (2018), "Privacy amplification by subsampling: tight analyses via
couplings and divergences", NeurIPS.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

from audit.intervals import cp_lower, cp_upper

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
CONFIDENCE = 0.95
#: The grid point: steps an epoch on D, epochs, noise multiplier (C = 1).
STEPS, EPOCHS, SIGMA = 2, 2, 2.0


def privacy_loss(z: np.ndarray, steps: int, sigma: float) -> np.ndarray:
    """L(z) for rows z = (w_1, b_1, …, w_E, b_E) in units of σC (module docstring)."""
    shift = np.zeros(z.shape[1])
    shift[1::2] = 1.0 / sigma
    wide, narrow = steps + 1.0, float(steps)
    per = -0.5 * math.log(wide / narrow) - (z - shift) ** 2 / (2 * wide) + z ** 2 / (2 * narrow)
    return per.sum(axis=1)


def sample(present: bool, draws: int, steps: int, epochs: int, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """``draws`` releases' increments under D′ (``present``) or D, in units of σC."""
    z = rng.standard_normal((draws, 2 * epochs))
    if present:
        z *= math.sqrt(steps + 1.0)
        z[:, 1::2] += 1.0 / sigma
    else:
        z *= math.sqrt(steps)
    return z


def delta_bounds(epsilon: float, order: str, draws: int, seed: int, *, steps: int = STEPS, epochs: int = EPOCHS,
                 sigma: float = SIGMA, block: int = 1_000_000) -> dict:
    """δ of ``order`` ("Q||P": D′ against D; "P||Q") at ``epsilon``: the Monte Carlo mean and its
    one-sided 95% Clopper–Pearson bounds."""
    if order not in ("Q||P", "P||Q"):
        raise ValueError(f"`order` must be 'Q||P' or 'P||Q', got {order!r}")
    rng, uniforms = np.random.default_rng(seed), np.random.default_rng([seed, 1])
    hits, total, done = 0, 0.0, 0
    while done < draws:
        n = min(block, draws - done)
        loss = privacy_loss(sample(order == "Q||P", n, steps, epochs, sigma, rng), steps, sigma)
        z = np.maximum(0.0, -np.expm1(epsilon - (loss if order == "Q||P" else -loss)))
        hits += int((uniforms.random(n) < z).sum())
        total += float(z.sum())
        done += n
    return {"order": order, "epsilon": epsilon, "draws": draws, "hits": hits, "mean": total / draws,
            "low": float(cp_lower(hits, draws, 1 - CONFIDENCE)), "high": float(cp_upper(hits, draws, 1 - CONFIDENCE))}


def claims() -> dict[str, float]:
    """Release → the summed-loss shuffled row's claimed ε, as the range sweep recorded it."""
    found = {}
    for path in sorted((RESULTS / "range-opacus").glob("*/sweep.json")):
        if path.parent.name.startswith("0.9."):  # a summed loss divided as a mean: not this pair
            continue
        for row in json.loads(path.read_text())["rows"]:
            params = row.get("params") or {}  # a row "not in this release" has none
            if params.get("loss_reduction") == "sum" and params.get("batch_size"):
                # the engine's statement as computed, not the claim's label (rounded to 6 digits)
                found[path.parent.name] = float(params["opacus_epsilon"])
    return found


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=4_000_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    by_epsilon: dict[float, list[str]] = {}
    for release, epsilon in claims().items():
        by_epsilon.setdefault(epsilon, []).append(release)
    rows = []
    for epsilon, releases in sorted(by_epsilon.items()):
        for order in ("Q||P", "P||Q"):
            rows.append({"releases": releases, **delta_bounds(epsilon, order, args.draws, args.seed)})
    lines = ["# Opacus 0.x, summed loss on shuffled batches: the pair's δ at the claimed ε", "",
             f"Measured with `python -m benchmarks.opacus_added_step` ({args.draws:,} draws an order, seed "
             f"{args.seed}, {time.perf_counter() - started:.0f} s). The pair: n = {STEPS * 4} records in batches of 4 "
             f"and one added record of clipped gradient C = 1 in the bias, σ = {SIGMA:g}, {EPOCHS} epochs, the "
             "summed loss; D takes 2 steps an epoch and D′ 3. δ bounds are one-sided 95% Clopper–Pearson on the "
             "Monte Carlo of the exact privacy loss (module docstring).", "",
             "| releases | claimed ε (δ = 1e-5) | order | δ (Monte Carlo) | δ low – high (95%) | exceeds 1e-5 |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {', '.join(r['releases'])} | {r['epsilon']:.6g} | {r['order'].replace('||', '‖')} | {r['mean']:.3g} | "
                     f"{r['low']:.3g} – {r['high']:.3g} | {'yes' if r['low'] > 1e-5 else 'no' if r['high'] <= 1e-5 else 'unknown'} |")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "opacus_added_step.md").write_text("\n".join(lines) + "\n")
    (args.out / "opacus_added_step.json").write_text(json.dumps(rows, indent=1) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
