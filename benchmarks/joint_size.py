"""``python -m benchmarks.joint_size``: the exact size of the joint headline test at level 5%.

The joint test (:mod:`audit.joint_bounds`) of an event's two counts C_A ~ Bin(n, A), C_B ~ Bin(n, B)
rejects "the quantity is at most v" with probability at most its level whenever the true (A, B)
satisfies the null.  Its *size* — the largest rejection probability over the null — is computed
here exactly, with no simulation: for a point (A, B) on the null's boundary A = 1 − f_v(B) (the
worst case, since rejecting gets likelier as A grows),

    P(reject) = Σ_{c_B} P(C_B = c_B) · P(C_A ≥ k*(c_B)),

where k*(c_B) is the smallest c_A the test rejects with (found by bisection: for a fixed c_B the
test's p-value falls as c_A grows; :func:`rejection_thresholds` checks this on every count of the
small configurations).  The maximum over a grid of B on the boundary is the size.  Configurations:
ε at δ = 0, δ at ε = 1 and μ, at several n and values v.

Writes ``benchmarks/results/joint_size.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from joblib import Parallel, delayed
from scipy import special, stats

from audit.joint_bounds import JointTest
from audit.slots import Slot
from mechanisms.claims import approx_tradeoff
from mechanisms.gdp import gdp_tradeoff

RESULTS = Path(__file__).resolve().parent / "results"
LEVEL = 0.05
#: (slot, n, v): the null "the slot's quantity is at most v" with n draws per side.
CONFIGURATIONS = (("epsilon@0.0", 60, 0.5), ("epsilon@0.0", 135, 1.0), ("epsilon@0.0", 400, 1.0),
                  ("delta@1.0", 300, 0.05), ("delta@1.0", 1000, 0.05), ("mu", 200, 1.0), ("mu", 500, 0.5))
CURVES = {"epsilon": lambda at, v, a: approx_tradeoff(a, v, at), "delta": lambda at, v, a: approx_tradeoff(a, at, v),
          "mu": lambda at, v, a: gdp_tradeoff(a, v)}


def _curve(slot: str, value: float, b):
    name, _, at = slot.partition("@")
    return CURVES[name](float(at) if at else 0.0, value, b)


def rejection_thresholds(slot: str, n: int, value: float, level: float = LEVEL, check: bool = False) -> np.ndarray:
    """k*(c_B) for c_B = 0..n: the smallest c_A at which the test rejects (n + 1 if none), by
    bisection; with ``check``, every count is also evaluated to confirm that the rejections for each
    c_B are exactly the counts from k*(c_B) up."""
    parsed = Slot.parse(slot)
    thresholds = np.empty(n + 1, dtype=np.int64)
    for count_b in range(n + 1):
        low, high = 0, n + 1
        while low < high:
            middle = (low + high) // 2
            if JointTest(parsed, middle, count_b, n, level).rejects(value):
                high = middle
            else:
                low = middle + 1
        thresholds[count_b] = low
        if check:
            rejects = [JointTest(parsed, a, count_b, n, level).rejects(value) for a in range(n + 1)]
            assert rejects == [a >= low for a in range(n + 1)], (slot, n, value, count_b)
    return thresholds


def rejection_probability(slot: str, n: int, value: float, thresholds: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(reject) at the boundary points (1 − f_v(b), b), exactly."""
    probabilities = []
    for point in np.atleast_1d(b):
        a = float(np.clip(1.0 - _curve(slot, value, point), 0.0, 1.0))
        tail = np.where(thresholds <= 0, 1.0, np.where(thresholds > n, 0.0,
                                                         special.bdtrc(np.maximum(thresholds - 1, 0), n, a)))
        probabilities.append(float(stats.binom.pmf(np.arange(n + 1), n, point) @ tail))
    return np.array(probabilities)


def size(slot: str, n: int, value: float, grid: int = 999) -> dict:
    """The largest rejection probability over ``grid`` boundary points with B in (0, 1)."""
    thresholds = rejection_thresholds(slot, n, value)
    b = np.linspace(0.0, 1.0, grid + 2)[1:-1]
    probabilities = rejection_probability(slot, n, value, thresholds, b)
    worst = int(np.argmax(probabilities))
    return {"slot": slot, "n": n, "value": value, "size": float(probabilities[worst]), "at_b": float(b[worst]),
            "at_a": float(np.clip(1.0 - _curve(slot, value, b[worst]), 0.0, 1.0)), "grid": grid}


def markdown(rows: list[dict], seconds: float) -> str:
    lines = [f"Exact rejection probability of the joint test at level {LEVEL:g} on the null's boundary "
             "A = 1 − f_v(B), maximised over 999 values of B (binomial sums, no simulation).", "",
             "| null | n per side | largest rejection probability | at (A, B) |", "|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {Slot.parse(row['slot']).label} ≤ {row['value']:g} | {row['n']:,} | {row['size']:.4f} | "
                     f"({row['at_a']:.3f}, {row['at_b']:.3f}) |")
    largest = max(rows, key=lambda row: row["size"])
    lines += ["", f"Largest over the configurations: {largest['size']:.4f} (level {LEVEL:g}); {seconds:.0f} s."]
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.joint_size", description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    rows = Parallel(n_jobs=args.jobs)(delayed(size)(*configuration) for configuration in CONFIGURATIONS)
    text = markdown(rows, time.perf_counter() - started)
    command = "python -m benchmarks.joint_size " + " ".join(sys.argv[1:] if argv is None else argv)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "joint_size.json").write_text(json.dumps({"command": command.strip(), "level": LEVEL, "rows": rows},
                                                          indent=2) + "\n")
    (args.out / "joint_size.md").write_text(f"Command: `{command.strip()}`\n\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
