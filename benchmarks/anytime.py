"""``python -m benchmarks.anytime``: how many draws an anytime audit needs to decide.

Three studies of :mod:`audit.anytime` (``run_audit(..., anytime=True)`` / ``samples=None``), each
audit seeded by :func:`benchmarks.validity.run_seed`:

1. **A clear violation.**  The Laplace mechanism calibrated to sensitivity 1 on a count whose true
   sensitivity is 2 (true ε 2, claim 1), on the worst pair alone (``benchmarks/efficiency.py``, study
   5, and ``benchmarks/statdp_design.py`` set it up the same way): the detection rate with its
   Clopper–Pearson interval, and the distribution of the total draws (both datasets, every phase,
   the probe included) at the decision, next to the fixed design's detection at 360 total draws
   (``benchmarks/results/efficiency.json``).
2. **A claim that holds.**  The same Laplace calibrated right (ε = 1, claim 1): how often an audit
   with the default futility rule is (wrongly) refuted, and how many draws it spends before the rule
   ends it.  (``benchmarks/validity.py --anytime`` measures the false-alarm rate with the rule
   switched off, monitoring every round up to the budget.)
3. **The literature suite's false claims** (``scenarios/suite/literature/*.toml`` with
   ``expected = "violated"``): each file's audit as written (its budget, confidence and statistic)
   in anytime mode, ``--literature-runs`` times: detections, how each run stopped, and the total
   draws at the decision, next to the fixed design's draws for the same file.

Writes ``benchmarks/results/anytime.md`` and ``anytime.json`` (``--out``); the machine is shared, so
wall times are printed with the load average and never compared across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from joblib import Parallel, delayed

import scenarios
from audit import Verdict, cp_interval, load_spec, run_audit
from audit.report import jsonable
from benchmarks.validity import run_seed
from mechanisms import LaplaceMechanism, PureDP

RESULTS = Path(__file__).resolve().parent / "results"
SEED = 20261126
QUANTILES = (10, 25, 50, 75, 90)


def _laplace_once(sensitivity: float, seed: int) -> dict:
    """One anytime audit of the Laplace count (scale 1, or ½ for the wrong sensitivity) claiming
    1-DP on the worst pair, with the default budget."""
    report = run_audit(LaplaceMechanism(epsilon=1.0, sensitivity=sensitivity), [scenarios.counting(1).pairs[0]],
                       claim=PureDP(1.0), samples=None, seed=seed, progress=False, accuracy=False)
    return _outcome(report)


def _file_once(path: str, seed: int) -> dict:
    spec = load_spec(path)
    report = run_audit(spec.mechanism, spec.scenario, claim=spec.claim,
                       settings=spec.settings.replace(anytime=True, seed=seed, progress=False, accuracy=False))
    return _outcome(report)


def _outcome(report) -> dict:
    looks = report.draws["looks"]
    return {"violated": report.verdict is Verdict.VIOLATED, "total_draws": 2 * int(report.draws["per_side"]),
            "stopped": looks["anytime"]["stopped"], "rounds": looks["look"],
            "epsilon_lb": float(report.epsilon_lower_bound), "mu_lb": float(report.mu_lower_bound),
            "wall_time_s": float(report.runtime["wall_time_s"])}


def _summary(outcomes: list[dict]) -> dict:
    draws = np.array([o["total_draws"] for o in outcomes])
    decided = np.array([o["total_draws"] for o in outcomes if o["violated"]])
    violated = sum(o["violated"] for o in outcomes)
    interval = cp_interval(violated, len(outcomes), 0.95)
    return {"runs": len(outcomes), "violated": violated, "rate": violated / len(outcomes),
            "interval": [interval.low, interval.high],
            "draws": {str(q): float(np.percentile(draws, q)) for q in QUANTILES},
            "draws_when_refuted": {str(q): float(np.percentile(decided, q)) for q in QUANTILES} if decided.size else None,
            "stopped": {reason: sum(o["stopped"] == reason for o in outcomes) for reason in ("violation", "futility", "budget")},
            "max_epsilon_lb": max(o["epsilon_lb"] for o in outcomes),
            "wall_time_s": float(sum(o["wall_time_s"] for o in outcomes))}


def _fixed_reference() -> Optional[dict]:
    """The fixed design on the same Laplace at 360 total draws (efficiency study 5), if saved."""
    path = RESULTS / "efficiency.json"
    if not path.exists():
        return None
    choosing = json.loads(path.read_text()).get("choosing") or []
    default = next((row for row in choosing if row.get("share")), None)
    if default is None:
        return None
    return {"total_draws": 360, "violated": default["violation"]["violated"], "runs": default["runs"],
            "interval": default["violation"]["interval"]}


def literature_false_claims() -> list[Path]:
    return [path for path in scenarios.bundled_suite("literature") if load_spec(path).expected == "violated"]


def run(runs: int, correct_runs: int, literature_runs: int, n_jobs: int) -> dict:
    parallel = Parallel(n_jobs=n_jobs)
    started = time.perf_counter()
    broken = parallel(delayed(_laplace_once)(0.5, run_seed(SEED, "laplace-broken", 0, r)) for r in range(runs))
    correct = parallel(delayed(_laplace_once)(1.0, run_seed(SEED, "laplace-correct", 0, r)) for r in range(correct_runs))
    literature = []
    for path in literature_false_claims():
        spec = load_spec(path)
        outcomes = parallel(delayed(_file_once)(str(path), run_seed(SEED, spec.name, 0, r)) for r in range(literature_runs))
        pairs = len(spec.scenario.pairs)
        literature.append({"file": path.name, "name": spec.name, "mechanism": spec.mechanism.name,
                           "claim": spec.claim.label if spec.claim is not None else spec.mechanism.claim.label,
                           "fixed_total_draws": 2 * pairs * spec.samples, **_summary(outcomes)})
    return {"laplace_broken": _summary(broken), "laplace_correct": _summary(correct), "literature": literature,
            "fixed_reference": _fixed_reference(), "runs": runs, "correct_runs": correct_runs,
            "literature_runs": literature_runs,
            "wall_time_s": time.perf_counter() - started,
            "machine": {"cpu_count": os.cpu_count(), "load_average": list(os.getloadavg()), "n_jobs": n_jobs,
                        "python": platform.python_version(), "numpy": np.__version__}}


def _draws(summary: dict, key: str = "draws") -> str:
    values = summary[key]
    if values is None:
        return "–"
    return " / ".join(f"{values[str(q)]:,.0f}" for q in QUANTILES)


def _rate(summary: dict) -> str:
    low, high = summary["interval"]
    return f"{summary['violated']}/{summary['runs']} = {summary['rate']:.3f} [{low:.3f}, {high:.3f}]"


def markdown(data: dict) -> str:
    broken, correct, fixed = data["laplace_broken"], data["laplace_correct"], data["fixed_reference"]
    quantiles = "/".join(f"{q}%" for q in QUANTILES)
    lines = [f"### A clear violation: the Laplace mechanism with the wrong sensitivity ({data['runs']} runs)", "",
             "True ε 2, claim 1, the worst pair, `samples=None` (at most 2,000,000 draws per side); total draws "
             "count both datasets and every phase (probe, pilot, rounds).", "",
             f"| audit | refuted [95% CP] | total draws at the decision ({quantiles}) |", "|---|---|---|",
             f"| anytime | {_rate(broken)} | {_draws(broken)} |"]
    if fixed is not None:
        low, high = fixed["interval"]
        lines.append(f"| fixed design, 360 total draws (efficiency study 5) | {fixed['violated']}/{fixed['runs']} = "
                     f"{fixed['violated'] / fixed['runs']:.3f} [{low:.3f}, {high:.3f}] | 360 |")
    lines += ["", f"### A claim that holds: the same Laplace calibrated right ({data['correct_runs']} runs)", "",
              f"| audit | wrongly refuted [95% CP] | total draws when it stopped ({quantiles}) | stopped by |",
              "|---|---|---|---|",
              f"| anytime, futility rule on | {_rate(correct)} | {_draws(correct)} | "
              + ", ".join(f"{k} {v}" for k, v in correct["stopped"].items() if v) + " |",
              "", f"### The literature suite's false claims ({data['literature_runs']} runs each)", "",
              "Each file's audit as written (its budget, confidence and statistic), in anytime mode; the fixed "
              "design spends the file's whole budget.", "",
              f"| file | mechanism | claim | refuted [95% CP] | stopped by | total draws when refuted ({quantiles}) "
              "| fixed design's total draws |", "|---|---|---|---|---|---|---|"]
    for row in data["literature"]:
        stops = ", ".join(f"{k} {v}" for k, v in row["stopped"].items() if v)
        lines.append(f"| {row['file']} | {row['mechanism']} | {row['claim']} | {_rate(row)} | {stops} | "
                     f"{_draws(row, 'draws_when_refuted')} | {row['fixed_total_draws']:,} |")
    machine = data["machine"]
    lines += ["", f"Wall time {data['wall_time_s']:.0f} s with {machine['n_jobs']} jobs on {machine['cpu_count']} CPUs "
              f"shared with other work (load average {', '.join(f'{v:.1f}' for v in machine['load_average'])} at the end)."]
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.anytime", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="audits per Laplace case")
    parser.add_argument("--correct-runs", type=int, default=50, help="audits of the correct Laplace")
    parser.add_argument("--literature-runs", type=int, default=20, help="audits per literature file")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    data = run(args.runs, args.correct_runs, args.literature_runs, args.jobs)
    command = "python -m benchmarks.anytime " + " ".join(sys.argv[1:] if argv is None else argv)
    data["command"] = command.strip()
    text = f"Command: `{command.strip()}`\n\n{markdown(data)}\n"
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "anytime.json").write_text(json.dumps(jsonable(data), indent=2, allow_nan=False) + "\n")
    (args.out / "anytime.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
