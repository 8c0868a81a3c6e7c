"""Tightness table: certified bounds against the exact values and the statistical limit.

Every audit runs in a fresh Python subprocess (``python -m benchmarks.tightness --worker ...``)
so that its wall time and peak memory are its own: a thread samples the resident set size of the
worker process and of its children (the loky workers) every 10 ms with psutil, and the
peak of the audit process alone is recorded too.  The parent computes the single-threshold limit of
:mod:`benchmarks.limits` at the same per-bound Clopper–Pearson level as the engine certifies the
quantity with (:class:`audit.selection.Budget`): the headline level for the claim's own slots
(ε at the claim's δ for (ε, δ) and pure claims, μ for GDP claims), the curve level otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Optional

from .cases import get_case
from .limits import single_threshold_limit

__all__ = ["run_tightness_case", "limit_for", "levels_for"]

ROOT = Path(__file__).resolve().parent.parent


class _PeakRss:
    """Samples the RSS of this process (``main``) and of it plus its children (``peak``) until
    stopped, in bytes.  (``getrusage``'s ru_maxrss is no use here: Linux carries the parent's
    high-water mark over fork and exec.)"""

    def __init__(self, interval: float = 0.01):
        import psutil

        self._process = psutil.Process()
        self._interval = interval
        self._stop = threading.Event()
        self.peak = 0
        self.main = 0
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _sample(self) -> int:
        total = self._process.memory_info().rss
        self.main = max(self.main, total)
        for child in self._process.children(recursive=True):
            try:
                total += child.memory_info().rss
            except Exception:  # a child that just exited
                pass
        return total

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._sample())
            self._stop.wait(self._interval)

    def __enter__(self) -> "_PeakRss":
        self.peak = self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self._sample())


def _worker(spec: dict) -> dict:
    """Run one audit (in this fresh process) and measure it."""
    import numpy as np  # noqa: F401  (imports are part of the baseline, not of the audit)

    import audit

    case = get_case(spec["case"])
    mechanism = case.build()
    pair = case.pair()
    mb = 1024.0 * 1024.0
    with _PeakRss() as rss:
        baseline = rss.peak
        started = time.perf_counter()
        report = audit.run_audit(mechanism, [pair], samples=spec["samples"], seed=spec["seed"],
                                 n_jobs=spec["n_jobs"], accuracy=False, progress=False)
        wall = time.perf_counter() - started
    claim = report.claim
    exact_epsilon = float(mechanism.epsilon_for_delta(report.reference_delta))
    exact_mu = report.exact_mu
    return {
        "case": case.key, "title": case.title, "samples": spec["samples"], "seed": spec["seed"],
        "n_jobs": spec["n_jobs"], "claim": str(claim), "verdict": report.verdict.value
        if hasattr(report.verdict, "value") else str(report.verdict),
        "reference_delta": report.reference_delta,
        "epsilon_lb": report.epsilon_lower_bound, "exact_epsilon": exact_epsilon,
        "mu_lb": report.mu_lower_bound, "exact_mu": exact_mu,
        "wall_s": wall,
        "baseline_rss_mb": baseline / mb,
        "peak_rss_tree_mb": rss.peak / mb,
        "peak_rss_main_mb": rss.main / mb,
    }


def run_tightness_case(case: str, samples: int, *, seed: int = 2024, n_jobs: int = 2,
                       python: Optional[str] = None) -> dict:
    """Audit ``case`` at ``samples`` in a fresh subprocess and return its measurements."""
    spec = json.dumps({"case": case, "samples": int(samples), "seed": int(seed), "n_jobs": int(n_jobs)})
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run([python or sys.executable, "-m", "benchmarks.tightness", "--worker", spec],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"benchmark audit {case} at {samples} samples failed:\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def levels_for(claim: Any) -> tuple[float, float]:
    """Per-bound levels (ε at the claim's reference δ, μ) as the engine certifies them."""
    from audit.selection import Budget
    from audit.slots import MU, Quantity, headline_slots

    slots = headline_slots(claim)
    budget = Budget(gamma=0.05, headline_slots=slots, n_pairs=1)  # confidence 0.95, one pair
    eps_level = budget.headline_level if any(s.quantity is Quantity.EPSILON for s in slots) else budget.curve_level
    mu_level = budget.headline_level if MU in slots else budget.curve_level
    return eps_level, mu_level


def limit_for(case: str, samples: int) -> dict:
    """The single-threshold limit of ``case`` at ``samples`` per side (see benchmarks.limits)."""
    spec = get_case(case)
    mechanism = spec.build()
    base_sf, neighbour_sf, thresholds = spec.survival(mechanism)
    eps_level, mu_level = levels_for(mechanism.claim)
    limit = single_threshold_limit(base_sf, neighbour_sf, thresholds, samples=samples,
                                   delta=float(mechanism.claim.reference_delta),
                                   epsilon_level=eps_level, mu_level=mu_level)
    return limit.to_dict()


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", required=True, help="JSON spec: case, samples, seed, n_jobs")
    args = parser.parse_args(argv)
    print(json.dumps(_worker(json.loads(args.worker))))


if __name__ == "__main__":
    main()
