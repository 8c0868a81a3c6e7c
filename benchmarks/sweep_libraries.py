"""The sweep of each installed library's current release, timed, with every reproduction script run.

``python benchmarks/sweep_libraries.py [LIBRARY ...] [--budget default] [--jobs 2]`` runs
``dpaudit sweep`` on each library (default: diffprivlib and opendp) into a scratch folder, then:

- copies ``sweep.md``, ``sweep.json`` and ``repro/`` into ``benchmarks/results/sweep/<library>/``
  (the per-row report files stay in the scratch folder: they hold every audit's full report);
- runs every reproduction script alone (``python repro/<row>.py``, in a fresh process, with no
  dpaudit on its path) and records what it printed, whether the event's frequencies exceed the
  claim's allowance on the script's own draws (point estimates: "exceeded"), and whether they exceed
  it by at least :data:`SHOWN_ERRORS` standard errors of the excess, as the script prints them;
- records the sweep's wall time, its CPU time (this process and its workers) and the machine's load
  average before and after (the machine is shared: wall time depends on the load, CPU time less so)
  in ``benchmarks/results/sweep/timing.md`` and ``.json``.

The issue's targets: a sweep within 30 minutes on 2 cores at the default budget, and every
VIOLATED row's script showing the distinguishing event's frequencies on both datasets.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

if __package__ in (None, ""):  # run as a script: the repository root, not benchmarks/, first on the path
    sys.path[0] = str(Path(__file__).resolve().parents[1])  # benchmarks/statistics.py would hide the stdlib's

from joblib.externals.loky import get_reusable_executor

from audit.checkpoint import write_atomic
from audit.sweep import run_sweep

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "sweep"


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


#: A script shows the excess when its excess over the claim is at least this many of its standard errors.
SHOWN_ERRORS = 2.0


def excess_in_errors(lines: list[str]) -> Optional[float]:
    """The excess over the claim in standard errors that a script printed (its line "its standard
    error: s (+z standard errors)"), or None when it printed none."""
    for line in lines:
        if line.startswith("its standard error: ") and line.endswith(" standard errors)"):
            try:
                return float(line.rsplit("(", 1)[1].split()[0])
            except (IndexError, ValueError):
                return None
    return None


def run_scripts(folder: Path, timeout: float = 1800) -> list[dict]:
    """Run each script of ``folder/repro`` alone; what it printed, whether the point estimate of the
    excess was positive ("exceeded") and whether the excess was at least :data:`SHOWN_ERRORS` of its
    standard errors ("shows_excess", from :func:`excess_in_errors`); a script still running after
    ``timeout`` seconds is stopped and recorded as status "timed out"."""
    found = []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for script in sorted((folder / "repro").glob("*.py")):
        started = time.perf_counter()
        try:
            result = subprocess.run([sys.executable, script.name], cwd=script.parent, capture_output=True,
                                    text=True, timeout=timeout, env=env)
        except subprocess.TimeoutExpired:
            found.append({"script": script.name, "status": "timed out", "output": [], "shows_frequencies": False,
                          "exceeded": False, "seconds": time.perf_counter() - started, "stderr": "",
                          "excess_standard_errors": None, "shows_excess": False})
            continue
        lines = result.stdout.strip().splitlines()
        found.append({"script": script.name, "status": result.returncode, "output": lines,
                      "shows_frequencies": len(lines) >= 2 and all(l.startswith("P[event | ") for l in lines[:2]),
                      "exceeded": any(line.endswith(": exceeded") for line in lines),
                      "seconds": time.perf_counter() - started, "stderr": result.stderr.strip()[-500:],
                      "excess_standard_errors": excess_in_errors(lines)})
        found[-1]["shows_excess"] = (found[-1]["excess_standard_errors"] or 0.0) >= SHOWN_ERRORS
    return found


#: The target: each current release swept within this many minutes on 2 cores at its default budget.
TARGET_MIN = 30.0


def timing_note(t: dict) -> str:
    """Whether a sweep met :data:`TARGET_MIN`, and if only its wall time missed it, why: the CPU time of
    the sweep and its workers bounds the wall time of its ``jobs`` workers on an idle 2-core machine.
    The reason is the machine's load unless the row's ``wall_reason`` names another.  A row's
    ``cpu_s`` is None where the CPU time was not measured (shown "unknown")."""
    wall, jobs = t["wall_s"] / 60, max(int(str(t["jobs"]).split(",")[0]), 1)
    if t.get("finished") is False:
        return f"not finished: {t.get('note') or 'interrupted'}"
    if wall <= TARGET_MIN:
        return "met"
    if t["cpu_s"] is None:  # not measured (a process tree the sweep's rusage does not see)
        return "not met: wall time over it; CPU unknown" + (f"; {t['note']}" if t.get("note") else "")
    cpu = t["cpu_s"] / 60
    if cpu / min(jobs, 2) <= TARGET_MIN:
        why = t.get("wall_reason") or (f"the shared machine's load (load average {t['load_before']:.0f} to "
                                       f"{t['load_after']:.0f} on 2 cores)")
        return f"wall time over it from {why}; CPU {cpu:.1f} min, within it"
    return f"not met: {cpu:.1f} min of CPU on {min(jobs, 2)} core(s)" + (f"; {t['note']}" if t.get("note") else "")


def render_timing(timing: dict) -> str:
    """The timing table of every library swept (``timing.json``'s rows), with :func:`timing_note`."""
    lines = ["**Sweeps of the installed releases (wall time on a shared 2-core machine, with its 1-minute load "
             "average before and after; CPU time of the sweep and its workers; target: 30 minutes on 2 cores)**", "",
             "| library | version | budget | jobs | rows | VIOLATED | wall (min) | CPU (min) | load before | "
             "load after | scripts showing both frequencies | scripts exceeding the claim (point estimates) | "
             f"scripts exceeding it by ≥ {SHOWN_ERRORS:g} standard errors | date | 30-minute target |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, t in sorted(timing.items()):
        # A row measured before the count was kept has none: a dash, not a number it never measured.
        shown = f"{t['scripts_showing_excess']} of {t['scripts']}" if "scripts_showing_excess" in t else "—"
        lines.append(f"| {name} | {t['version']} | {t['budget']} | {t['jobs']} | {t['rows']} | {t['violated']} | "
                     f"{t['wall_s'] / 60:.1f} | {'unknown' if t['cpu_s'] is None else format(t['cpu_s'] / 60, '.1f')} | "
                     f"{t['load_before']:.1f} | {t['load_after']:.1f} | "
                     f"{t['scripts_showing_frequencies']} of {t['scripts']} | {t['scripts_exceeding']} of "
                     f"{t['scripts']} | {shown} | {t['date']} | {timing_note(t)} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("libraries", nargs="*", default=["diffprivlib", "opendp"])
    parser.add_argument("--budget", choices=("small", "default"), default="default")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()) / "dpaudit-sweep-libraries")
    parser.add_argument("--resume", action="store_true", help="continue interrupted sweeps in --scratch")
    parser.add_argument("--entries", nargs="*", default=None, help="sweep only these entries (patterns)")
    parser.add_argument("--results-name", default=None,
                        help="the results folder and timing row's name (default: the library's)")
    parser.add_argument("--script-timeout", type=float, default=1800,
                        help="seconds a reproduction script may run before it is stopped (recorded as timed out)")
    args = parser.parse_args(argv)
    measured = {}
    for name in args.libraries:
        label = args.results_name or name
        scratch = args.scratch / label
        load_before, cpu_before, started = os.getloadavg(), _cpu(), time.perf_counter()
        document = run_sweep(name, budget=args.budget, out=scratch, n_jobs=args.jobs, resume=args.resume,
                             entries=args.entries)
        # joblib keeps its loky workers alive between calls, and a child's CPU time is counted only
        # once it has exited and been waited for: shut them down before reading the clock.
        get_reusable_executor().shutdown(wait=True)
        wall, cpu, load_after = time.perf_counter() - started, _cpu() - cpu_before, os.getloadavg()
        target = RESULTS / label
        # Replace what a sweep writes; keep what else the folder holds (a finding's hand-kept
        # write-up in findings/, rows/ kept by hand).
        shutil.rmtree(target / "repro", ignore_errors=True)
        for written in ("sweep.md", "sweep.json", "repro_check.json"):
            (target / written).unlink(missing_ok=True)
        (target / "repro").mkdir(parents=True)
        for file in ("sweep.md", "sweep.json"):
            shutil.copy(scratch / file, target / file)
        for script in (scratch / "repro").glob("*.py"):
            shutil.copy(script, target / "repro" / script.name)
        scripts = run_scripts(target, args.script_timeout)
        (target / "repro_check.json").write_text(json.dumps(scripts, indent=1))
        violated = sum(1 for r in document["rows"] if r.get("verdict") == "VIOLATED")
        measured[label] = {"version": document["version"], "jobs": args.jobs,
                        "budget": args.budget + (f" ({', '.join(args.entries)})" if args.entries else ""),
                        "rows": len(document["rows"]), "violated": violated, "wall_s": wall, "cpu_s": cpu,
                        "load_before": load_before[0], "load_after": load_after[0], "date": document["date"],
                        "scripts": len(scripts), "scripts_showing_frequencies":
                            sum(s["shows_frequencies"] for s in scripts),
                        "scripts_exceeding": sum(s["exceeded"] for s in scripts),
                        "scripts_showing_excess": sum(s["shows_excess"] for s in scripts)}
        print(f"{label}: {len(document['rows'])} rows, {violated} VIOLATED, {wall:.0f} s wall, {cpu:.0f} s CPU")
    # Read the other libraries' rows only now: a sweep of another library run meanwhile wrote its own.
    timing_path = RESULTS / "timing.json"
    timing = json.loads(timing_path.read_text()) if timing_path.is_file() else {}
    timing.update(measured)
    write_atomic(timing_path, json.dumps(timing, indent=1).encode())
    text = render_timing(timing)
    write_atomic(RESULTS / "timing.md", text.encode())
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
