"""Wall time of the engine *before* issue 18 on its zoo of faults, for benchmarks/efficiency.py's
``BEFORE_SECONDS`` ("today's wall time" of issue 18).

This script runs against the old tree, not this one::

    git worktree add --detach /tmp/dpaudit-6be7da7 6be7da7
    cd /tmp/dpaudit-6be7da7 && PYTHONPATH=. python /path/to/benchmarks/before/time_engine_issue18.py

Each of the six faults the zoo had then is audited at that engine's default budget (10⁶ draws per
phase), the median of three runs after an untimed warm-up audit.  The mechanism's exact values
(ε(δ) curve, privacy profile, trade-off curve, μ) are memoised, as the current engine remembers
them for immutable mechanisms, so both engines are timed on the audit's own work.
"""

import time

import numpy as np
from audit import run_audit
from mechanisms import FAULTY_MECHANISMS  # the old tree's zoo

EXACT_METHODS = ("epsilon_for_delta", "privacy_profile", "tradeoff", "exact_mu")


def memoise_exact_values(mechanism):
    """Replace the mechanism's exact-value methods by memoised ones (on this instance only)."""
    for name in EXACT_METHODS:
        method = getattr(mechanism, name, None)
        if method is None:
            continue
        cache = {}

        def remembered(*args, _method=method, _cache=cache, **kwargs):
            key = (tuple(a.tobytes() if isinstance(a, np.ndarray) else a for a in args),
                   tuple(sorted(kwargs.items())))
            if key not in _cache:
                _cache[key] = _method(*args, **kwargs)
            value = _cache[key]
            return value.copy() if isinstance(value, np.ndarray) else value

        object.__setattr__(mechanism, name, remembered)
    return mechanism


def main() -> None:
    for name, factory in FAULTY_MECHANISMS.items():
        mechanism, scenario = factory()
        mechanism = memoise_exact_values(mechanism)
        run_audit(mechanism, scenario, samples=20_000, seed=7, progress=False, accuracy=False)
        times = []
        for _ in range(3):
            started = time.perf_counter()
            report = run_audit(mechanism, scenario, seed=7, progress=False, accuracy=False)
            times.append(time.perf_counter() - started)
        print(f"{name:32s} {report.verdict.value:10s} {np.median(times):.2f} s", flush=True)


if __name__ == "__main__":
    main()
