"""How often single sweep rows of an unseeded library are refuted, over repeated runs.

OpenDP draws from a generator that cannot be seeded, so a test of one of its rows is a fresh
experiment on every run: a claim that holds is refuted with probability at most 1 − the row's
confidence, and a documented violation is refuted with a probability (the power) that only
repetition measures.  ``python benchmarks/sweep_rates.py [--runs N]`` audits each target row
below ``--runs`` times, each run on its own seed, exactly as ``tests/audit/test_sweep_libraries.py``
does (one row planned alone, so its confidence is the sweep's), and writes the VIOLATED counts with
their 95% Clopper–Pearson intervals to ``benchmarks/results/sweep/rates.md`` and ``.json``.

Targets:

- ``measurements.make_laplace``, both grid points, small budget, sweep confidence 0.95 and 0.999:
  tight claims (a Laplace release on a pair at distance d_in has ε exactly d_in/scale), so a
  VIOLATED rate near the bound 1 − confidence is expected at 0.95 and at most 0.001 at 0.999;
- ``measurements.threshold`` at ``T=int`` (opendp/opendp#2922), default budget, confidence 0.999:
  the power of the CI test.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from pathlib import Path

if __package__ in (None, ""):  # run as a script: the repository root first on the path
    sys.path[0] = str(Path(__file__).resolve().parents[1])

from audit.checkpoint import write_atomic
from audit.intervals import cp_lower, cp_upper
from audit.sweep.plan import plan_rows
from audit.sweep.rows import audit_row
from scenarios.libraries import library

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "sweep"
#: (entry, grid point text, budget, sweep confidence, what the claim is).
TARGETS = (
    ("measurements.make_laplace", "scale=1.0", "small", 0.95, "holds (tight)"),
    ("measurements.make_laplace", "scale=0.25", "small", 0.95, "holds (tight)"),
    ("measurements.make_laplace", "scale=1.0", "small", 0.999, "holds (tight)"),
    ("measurements.make_laplace", "scale=0.25", "small", 0.999, "holds (tight)"),
    ("measurements.threshold", "T=int", "default", 0.999, "violated (opendp/opendp#2922)"),
)


def run(runs: int, log=print) -> list[dict]:
    lib = library("opendp")
    rows = []
    for entry, point, budget, confidence, truth in TARGETS:
        case = next(c for e in lib.entries() if e.name == entry for c in e.cases() if c.point == point
                    or c.point.endswith(point))
        verdicts, started = [], time.perf_counter()
        for seed in range(runs):
            row, = plan_rows((case,), library="opendp", budget=budget, confidence=confidence, seed=seed)
            with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
                warnings.simplefilter("ignore")
                record = audit_row(row, library="opendp", version=lib.version(), out=Path(out), checkpoints=False)
            verdicts.append(record["verdict"])
        k = verdicts.count("VIOLATED")
        rows.append({"entry": entry, "point": case.point, "claim": str(case.claim), "truth": truth, "budget": budget,
                     "samples": row.samples, "confidence": confidence, "runs": runs, "violated": k,
                     "interval": [float(cp_lower(k, runs, 0.025)), float(cp_upper(k, runs, 0.025))],
                     "seconds": time.perf_counter() - started})
        log(f"{entry} [{case.point}] at {confidence}: {k} of {runs} VIOLATED")
    return rows


def render(rows: list[dict]) -> str:
    lines = ["| entry | grid point | claim | truth | budget (draws) | sweep confidence | VIOLATED | 95% CP interval "
             "of the rate | seconds |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lo, hi = r["interval"]
        lines.append(f"| {r['entry']} | {r['point']} | {r['claim']} | {r['truth']} | {r['budget']} ({r['samples']:,}) "
                     f"| {r['confidence']} | {r['violated']} of {r['runs']} | [{lo:.3f}, {hi:.3f}] | {r['seconds']:.0f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rows = run(args.runs)
    args.out.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out / "rates.json", json.dumps({"rows": rows}, indent=1).encode())
    write_atomic(args.out / "rates.md", render(rows).encode())
    print(render(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
