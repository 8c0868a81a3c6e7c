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
3. **One run** (:func:`audit.one_run.one_run_audit`): one training with m canaries, each included
   with probability ½ (:meth:`mechanisms.training.TorchTraining.one_run_scores`; the batch size is
   chosen so that Opacus's q is ½ with the m canary rows), at δ = 1e-5: Steinke, Nasr & Jagielski
   (2023), the f-DP bound (Mahloujifar, Melis & Chaudhuri 2025) and, for Dirac canaries only, the
   order-statistics bound, each with its default candidates, in the (ε, δ) family (an ε bound
   whatever the curve's shape) and the Gaussian family (μ_lb), beside the accountant's claim, the
   exact ε where known and each method's ceiling.  Trainers: the correct Opacus trainer, the
   unscaled-noise and unnoised-parameter-group trainers (Dirac canaries), and the correct Opacus
   trainer with black-box input canaries.
4. **Validity** at a tight claim: R audits with independent seeds of the correct Opacus trainer of
   the tightness part (σ = 1, q = ½, T = 4) against dp-accounting's PLD claim, which is its exact
   truth (pessimistic PLD, within 2e-4 of the exact ε), at a small budget with the suite's settings
   (linear statistic, early stopping): the false-VIOLATED rate with its Clopper–Pearson interval
   and how often ε_lb exceeded the exact ε.

``--parts`` reruns some parts; what it measures is merged into the ``--out`` folder's
``training.json`` row by row (rows are keyed by part and entry: a rerun row replaces the saved row
of the same key and every other saved row is kept).

The machine is shared: every timed row records ``os.getloadavg()`` at its start.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from scipy import stats

import scenarios
from audit import run_audit
from audit.one_run import one_run_audit
from audit.selection import Budget
from audit.slots import headline_slots
from mechanisms.dpsgd.canary import projection_sum_survival
from mechanisms.training import InputCanary, TorchTraining
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


def tightness(samples_list, jobs, save=lambda rows: None):
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
                     "seconds": time.perf_counter() - started, "load": load, "load_end": _load(), "jobs": jobs})
        print(rows[-1], flush=True)
        save(rows)
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
                     "load": load, "load_end": _load(), "jobs": jobs})
        print(rows[-1], flush=True)
        save(rows)
    return rows


#: The one-run bounds compared: (method, families).  The order-statistics bound assumes the canaries
#: do not interfere, true of Dirac canaries on their own coordinates, not of input canaries.
ONE_RUN_METHODS = (("steinke", ("approx",)), ("fdp", ("approx", "gdp")), ("order-statistics", ("approx", "gdp")))
ONE_RUN_DELTA = 1e-5
#: The one-run trainers: (name, canary kind, TorchTraining options other than the batch size).
ONE_RUN_TRAINERS = (
    ("opacus-correct", "dirac", dict(TIGHT, accountant="pld")),
    ("unscaled-noise", "dirac", dict(TORCH_FAULTS["unscaled-noise"].options, train=TORCH_FAULTS["unscaled-noise"].train)),
    ("unnoised-parameter-group", "dirac", dict(TORCH_FAULTS["unnoised-parameter-group"].options,
                                               train=TORCH_FAULTS["unnoised-parameter-group"].train)),
    ("opacus-correct", "input", dict(TIGHT, accountant="pld", data="digits", n=99, canary=InputCanary(scale=4.0))),
)


def one_run_trainer(options: dict, m: int) -> TorchTraining:
    """The trainer of ``options`` at δ = 1e-5 with the batch size that makes Opacus's q = ½ with m
    canary rows: B = ⌈(n + m)/2⌉, so that ⌈(n + m)/B⌉ = 2."""
    return TorchTraining(**dict(options, delta=ONE_RUN_DELTA, batch_size=-(-(options["n"] + m) // 2)))


def one_run(plan, seeds_of, names=None):
    """One-run audits: for each (trainer, canary, m) of ``plan``, ``seeds_of(m)`` trainings, each
    scored and bounded by every method of :data:`ONE_RUN_METHODS` with its default candidates."""
    rows = []
    for name, kind, options in ONE_RUN_TRAINERS:
        if names is not None and name not in names:
            continue
        for m in plan.get((name, kind), ()):
            mechanism = one_run_trainer(options, m)
            try:
                exact = mechanism.one_run_epsilon(m, ONE_RUN_DELTA)
            except NotImplementedError:
                exact = None
            seeds, load = seeds_of(m, kind), _load()
            draws, train_seconds = [], []
            for seed in range(seeds):
                started = time.perf_counter()
                draws.append(mechanism.one_run_scores(m, np.random.default_rng(40_000 + seed)))
                train_seconds.append(time.perf_counter() - started)
            for method, families in ONE_RUN_METHODS:
                if method == "order-statistics" and kind != "dirac":
                    continue
                row = {"trainer": name, "canary": kind, "mechanism": mechanism.name, "canaries": m,
                       "q": mechanism.one_run_sample_rate(m), "seeds": seeds, "delta": ONE_RUN_DELTA, "method": method,
                       "claim_epsilon": mechanism.one_run_claim(m).epsilon_at(ONE_RUN_DELTA), "exact_epsilon": exact,
                       "train_seconds": float(np.mean(train_seconds)), "load": load}
                for family in families:
                    started = time.perf_counter()
                    results = [one_run_audit(scores, included, delta=ONE_RUN_DELTA, method=method, family=family,
                                             confidence=CONFIDENCE) for scores, included in draws]
                    bounds = [r.mu_lower_bound if family == "gdp" else r.epsilon_lower_bound for r in results]
                    row[family] = {"mean": float(np.mean(bounds)), "min": float(np.min(bounds)),
                                   "max": float(np.max(bounds)),
                                   "ceiling": results[0].mu_ceiling if family == "gdp" else results[0].epsilon_ceiling,
                                   "epsilon_mean": float(np.mean([r.epsilon_lower_bound for r in results])),
                                   "above_exact": None if exact is None or family == "gdp" else
                                   int(sum(r.epsilon_lower_bound > exact for r in results)),
                                   "above_claim": None if family == "gdp" else
                                   int(sum(r.epsilon_lower_bound > row["claim_epsilon"] for r in results)),
                                   "seconds": (time.perf_counter() - started) / seeds}
                rows.append(row)
                print(row, flush=True)
    return rows


# -- validity at a tight claim ---------------------------------------------------------------------------
#: Audits and runs per side of the validity part.  R = 300: the 95% Clopper-Pearson interval's upper
#: end stays at or below 5% with up to 7 false alarms, so a trainer whose true false-VIOLATED rate is
#: 1% is certified below the 5% target with probability 0.99 (2%: 0.75); 0 alarms give 1.2%.
VALIDITY_AUDITS, VALIDITY_RUNS = 300, 200


def _validity_audit(mechanism, samples, seed):
    report = _audit(mechanism, samples, seed, "linear", jobs=1)
    return report.verdict.value, report.epsilon_lower_bound


def validity(audits, samples, jobs):
    """``audits`` audits (seeds 50 000 + i, ``samples`` runs per side, linear statistic, early
    stopping) of the correct Opacus trainer against its tight PLD claim, ``jobs`` audits at a time."""
    mechanism = TorchTraining(**dict(TIGHT, accountant="pld"))
    low, high = mechanism.exact_epsilon_bracket(mechanism.delta)
    load, started = _load(), time.perf_counter()
    outcomes = Parallel(n_jobs=jobs)(delayed(_validity_audit)(mechanism, samples, 50_000 + i) for i in range(audits))
    alarms = sum(verdict == "VIOLATED" for verdict, _ in outcomes)
    bounds = np.array([bound for _, bound in outcomes])
    ci = stats.binomtest(alarms, audits).proportion_ci(0.95, method="exact")
    row = {"mechanism": mechanism.name, "statistic": "linear", "early_stopping": True, "audits": audits,
           "runs_per_audit": samples, "false_violated": alarms, "ci_low": ci.low, "ci_high": ci.high,
           "allowed": 1 - CONFIDENCE, "claim_epsilon": mechanism.claim.epsilon_at(mechanism.delta),
           "exact_low": low, "exact_high": high, "above_exact": int(np.sum(bounds > low)),
           "mean_epsilon_lb": float(bounds.mean()), "max_epsilon_lb": float(bounds.max()),
           "seconds": time.perf_counter() - started, "load": load, "load_end": _load(), "jobs": jobs}
    print(row, flush=True)
    return [row]


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
    if result.get("one_run"):
        lines += ["", f"#### One training with m canaries, each included with probability ½ (δ = {ONE_RUN_DELTA:g}, "
                  f"{CONFIDENCE:.0%}, each method's default candidates)", "",
                  "B = ⌈(n + m)/2⌉, so Opacus's q is ½ with the m canary rows (an excluded canary is a null row). "
                  "ε_lb: the (ε, δ) family, a lower bound on ε(δ) whatever the shape of the trade-off curve. "
                  "μ_lb: the Gaussian family, \"the training is not μ_lb-GDP\" (its ε from G_μ would be a bound on "
                  "ε(δ) only for a Gaussian-shaped curve, which the subsampled Gaussian's is not). Ceiling: the bound "
                  "had every guess been right. ‡ assumes the canaries do not interfere: true of Dirac canaries on "
                  "their own coordinates with every update visible, not of input canaries (no row). "
                  "\"> exact\", \"> claim\": seeds whose ε_lb exceeds the exact ε (a false report) or the claimed ε "
                  "(a refutation).", "",
                  "| trainer | canary | m | seeds | method | ε_lb: mean [min, max] | ceiling ε | μ_lb: mean [min, max] "
                  "| ceiling μ | claimed ε | exact ε | > exact | > claim | training (s) | bounds (s) | load |",
                  "|---|---|---:|---:|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in result["one_run"]:
            eps, mu = r["approx"], r.get("gdp")
            spread = lambda b: f"{b['mean']:.3f} [{b['min']:.3f}, {b['max']:.3f}]"
            exact = "unknown" if r["exact_epsilon"] is None else f"{r['exact_epsilon']:.3f}"
            seconds = eps["seconds"] + (mu["seconds"] if mu else 0.0)
            lines.append(f"| {r['trainer']} | {r['canary']} | {r['canaries']:,} | {r['seeds']} | "
                         f"{_ONE_RUN_LABEL[r['method']]} | {spread(eps)} | {eps['ceiling']:.3f} | "
                         f"{spread(mu) if mu else '—'} | {_fmt(mu['ceiling'] if mu else None, 4)} | "
                         f"{r['claim_epsilon']:.3f} | {exact} | {_fmt(eps['above_exact'])} | {eps['above_claim']} | "
                         f"{r['train_seconds']:.2f} | {seconds:.2f} | {r['load']:.1f} |")
    if result.get("validity"):
        lines += ["", "#### Validity at a tight claim: the correct Opacus trainer against its exact truth", "",
                  "Independent audits (seeds 50 000 + i), each with the suite's settings (linear statistic, early "
                  "stopping) against dp-accounting's PLD claim, which is the trainer's exact ε(δ) (the composed "
                  "Poisson-subsampled Gaussian, pessimistic PLD).  \"ε_lb > exact\" counts the audits whose ε_lb "
                  "exceeds the low end of the exact ε's PLD bracket.", "",
                  "| mechanism | statistic | audits | runs per side | false VIOLATED [95% CP] | allowed | "
                  "ε_lb > exact | mean ε_lb | max ε_lb | claimed ε (PLD) | exact ε [PLD bracket] | time (s) | jobs | load |",
                  "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---|---:|---:|---:|"]
        for v in result["validity"]:
            lines.append(f"| {v['mechanism']} | {v['statistic']} | {v['audits']} | {v['runs_per_audit']:,} | "
                         f"{v['false_violated']}/{v['audits']} [{v['ci_low']:.4f}, {v['ci_high']:.4f}] | "
                         f"≤ {v['allowed']:.2f} | {v['above_exact']} | {v['mean_epsilon_lb']:.3f} | "
                         f"{v['max_epsilon_lb']:.3f} | {v['claim_epsilon']:.4f} | "
                         f"[{v['exact_low']:.4f}, {v['exact_high']:.4f}] | {v['seconds']:.0f} | {v['jobs']} | "
                         f"{v['load']:.1f} |")
    return "\n".join(lines) + "\n"


_ONE_RUN_LABEL = {"steinke": "Steinke et al.", "fdp": "f-DP", "order-statistics": "order statistics ‡"}

PARTS = ("tightness", "faulty", "one_run", "validity")
#: What identifies a row of each part: a rerun row replaces the saved row with the same key.
ROW_KEYS = {"tightness": ("mechanism", "delta", "statistic", "runs"),
            "faulty": ("trainer",),
            "one_run": ("trainer", "canary", "canaries", "delta", "method"),
            "validity": ("mechanism", "statistic", "runs_per_audit")}


def merge_rows(part: str, saved: list, new: list) -> list:
    """``saved`` rows of ``part`` with each replaced by the ``new`` row of the same key, then the
    ``new`` rows with no saved counterpart; faulty rows in :data:`TORCH_FAULTS` order."""
    key = lambda row: tuple(json.dumps(row.get(name), default=str) for name in ROW_KEYS[part])
    fresh = {key(row): row for row in new}
    merged = [fresh.pop(key(row), row) for row in saved]
    merged += [row for row in new if key(row) in fresh]
    if part == "faulty":
        merged.sort(key=lambda row: list(TORCH_FAULTS).index(row["trainer"]))
    return merged


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--parts", default=None, help=f"comma-separated parts to rerun ({', '.join(PARTS)})")
    parser.add_argument("--faults", default=None,
                        help="comma-separated TORCH_FAULTS entries for the faulty and one_run parts (default: all)")
    parser.add_argument("--tight-runs", default="5000,20000", help="runs per side of the tightness audits")
    parser.add_argument("--validity-audits", type=int, default=VALIDITY_AUDITS)
    parser.add_argument("--validity-runs", type=int, default=VALIDITY_RUNS, help="runs per side of each validity audit")
    args = parser.parse_args(argv)
    parts = PARTS if args.parts is None else tuple(args.parts.split(","))
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"--parts: unknown part(s) {unknown}; choose from {', '.join(PARTS)}")
    names = None if args.faults is None else args.faults.split(",")
    if names is not None and set(names) - set(TORCH_FAULTS):
        parser.error(f"--faults: unknown entries {sorted(set(names) - set(TORCH_FAULTS))}")
    result = {}
    previous = args.out / "training.json" if args.out is not None else None
    if previous is not None and previous.exists():
        result = json.loads(previous.read_text())
    result["cpus"] = os.cpu_count()
    started, load = time.perf_counter(), _load()

    def save(part, rows):  # merged after every row, so that an interrupted run keeps what it measured
        result[part] = merge_rows(part, result.get(part, []), rows)
        _write(args.out, result)

    if "tightness" in parts:
        runs = [500] if args.quick else [int(v) for v in args.tight_runs.split(",")]
        tightness(runs, args.jobs, lambda rows: save("tightness", rows))
    if "faulty" in parts:
        faulty((lambda name: 200) if args.quick else FAULT_SAMPLES.get, args.jobs, names,
               lambda rows: save("faulty", rows))
    if "one_run" in parts:
        if args.quick:
            plan = {("opacus-correct", "dirac"): (100,), ("opacus-correct", "input"): (100,)}
        else:
            plan = {("opacus-correct", "dirac"): (100, 1000, 10_000), ("unscaled-noise", "dirac"): (100, 1000),
                    ("unnoised-parameter-group", "dirac"): (100, 1000), ("opacus-correct", "input"): (1000,)}
        seeds_of = (lambda m, kind: 2) if args.quick else (lambda m, kind: 3 if m >= 10_000 else 10)
        save("one_run", one_run(plan, seeds_of, names))
    if "validity" in parts:
        audits, runs = (4, 100) if args.quick else (args.validity_audits, args.validity_runs)
        save("validity", validity(audits, runs, args.jobs))
    result.setdefault("runs", []).append({"parts": list(parts), "faults": names, "load_start": load,
                                          "load_end": _load(), "wall_time_s": time.perf_counter() - started})
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
