"""How often MST's and AIM's synthetic table shows the new category, and what a fit costs.

The gray-box rows of ``scenarios/libraries/snsynth.py`` on the new-category pair (categories read
from the data) draw what an event of a given rate needs (``Case.event_rate``,
:func:`audit.sweep.plan.refutable_samples`): without the record the table cannot hold a = 3; with it,
a = 3 is in the 200 synthetic rows on a fraction of the fits.  This measures that fraction on fresh
unseeded fits of the catalogue's own rows (not a sweep's draws, so the rate a row is given never
reads the draws that certify it), with its one-sided 95% Clopper–Pearson lower bound, and the CPU
time of a fit (after one warm-up fit: mbi compiles its JAX estimation once a process).  AIM's
``rounds`` (the default is 16 a column, 32 here) is measured too: the claim holds for any number, so
fewer rounds would be a cheaper row if the rate held.

Run in SmartNoise Synth's environment::

    python -m benchmarks.snsynth_event_rates --fits 100 --rounds 2 8

Results: ``benchmarks/results/snsynth_event_rates.md``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from audit.intervals import cp_lower  # noqa: E402
from scenarios.libraries import snsynth  # noqa: E402


def _case(name: str):
    """The catalogue's gray-box row of ``name`` with categories read from the data."""
    entry = next(e for e in snsynth.entries() if e.name == f"synthesizers.{name}")
    return next(c for c in entry.cases() if not c.params.get("public_domain"))


def measure(name: str, fits: int, rounds: int = 0) -> dict:
    """Fits of the row on D′ showing a = 3, and the CPU seconds a fit (``rounds`` 0: the default)."""
    case = _case(name)
    column = [label for label, _ in case.layout].index("marginal a = 3")
    params = {**case.release_params, **({"rounds": rounds} if rounds else {})}
    data = case.scenario.pairs[0].neighbor
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        case.release(data, None, **params)  # warm-up: JAX compiles once a process
        started = time.process_time()
        hits = sum(case.release(data, None, **params)[column] > 0 for _ in range(fits))
        cpu = (time.process_time() - started) / fits
    return {"synthesizer": name, "rounds": rounds or "default", "fits": fits, "hits": int(hits),
            "lower": float(cp_lower(int(hits), fits, 0.05)), "rate": case.event_rate, "cpu_s": cpu}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=100)
    parser.add_argument("--rounds", type=int, nargs="*", default=[2, 8], help="AIM's rounds besides the default")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    started, load = time.perf_counter(), os.getloadavg()[0]
    rows = [measure("mst", args.fits), measure("aim", args.fits)]
    rows += [measure("aim", args.fits, r) for r in args.rounds]
    lines = ["# MST and AIM: the new category's rate in the synthetic table, and a fit's CPU time", "",
             "| synthesizer | rounds | fits | fits showing a = 3 | one-sided 95% lower bound | the row's event_rate | "
             "CPU s a fit |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['synthesizer']} | {r['rounds']} | {r['fits']} | {r['hits']} | {r['lower']:.3f} | "
                     f"{r['rate'] if r['rounds'] == 'default' else '—'} | {r['cpu_s']:.2f} |")
    lines += ["", f"Measured with `python -m benchmarks.snsynth_event_rates --fits {args.fits} --rounds "
              f"{' '.join(map(str, args.rounds))}` (smartnoise-synth {importlib.metadata.version('smartnoise-synth')}, "
              f"{time.perf_counter() - started:.0f} s, 1-minute load {load:.1f} at the start); fresh unseeded fits, "
              "one process."]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "snsynth_event_rates.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
