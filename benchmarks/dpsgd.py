"""Auditing DP-SGD: tightness of the gradient-canary audit, faulty trainers, validity, one run.

``python -m benchmarks.dpsgd --out benchmarks/results/dpsgd`` (``--quick`` for a smoke run) audits
the small configuration of :data:`mechanisms.dpsgd.SMALL_CONFIGURATION` (q = 0.5, σ = 1, T = 4,
C = 1, δ = 1e-3, n = 50; accountant ε = 4.481) and prints four tables:

1. **Tightness.**  The every-update gradient-canary audit (small configuration, and DPSGD's defaults
   at δ = 1e-5) with :class:`ProjectionSum`, next to the
   single-best-event limit of that statistic at the same number of runs, computed from its exact
   law (:func:`mechanisms.dpsgd.canary.projection_sum_survival`, a finite mixture of Gaussians: the
   limit of :mod:`benchmarks.limits` needs no integration or Monte Carlo), the accountant's ε and
   the exact ε bracket.  The likelihood-ratio score is audited too (its limit is not computed).
   These audits run without early stopping: the limit is that of a single look.
2. **Faulty trainers** (:data:`scenarios.faulty_cases.FAULTY_TRAINERS`) and the correct trainer, each
   audited at a stated number of runs against its accountant's claim.  Shuffling is audited on its
   crafted training set (every other gradient −C·u, :mod:`mechanisms.dpsgd.shuffle`) with the
   shuffled pair's likelihood ratio, beside the correct (Poisson) trainer on the same data with the
   same statistic.  The black-box input canary (final loss only) is audited with the engine's
   default statistic.
2b. **Shuffled pairs.**  The ε(δ) of the shuffled trainer's canary pair by three routes: closed-form
   threshold events and quadrature of a rounded view (both lower bounds), and Monte Carlo of the
   exact likelihood ratio (an estimate with a 95% CLT interval); against the Poisson accountant's
   claim, with the audit of the shuffled and the Poisson trainer at the same configuration.
2c. **Network.**  The one-hidden-layer network (``model="mlp"``): tightness at the small
   configuration, and the correct and unscaled-noise trainers.
3. **Validity.**  R audits of the correct trainer with independent seeds: the false-VIOLATED rate
   with its Clopper–Pearson interval, and how often ε_lb exceeded the exact ε; and R audits of the
   correct trainer on the crafted data set with the shuffled pair's statistic.

``--parts`` reruns some of the tables only (the others are kept from the ``--out`` folder's
``dpsgd.json``).
4. **One run** (Steinke, Nasr & Jagielski 2023): m ∈ {100, 1000} Dirac canaries in one training
   run, the ε bound (95%, Bonferroni over 4 guess counts), guesses and time, over several seeds,
   beside the multi-run audit.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from scipy import stats

import scenarios
from audit import run_audit
from audit.one_run import one_run_audit
from audit.selection import Budget
from audit.slots import headline_slots
from mechanisms.dpsgd import DPSGD, SMALL_CONFIGURATION
from mechanisms.dpsgd.accounting import poisson_gaussian_epsilon
from mechanisms.dpsgd.canary import InputCanary, projection_sum_survival
from scenarios.faulty_cases import FAULTY_TRAINERS

from .limits import single_threshold_limit

CONFIDENCE = 0.95
PAIR = scenarios.from_pairs([(np.zeros((0, 1)), np.ones((1, 1)), "add the canary")])


def projection_limit(mechanism: DPSGD, samples: int, confidence: float = CONFIDENCE):
    """The single-threshold limit of the projection-sum statistic at ``samples`` runs per side."""
    budget = Budget(1.0 - confidence, headline_slots(mechanism.claim), 1)
    base_sf, neighbour_sf = projection_sum_survival(mechanism.q, mechanism.steps,
                                                    mechanism.canary_shift, mechanism.noise_std)
    spread = mechanism.noise_std * np.sqrt(mechanism.steps)
    thresholds = np.linspace(-12 * spread, mechanism.steps * mechanism.canary_shift + 12 * spread, 8001)
    return single_threshold_limit(base_sf, neighbour_sf, thresholds, samples=samples,
                                  delta=mechanism.claim.reference_delta,
                                  epsilon_level=budget.headline_level, mu_level=budget.headline_level)


#: The shuffled trainers of table 2b: (label, DPSGD options).  The first is the zoo entry.
SHUFFLED = (("crafted data −C·u, small configuration", dict(SMALL_CONFIGURATION, background=-1.0)),
            ("logistic data (Dirac: others 0), small configuration", dict(SMALL_CONFIGURATION)),
            ("crafted data −C·u, DPSGD defaults", dict(background=-1.0)))


def shuffle_pairs(draws, samples):
    """Table 2b: each shuffled pair's ε(δ) by three routes, and both trainers audited."""
    rows = []
    for label, options in SHUFFLED:
        shuffled = DPSGD(**options, sampling="shuffle")
        pair = shuffled.shuffled_pair()
        delta = shuffled.delta
        started = time.perf_counter()
        estimate = pair.epsilon(delta, draws=draws, seed=5, confidence=CONFIDENCE)
        grid = pair.grid_lower_bound(delta, step=0.02, bins=3000) if pair.batches <= 2 else None
        row = {"pair": label, "mechanism": shuffled.name, "q": shuffled.q, "sigma": shuffled.sigma,
               "steps": shuffled.steps, "delta": delta, "claim_epsilon": shuffled.claim.epsilon,
               "event_lower_bound": pair.event_lower_bound(delta), "grid_lower_bound": grid,
               "mc_estimate": estimate.estimate, "mc_low": estimate.low, "mc_high": estimate.high,
               "mc_draws": draws, "mc_direction": estimate.direction,
               "pair_seconds": time.perf_counter() - started, "audits": []}
        if options.get("background") is not None:
            statistic = shuffled.shuffled_likelihood_ratio_score()
            for trainer, mechanism in (("shuffle", shuffled), ("poisson (correct)", DPSGD(**options))):
                started = time.perf_counter()
                report = _audit(mechanism, samples, 2029, statistic)
                row["audits"].append({"trainer": trainer, "runs": samples, "epsilon_lb": report.epsilon_lower_bound,
                                      "delta_lb": report.delta_lower_bound, "verdict": report.verdict.value,
                                      "seconds": time.perf_counter() - started})
        rows.append(row)
        print(row, flush=True)
    # which part of the crafted pair's loss drives it (small configuration, quadrature lower bounds)
    pair = DPSGD(**SHUFFLED[0][1], sampling="shuffle").shuffled_pair()
    shifts = np.asarray(pair.shifts)  # K = 2: rows (C, 0) and (−C, 2C)
    parts = {"both (the trainer)": shifts,
             "the canary's batch only (displacement, 2C)": np.diag([shifts[1, 1]] * pair.batches),
             "batch 0's extra example only (−C)": np.where(np.arange(pair.batches)[None, :] == 0,
                                                            np.minimum(shifts, 0.0), 0.0)}
    decomposition = []
    for name, value in parts.items():
        part = type(pair)(pair.steps, pair.noise, pair.base, tuple(map(tuple, value)), pair.weights)
        decomposition.append({"shifts": name, "grid_lower_bound": part.grid_lower_bound(
            SMALL_CONFIGURATION["delta"], step=0.02, bins=3000)})
    return {"rows": rows, "decomposition": decomposition}


def _audit(mechanism, samples, seed, statistic, early_stopping=True):
    return run_audit(mechanism, PAIR, samples=samples, seed=seed, confidence=CONFIDENCE,
                     statistic=statistic, progress=False, accuracy=False, early_stopping=early_stopping)


def tightness(samples_list, default_samples_list):
    """The small configuration with both scores, and DPSGD's defaults (q = 0.1, σ = 1, T = 10,
    n = 100, δ = 1e-5) with the projection sum."""
    rows = []
    small, default = DPSGD(**SMALL_CONFIGURATION), DPSGD()
    plan = [(small, n, label) for n in samples_list for label in ("projection sum", "likelihood ratio")]
    plan += [(default, n, "projection sum") for n in default_samples_list]
    for mechanism, samples, name in plan:
        low, high = mechanism.exact_epsilon_bracket(mechanism.delta)
        statistic = mechanism.projection_score() if name == "projection sum" else mechanism.likelihood_ratio_score()
        started = time.perf_counter()
        # One look, as the limit assumes (its budget is not split over early-stopping looks); the
        # literature benchmark measures tightness the same way.
        report = _audit(mechanism, samples, 2026, statistic, early_stopping=False)
        limit = projection_limit(mechanism, samples).epsilon if name == "projection sum" else None
        rows.append({"mechanism": mechanism.name, "delta": mechanism.delta, "statistic": name, "runs": samples,
                     "epsilon_lb": report.epsilon_lower_bound, "limit": limit,
                     "ratio": None if limit is None else report.epsilon_lower_bound / limit,
                     "accountant_epsilon": mechanism.claim.epsilon, "exact_low": low, "exact_high": high,
                     "verdict": report.verdict.value, "seconds": time.perf_counter() - started})
        print(rows[-1], flush=True)
    return rows


def faulty(samples):
    rows = []
    cases = {"correct": DPSGD(**SMALL_CONFIGURATION)}
    cases.update({name: case()[0] for name, case in FAULTY_TRAINERS.items()})
    shuffled = cases["dpsgd-shuffling"]
    items = list(cases.items())
    at = [name for name, _ in items].index("dpsgd-shuffling")
    items.insert(at, ("correct, crafted data", DPSGD(**SMALL_CONFIGURATION, background=shuffled.background)))
    for name, mechanism in items:
        statistics = [("projection sum", mechanism.projection_score())]
        if mechanism.background is not None:  # the shuffled pair's likelihood ratio, fixed in advance
            statistics.append(("shuffled likelihood ratio", shuffled.shuffled_likelihood_ratio_score()))
        elif mechanism.clipping == "per-example":
            statistics.append(("likelihood ratio", mechanism.likelihood_ratio_score()))
        for label, statistic in statistics:
            started = time.perf_counter()
            report = _audit(mechanism, samples, 2027, statistic)
            truth = report.exact_epsilon
            rows.append({"trainer": name, "mechanism": mechanism.name, "statistic": label, "runs": samples,
                         "claim_epsilon": mechanism.claim.epsilon, "exact_epsilon": truth,
                         "epsilon_lb": report.epsilon_lower_bound, "delta_lb": report.delta_lower_bound,
                         "verdict": report.verdict.value, "seconds": time.perf_counter() - started})
            print(rows[-1], flush=True)
    return rows


def black_box(samples):
    """The input-space canary seen only through the final model's loss, default statistic."""
    rows = []
    for name, changes in (("correct", {}), ("dpsgd-unscaled-noise", {"clip": 2.0, "noise": "unscaled"})):
        mechanism = DPSGD(**dict(SMALL_CONFIGURATION, **changes), canary=InputCanary(), view="final-loss")
        started = time.perf_counter()
        report = _audit(mechanism, samples, 2028, "auto")
        rows.append({"trainer": name, "mechanism": mechanism.name, "statistic": "auto (final loss)",
                     "runs": samples, "claim_epsilon": mechanism.claim.epsilon, "exact_epsilon": None,
                     "epsilon_lb": report.epsilon_lower_bound, "delta_lb": report.delta_lower_bound,
                     "verdict": report.verdict.value, "seconds": time.perf_counter() - started})
        print(rows[-1], flush=True)
    return rows


def network(tight_samples, fault_samples):
    """The one-hidden-layer network (``model="mlp"``, h = 8) at the small configuration: tightness
    of the projection sum (one look) and the correct and unscaled-noise trainers at the faulty
    table's runs, Dirac canary."""
    rows = []
    correct = DPSGD(**SMALL_CONFIGURATION, model="mlp")
    unscaled = DPSGD(**dict(SMALL_CONFIGURATION, clip=2.0), noise="unscaled", model="mlp")
    plan = [("correct", correct, "projection sum", tight_samples, False),
            ("correct", correct, "likelihood ratio", fault_samples, True),
            ("dpsgd-unscaled-noise", unscaled, "likelihood ratio", fault_samples, True)]
    for trainer, mechanism, label, samples, early in plan:
        statistic = mechanism.projection_score() if label == "projection sum" else mechanism.likelihood_ratio_score()
        started = time.perf_counter()
        report = _audit(mechanism, samples, 2030, statistic, early_stopping=early)
        limit = None if early else projection_limit(mechanism, samples).epsilon
        rows.append({"trainer": trainer, "mechanism": mechanism.name, "statistic": label, "runs": samples,
                     "early_stopping": early, "epsilon_lb": report.epsilon_lower_bound, "limit": limit,
                     "ratio": None if limit is None else report.epsilon_lower_bound / limit,
                     "claim_epsilon": mechanism.claim.epsilon,
                     "exact_epsilon": mechanism.epsilon_for_delta(mechanism.delta),
                     "delta_lb": report.delta_lower_bound, "verdict": report.verdict.value,
                     "seconds": time.perf_counter() - started})
        print(rows[-1], flush=True)
    return rows


def validity(runs, samples):
    """R audits with independent seeds of the correct trainer (projection sum; exact ε known) and of
    the correct trainer on the shuffled entry's crafted data set (its shuffled likelihood ratio;
    exact ε unknown, the claim holds by the accountant's theorem)."""
    shuffled = FAULTY_TRAINERS["dpsgd-shuffling"]()[0]
    plan = (("projection sum", DPSGD(**SMALL_CONFIGURATION), None, 10_000),
            ("shuffled likelihood ratio", DPSGD(**SMALL_CONFIGURATION, background=shuffled.background),
             shuffled.shuffled_likelihood_ratio_score(), 40_000))
    rows = []
    for label, mechanism, statistic, first_seed in plan:
        statistic = statistic or mechanism.projection_score()
        try:
            exact = mechanism.epsilon_for_delta(mechanism.delta)
        except NotImplementedError:
            exact = None
        started = time.perf_counter()
        reports = [_audit(mechanism, samples, first_seed + i, statistic) for i in range(runs)]
        alarms = sum(r.verdict.value == "VIOLATED" for r in reports)
        ci = stats.binomtest(alarms, runs).proportion_ci(0.95, method="exact")
        rows.append({"mechanism": mechanism.name, "statistic": label, "audits": runs, "runs_per_audit": samples,
                     "false_violated": alarms, "ci_low": ci.low, "ci_high": ci.high, "allowed": 1 - CONFIDENCE,
                     "epsilon_lb_above_exact": None if exact is None else
                     sum(r.epsilon_lower_bound > exact for r in reports),
                     "mean_epsilon_lb": float(np.mean([r.epsilon_lower_bound for r in reports])),
                     "max_epsilon_lb": float(np.max([r.epsilon_lower_bound for r in reports])),
                     "claim_epsilon": mechanism.claim.epsilon, "exact_epsilon": exact,
                     "seconds": time.perf_counter() - started})
        print(rows[-1], flush=True)
    return rows


def one_run(canaries, seeds, multi_run_epsilon, deltas):
    rows = []
    for name, mechanism in (("correct", DPSGD(**SMALL_CONFIGURATION)),
                            ("dpsgd-unscaled-noise", FAULTY_TRAINERS["dpsgd-unscaled-noise"]()[0])):
        for delta in deltas:
            accountant = poisson_gaussian_epsilon(mechanism.q, mechanism.sigma, mechanism.accountant_steps, delta)
            for m in canaries:
                guesses = [(k, k) for k in (max(1, m // 100), m // 20, m // 10, m // 4)]
                bounds, times, results = [], [], []
                for seed in range(seeds):
                    started = time.perf_counter()
                    scores, included = mechanism.one_run_scores(m, np.random.default_rng(30_000 + seed))
                    result = one_run_audit(scores, included, guesses=guesses, delta=delta,
                                           confidence=CONFIDENCE)
                    times.append(time.perf_counter() - started)
                    bounds.append(result.epsilon_lower_bound)
                    results.append(result)
                first = results[0]
                rows.append({"trainer": name, "delta": delta, "canaries": m, "seeds": seeds,
                             "accountant_epsilon": accountant, "exact_epsilon": mechanism.epsilon_for_delta(delta),
                             "mean_bound": float(np.mean(bounds)), "min_bound": float(np.min(bounds)),
                             "max_bound": float(np.max(bounds)), "guesses_first": first.guesses,
                             "correct_first": first.correct, "candidates": len(guesses),
                             "multi_run_epsilon_lb": multi_run_epsilon.get(name) if delta == mechanism.delta else None,
                             "seconds_mean": float(np.mean(times))})
                print(rows[-1], flush=True)
    return rows


def _fmt(value, digits=4):
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    return str(value)


def to_markdown(result) -> str:
    lines = ["#### Tightness of the gradient-canary audit (Dirac canary, every update visible)", "",
             "| mechanism | δ | statistic | runs | ε_lb | single-event limit (exact law) | ε_lb / limit | accountant ε | exact ε [PLD bracket] | verdict | time (s) |",
             "|---|---:|---|---:|---:|---:|---:|---:|---|---|---:|"]
    for r in result["tightness"]:
        lines.append(f"| {r['mechanism']} | {r['delta']:g} | {r['statistic']} | {r['runs']:,} | {_fmt(r['epsilon_lb'])} | {_fmt(r['limit'])} | "
                     f"{_fmt(r['ratio'], 3)} | {_fmt(r['accountant_epsilon'])} | [{r['exact_low']:.4f}, {r['exact_high']:.4f}] | "
                     f"{r['verdict']} | {r['seconds']:.1f} |")
    lines += ["", "#### Faulty trainers against their accountant's claim", "",
              "| trainer | statistic | runs | claimed ε | exact ε | ε_lb | δ_lb at claimed ε | verdict | time (s) |",
              "|---|---|---:|---:|---:|---:|---:|---|---:|"]
    for r in result["faulty"]:
        exact = "unknown" if r["exact_epsilon"] is None else _fmt(r["exact_epsilon"])
        lines.append(f"| {r['trainer']} | {r['statistic']} | {r['runs']:,} | {_fmt(r['claim_epsilon'])} | {exact} | "
                     f"{_fmt(r['epsilon_lb'])} | {_fmt(r['delta_lb'], 3)} | {r['verdict']} | {r['seconds']:.1f} |")
    lines += ["", "Black-box input canary (the final model's loss on it; exact truth unknown, the accountant bounds it):", "",
              "| trainer | statistic | runs | claimed ε | ε_lb | δ_lb at claimed ε | verdict | time (s) |",
              "|---|---|---:|---:|---:|---:|---|---:|"]
    for r in result["black_box"]:
        lines.append(f"| {r['trainer']} | {r['statistic']} | {r['runs']:,} | {_fmt(r['claim_epsilon'])} | "
                     f"{_fmt(r['epsilon_lb'])} | {_fmt(r['delta_lb'], 3)} | {r['verdict']} | {r['seconds']:.1f} |")
    lines += _shuffle_markdown(result["shuffle"])
    if "network" in result:
        lines += ["", "#### One-hidden-layer network (model=\"mlp\", h = 8 tanh units), Dirac canary, every update visible", "",
                  "| trainer | statistic | runs | early stopping | ε_lb | single-event limit | ε_lb / limit | claimed ε | exact ε | δ_lb at claimed ε | verdict | time (s) |",
                  "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---|---:|"]
        for r in result["network"]:
            lines.append(f"| {r['trainer']} | {r['statistic']} | {r['runs']:,} | {'yes' if r['early_stopping'] else 'no'} | "
                         f"{_fmt(r['epsilon_lb'])} | {_fmt(r['limit'])} | {_fmt(r['ratio'], 3)} | {_fmt(r['claim_epsilon'])} | "
                         f"{_fmt(r['exact_epsilon'])} | {_fmt(r['delta_lb'], 3)} | {r['verdict']} | {r['seconds']:.1f} |")
    validity_rows = result["validity"] if isinstance(result["validity"], list) else [result["validity"]]
    lines += ["", "#### Validity of the correct trainer", "",
              "| mechanism | statistic | audits | runs per audit | false VIOLATED [95% CP] | allowed | ε_lb > exact ε | mean ε_lb | claimed ε | exact ε | time (s) |",
              "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for v in validity_rows:
        lines.append(f"| {v['mechanism']} | {v.get('statistic', 'projection sum')} | {v['audits']} | {v['runs_per_audit']:,} | "
                     f"{v['false_violated']}/{v['audits']} [{v['ci_low']:.3f}, {v['ci_high']:.3f}] | ≤ {v['allowed']:.2f} | "
                     f"{_fmt(v['epsilon_lb_above_exact'])} | {v['mean_epsilon_lb']:.4g} | "
                     f"{_fmt(v.get('claim_epsilon', v['exact_epsilon']))} | "
                     f"{'unknown' if v['exact_epsilon'] is None else _fmt(v['exact_epsilon'])} | {v['seconds']:.0f} |")
    lines += ["", "#### One run (Steinke, Nasr & Jagielski 2023), 95%, Bonferroni over 4 guess counts k₊ = k₋ ∈ {m/100, m/20, m/10, m/4}", "",
              "| trainer | δ | canaries m | seeds | ε bound: mean [min, max] | guesses / correct (first seed) | multi-run ε_lb (LR score, runs of the faulty table) | accountant ε | exact ε | time per run + bound (s) |",
              "|---|---:|---:|---:|---|---|---:|---:|---:|---:|"]
    for r in result["one_run"]:
        lines.append(f"| {r['trainer']} | {r['delta']:g} | {r['canaries']} | {r['seeds']} | {r['mean_bound']:.3f} [{r['min_bound']:.3f}, "
                     f"{r['max_bound']:.3f}] | {r['guesses_first']} / {r['correct_first']} | "
                     f"{_fmt(r['multi_run_epsilon_lb'])} | {r['accountant_epsilon']:.4g} | {r['exact_epsilon']:.4g} | {r['seconds_mean']:.2f} |")
    return "\n".join(lines) + "\n"


def _shuffle_markdown(shuffle) -> list:
    if "rows" not in shuffle:  # a result file from before table 2b
        return ["", f"Shuffling, Dirac canary: Monte Carlo estimate of the shuffled pair's ε({shuffle['delta']:g}) = "
                f"{shuffle['shuffle_epsilon']:.3f} ({shuffle['runs']:,} draws) against the Poisson accountant's "
                f"{shuffle['poisson_epsilon']:.3f}."]
    lines = ["", "#### Shuffled batches: the canary pair's ε against the Poisson accountant's claim", "",
             "Pair: no canary / add the canary (add-remove), every update visible.  Lower bounds: closed-form "
             "threshold events, and quadrature of the view rounded to cells of 0.02σ (exact for the rounded view, "
             "K ≤ 2 only).  Estimate: Monte Carlo of the exact likelihood ratio, 95% CLT interval.", "",
             "| pair | q | σ | T | δ | claimed ε (Poisson accountant) | ε ≥ (events) | ε ≥ (quadrature) | ε ≈ (Monte Carlo) [95%] | draws | audited: trainer → ε_lb, verdict at runs | time (s) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|---:|"]
    for r in shuffle["rows"]:
        audits = "; ".join(f"{a['trainer']} → {a['epsilon_lb']:.3f}, {a['verdict']} at {a['runs']:,}"
                           for a in r["audits"]) or "—"
        seconds = r["pair_seconds"] + sum(a["seconds"] for a in r["audits"])
        lines.append(f"| {r['pair']} | {r['q']:g} | {r['sigma']:g} | {r['steps']} | {r['delta']:g} | "
                     f"{r['claim_epsilon']:.3f} | {r['event_lower_bound']:.3f} | {_fmt(r['grid_lower_bound'])} | "
                     f"{r['mc_estimate']:.3f} [{r['mc_low']:.3f}, {r['mc_high']:.3f}] | {r['mc_draws']:,} | {audits} | "
                     f"{seconds:.1f} |")
    lines += ["", "Crafted pair of the small configuration, one effect at a time (quadrature lower bounds of ε(0.001)): " +
              "; ".join(f"{d['shifts']}: {d['grid_lower_bound']:.3f}" for d in shuffle["decomposition"]) + "."]
    return lines


PARTS = ("tightness", "faulty", "black_box", "shuffle", "network", "one_run", "validity")


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--validity-audits", type=int, default=200)
    parser.add_argument("--parts", default=None,
                        help=f"comma-separated tables to rerun ({', '.join(PARTS)}); the others are kept "
                             "from --out's dpsgd.json")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.quick:
        tight_runs, default_runs, fault_runs, audits, audit_runs, seeds = [5_000], [5_000], 5_000, 4, 5_000, 2
    else:
        tight_runs, default_runs = [100_000, 1_000_000], [100_000, 1_000_000]
        fault_runs, audits, audit_runs, seeds = 200_000, args.validity_audits, 20_000, 20
    parts = PARTS if args.parts is None else tuple(args.parts.split(","))
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        parser.error(f"--parts: unknown part(s) {unknown}; choose from {', '.join(PARTS)}")
    previous = args.out / "dpsgd.json" if args.out is not None else None
    result = {}
    if set(parts) != set(PARTS):
        if previous is None or not previous.exists():
            parser.error("--parts needs --out with an earlier dpsgd.json to keep the other tables from")
        result = json.loads(previous.read_text())
    result.update({"configuration": SMALL_CONFIGURATION, "confidence": CONFIDENCE})
    config = SMALL_CONFIGURATION
    if "tightness" in parts:
        result["tightness"] = tightness(tight_runs, default_runs)
    if "faulty" in parts:
        result["faulty"] = faulty(fault_runs)
    if "black_box" in parts:
        result["black_box"] = black_box(fault_runs)
    if "shuffle" in parts:
        result["shuffle"] = shuffle_pairs(20_000 if args.quick else 2_000_000, fault_runs)
    if "network" in parts:
        result["network"] = network(tight_runs[0], fault_runs)
    if "one_run" in parts:
        multi = {r["trainer"]: r["epsilon_lb"] for r in result["faulty"] if r["statistic"] == "likelihood ratio"}
        result["one_run"] = one_run([100, 1000], seeds, multi, (config["delta"], 1e-5))
    if "validity" in parts:
        result["validity"] = validity(audits, audit_runs)
    seconds = {"parts": list(parts), "wall_time_s": time.perf_counter() - started}
    if set(parts) == set(PARTS):
        result["wall_time_s"] = seconds["wall_time_s"]
    else:  # the earlier full run's wall time stays; this rerun is recorded beside it
        result.setdefault("partial_runs", []).append(seconds)
    result["cpus"] = os.cpu_count()
    markdown = to_markdown(result)
    print(markdown)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        for name, text in (("dpsgd.json", json.dumps(result, indent=1, default=str)), ("dpsgd.md", markdown)):
            tmp = args.out / (name + ".tmp")
            tmp.write_text(text)
            os.replace(tmp, args.out / name)
    return result


if __name__ == "__main__":
    main()
