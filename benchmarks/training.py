"""Auditing PyTorch/Opacus training: tightness of the white-box audit, the faulty trainers, one run.

``python -m benchmarks.training --out benchmarks/results/training`` (``--quick`` for a smoke run,
``--parts`` to rerun some tables, ``--jobs`` workers) trains real Opacus models on the CPU:

1. **Tightness.**  The correct Opacus trainer (:func:`mechanisms.training.opacus_sgd`, q = 1/2,
   σ = 1, T = 4, C = 1, δ = 1e-3 on 49 synthetic rows; exact ε = 4.481, the composed subsampled
   Gaussian) audited with the Dirac canary's projection sum Σ_t v_t, one look (no early stopping),
   beside the single-event limit of that statistic at the same number of runs: the best bound a
   single threshold event can certify at that budget and level, computed from the statistic's exact
   law (a finite Gaussian mixture, :func:`mechanisms.dpsgd.canary.projection_sum_survival`) as
   :mod:`benchmarks.dpsgd` does for the numpy trainer (:mod:`benchmarks.limits`).
2. **Faulty trainers** (:data:`mechanisms.zoo.trainers.TORCH_FAULTS`): each audited against its
   accountant's claim with its statistic, early stopping on, with the wall time and the machine
   load beside it.
3. **One run** (Steinke, Nasr & Jagielski 2023, :func:`audit.one_run.one_run_audit`): m Dirac
   canaries in one Opacus training, each included with probability ½.

The machine is shared: every timed row records ``os.getloadavg()`` at its start.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

import scenarios
from audit import run_audit
from audit.one_run import one_run_audit
from audit.selection import Budget
from audit.slots import headline_slots
from mechanisms.dpsgd.canary import projection_sum_survival
from mechanisms.training import TorchTraining
from mechanisms.zoo.trainers import TORCH_FAULTS, fault_statistic, faulty_training

from .limits import single_threshold_limit

CONFIDENCE = 0.95
PAIR = scenarios.from_pairs([(np.zeros((0, 1)), np.ones((1, 1)), "add the canary")])
#: The tightness configuration: the small configuration of benchmarks/dpsgd.py, in Opacus.
TIGHT = dict(noise_multiplier=1.0, max_grad_norm=1.0, batch_size=25, steps=4, n=49, delta=1e-3, accountant="pld")
#: Runs per side of each faulty trainer's audit (chosen so that each is refuted well within 10
#: minutes on 2 cores; the correct ones use the same counts as the faulty one they control).
FAULT_SAMPLES = {"opacus-correct": 2000, "manual-correct": 2000, "opacus-correct-shuffle-data": 2000,
                 "opacus-correct-input": 2000, "shuffled-batches": 4000, "mean-reduction": 1000,
                 "batch-clipping": 4000, "unscaled-noise": 4000, "virtual-steps": 2000,
                 "unnoised-parameter-group": 1000}


def _load() -> float:
    return float(os.getloadavg()[0])


def projection_limit(mechanism: TorchTraining, samples: int, confidence: float = CONFIDENCE):
    """The single-threshold limit of the projection sum at ``samples`` runs per side."""
    budget = Budget(1.0 - confidence, headline_slots(mechanism.claim), 1)
    sigma = mechanism.noise_multiplier * mechanism.max_grad_norm
    base_sf, neighbour_sf = projection_sum_survival(mechanism.sample_rate, mechanism.steps,
                                                    mechanism.max_grad_norm, sigma)
    spread = sigma * np.sqrt(mechanism.steps)
    thresholds = np.linspace(-12 * spread, mechanism.steps * mechanism.max_grad_norm + 12 * spread, 8001)
    return single_threshold_limit(base_sf, neighbour_sf, thresholds, samples=samples,
                                  delta=mechanism.claim.reference_delta,
                                  epsilon_level=budget.headline_level, mu_level=budget.headline_level)


def _audit(mechanism, samples, seed, statistic, jobs, early_stopping=True):
    return run_audit(mechanism, PAIR, samples=samples, seed=seed, confidence=CONFIDENCE, statistic=statistic,
                     progress=False, accuracy=False, early_stopping=early_stopping, n_jobs=jobs)


def tightness(samples_list, jobs):
    rows = []
    mechanism = TorchTraining(**TIGHT)
    low, high = mechanism.exact_epsilon_bracket(mechanism.delta)
    for samples in samples_list:
        load, started = _load(), time.perf_counter()
        report = _audit(mechanism, samples, 2026, mechanism.projection_score(), jobs, early_stopping=False)
        limit = projection_limit(mechanism, samples).epsilon
        rows.append({"mechanism": mechanism.name, "delta": mechanism.delta, "statistic": "projection sum",
                     "runs": samples, "epsilon_lb": report.epsilon_lower_bound, "limit": limit,
                     "ratio": report.epsilon_lower_bound / limit, "claim_epsilon": mechanism.claim.epsilon_at(mechanism.delta),
                     "exact_low": low, "exact_high": high, "verdict": report.verdict.value,
                     "seconds": time.perf_counter() - started, "load": load, "jobs": jobs})
        print(rows[-1], flush=True)
    return rows


def faulty(samples_of, jobs, names=None, save=lambda rows: None):
    rows = []
    for name in names or TORCH_FAULTS:
        entry, mechanism = TORCH_FAULTS[name], faulty_training(name)
        try:
            exact = mechanism.epsilon_for_delta(mechanism.delta)
        except NotImplementedError:
            exact = None
        samples = samples_of(name)
        load, started = _load(), time.perf_counter()
        report = _audit(mechanism, samples, 2027, fault_statistic(name), jobs)
        rows.append({"trainer": name, "holds": entry.holds, "note": entry.note, "mechanism": mechanism.name,
                     "accountant": mechanism.accountant, "statistic": entry.statistic, "runs": samples,
                     "claim_epsilon": mechanism.claim.epsilon_at(mechanism.delta), "exact_epsilon": exact,
                     "epsilon_lb": report.epsilon_lower_bound, "delta_lb": report.delta_lower_bound,
                     "verdict": report.verdict.value, "seconds": time.perf_counter() - started,
                     "load": load, "jobs": jobs})
        print(rows[-1], flush=True)
        save(rows)
    return rows


def one_run(canaries, seeds):
    rows = []
    mechanism = TorchTraining(**dict(TIGHT, delta=1e-5))
    for m in canaries:
        guesses = [(k, k) for k in (max(1, m // 100), m // 20, m // 10, m // 4)]
        bounds, times = [], []
        for seed in range(seeds):
            started = time.perf_counter()
            scores, included = mechanism.one_run_scores(m, np.random.default_rng(40_000 + seed))
            result = one_run_audit(scores, included, guesses=guesses, delta=mechanism.delta, confidence=CONFIDENCE)
            times.append(time.perf_counter() - started)
            bounds.append(result.epsilon_lower_bound)
        rows.append({"canaries": m, "seeds": seeds, "delta": mechanism.delta,
                     "claim_epsilon": mechanism.claim.epsilon_at(mechanism.delta),
                     "exact_epsilon": mechanism.epsilon_for_delta(mechanism.delta),
                     "mean_bound": float(np.mean(bounds)), "min_bound": float(np.min(bounds)),
                     "max_bound": float(np.max(bounds)), "seconds_mean": float(np.mean(times)), "load": _load()})
        print(rows[-1], flush=True)
    return rows


def _fmt(value, digits=4):
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def to_markdown(result) -> str:
    lines = [f"Machine: {result.get('cpus')} cores, shared with other work; `load` is the 1-minute load average "
             "when the row started.", ""]
    if "tightness" in result:
        lines += ["#### Tightness of the white-box audit of the correct Opacus trainer (Dirac canary, every update "
                  "visible, projection sum, one look)", "",
                  "| mechanism | δ | runs | ε_lb | single-event limit (exact law) | ε_lb / limit | claimed ε (PLD) | exact ε [PLD bracket] | verdict | time (s) | jobs | load |",
                  "|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|"]
        for r in result["tightness"]:
            lines.append(f"| {r['mechanism']} | {r['delta']:g} | {r['runs']:,} | {_fmt(r['epsilon_lb'])} | "
                         f"{_fmt(r['limit'])} | {_fmt(r['ratio'], 3)} | {_fmt(r['claim_epsilon'])} | "
                         f"[{r['exact_low']:.4f}, {r['exact_high']:.4f}] | {r['verdict']} | {r['seconds']:.0f} | "
                         f"{r['jobs']} | {r['load']:.1f} |")
    if "faulty" in result:
        lines += ["", "#### Faulty trainers and their controls against the accountant's claim", "",
                  "| trainer | claim holds | accountant | statistic | runs | claimed ε | exact ε | ε_lb | δ_lb at claimed ε | verdict | time (s) | jobs | load |",
                  "|---|---|---|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
        for r in result["faulty"]:
            exact = "unknown" if r["exact_epsilon"] is None else _fmt(r["exact_epsilon"])
            lines.append(f"| {r['trainer']} | {'yes' if r['holds'] else 'no'} | {r['accountant']} | {r['statistic']} | "
                         f"{r['runs']:,} | {_fmt(r['claim_epsilon'])} | {exact} | {_fmt(r['epsilon_lb'])} | "
                         f"{_fmt(r['delta_lb'], 3)} | {r['verdict']} | {r['seconds']:.0f} | {r['jobs']} | {r['load']:.1f} |")
    if "one_run" in result:
        lines += ["", "#### One Opacus training with m Dirac canaries (Steinke, Nasr & Jagielski 2023), 95%, "
                  "Bonferroni over 4 guess counts", "",
                  "| canaries m | δ | seeds | ε bound: mean [min, max] | claimed ε (PLD) | exact ε | time per run + bound (s) | load |",
                  "|---:|---:|---:|---|---:|---:|---:|---:|"]
        for r in result["one_run"]:
            lines.append(f"| {r['canaries']} | {r['delta']:g} | {r['seeds']} | {r['mean_bound']:.3f} "
                         f"[{r['min_bound']:.3f}, {r['max_bound']:.3f}] | {_fmt(r['claim_epsilon'])} | "
                         f"{_fmt(r['exact_epsilon'])} | {r['seconds_mean']:.2f} | {r['load']:.1f} |")
    return "\n".join(lines) + "\n"


PARTS = ("tightness", "faulty", "one_run")


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--parts", default=None, help=f"comma-separated parts to rerun ({', '.join(PARTS)})")
    parser.add_argument("--faults", default=None, help="comma-separated TORCH_FAULTS entries (default: all)")
    parser.add_argument("--tight-runs", default="5000,20000", help="runs per side of the tightness audits")
    args = parser.parse_args(argv)
    parts = PARTS if args.parts is None else tuple(args.parts.split(","))
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"--parts: unknown part(s) {unknown}; choose from {', '.join(PARTS)}")
    names = None if args.faults is None else args.faults.split(",")
    result = {}
    previous = args.out / "training.json" if args.out is not None else None
    if previous is not None and previous.exists():
        result = json.loads(previous.read_text())
    started = time.perf_counter()
    if "tightness" in parts:
        result["tightness"] = tightness([500] if args.quick else [int(v) for v in args.tight_runs.split(",")], args.jobs)
        _write(args.out, result)
    if "faulty" in parts:
        kept = [r for r in result.get("faulty", []) if names is not None and r["trainer"] not in names]

        def save(rows):  # after every row, so that an interrupted run keeps what it measured
            result["faulty"] = sorted(kept + rows, key=lambda r: list(TORCH_FAULTS).index(r["trainer"]))
            _write(args.out, result)

        faulty((lambda name: 200) if args.quick else FAULT_SAMPLES.get, args.jobs, names, save)
    if "one_run" in parts:
        result["one_run"] = one_run([100] if args.quick else [100, 1000], 2 if args.quick else 10)
    result["cpus"] = os.cpu_count()
    result.setdefault("runs", []).append({"parts": list(parts), "faults": names,
                                          "wall_time_s": time.perf_counter() - started})
    print(to_markdown(result))
    _write(args.out, result)
    return result


def _write(out, result) -> None:
    """Write training.json and training.md atomically (nothing without ``--out``)."""
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    for name, text in (("training.json", json.dumps(result, indent=1, default=str)), ("training.md", to_markdown(result))):
        tmp = out / (name + ".tmp")
        tmp.write_text(text)
        os.replace(tmp, out / name)


if __name__ == "__main__":
    main()
