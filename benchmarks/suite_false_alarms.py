"""``python -m benchmarks.suite_false_alarms``: how often a correct suite exits 1.

Reruns the files of the bundled default suite whose claim holds (``expected = "holds"``) with
``--seeds`` independent seeds, each file at the per-audit confidence that ``dpaudit run``'s
Bonferroni control gives the whole suite (1 − 0.05/m, m = every file of the suite), and counts the
seeds in which *any* of them is reported VIOLATED: the suite-wide false-alarm rate, printed with
its two-sided 95% Clopper–Pearson interval, to be compared with 0.05.  The false-alarm guarantee
does not depend on the sample count, so the study runs at ``--samples`` (default 10⁵) to be quick.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from joblib import Parallel, delayed

import scenarios
from audit.spec import load_spec
from audit import Verdict, cp_interval, run_audit
from audit.cli import error_control


def _violated(path, samples: int, confidence: float, seed: int) -> bool:
    spec = load_spec(path)
    report = run_audit(spec.mechanism, spec.scenario, claim=spec.claim, samples=samples,
                       confidence=confidence, seed=seed, progress=False, accuracy=False,
                       statistic=spec.statistic)
    return report.verdict is Verdict.VIOLATED


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--samples", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    paths = scenarios.bundled_suite("default")
    specs = [load_spec(p) for p in paths]
    control = error_control(specs, None, "bonferroni")
    correct = [p for p, s in zip(paths, specs) if s.expected == "holds"]
    started = time.perf_counter()
    jobs = [(p, seed) for seed in range(args.seeds) for p in correct]
    flags = Parallel(n_jobs=args.jobs)(delayed(_violated)(p, args.samples, control["per_audit_confidence"],
                                                           10_000 + seed) for p, seed in jobs)
    flags = np.array(flags).reshape(args.seeds, len(correct))
    alarms = int(flags.any(axis=1).sum())
    interval = cp_interval(alarms, args.seeds, 0.95)
    print(f"{len(correct)} correct files of {len(specs)}, each at confidence "
          f"{control['per_audit_confidence']:.6g} (Bonferroni over the suite), {args.samples:,} samples, "
          f"{args.seeds} seeds: suite-wide false alarms {alarms}/{args.seeds} = {alarms / args.seeds:.3f} "
          f"[{interval.low:.3f}, {interval.high:.3f}] (allowed 0.05); per file: "
          + ", ".join(f"{p.stem} {int(c)}" for p, c in zip(correct, flags.sum(axis=0)) if c)
          + f"; {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
