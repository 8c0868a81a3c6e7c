"""Throughput table: the engine against numpy's own sampling speed, measured in one process.

The machine may be shared, so absolute rates are noisy; every figure that matters is a ratio of
two timings taken back to back in the same process, repeated (``reps``) with the two
measurements interleaved, and summarised by the median ratio.

* **Raw numpy.**  The same noise drawn straight from numpy (:mod:`benchmarks.cases`), in the
  engine's chunk sizes, each chunk from a fresh generator of the engine's bit generator seeded
  through ``SeedSequence`` exactly as :func:`audit.sampling.chunk_rng` does.
* **Audit.**  ``run_audit(..., accuracy=False, progress=False)`` end to end (validation, pilot,
  selection, certification and the report).  Its rate counts ``samples × 2 sides`` mechanism
  outputs: ``samples`` is the total per side over all phases (:mod:`audit.allocation`).
* **Bit generators.**  Standard normals per second of PCG64, SFC64, Philox (and PCG64DXSM,
  MT19937 for reference), same protocol.
* **Speed-up.**  Wall time of the Gaussian audit with ``n_jobs=1`` over ``n_jobs=2`` (loky,
  workers started before timing), next to the speed-up of raw numpy sampling split over two loky
  workers at the same moment: the parallelism the machine actually offers while we measure.
  The two reports must be identical except for ``runtime``.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from typing import Any

import numpy as np

from .cases import get_case

__all__ = ["GENERATORS", "bit_generator_table", "audit_throughput", "speedup"]

#: Bit generators compared (the first three are the candidates; the others for reference).
GENERATORS = ("PCG64", "SFC64", "Philox", "PCG64DXSM", "MT19937")


def _draw_plan(samples: int, output_dim: int) -> list[int]:
    """Chunk sizes (in samples) of every draw the engine makes at ``samples``: ``samples`` per side
    in total over all phases (:mod:`audit.allocation`), when no look stops the audit early."""
    from audit.sampling import chunk_plan, chunk_size_for

    return chunk_plan(samples, chunk_size_for(output_dim)) * 2  # both sides


def _raw(noise, mechanism, plan: list[int], bit_generator) -> float:
    """Seconds to draw the plan's noise straight from numpy, one fresh generator per chunk."""
    started = time.perf_counter()
    for index, size in enumerate(plan):
        sequence = np.random.SeedSequence(entropy=12345, spawn_key=(0, index % 2, 3, index))
        noise(mechanism, np.random.Generator(bit_generator(sequence)), size)
    return time.perf_counter() - started


def bit_generator_table(total: int, *, chunk: int = 1 << 20, reps: int = 5) -> list[dict]:
    """Millions of standard normals per second for each bit generator (best and median of reps)."""
    plan = [chunk] * max(1, total // chunk)
    times: dict[str, list[float]] = {name: [] for name in GENERATORS}
    for _ in range(reps):
        for name in GENERATORS:
            times[name].append(_raw(lambda m, rng, size: rng.standard_normal(size), None, plan,
                                    getattr(np.random, name)))
    drawn = sum(plan)
    reference = min(times["SFC64"])
    return [{"bit_generator": name, "best_M_per_s": drawn / min(t) / 1e6,
             "median_M_per_s": drawn / statistics.median(t) / 1e6,
             "relative_to_SFC64": reference / min(t)} for name, t in times.items()]


@contextlib.contextmanager
def _timed_statistics(spent: list[float]):
    """Time the engine's event selection and certification (instrumentation only: the engine's
    own functions are wrapped for the duration and restored)."""
    import audit.stages as stages  # where the looks call them

    originals = {name: getattr(stages, name) for name in ("select_events", "certify")}

    def timed(function):
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent.append(time.perf_counter() - started)
        return wrapper

    try:
        for name, function in originals.items():
            setattr(stages, name, timed(function))
        yield spent
    finally:
        for name, function in originals.items():
            setattr(stages, name, function)


def audit_throughput(case_key: str, samples: int, *, reps: int = 3, seed: int = 7) -> dict:
    """Audit samples/s of ``case_key`` at ``samples`` and its ratio to raw numpy sampling.

    Also reports the seconds spent choosing and certifying events (Clopper–Pearson bounds over
    the histogram: a cost that grows with the number of bins, not with ``samples``) and the
    ratio to raw numpy of the rest of the audit ("hot path": drawing, checking and counting).
    """
    import audit
    from audit.sampling import BIT_GENERATOR

    case = get_case(case_key)
    mechanism = case.build()
    pair = case.pair()
    plan = _draw_plan(samples, mechanism.output_dim)
    drawn = sum(plan)
    raw_times, audit_times, statistics_times = [], [], []
    for _ in range(reps):
        raw_times.append(_raw(case.noise, mechanism, plan, BIT_GENERATOR))
        with _timed_statistics([]) as spent:
            started = time.perf_counter()
            audit.run_audit(mechanism, [pair], samples=samples, seed=seed, n_jobs=1, accuracy=False,
                            progress=False)
            audit_times.append(time.perf_counter() - started)
        statistics_times.append(sum(spent))
    ratios = [r / a for r, a in zip(raw_times, audit_times)]
    hot = [r / (a - s) for r, a, s in zip(raw_times, audit_times, statistics_times)]
    return {"case": case.key, "title": case.title, "samples": samples, "output_dim": mechanism.output_dim,
            "draws": drawn, "raw_samples_per_s": drawn / min(raw_times),
            "audit_samples_per_s": drawn / min(audit_times),
            "audit_wall_s": min(audit_times), "raw_wall_s": min(raw_times),
            "ratio_median": statistics.median(ratios), "ratio_best": max(ratios),
            "statistics_s": statistics.median(statistics_times), "ratio_sampling": statistics.median(hot),
            "reps": reps}


def _raw_part(case_key: str, plan: list[int]) -> float:
    from audit.sampling import BIT_GENERATOR

    case = get_case(case_key)
    return _raw(case.noise, case.build(), plan, BIT_GENERATOR)


def speedup(case_key: str, samples: int, *, reps: int = 3, seed: int = 7) -> dict:
    """Wall-time speed-up of n_jobs=2 over n_jobs=1, and of raw sampling on 2 loky workers."""
    from joblib import Parallel, delayed

    import audit

    case = get_case(case_key)
    mechanism = case.build()
    pair = case.pair()
    plan = _draw_plan(samples, mechanism.output_dim)
    halves = [plan[0::2], plan[1::2]]

    def run(n_jobs: int):
        started = time.perf_counter()
        report = audit.run_audit(mechanism, [pair], samples=samples, seed=seed, n_jobs=n_jobs,
                                 accuracy=False, progress=False)
        return time.perf_counter() - started, report

    with Parallel(n_jobs=2, backend="loky") as parallel:  # start the workers before timing
        parallel(delayed(_raw_part)(case_key, [256]) for _ in range(2))
        run(2)
        one, two, raw_one, raw_two = [], [], [], []
        identical = True
        for _ in range(reps):
            t1, r1 = run(1)
            t2, r2 = run(2)
            identical &= r1.to_dict(include_runtime=False) == r2.to_dict(include_runtime=False)
            one.append(t1)
            two.append(t2)
            started = time.perf_counter()
            _raw_part(case_key, plan)
            raw_one.append(time.perf_counter() - started)
            started = time.perf_counter()
            parallel(delayed(_raw_part)(case_key, half) for half in halves)
            raw_two.append(time.perf_counter() - started)
    speed = [a / b for a, b in zip(one, two)]
    raw_speed = [a / b for a, b in zip(raw_one, raw_two)]
    return {"case": case.key, "samples": samples, "wall_n_jobs_1_s": min(one), "wall_n_jobs_2_s": min(two),
            "speedup_median": statistics.median(speed), "speedup_best": max(speed),
            "raw_speedup_median": statistics.median(raw_speed), "raw_speedup_best": max(raw_speed),
            "identical_reports": bool(identical), "reps": reps}


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    import os
    import platform

    import scipy

    info: dict[str, Any] = {"python": platform.python_version(), "numpy": np.__version__,
                            "scipy": scipy.__version__, "platform": platform.platform(),
                            "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        info["load_average"] = [round(v, 2) for v in os.getloadavg()]
    except OSError:
        pass
    try:
        import psutil

        info["memory_gb"] = round(psutil.virtual_memory().total / 2**30, 1)
    except ImportError:
        pass
    return info
