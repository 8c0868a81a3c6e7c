"""``python -m benchmarks.efficiency``: certified ε per draw, early stops, and small budgets.

The figures of issue 18, next to the engine's before the allocation change (quoted from the issue's
independent review and the earlier benchmarks, with the same total draws per side):

1. **Tightness per draw.**  Analytic Gaussian (ε = 1, δ = 1e-5) on ``scenarios.counting(1)``:
   mean ε_lb/ε and μ_lb/μ over ``--seeds`` seeds at 2·10⁶ and 2·10⁷ total draws per side.
2. **Early stops.**  Every mechanism of the faulty zoo at the default budget (2·10⁶): wall time with
   early stopping against the same audit without it, and against the engine before issue 18
   (:data:`BEFORE_SECONDS`), the look it stopped at and the verdict.  The warm-up audit computes
   each mechanism's exact values, which the engine then remembers, so the timed audits compare
   the audits' own work.
3. **Small budgets.**  The Laplace mechanism calibrated to sensitivity 1 on a sum whose true
   sensitivity is 2 (true ε = 2, claim 1): the detection rate over ``--runs`` seeds on a doubling
   grid of total draws (both sides, all pairs), for the worst-case pair alone and for
   ``counting(1)``'s two pairs; StatDP refuted it with 360 draws.  Beside it, the exact detection
   of the best event known in advance: with all draws and the whole budget, with the audit's
   certification draws and own-slot level, and with those it has when it chooses early.
4. **The selection share at small budgets.**  Detection with 25% (the default), 15% and 10% of the
   draws choosing the events, on that Laplace at 360 total draws and on three literature
   mechanisms at small budgets (``2·--runs`` runs each): what a smaller share would buy one
   mechanism and cost the others.
5. **Choosing early at StatDP's budget.**  The same Laplace at 360 total draws (worst pair) over
   ``--confirm-runs`` seeds, with choosing early (:mod:`audit.allocation`) and without it: the
   detection rate with its Clopper–Pearson interval, and at a claim that holds exactly (the
   Laplace calibrated right) the false-VIOLATED rate, how often the audit chose early, and the
   mean certified ε.
6. **Choosing early where the event is hard to find.**  The literature mechanisms of study 4 at
   budgets small enough to choose early (``2·--runs`` runs each), with and without it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed

import scenarios
from audit.spec import load_spec
from audit import Verdict, run_audit
from mechanisms import GaussianMechanism, LaplaceMechanism, PureDP
from scenarios.faulty_cases import FAULTY_MECHANISMS

#: Figures of the engine before issue 18 (same total draws per side): the issue's review.
BEFORE = {2_000_000: {"epsilon": 0.715, "epsilon_sd": 0.045, "ideal": 0.812},
          20_000_000: {"epsilon": 0.867, "epsilon_sd": 0.031, "ideal": 0.920}}
STATDP_DRAWS, BEFORE_DRAWS = 360, 1_208
#: Wall time (s) of the engine before issue 18 (commit 6be7da7, its default budget of 10⁶ per phase)
#: on the six faults its zoo had: median of 3 after a warm-up audit, each mechanism's exact values
#: memoised as the current engine remembers them, measured on this machine on 2026-11-23 (git
#: worktree of 6be7da7 running benchmarks/before/time_engine_issue18.py).  The other three faults
#: did not exist then.
BEFORE_SECONDS = {"gaussian-sensitivity": 2.04, "gaussian-classical-large-eps": 0.91,
                  "correlated-half-size-noise": 2.36, "correlated-replace": 1.19,
                  "truncated-laplace-half-bound": 1.13, "laplace-per-query": 2.24}
#: The same figures with the issue-18 allocation but Clopper–Pearson headline points (before the
#: joint test of audit/joint_bounds.py): benchmarks/results/efficiency.md of that commit (a68a19b).
CLOPPER_PEARSON = {2_000_000: 0.756, 20_000_000: 0.885}
CLOPPER_PEARSON_SMALL = {("worst pair only", 90): 0.03, ("worst pair only", 180): 0.30,
                         ("worst pair only", 360): 0.70, ("worst pair only", 720): 0.95,
                         ("worst pair only", 1440): 1.00, ("worst pair only", 2880): 1.00,
                         ("worst pair only", 5760): 1.00, ("counting(1), 2 pairs", 90): 0.00,
                         ("counting(1), 2 pairs", 180): 0.03,
                         ("counting(1), 2 pairs", 360): 0.28, ("counting(1), 2 pairs", 720): 0.62,
                         ("counting(1), 2 pairs", 1440): 0.95, ("counting(1), 2 pairs", 2880): 1.00,
                         ("counting(1), 2 pairs", 5760): 1.00}


def _gaussian(samples: int, seed: int, early_stopping: bool = True) -> tuple[float, float]:
    report = run_audit(GaussianMechanism(1.0, 1e-5), scenarios.counting(1), samples=samples, seed=seed,
                       progress=False, accuracy=False, early_stopping=early_stopping)
    return report.epsilon_lower_bound / report.exact_epsilon, report.mu_lower_bound / report.exact_mu


def tightness(seeds: int, n_jobs: int) -> list[dict]:
    """Mean ε_lb/ε and μ_lb/μ with the default early stopping and, on the same seeds, without it
    (what early stopping costs a correct claim: the quick look's 1/16 of the draws and the last
    look's smaller share of the failure budget)."""
    rows = []
    for samples in (2_000_000, 20_000_000):
        started = time.perf_counter()
        values = Parallel(n_jobs=n_jobs)(delayed(_gaussian)(samples, 1000 + s) for s in range(seeds))
        seconds = time.perf_counter() - started
        eps, mu = np.array(values).T
        full = Parallel(n_jobs=n_jobs)(delayed(_gaussian)(samples, 1000 + s, False) for s in range(seeds))
        full_eps, full_mu = np.array(full).T
        rows.append({"samples": samples, "seeds": seeds, "epsilon_ratio": float(eps.mean()),
                     "epsilon_ratio_sd": float(eps.std(ddof=1)), "mu_ratio": float(mu.mean()),
                     "full_epsilon_ratio": float(full_eps.mean()), "full_mu_ratio": float(full_mu.mean()),
                     "before": BEFORE[samples]["epsilon"], "seconds": seconds})
    return rows


def early_stops(samples: int, repeats: int = 3) -> list[dict]:
    """Wall time with and without early stopping: the median of ``repeats`` runs of each (the same
    seed, so the same audit), after one untimed warm-up audit of the mechanism at a small budget."""
    rows = []
    for name, factory in FAULTY_MECHANISMS.items():
        mechanism, scenario = factory()
        run_audit(mechanism, scenario, samples=20_000, seed=7, progress=False, accuracy=False)
        result = {"case": name}
        for early in (True, False):
            times = []
            for _ in range(repeats):
                started = time.perf_counter()
                report = run_audit(mechanism, scenario, samples=samples, seed=7, progress=False,
                                   accuracy=False, early_stopping=early)
                times.append(time.perf_counter() - started)
            key = "early" if early else "full"
            result[f"{key}_seconds"] = float(np.median(times))
            result[f"{key}_verdict"] = report.verdict.value
            if early:
                looks = report.draws.get("looks", {})
                result["look"] = f"{looks.get('look')}/{looks.get('of')}"
                result["draws"] = report.draws["per_side"]
        result["ratio"] = result["early_seconds"] / result["full_seconds"]
        if name in BEFORE_SECONDS:
            result["before_seconds"] = BEFORE_SECONDS[name]
            result["ratio_to_before"] = result["early_seconds"] / BEFORE_SECONDS[name]
        rows.append(result)
    return rows


def _laplace_detected(samples: int, seed: int, worst_only: bool) -> bool:
    mechanism = LaplaceMechanism(epsilon=1.0, sensitivity=0.5)  # scale 1/2 on a count: true ε = 2
    scenario = scenarios.counting(1)
    if worst_only:
        scenario = [scenario.pairs[0]]
    report = run_audit(mechanism, scenario, claim=PureDP(1.0), samples=samples, seed=seed,
                       progress=False, accuracy=False)
    return report.verdict is Verdict.VIOLATED


def small_budgets(runs: int, n_jobs: int) -> list[dict]:
    rows = []
    for worst_only, pairs in ((True, 1), (False, 2)):
        for total in (90, 180, 360, 720, 1440, 2880, 5760):
            samples = total // (2 * pairs)
            try:
                hits = Parallel(n_jobs=n_jobs)(delayed(_laplace_detected)(samples, 5000 + r, worst_only)
                                               for r in range(runs))
                rate = float(np.mean(hits))
            except ValueError:  # too few draws to certify anything at all
                rate = 0.0
            scenario = "worst pair only" if worst_only else "counting(1), 2 pairs"
            row = {"scenario": scenario, "total_draws": total, "samples": samples, "detection": rate,
                   "clopper_pearson": CLOPPER_PEARSON_SMALL.get((scenario, total)),
                   "ideal_known_event": ideal_detection(total) if worst_only else None}
            if worst_only:
                n, level, early, early_level = _audit_split(samples)
                row.update(certification=n, own_level=level,
                           ideal_audit_split=ideal_detection(total, n=n, level=level) if n else 0.0)
                if early:
                    row.update(early_certification=early, early_level=early_level,
                               ideal_early_split=ideal_detection(total, n=early, level=early_level))
            rows.append(row)
    return rows


#: The selection-share study: (label, literature suite file or None for the mis-sensitised Laplace,
#: samples per pair and side).  The literature mechanisms run at ε = 2 against a claim of 0.5 on
#: their suite file's pair, at budgets where the default detects them part of the time.
SHARE_CASES = (
    ("Laplace, wrong sensitivity (worst pair)", None, 180),
    ("ReportNoisyMax1 (ε 2, claim 0.5)", "report-noisy-max1", 400),
    ("SVT1 (ε 2, claim 0.5)", "svt1", 1_600),
    ("NoisyHist1 (ε 2, claim 0.5)", "noisy-hist1", 60),
)
SELECTION_SHARES = (0.25, 0.15, 0.10)


def _share_case_detected(case: tuple, seed: int) -> bool:
    label, stem, samples = case
    if stem is None:
        return _laplace_detected(samples, seed, worst_only=True)
    spec = load_spec(next(p for p in scenarios.bundled_suite("literature") if p.stem == stem))
    suite = spec.mechanism  # the suite file's mechanism, rebuilt at ε = 2 with its other parameters
    options = {"queries": suite.input_dim} if stem != "noisy-hist1" else {"bins": suite.input_dim}
    if stem == "svt1":
        options.update(cutoff=suite.cutoff, threshold=suite.threshold)
    mechanism = type(suite)(epsilon=2.0, **options)
    report = run_audit(mechanism, spec.scenario, claim=PureDP(0.5), samples=samples, seed=seed,
                       progress=False, accuracy=False)
    return report.verdict is Verdict.VIOLATED


def _set_allocation(name: str, value: float) -> None:
    """Pool initializer: this worker's audits run with ``audit.allocation.<name> = value``."""
    from audit import allocation

    setattr(allocation, name, value)


def _what_if(name: str, value: float, function, arguments: list, n_jobs: int) -> list:
    """``function(*a)`` for every ``a`` in ``arguments``, in a pool of freshly spawned workers whose
    ``audit.allocation.<name>`` is ``value``, so this process keeps its defaults."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(n_jobs, _set_allocation, (name, value)) as pool:
        results = pool.starmap(function, arguments, chunksize=10)
        pool.close()  # let the workers exit cleanly (terminating them leaks their semaphores)
        pool.join()
    return results


def selection_shares(runs: int, n_jobs: int) -> list[dict]:
    """Detection against the share of the draws that chooses the events
    (:data:`audit.allocation.SELECTION_SHARE`), for the small-budget Laplace and three literature
    mechanisms whose best event is harder to find.  A what-if (:func:`_what_if`)."""
    rows = []
    for case in SHARE_CASES:
        row = {"case": case[0], "samples": case[2], "runs": runs, "detection": {}}
        for share in SELECTION_SHARES:
            hits = _what_if("SELECTION_SHARE", share, _share_case_detected,
                            [(case, 9000 + r) for r in range(runs)], n_jobs)
            row["detection"][str(share)] = float(np.mean(hits))
        rows.append(row)
    return rows


#: Study 5's first seed: seeds no study used while choosing early was designed (those were 5000–8999).
CHOOSING_SEEDS = 100_000


def _laplace_outcome(sensitivity: float, seed: int) -> tuple[bool, bool, float]:
    """Verdict VIOLATED, whether the audit chose early, and its certified ε, for the Laplace
    calibrated to ``sensitivity`` on the worst pair at StatDP's budget."""
    mechanism = LaplaceMechanism(epsilon=1.0, sensitivity=sensitivity)
    report = run_audit(mechanism, [scenarios.counting(1).pairs[0]], claim=PureDP(1.0), samples=STATDP_DRAWS // 2,
                       seed=seed, progress=False, accuracy=False)
    early = "chose_early" in report.draws["looks"]
    return report.verdict is Verdict.VIOLATED, early, report.pairs[0].epsilon_lower_bound


def choosing_early(runs: int, n_jobs: int) -> list[dict]:
    """Study 5: with and without choosing early (``EARLY_CHOICE_SHARE`` 0 in :func:`_what_if`), on
    the mis-sensitised and the right Laplace."""
    from audit import allocation, cp_interval

    rows = []
    for label, share in (("choosing early (default)", allocation.EARLY_CHOICE_SHARE), ("without", 0.0)):
        row = {"setting": label, "share": share, "runs": runs}
        for key, sensitivity in (("violation", 0.5), ("exact_claim", 1.0)):
            outcomes = _what_if("EARLY_CHOICE_SHARE", share, _laplace_outcome,
                                [(sensitivity, CHOOSING_SEEDS + r) for r in range(runs)], n_jobs)
            violated = sum(o[0] for o in outcomes)
            interval = cp_interval(violated, runs, 0.95)
            row[key] = {"violated": violated, "interval": [interval.low, interval.high],
                        "chose_early": float(np.mean([o[1] for o in outcomes])),
                        "mean_epsilon_lb": float(np.mean([o[2] for o in outcomes]))}
        rows.append(row)
    return rows


#: Study 6: literature mechanisms at budgets that choose early (single look, first segment ≥ 8).
HARD_CASES = (
    ("ReportNoisyMax1 (ε 2, claim 0.5)", "report-noisy-max1", 240),
    ("SVT1 (ε 2, claim 0.5)", "svt1", 240),
    ("NoisyHist1 (ε 2, claim 0.5)", "noisy-hist1", 120),
)


def choosing_early_hard(runs: int, n_jobs: int) -> list[dict]:
    """Study 6: detection with and without choosing early on :data:`HARD_CASES`."""
    from audit import allocation

    rows = []
    for case in HARD_CASES:
        row = {"case": case[0], "samples": case[2], "runs": runs, "detection": {}}
        for label, share in (("with", allocation.EARLY_CHOICE_SHARE), ("without", 0.0)):
            hits = _what_if("EARLY_CHOICE_SHARE", share, _share_case_detected,
                            [(case, 9000 + r) for r in range(runs)], n_jobs)
            row["detection"][label] = float(np.mean(hits))
        rows.append(row)
    return rows


def _audit_split(samples: int) -> tuple[int, float, int, float]:
    """The worst-pair audit's certification draws per side and its own headline slot's joint-test
    level at the last look (what the ideal event would get inside this audit), and the same when
    it chooses early (0 draws when it cannot: :mod:`audit.allocation`)."""
    from audit import stages
    from audit.selection import JOINT_FACTOR
    from audit.slots import headline_slots

    claim = PureDP(1.0)
    try:
        _, main = stages.plan_stages(samples, 1, "auto", claim, 1, 0.05, early_stopping=True)
    except ValueError:  # too few draws for the phases
        return 0, 0.0, 0, 0.0
    own, allocation = headline_slots(claim)[0], main.allocation
    level = JOINT_FACTOR * main.budget.headline_level_of(own)
    if not allocation.early_choice:
        return allocation.certification, level, 0, 0.0
    return (allocation.certification, level, allocation.early_certification,
            JOINT_FACTOR * main.budget.favouring(own).headline_level_of(own))


def ideal_detection(total: int, confidence: float = 0.95, *, n: int = 0, level: float = 0.0) -> float:
    """Exact detection probability of the best single event *known in advance* (thresholds on a
    grid), certified by the joint test at the whole failure budget with all ``total`` draws
    (total/2 per side) on the worst pair: what no audit that must also choose its event can beat
    at this confidence.  With ``n`` and ``level``: the same event with ``n`` draws per side at
    ``level`` (an audit's certification draws and its own slot's level).  Computed by summing
    binomial probabilities over the counts (the rejection region is monotone in the count of the
    more likely side)."""
    from scipy import stats

    from audit.joint_bounds import JointTest
    from audit.slots import Slot

    n, level, best = n or total // 2, level or 1.0 - confidence, 0.0
    for threshold in (0.25, 0.5, 0.75, 1.0, 1.25, 1.5):
        # Laplace(scale 1/2) at 1 against 0: the event "output ≥ threshold".
        p_a, p_b = stats.laplace.sf(threshold, 1.0, 0.5), stats.laplace.sf(threshold, 0.0, 0.5)
        weights_a, weights_b = stats.binom.pmf(np.arange(n + 1), n, p_a), stats.binom.pmf(np.arange(n + 1), n, p_b)
        power = 0.0
        for count_b in np.flatnonzero(weights_b > 1e-9):
            low, high = 0, n + 1  # smallest count_a that refutes ε = 1
            while low < high:
                middle = (low + high) // 2
                if middle <= n and JointTest(Slot.epsilon_at(0.0), middle, int(count_b), n, level).rejects(1.0):
                    high = middle
                else:
                    low = middle + 1
            power += weights_b[count_b] * weights_a[low:].sum()
        best = max(best, power)
    return float(best)


def _number(value, digits: int) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def render(results: dict) -> str:
    out = ["### Tightness per draw (analytic Gaussian, ε = 1, δ = 1e-5, counting(1))", "",
           "| total draws per side | seeds | mean ε_lb/ε (SD) | without early stopping | before issue 18 | "
           "Clopper–Pearson headline | ideal single threshold, same total | mean μ_lb/μ | without early stopping | s |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results["tightness"]:
        out.append(f"| {r['samples']:,} | {r['seeds']} | {r['epsilon_ratio']:.3f} ({r['epsilon_ratio_sd']:.3f}) | "
                   f"{_number(r.get('full_epsilon_ratio'), 3)} | {r['before']:.3f} | "
                   f"{CLOPPER_PEARSON[r['samples']]:.3f} | {BEFORE[r['samples']]['ideal']:.3f} | "
                   f"{r['mu_ratio']:.4f} | {_number(r.get('full_mu_ratio'), 4)} | {r['seconds']:.0f} |")
    out += ["", "### Faulty zoo at the default budget: early stopping vs drawing everything", "",
            "| fault | verdict (early / full) | stopped at look | draws per side | s early | s full | ratio | "
            "s before issue 18 | ratio to before |",
            "|---|---|---|---|---|---|---|---|---|"]
    for r in results["early"]:
        out.append(f"| {r['case']} | {r['early_verdict']} / {r['full_verdict']} | {r['look']} | {r['draws']:,} | "
                   f"{r['early_seconds']:.2f} | {r['full_seconds']:.2f} | {r['ratio']:.2f} | "
                   f"{_number(r.get('before_seconds'), 2)} | {_number(r.get('ratio_to_before'), 2)} |")
    out += ["", f"### Small budgets: Laplace with the wrong sensitivity (true ε 2, claim 1); StatDP: "
                f"{STATDP_DRAWS} draws, dpaudit before: {BEFORE_DRAWS}", "",
            "| scenario | total draws | samples per pair and side | detection rate | Clopper–Pearson headline "
            "| ideal: best event known in advance, all draws, whole budget | the same event with the audit's "
            "certification draws and own-slot level | the same when it chooses early |",
            "|---|---|---|---|---|---|---|---|"]

    def rate(value):
        return _number(value, 2)

    for r in results["small"]:
        split = "–" if r.get("certification") is None else \
            f"{rate(r.get('ideal_audit_split'))} ({r['certification']:,} draws, level {r['own_level']:.3f})"
        early = "–" if r.get("early_certification") is None else \
            f"{rate(r.get('ideal_early_split'))} ({r['early_certification']:,} draws, level {r['early_level']:.3f})"
        out.append(f"| {r['scenario']} | {r['total_draws']:,} | {r['samples']:,} | {r['detection']:.2f} | "
                   f"{rate(r.get('clopper_pearson'))} | {rate(r.get('ideal_known_event'))} | {split} | {early} |")
    if results.get("selection"):
        runs = results["selection"][0]["runs"]
        out += ["", f"### Detection against the share of draws that chooses the events ({runs} runs each)", "",
                "| mechanism | samples per pair and side | " + " | ".join(
                    f"selection {share:.0%}{' (default)' if i == 0 else ''}" for i, share in enumerate(SELECTION_SHARES))
                + " |", "|---|---|" + "---|" * len(SELECTION_SHARES)]
        for r in results["selection"]:
            out.append(f"| {r['case']} | {r['samples']:,} | "
                       + " | ".join(f"{r['detection'][str(share)]:.2f}" for share in SELECTION_SHARES) + " |")
    if results.get("hard"):
        runs = results["hard"][0]["runs"]
        out += ["", f"### Choosing early where the event is hard to find ({runs} runs each)", "",
                "| mechanism | samples per pair and side | with choosing early | without |", "|---|---|---|---|"]
        for r in results["hard"]:
            out.append(f"| {r['case']} | {r['samples']:,} | {r['detection']['with']:.3f} | "
                       f"{r['detection']['without']:.3f} |")
    if results.get("choosing"):
        runs = results["choosing"][0]["runs"]
        out += ["", f"### Choosing early at StatDP's budget: Laplace, worst pair, {STATDP_DRAWS} total draws "
                    f"({runs:,} seeds each)", "",
                "| setting | detection, true ε 2 vs claim 1 [95% CP] | chose early | false VIOLATED at an exact "
                "claim [95% CP] | chose early | mean ε_lb (exact ε 1) |", "|---|---|---|---|---|---|"]
        for r in results["choosing"]:
            v, e = r["violation"], r["exact_claim"]
            out.append(f"| {r['setting']} | {v['violated']:,}/{runs:,} = {v['violated'] / runs:.4f} "
                       f"[{v['interval'][0]:.3f}, {v['interval'][1]:.3f}] "
                       f"| {v['chose_early']:.2f} | {e['violated'] / runs:.4f} [{e['interval'][0]:.4f}, "
                       f"{e['interval'][1]:.4f}] | {e['chose_early']:.2f} | {e['mean_epsilon_lb']:.3f} |")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--samples", type=int, default=2_000_000, help="budget of the early-stop study")
    parser.add_argument("--confirm-runs", type=int, default=4_000, help="seeds of the choosing-early study")
    parser.add_argument("--only", nargs="*", choices=("tightness", "early", "small", "selection", "choosing",
                                                           "hard"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    from audit.checkpoint import write_atomic

    results = {"tightness": [], "early": [], "small": [], "selection": [], "choosing": [], "hard": []}
    saved = args.out / "efficiency.json" if args.out else None
    if args.only and saved is not None and saved.exists():  # a partial rerun keeps the other tables
        results.update(json.loads(saved.read_text()))
    studies = {"tightness": lambda: tightness(args.seeds, args.jobs), "early": lambda: early_stops(args.samples),
               "small": lambda: small_budgets(args.runs, args.jobs),
               "selection": lambda: selection_shares(2 * args.runs, args.jobs),
               "choosing": lambda: choosing_early(args.confirm_runs, args.jobs),
               "hard": lambda: choosing_early_hard(2 * args.runs, args.jobs)}
    for name, study in studies.items():
        if args.only and name not in args.only:
            continue
        print(f"running {name} ...", file=sys.stderr)
        results[name] = study()
        if args.out:  # saved after every study: a failure later loses nothing
            write_atomic(args.out / "efficiency.json", json.dumps(results, indent=1).encode())
    text = render(results)
    print(text)
    if args.out:
        write_atomic(args.out / "efficiency.md", text.encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
