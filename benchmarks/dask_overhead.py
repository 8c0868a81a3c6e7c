"""What running on Dask costs: one 1-D Gaussian audit with loky and on a 2-worker LocalCluster.

Measures, on this machine:

1. wall time of ``run_audit(GaussianMechanism(epsilon=1, delta=1e-5), [counting(1).pairs[0]],
   samples=N, accuracy=False)`` with loky ``n_jobs=1``, loky ``n_jobs=2``, the Dask backend starting
   its own 2-worker ``LocalCluster`` (start-up and shut-down included) and the Dask backend on a
   2-worker cluster already running (``scheduler=client``); every report is checked to be identical
   to the first;
2. the per-chunk overhead of the Dask path: wall time per chunk of ``run_chunk`` on tiny chunks
   (256 draws, so the work itself is negligible) in-process, with loky and with Dask, 2 workers;
3. what shipping the shared ``AuditJob`` once saves when its datasets are large: tasks that only
   read a job holding a ``--dataset-mib`` MiB dataset, with ``share_arguments`` on and off.

Prints a Markdown table and writes the numbers to ``--json``.  Run from anywhere:

    python benchmarks/dask_overhead.py --samples 1e8 --json dask_overhead.json

The script must stay importable without side effects: LocalCluster spawns worker processes that
re-import the main module.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # worker processes spawned by LocalCluster inherit sys.path

import numpy as np  # noqa: E402

import scenarios  # noqa: E402
from audit import run_audit  # noqa: E402
from audit.executor import make_executor  # noqa: E402
from audit.sampling import (AuditJob, Binning, ChunkTask, LinearStatistic, Phase,  # noqa: E402
                            chunk_size_for, run_chunk)
from mechanisms import GaussianMechanism  # noqa: E402

SEED = 20261122
TINY = 256  # draws per chunk when measuring overhead: the work itself is ~0.1 ms


def _mechanism():
    return GaussianMechanism(epsilon=1.0, delta=1e-5)


def _pairs():
    return [scenarios.counting(1).pairs[0]]


def _chunks(samples: int) -> int:
    """Chunk tasks of the 1-D audit of one pair that :func:`time_audits` runs (both sides, every
    stage and phase, as if no look stopped it)."""
    from audit.stages import plan_stages

    claim = _mechanism().claim
    size = chunk_size_for(1)
    return sum(stage.chunks(size, 1) for stage in plan_stages(samples, 1, "auto", claim, 1, 0.05, True) if stage)


def time_audits(samples: int, client) -> list[dict]:
    configs = [
        ("loky", "n_jobs=1", {"backend": "loky", "n_jobs": 1}),
        ("loky", "n_jobs=2", {"backend": "loky", "n_jobs": 2}),
        ("dask", "own 2-worker LocalCluster (start + close included)", {"backend": "dask", "n_jobs": 2}),
        ("dask", "2-worker LocalCluster already running", {"backend": "dask", "scheduler": client}),
    ]
    rows, reference = [], None
    for backend, setting, options in configs:
        started = time.perf_counter()
        report = run_audit(_mechanism(), _pairs(), samples=samples, seed=SEED, progress=False,
                           accuracy=False, **options)
        wall = time.perf_counter() - started
        result = report.to_dict(include_runtime=False)
        reference = result if reference is None else reference
        rows.append({"backend": backend, "setting": setting, "samples": samples, "wall_s": wall,
                     "chunks": _chunks(samples), "identical": result == reference,
                     "epsilon_lower_bound": report.epsilon_lower_bound})
        print(f"  {backend:5s} {setting:55s} {wall:8.2f} s", file=sys.stderr, flush=True)
    return rows


def _tiny_job() -> AuditJob:
    mech = _mechanism()
    pair = _pairs()[0]
    return AuditJob(mech, mech.name, ((pair.base, pair.neighbor),), (pair.label,), SEED, 1,
                    statistics=(LinearStatistic(),), binnings=(Binning.covering(-5.0, 6.0, 1 << 15),))


def time_tiny_chunks(tasks: int, client) -> list[dict]:
    """Wall time per tiny chunk (run_chunk on TINY draws) for each way of running chunks."""
    job = _tiny_job()
    args = [(job, ChunkTask(0, c % 2, Phase.SELECTION, c, TINY)) for c in range(tasks)]
    rows = []
    for label, backend, n_jobs, options in [("in-process (sequential)", "sequential", 1, {}),
                                            ("loky, 2 workers", "loky", 2, {}),
                                            ("dask, 2-worker LocalCluster", "dask", 2, {"scheduler": client})]:
        with make_executor(backend, n_jobs, **options) as executor:
            list(executor.map(run_chunk, args[:16]))  # warm up: start workers, ship the job
            started = time.perf_counter()
            for start in range(0, tasks, executor.batch_size):  # as the engine does: batch by batch
                list(executor.map(run_chunk, args[start:start + executor.batch_size]))
            wall = time.perf_counter() - started
        rows.append({"setting": label, "tasks": tasks, "chunk_draws": TINY, "wall_s": wall,
                     "per_chunk_ms": 1e3 * wall / tasks})
        print(f"  tiny chunks, {label:30s} {1e3 * wall / tasks:7.2f} ms/chunk", file=sys.stderr, flush=True)
    return rows


def _read_job(job: AuditJob, i: int) -> int:
    """A task that only touches the shared job (its cost is getting the job to the worker)."""
    return int(job.datasets[0][0].shape[0]) + i


def time_sharing(tasks: int, mib: float, client) -> list[dict]:
    from audit.dask_backend import DaskExecutor

    rows_big = np.zeros((int(mib * 2 ** 20 / 8), 1))
    job = AuditJob(_mechanism(), "gaussian", ((rows_big, rows_big),), ("big",), SEED, 1)
    rows = []
    for share in (True, False):
        with DaskExecutor(scheduler=client, share_arguments=share) as executor:
            started = time.perf_counter()
            for start in range(0, tasks, executor.batch_size):
                list(executor.map(_read_job, [(job, i) for i in range(start, min(tasks, start + executor.batch_size))]))
            wall = time.perf_counter() - started
        rows.append({"share_arguments": share, "tasks": tasks, "dataset_mib": mib, "wall_s": wall,
                     "per_task_ms": 1e3 * wall / tasks})
        print(f"  {mib:g} MiB job, share_arguments={share!s:5s} {1e3 * wall / tasks:8.2f} ms/task",
              file=sys.stderr, flush=True)
    return rows


def markdown(audits: list[dict], tiny: list[dict], sharing: list[dict], machine: dict) -> str:
    lines = [f"Machine: {machine['cpus']} cores ({machine['platform']}), load average before the run "
             f"{machine['loadavg_before']}; shared with other jobs, so times are indicative.", "",
             "| samples per side and phase | backend | setting | chunks | wall time (s) | same report |",
             "|---:|---|---|---:|---:|:---:|"]
    for row in audits:
        lines.append(f"| {row['samples']:.0e} | {row['backend']} | {row['setting']} | {row['chunks']} | "
                     f"{row['wall_s']:.1f} | {'yes' if row['identical'] else '**NO**'} |")
    lines += ["", f"Per-chunk cost with tiny chunks ({TINY} draws, 2 workers, batches as the engine sends them):", "",
              "| how chunks run | ms per chunk |", "|---|---:|"]
    lines += [f"| {row['setting']} | {row['per_chunk_ms']:.2f} |" for row in tiny]
    if sharing:
        lines += ["", f"Shipping a job holding a {sharing[0]['dataset_mib']:g} MiB dataset:", "",
                  "| share_arguments | ms per task |", "|---|---:|"]
        lines += [f"| {row['share_arguments']} | {row['per_task_ms']:.1f} |" for row in sharing]
    return "\n".join(lines)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=float, nargs="+", default=[1e8],
                        help="samples per side and phase of the timed audit (several allowed; default 1e8)")
    parser.add_argument("--tiny-chunks", type=int, default=400, help="tasks in the per-chunk overhead test")
    parser.add_argument("--dataset-mib", type=float, default=16.0, help="dataset size in the sharing test")
    parser.add_argument("--sharing-tasks", type=int, default=32, help="tasks in the sharing test (0: skip)")
    parser.add_argument("--json", default="dask_overhead.json", help="where to write the results")
    args = parser.parse_args(argv)

    import distributed

    machine = {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
               "numpy": np.__version__, "dask": distributed.__version__,
               "loadavg_before": [round(v, 2) for v in os.getloadavg()]}
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        audits = [row for samples in args.samples for row in time_audits(int(samples), client)]
        tiny = time_tiny_chunks(args.tiny_chunks, client)
        sharing = time_sharing(args.sharing_tasks, args.dataset_mib, client) if args.sharing_tasks else []
    machine["loadavg_after"] = [round(v, 2) for v in os.getloadavg()]
    results = {"machine": machine, "audits": audits, "tiny_chunks": tiny, "sharing": sharing}
    print(markdown(audits, tiny, sharing, machine))
    Path(args.json).write_text(json.dumps(results, indent=2))
    return results


if __name__ == "__main__":
    main()
