"""Auditing DP-SGD: tightness of the gradient-canary audit, faulty trainers, validity, one run.

``python -m benchmarks.dpsgd --out benchmarks/results/dpsgd`` (``--quick`` for a smoke run) audits
the small configuration of :data:`mechanisms.dpsgd.SMALL_CONFIGURATION` (q = 0.5, σ = 1, T = 4,
C = 1, δ = 1e-3, n = 50; accountant ε = 4.481) and prints four tables:

1. **Tightness.**  The every-update gradient-canary audit (small configuration, and DPSGD's defaults
   at δ = 1e-5) with :class:`ProjectionSum`, next to the
   single-best-event limit of that statistic at the same number of runs, computed from its exact
   law (:func:`mechanisms.dpsgd_canary.projection_sum_survival`, a finite mixture of Gaussians: the
   limit of :mod:`benchmarks.limits` needs no integration or Monte Carlo), the accountant's ε and
   the exact ε bracket.  The likelihood-ratio score is audited too (its limit is not computed).
2. **Faulty trainers** (:data:`scenarios.faulty_cases.FAULTY_TRAINERS`) and the correct trainer, each
   audited at a stated number of runs against its accountant's claim.  For shuffling, the ε of the
   Dirac-canary pair under shuffling is estimated by Monte Carlo of its privacy loss (an estimate,
   not a bound) to show why this adversary cannot refute it.  The black-box input canary (final
   loss only) is audited with the engine's default statistic.
3. **Validity.**  R audits of the correct trainer with independent seeds: the false-VIOLATED rate
   with its Clopper–Pearson interval, and how often ε_lb exceeded the exact ε.
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
from scipy import special, stats

import scenarios
from audit import run_audit
from audit.one_run import one_run_audit
from audit.selection import Budget, headline_slots
from mechanisms.dpsgd import DPSGD, SMALL_CONFIGURATION
from mechanisms.dpsgd_accounting import poisson_gaussian_epsilon
from mechanisms.dpsgd_canary import InputCanary, projection_sum_survival
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


def shuffle_dirac_epsilon(q: float, sigma: float, epochs: int, delta: float, *, runs: int,
                          seed: int) -> float:
    """Monte Carlo estimate of ε(δ) of the Dirac-canary pair under shuffling (both directions).

    One epoch of b = 1/q steps: Y ~ N(0, σ²I_b) without the canary, Y ~ N(e_J, σ²I_b) with J
    uniform; the privacy loss is log((1/b)Σ_j exp((Y_j − ½)/σ²)) per epoch, summed over epochs,
    and δ(ε) = E[(1 − e^{ε − L})₊] under the dataset in the numerator.  An estimate, not a bound.
    """
    b = round(1 / q)
    rng = np.random.default_rng(seed)
    losses = []
    for present in (True, False):
        y = sigma * rng.standard_normal((runs, epochs, b))
        if present:
            j = rng.integers(0, b, (runs, epochs))
            y[np.arange(runs)[:, None], np.arange(epochs)[None, :], j] += 1.0
        loss = (special.logsumexp((y - 0.5) / sigma**2, axis=2) - np.log(b)).sum(axis=1)
        losses.append(loss if present else -loss)
    best = 0.0
    for loss in losses:
        low, high = 0.0, 50.0
        for _ in range(60):
            mid = 0.5 * (low + high)
            low, high = (mid, high) if np.mean(np.maximum(0.0, -np.expm1(mid - loss))) > delta else (low, mid)
        best = max(best, low)
    return best


def _audit(mechanism, samples, seed, statistic):
    return run_audit(mechanism, PAIR, samples=samples, seed=seed, confidence=CONFIDENCE,
                     statistic=statistic, progress=False, accuracy=False)


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
        report = _audit(mechanism, samples, 2026, statistic)
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
    for name, mechanism in cases.items():
        statistics = [("projection sum", mechanism.projection_score())]
        if mechanism.clipping == "per-example":
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


def validity(runs, samples):
    mechanism = DPSGD(**SMALL_CONFIGURATION)
    statistic = mechanism.projection_score()
    exact = mechanism.epsilon_for_delta(mechanism.delta)
    started = time.perf_counter()
    reports = [_audit(mechanism, samples, 10_000 + i, statistic) for i in range(runs)]
    alarms = sum(r.verdict.value == "VIOLATED" for r in reports)
    above = sum(r.epsilon_lower_bound > exact for r in reports)
    ci = stats.binomtest(alarms, runs).proportion_ci(0.95, method="exact")
    row = {"mechanism": mechanism.name, "audits": runs, "runs_per_audit": samples,
           "false_violated": alarms, "ci_low": ci.low, "ci_high": ci.high, "allowed": 1 - CONFIDENCE,
           "epsilon_lb_above_exact": above,
           "mean_epsilon_lb": float(np.mean([r.epsilon_lower_bound for r in reports])),
           "exact_epsilon": exact, "seconds": time.perf_counter() - started}
    print(row, flush=True)
    return row


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
    s = result["shuffle"]
    lines += ["", f"Shuffling, Dirac canary: Monte Carlo estimate of the shuffled pair's ε({s['delta']:g}) = "
              f"{s['shuffle_epsilon']:.3f} ({s['runs']:,} draws) against the Poisson accountant's {s['poisson_epsilon']:.3f}."]
    v = result["validity"]
    lines += ["", "#### Validity of the correct trainer", "",
              "| mechanism | audits | runs per audit | false VIOLATED [95% CP] | allowed | ε_lb > exact ε | mean ε_lb | exact ε | time (s) |",
              "|---|---:|---:|---|---:|---:|---:|---:|---:|",
              f"| {v['mechanism']} | {v['audits']} | {v['runs_per_audit']:,} | {v['false_violated']}/{v['audits']} "
              f"[{v['ci_low']:.3f}, {v['ci_high']:.3f}] | ≤ {v['allowed']:.2f} | {v['epsilon_lb_above_exact']} | "
              f"{v['mean_epsilon_lb']:.4g} | {v['exact_epsilon']:.4g} | {v['seconds']:.0f} |"]
    lines += ["", "#### One run (Steinke, Nasr & Jagielski 2023), 95%, Bonferroni over 4 guess counts k₊ = k₋ ∈ {m/100, m/20, m/10, m/4}", "",
              "| trainer | δ | canaries m | seeds | ε bound: mean [min, max] | guesses / correct (first seed) | multi-run ε_lb (LR score, runs of the faulty table) | accountant ε | exact ε | time per run + bound (s) |",
              "|---|---:|---:|---:|---|---|---:|---:|---:|---:|"]
    for r in result["one_run"]:
        lines.append(f"| {r['trainer']} | {r['delta']:g} | {r['canaries']} | {r['seeds']} | {r['mean_bound']:.3f} [{r['min_bound']:.3f}, "
                     f"{r['max_bound']:.3f}] | {r['guesses_first']} / {r['correct_first']} | "
                     f"{_fmt(r['multi_run_epsilon_lb'])} | {r['accountant_epsilon']:.4g} | {r['exact_epsilon']:.4g} | {r['seconds_mean']:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--validity-audits", type=int, default=200)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.quick:
        tight_runs, default_runs, fault_runs, audits, audit_runs, seeds = [5_000], [5_000], 5_000, 4, 5_000, 2
    else:
        tight_runs, default_runs = [100_000, 1_000_000], [100_000, 1_000_000]
        fault_runs, audits, audit_runs, seeds = 200_000, args.validity_audits, 20_000, 20
    result = {"configuration": SMALL_CONFIGURATION, "confidence": CONFIDENCE}
    result["tightness"] = tightness(tight_runs, default_runs)
    result["faulty"] = faulty(fault_runs)
    result["black_box"] = black_box(fault_runs)
    config = SMALL_CONFIGURATION
    result["shuffle"] = {"delta": config["delta"], "runs": 20_000 if args.quick else 1_000_000,
                         "shuffle_epsilon": shuffle_dirac_epsilon(config["q"], config["sigma"],
                                                                  round(config["steps"] * config["q"]),
                                                                  config["delta"],
                                                                  runs=20_000 if args.quick else 1_000_000, seed=5),
                         "poisson_epsilon": poisson_gaussian_epsilon(config["q"], config["sigma"],
                                                                     config["steps"], config["delta"])}
    print(result["shuffle"], flush=True)
    multi = {r["trainer"]: r["epsilon_lb"] for r in result["faulty"] if r["statistic"] == "likelihood ratio"}
    result["one_run"] = one_run([100, 1000], seeds, multi, (config["delta"], 1e-5))
    result["validity"] = validity(audits, audit_runs)
    result["wall_time_s"] = time.perf_counter() - started
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
