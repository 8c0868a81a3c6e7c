"""Validation of ``dpaudit sweep`` against released versions with a documented, later fixed violation.

For each target below, the buggy and the fixed release are each installed in a virtual environment
of their own (``python -m venv``; the library pinned, with scikit-learn / numpy / scipy releases
that support it and have wheels for the environment's Python), and the catalogue's affected entry is swept
there with ``dpaudit sweep LIBRARY --entries ENTRY`` (dpaudit itself comes from this checkout, on
``PYTHONPATH``).  The sweep must refute the target row on the buggy release and not on the fixed one.

Targets:

- **diffprivlib 0.4.0 → 0.4.1, LinearRegression** (IBM/differential-privacy-library#34, fixed by
  PR #35, released in 0.4.1 by PR #36).  ``_construct_regression_obj`` calibrated the noise of the
  objective's y² coefficient to ``np.abs(bounds_y[i]).max() ** 2`` — the lower-bound vector of
  ``bounds_y`` instead of the target's own (lower, upper) pair — so when the noisy y-offset lies
  near the lower bound the coefficient is released with almost no noise.  The fitted model keeps
  the noisy objective (``_obj_coefs``), which a pickled model publishes.  The target row is the grid
  point ``data=y only``: its pairs change one label and leave X alone, so no other calibration of
  the objective is involved (the diagonal X² term, IBM/differential-privacy-library#105, is still
  wrong in every release and is caught by the other grid point on both versions).

Run ``python benchmarks/sweep_versions.py`` (``--budget small`` for a quick look); virtual
environments are cached in ``--venvs`` (default ``~/.cache/dpaudit/sweep-venvs``).  Results:
``benchmarks/results/sweep_versions.md`` and ``.json``, with the CPU time of each sweep and the
machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
#: What dpaudit itself needs in each environment (pyproject.toml's dependencies).
DPAUDIT_DEPS = ("statsmodels>=0.14,<0.15", "joblib>=1.3", "tqdm>=4.60", "threadpoolctl>=3.1", "jinja2>=3.1",
                "tomli>=2.0; python_version < '3.11'")


@dataclass(frozen=True)
class Target:
    library: str
    buggy: str
    fixed: str
    entry: str
    point: str
    issue: str
    pins: tuple[str, ...]
    python: str = sys.executable


TARGETS = (
    Target("diffprivlib", "0.4.0", "0.4.1", "models.LinearRegression", "data=y only",
           "IBM/differential-privacy-library#34 (fixed by PR #35, released in 0.4.1)",
           # diffprivlib 0.4 imports scikit-learn internals that 1.1 removed
           # (linear_model._logistic._logistic_loss_and_grad, utils.fixes._joblib_parallel_args), and
           # 1.0.2 has no wheel for Python 3.11: these environments use Python 3.10.  dpaudit needs
           # scipy.special.betainccinv, which scipy has from 1.12.
           ("scikit-learn==1.0.2", "numpy==1.24.4", "scipy==1.12.0"), python="python3.10"),
)


def _interpreter(name: str) -> str:
    """An interpreter by path or name (``python3.10``), also found among pyenv's installed versions."""
    if Path(name).is_file():
        return name
    version = name.removeprefix("python")
    candidates = sorted(Path.home().glob(f".pyenv/versions/{version}*/bin/{name}"))
    for found in [shutil.which(name), *map(str, candidates)]:
        if found and subprocess.run([found, "-V"], capture_output=True).returncode == 0:
            return found
    raise FileNotFoundError(f"no {name} interpreter: install one (e.g. `pyenv install {version}`)")


def environment(folder: Path, library: str, version: str, pins: tuple[str, ...], interpreter: str) -> Path:
    """A virtual environment of ``interpreter`` with ``library==version``, the pins and dpaudit's
    dependencies (cached)."""
    path = folder / f"{library}-{version}"
    python = path / "bin" / "python"
    stamp = path / "dpaudit-ready"
    if stamp.is_file():
        return python
    subprocess.run([_interpreter(interpreter), "-m", "venv", "--clear", str(path)], check=True)
    command = [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
               *pins, f"{library}=={version}", *DPAUDIT_DEPS]
    subprocess.run(command, check=True)
    stamp.write_text(" ".join(command))
    return python


def sweep(python: Path, target: Target, out: Path, budget: str, seed: int) -> tuple[dict, float]:
    """Run the sweep of the target's entry in ``python``'s environment; its document and CPU seconds."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([str(python), "-m", "audit", "sweep", target.library, "--entries", target.entry, "--budget",
                    budget, "--out", str(out), "--no-progress", "--seed", str(seed), "--format", "json"],
                   env=env, check=False, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads((out / "sweep.json").read_text()), cpu


def _fmt(value) -> str:
    return "—" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", choices=("small", "default"), default="default")
    parser.add_argument("--venvs", type=Path, default=Path.home() / ".cache" / "dpaudit" / "sweep-venvs")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    rows = []
    for target in TARGETS:
        for role, version in (("buggy", target.buggy), ("fixed", target.fixed)):
            python = environment(args.venvs, target.library, version, target.pins, target.python)
            started = time.perf_counter()
            document, cpu = sweep(python, target, args.out / "sweep_versions" / f"{target.library}-{version}",
                                  args.budget, args.seed)
            load = os.getloadavg()
            for row in document["rows"]:
                is_target = target.point in row["point"]
                rows.append({"library": target.library, "version": version, "role": role, "issue": target.issue,
                             "row": row["key"], "target": is_target, "verdict": row.get("verdict", "ERROR"),
                             "epsilon_lb": row.get("epsilon_lb"), "known": row.get("known"),
                             "cpu_s": cpu, "wall_s": time.perf_counter() - started, "load_1min": load[0],
                             "budget": args.budget, "seed": args.seed, "error": row.get("error")})
    targets = [r for r in rows if r["target"]]
    met = all((r["verdict"] == "VIOLATED") == (r["role"] == "buggy") for r in targets) and bool(targets)
    lines = [f"**Documented-and-fixed violations, swept on the buggy and the fixed release (budget "
             f"`{args.budget}`, seed {args.seed}; CPU seconds of each sweep, 1-minute load average beside it: the "
             "machine was shared)**", "",
             "| library | version | role | row | target | verdict | ε_lb | expected | met | CPU s | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        expected = ("VIOLATED" if r["role"] == "buggy" else "NOT_REFUTED") if r["target"] else "—"
        ok = ("yes" if r["verdict"] == expected else "**no**") if r["target"] else "—"
        lines.append(f"| {r['library']} | {r['version']} | {r['role']} | {r['row']} | {'yes' if r['target'] else 'no'} "
                     f"| {r['verdict']} | {_fmt(r['epsilon_lb'])} | {expected} | {ok} | {r['cpu_s']:.0f} | "
                     f"{r['load_1min']:.1f} |")
    lines += ["", "Target rows: " + "; ".join(sorted({f"{t.library} {t.entry} [{t.point}]: {t.issue}" for t in TARGETS}))]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sweep_versions.md").write_text("\n".join(lines) + "\n")
    (args.out / "sweep_versions.json").write_text(json.dumps({"met": met, "rows": rows}, indent=1))
    print("\n".join(lines))
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
