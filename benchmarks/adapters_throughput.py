"""Throughput of the third-party adapters: samples per second, per adapter and batch path.

Each adapter of :mod:`mechanisms.adapters.diffprivlib` and :mod:`mechanisms.adapters.opendp` is
called repeatedly on a counting dataset (sum 5) with ``size`` samples per call (the audit engine's
chunk size for 1-D outputs, 2²⁰, unless ``--size``) until at least ``--min-time`` seconds have
passed, after one warm-up call.  Two rates are reported:

- *wall*: samples / elapsed wall-clock time (what an audit sees on this machine, now);
- *cpu*: samples / CPU time of this process, which stays meaningful on a loaded machine.

diffprivlib is measured through both paths (``vectorized``: its ``randomise`` run once on arrays;
``loop``: one public ``randomise`` call per sample), OpenDP through the adapters' vector
measurement and, for comparison, its scalar measurement called once per sample through
:func:`mechanisms.adapters.vectorize`; the slow paths use a smaller ``size`` so that a run stays
short.  Our own reference mechanisms are measured as a
baseline.

Usage (from the repository root; needs ``pip install "dpaudit[thirdparty]"``)::

    python benchmarks/adapters_throughput.py                  # table + results/adapters_throughput.json
    python benchmarks/adapters_throughput.py --quick --json -  # short run, JSON to stdout
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import sys
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mechanisms import GaussianMechanism, LaplaceMechanism, TruncatedLaplaceMechanism  # noqa: E402
from mechanisms.adapters import vectorize  # noqa: E402
from mechanisms.adapters import diffprivlib as dpl  # noqa: E402
from mechanisms.adapters import opendp as odp  # noqa: E402

__all__ = ["Throughput", "measure", "cases", "run_benchmark", "to_markdown"]

#: Samples per call for vectorized paths: the engine's chunk for 1-D outputs (audit.sampling).
VECTOR_SIZE = 1 << 20
#: Samples per call for per-sample paths (diffprivlib loop, OpenDP's exact samplers).
SLOW_SIZE = 1 << 14
#: A counting dataset of 5 ones: the adapters release f = 5 plus noise.
DATASET = np.ones((5, 1))


@dataclass(frozen=True)
class Throughput:
    """Measured rate of one adapter and path."""

    adapter: str
    path: str
    deterministic: bool
    size: int
    calls: int
    samples: int
    wall_seconds: float
    cpu_seconds: float

    @property
    def wall_rate(self) -> float:
        """Samples per wall-clock second."""
        return self.samples / self.wall_seconds

    @property
    def cpu_rate(self) -> float:
        """Samples per CPU second of this process."""
        return self.samples / self.cpu_seconds if self.cpu_seconds > 0 else float("inf")

    def to_dict(self) -> dict:
        return {**dataclasses.asdict(self), "wall_rate": self.wall_rate, "cpu_rate": self.cpu_rate}


def measure(mechanism: Callable, *, size: int, min_time: float, path: str,
            seed: int = 0) -> Throughput:
    """Call ``mechanism(DATASET, size, rng)`` until ``min_time`` seconds have passed."""
    rng = np.random.default_rng(seed)
    mechanism(DATASET, min(size, 1024), rng)  # warm-up (imports, caches, library set-up)
    calls = 0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    while True:
        out = mechanism(DATASET, size, rng)
        calls += 1
        wall = time.perf_counter() - wall0
        if wall >= min_time:
            break
    cpu = time.process_time() - cpu0
    assert out.shape == (size, 1) and out.dtype == np.float64
    return Throughput(getattr(mechanism, "name", repr(mechanism)), path,
                      bool(getattr(mechanism, "deterministic", True)), size, calls, calls * size,
                      wall, cpu)


def cases(quick: bool = False) -> list[tuple[Any, str, int]]:
    """(mechanism, path label, samples per call) for every measured configuration."""
    vector = VECTOR_SIZE >> 2 if quick else VECTOR_SIZE
    slow = SLOW_SIZE >> 2 if quick else SLOW_SIZE
    library = [
        dpl.GaussianAnalytic(1.0, 1e-5),
        dpl.Gaussian(1.0, 1e-5),
        dpl.Laplace(1.0),
        dpl.LaplaceBoundedNoise(1.0, 1e-5),
        dpl.LaplaceTruncated(1.0, lower=0.0, upper=10.0),
    ]
    result: list[tuple[Any, str, int]] = []
    for mechanism in library:
        result.append((mechanism, "vectorized", vector))
        result.append((dataclasses.replace(mechanism, batch="loop"), "loop", slow))
    for adapter, scalar in ((odp.make_gaussian(2.0), _opendp_scalar("make_gaussian", 2.0)),
                            (odp.make_laplace(1.0), _opendp_scalar("make_laplace", 1.0))):
        result.append((adapter, "vector measurement", slow))
        result.append((scalar, "scalar, vectorize()", slow >> 2))
    baseline = [GaussianMechanism(sigma=2.0), LaplaceMechanism(1.0),
                TruncatedLaplaceMechanism(1.0, 1e-5)]
    result += [(mechanism, "dpaudit reference", vector) for mechanism in baseline]
    return result


def _opendp_scalar(maker: str, scale: float) -> Any:
    """OpenDP's scalar measurement called once per sample through :func:`vectorize`."""
    import opendp.prelude as dp  # "contrib" is enabled by mechanisms.adapters.opendp

    measurement = getattr(dp.m, maker)(dp.atom_domain(T=float, nan=False),
                                       dp.absolute_distance(T=float), scale=scale)
    return vectorize(lambda data: measurement(float(np.sum(data))),
                     name=f"opendp.{maker}(scale={scale:g}) per call")


def run_benchmark(*, quick: bool = False, min_time: Optional[float] = None,
                  progress: Callable[[str], None] = lambda line: None) -> dict:
    """Measure every case; return a JSON-ready dict (environment and one row per case)."""
    min_time = (0.5 if quick else 3.0) if min_time is None else min_time
    rows = []
    for mechanism, path, size in cases(quick):
        row = measure(mechanism, size=size, min_time=min_time, path=path)
        progress(f"{row.adapter:<60} {path:<20} {row.wall_rate:>14,.0f}/s")
        rows.append(row.to_dict())
    versions = {name: _version(name) for name in ("diffprivlib", "opendp", "numpy", "scikit-learn")}
    return {
        "benchmark": "adapters_throughput",
        "python": platform.python_version(),
        "machine": platform.machine(),
        "versions": versions,
        "min_time": min_time,
        "quick": quick,
        "rows": rows,
    }


def _version(name: str) -> Optional[str]:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def to_markdown(result: dict) -> str:
    """The result as a Markdown table."""
    lines = [
        "| adapter | path | seeded by rng | samples/s (wall) | samples/s (CPU) |",
        "|---|---|---|---:|---:|",
    ]
    for row in result["rows"]:
        seeded = "yes" if row["deterministic"] else "no (library RNG)"
        lines.append(f"| {row['adapter']} | {row['path']} | {seeded} | "
                     f"{row['wall_rate']:,.0f} | {row['cpu_rate']:,.0f} |")
    versions = ", ".join(f"{k} {v}" for k, v in result["versions"].items() if v)
    lines.append("")
    lines.append(f"Python {result['python']} ({result['machine']}); {versions}; "
                 f"≥ {result['min_time']:g} s per row.")
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short run (~15 s)")
    parser.add_argument("--min-time", type=float, default=None,
                        help="seconds per row (default 3, or 0.5 with --quick)")
    parser.add_argument("--json", default="results/adapters_throughput.json",
                        help="where to write the JSON ('-' for stdout)")
    args = parser.parse_args(argv)
    result = run_benchmark(quick=args.quick, min_time=args.min_time,
                           progress=lambda line: print(line, file=sys.stderr, flush=True))
    text = json.dumps(result, indent=2, ensure_ascii=False)
    if args.json == "-":
        print(text)
    else:
        path = Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
        print(to_markdown(result))
        print(f"\nJSON written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
