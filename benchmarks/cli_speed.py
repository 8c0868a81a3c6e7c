"""How much CPU the command line costs before it does any work: ``dpaudit --help``, ``dpaudit list``.

Each command runs in a fresh ``python`` process (nothing cached in memory; the bytecode caches are
warmed by one untimed run), and its CPU time (user + system, from ``os.wait4``'s resource usage) is
the median over ``--repeats`` runs.  CPU time, unlike wall time, does not grow when other processes
share the machine.  The reference is a bare interpreter, ``python -c pass``: every ratio says how many
bare start-ups a command costs.  Targets: ``dpaudit list`` under 2 s (listing reads the bundled
scenario files and builds, probes and runs no mechanism) and ``dpaudit --help`` under 0.5 s
(``import audit.cli`` imports neither SciPy nor the engine; :mod:`audit.lazy`).

``--compare DIR`` measures the same commands on another checkout too (e.g. the release before), run
from that folder.  Run from the repository root::

    python -m benchmarks.cli_speed --repeats 3 --compare /path/to/older/checkout \
        --compare-label "the release before lazy imports"
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

#: (label, arguments after `python`, CPU-time target in seconds or None).
COMMANDS = (
    ("python -c pass", ["-c", "pass"], None),
    ("import audit", ["-c", "import audit"], None),
    ("import audit.cli", ["-c", "import audit.cli"], None),
    ("dpaudit --help", ["-m", "audit", "--help"], 0.5),
    ("dpaudit run --help", ["-m", "audit", "run", "--help"], None),
    ("dpaudit list", ["-m", "audit", "list"], 2.0),
)


def cpu_seconds(arguments: Sequence[str], folder: Path) -> float:
    """CPU time (user + system) of ``python <arguments>`` run in ``folder``, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen([sys.executable, *arguments], cwd=folder, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"python {' '.join(arguments)} exited {process.returncode} in {folder}")
    return usage.ru_utime + usage.ru_stime


def measure(folder: Path, repeats: int) -> dict[str, float]:
    """Median CPU seconds of every command of :data:`COMMANDS` in ``folder``."""
    medians = {}
    for label, arguments, _ in COMMANDS:
        cpu_seconds(arguments, folder)  # warm the bytecode caches
        medians[label] = statistics.median(cpu_seconds(arguments, folder) for _ in range(repeats))
    return medians


def markdown(result: dict) -> str:
    compare = result.get("compare")
    lines = [f"# Command-line start-up: CPU seconds (median of {result['repeats']} fresh processes)", "",
             f"Python {result['python']} on {result['machine']}. Ratio: CPU time / that of `python -c pass`.", "",
             "| command | CPU s | ratio | target | met |" + (" before: CPU s | before: ratio |" if compare else ""),
             "|---|---:|---:|---:|---|" + ("---:|---:|" if compare else "")]
    bare = result["cpu_s"]["python -c pass"]
    for label, _, target in COMMANDS:
        seconds = result["cpu_s"][label]
        row = (f"| `{label}` | {seconds:.3f} | {seconds / bare:.1f} | {'' if target is None else f'< {target:g} s'} | "
               f"{'' if target is None else ('yes' if seconds < target else 'NO')} |")
        if compare:
            before = compare["cpu_s"][label]
            row += f" {before:.3f} | {before / compare['cpu_s']['python -c pass']:.1f} |"
        lines.append(row)
    if compare:
        lines += ["", f"Before: {compare['label']}."]
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cli_speed", description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="fresh processes per command (default: %(default)s)")
    parser.add_argument("--compare", type=Path, metavar="DIR", help="also measure the checkout in DIR")
    parser.add_argument("--compare-label", metavar="TEXT", help="what the checkout in DIR is, for the table "
                        "(default: its path)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where cli_speed.{md,json} go (default: %(default)s)")
    args = parser.parse_args(argv)
    result = {"python": platform.python_version(), "machine": platform.machine(), "repeats": args.repeats,
              "cpu_s": measure(ROOT, args.repeats),
              "targets": {label: target for label, _, target in COMMANDS if target is not None}}
    result["met"] = {label: result["cpu_s"][label] < target for label, target in result["targets"].items()}
    if args.compare is not None:
        result["compare"] = {"folder": str(args.compare), "label": args.compare_label or f"the checkout at `{args.compare}`",
                             "cpu_s": measure(args.compare.resolve(), args.repeats)}
    text = markdown(result)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cli_speed.md").write_text(text, encoding="utf-8")
    (args.out / "cli_speed.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0 if all(result["met"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
