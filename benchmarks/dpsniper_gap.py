"""Where dpaudit is below DP-Sniper's published bound at its own draws: luck or method?

At DP-Sniper's 2.214·10⁸ draws two literature rows certify a little less than DP-Sniper published
(``benchmarks/results/literature/dpsniper-draws``).  A published lower bound is one draw of a
random variable, so a shortfall says nothing until both sides' spread is known.  For a row whose
exact output distributions are known this benchmark computes it, for the *ideal* event E (the
likelihood-ratio event that certifies most in expectation; see below), with A = P(E) on the side E
is more likely under and B on the other:

* **DP-Sniper's definition** (its ``EpsEstimator._compute_lcb``, confidence 0.9): counts
  k_A ~ Bin(n, A) and k_B ~ Bin(n, B) on n = 2·10⁸ final draws per side, bound
  ln(CP_lo(k_A, n, 0.05) / CP_hi(k_B, n, 0.05)).  Its mean, and the probability that it reaches the
  published bound, are those of DP-Sniper's own final step had its search found the ideal event.
* **dpaudit's certification of the same event**: the joint test (:mod:`audit.joint_bounds`) of
  (k_A, k_B) at the headline level and on the certification draws that dpaudit's run at N draws
  used (read from the headline evidence of the ``--seeds`` runs below).
* **Seeds**: dpaudit rerun at N on other seeds (``--seeds K``: the file's seed + 1 … + K), as the
  literature benchmark runs it (witness pair, confidence 0.9, no early stopping), with that
  benchmark's own run on the file's seed (``benchmarks/results/literature/dpsniper-draws``).
* **Fewer draws** (``--check-seeds K`` at ``--check-samples``, default 2·10⁷): K runs whose mean,
  with its standard error, is set against the largest bound dpaudit's joint test certifies in
  expectation on any candidate event with those runs' certification draws and level.  Runs at N
  cost minutes each; here enough of them show whether the statistic's event costs anything.

Every probability is estimated from ``--draws`` seeded binomial pairs and printed with its 95%
Clopper–Pearson interval.  Ideal events: the upper sets of OneTimeRappor's 64 atoms on the
differing bits ranked by exact likelihood ratio (``pair_distributions``; by Neyman–Pearson no event
of the same A has a smaller B), and ReportNoisyMax3's left tails {max < c} of the exact Laplace-max
CDF Π_j F(c − q_j) (the tails below min q carry its whole ratio e^{k/b}, docstring of
``ReportNoisyMax3``); of either family, the member whose expected counts give the largest bound at
DP-Sniper's definition.  DP-Sniper's published point estimates are in the same CSV as its bounds
(``ddsearch_*_eps_est``): on both rows the better bound comes from an estimate above the exact ε.

Run: ``python -m benchmarks.dpsniper_gap [--seeds K] [--check-seeds K] [--draws R]``; results in
``benchmarks/results/literature/dpsniper-gap/`` (``gap.json`` is resumed: seeds already run are kept).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
from scipy import stats

import scenarios
from audit import run_audit
from audit.checkpoint import write_atomic
from audit.intervals import cp_lower, cp_upper
from audit.joint_bounds import JointTest
from audit.slots import headline_slots
from audit.spec import load_spec

from .literature import DPSNIPER_CONFIDENCE, DPSNIPER_DRAWS_PER_SIDE, DPSNIPER_NAMES, published

__all__ = ["ideal_event", "definition_bound", "simulate", "run_seeds", "render", "main"]

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "literature" / "dpsniper-gap"
#: The literature benchmark's runs at DP-Sniper's draws (the files' own seeds).
LITERATURE_RUNS = ROOT / "benchmarks" / "results" / "literature" / "dpsniper-draws"
#: The rows below DP-Sniper at its draws, and its final-estimate draws per side (``n_final``).
ROWS = ("report-noisy-max3", "one-time-rappor")
DPSNIPER_FINAL_DRAWS = 200_000_000
#: DP-Sniper's per-bound level: the union bound over its two Clopper–Pearson bounds.
DEFINITION_LEVEL = (1.0 - DPSNIPER_CONFIDENCE) / 2


def _spec(stem: str):
    return load_spec(next(p for p in scenarios.bundled_suite("literature") if p.stem == stem))


def definition_bound(count_a, count_b, n: int) -> np.ndarray:
    """DP-Sniper's 90% lower bound on ln(A/B) from counts on n draws per side (vectorized)."""
    return np.log(cp_lower(count_a, n, DEFINITION_LEVEL) / cp_upper(count_b, n, DEFINITION_LEVEL))


def _family(stem: str) -> tuple[np.ndarray, np.ndarray, float, str]:
    """The candidate events of ``stem``'s witness pair: their A (more likely side) and B, the exact ε."""
    spec = _spec(stem)
    pair = spec.scenario.pairs[0]
    if stem == "one-time-rappor":
        pa, pb = spec.mechanism.pair_distributions(pair.base, pair.neighbor)
        ratio = np.log(pa) - np.log(pb)
        order = np.argsort(-ratio)  # upper sets of the likelihood ratio: the Neyman–Pearson events
        return np.cumsum(pa[order]), np.cumsum(pb[order]), float(ratio.max()), "top likelihood-ratio atoms"
    if stem == "report-noisy-max3":
        scale = float(spec.mechanism.scale)
        cuts = np.linspace(-5.0, 5.0, 10001)

        def cdf(q):  # P(max_j (q_j + Lap(b)) < c): the noisy values are independent
            return np.prod([stats.laplace.cdf(cuts - float(v), scale=scale) for v in np.ravel(q)], axis=0)

        return cdf(pair.base), cdf(pair.neighbor), float(spec.mechanism.input_dim / scale), "{max < c}"
    raise ValueError(f"`stem` must be one of {ROWS}, got {stem!r}")


def _useful(stem: str, n: int) -> tuple[np.ndarray, np.ndarray]:
    a, b, _, _ = _family(stem)
    keep = (a * n >= 1) & (b * n >= 1)
    return a[keep], b[keep]


def ideal_event(stem: str) -> dict:
    """The ideal event's probabilities (A on its more likely side, B on the other) and the exact ε:
    of the candidates, the one whose expected counts give the largest bound at DP-Sniper's definition."""
    n = DPSNIPER_FINAL_DRAWS
    a, b = _useful(stem, n)
    i = int(np.argmax(definition_bound(np.round(a * n), np.round(b * n), n)))
    _, _, exact, name = _family(stem)
    return {"A": float(a[i]), "B": float(b[i]), "exact": exact, "event": name}


def best_expected(stem: str, n: int, level: float, slot, shortlist: int = 24) -> float:
    """The largest bound dpaudit's joint test certifies in expectation (counts at their means) on a
    candidate event of ``stem`` with ``n`` certification draws at ``level``.  The joint test is
    costly, so it runs on the ``shortlist`` candidates best by two Clopper–Pearson bounds at
    level/2 each."""
    a, b = _useful(stem, n)
    separate = np.log(cp_lower(np.round(a * n), n, level / 2) / cp_upper(np.round(b * n), n, level / 2))
    return max(JointTest(slot, int(round(a[i] * n)), int(round(b[i] * n)), n, level).lower_bound()
               for i in np.argsort(-separate)[:shortlist])


def _rate(hits: int, total: int) -> dict:
    return {"hits": hits, "of": total, "rate": hits / total,
            "ci95": [float(cp_lower(hits, total, 0.025)), float(cp_upper(hits, total, 0.025))]}


def simulate(event: dict, published_bound: float, *, draws: int, seed: int,
             certification: Optional[tuple[int, float]] = None, slot=None) -> dict:
    """Monte Carlo of the bounds the ideal event certifies: DP-Sniper's definition on its final
    draws, and (given ``certification`` = (n, joint level) and the headline ``slot``) dpaudit's
    joint test on its certification draws; seeded, so the same seed gives the same figures."""
    rng = np.random.default_rng(seed)
    n = DPSNIPER_FINAL_DRAWS
    ka, kb = rng.binomial(n, event["A"], draws), rng.binomial(n, event["B"], draws)
    definition = definition_bound(ka, kb, n)
    result = {"definition": {"expected": float(definition_bound(round(event["A"] * n), round(event["B"] * n), n)),
                             "mean": float(definition.mean()), "sd": float(definition.std(ddof=1)),
                             "reaches_published": _rate(int((definition >= published_bound).sum()), draws)}}
    if certification is not None:
        m, level = certification
        ka, kb = rng.binomial(m, event["A"], draws), rng.binomial(m, event["B"], draws)
        joint = np.array([JointTest(slot, int(x), int(y), m, level).lower_bound() for x, y in zip(ka, kb)])
        result["dpaudit"] = {"n": m, "level": level,
                             "expected": float(JointTest(slot, round(event["A"] * m), round(event["B"] * m), m,
                                                         level).lower_bound()),
                             "mean": float(joint.mean()), "sd": float(joint.std(ddof=1)),
                             "reaches_published": _rate(int((joint >= published_bound).sum()), draws)}
    return result


def _headline_evidence(report) -> dict:
    data = report.to_dict()
    index = data["witness"]["epsilon"]["evidence"]
    return {key: data["evidence"][index].get(key) for key in
            ("event", "family", "test", "level", "n", "count_more_likely", "count_other")}


def run_seeds(stem: str, seeds: Sequence[int], samples: int, done: dict, save, log=print) -> None:
    """Audit ``stem`` at ``samples`` on each seed not yet in ``done`` (seed → run), as
    ``benchmarks.literature`` does, saving after each."""
    spec = _spec(stem)
    for seed in seeds:
        if str(seed) in done:
            continue
        started = time.perf_counter()
        report = run_audit(spec.mechanism, spec.scenario, claim=spec.claim, samples=samples,
                           confidence=DPSNIPER_CONFIDENCE, seed=seed, n_jobs=2, progress=False,
                           accuracy=False, early_stopping=False,
                           statistic=getattr(spec, "statistic", "auto"))
        done[str(seed)] = {"epsilon_lb": report.epsilon_lower_bound, "verdict": report.verdict.value,
                           "seconds": time.perf_counter() - started, "headline": _headline_evidence(report)}
        log(f"{stem:18s} seed {seed}: ε_lb {report.epsilon_lower_bound:.5g} "
            f"({done[str(seed)]['seconds']:.0f} s)")
        save()


def _adopt_literature_run(stem: str, seed: int, samples: int, done: dict) -> None:
    """The literature benchmark's own run of ``stem`` at ``samples`` (the file's seed), when recorded."""
    path = LITERATURE_RUNS / "literature.json"
    if str(seed) in done or not path.exists():
        return
    runs = json.loads(path.read_text())["rows"].get(stem, {}).get("runs", [])
    for run in runs:
        if run["samples"] == samples and run.get("confidence") == DPSNIPER_CONFIDENCE:
            done[str(seed)] = {"epsilon_lb": run["epsilon_lb"], "verdict": run["verdict"],
                               "seconds": run["seconds"], "headline": {}, "from": str(path.relative_to(ROOT))}


def _published(stem: str) -> dict:
    row = published()[DPSNIPER_NAMES[stem]]
    runs = {kind: (float(row[f"ddsearch_{kind}_eps_est"]), float(row[f"ddsearch_{kind}_eps_lcb90"]))
            for kind in ("logreg", "mlp")}
    kind = max(runs, key=lambda k: runs[k][1])
    return {"attack": kind, "estimate": runs[kind][0], "bound": runs[kind][1]}


def render(data: dict) -> str:
    lines = ["| mechanism | exact ε | DP-Sniper: estimate → bound | ideal event at DP-Sniper's definition: "
             "expected, mean ± sd, P(≥ published) | dpaudit's test of the ideal event: expected, mean ± sd, "
             "P(≥ published) | dpaudit runs at N: ε_lb per seed (mean) | runs ≥ published |",
             "|---|---|---|---|---|---|---|"]

    def cell(part):
        if part is None:
            return "—"
        r = part["reaches_published"]
        return (f"{part['expected']:.4f}, {part['mean']:.4f} ± {part['sd']:.4f}, "
                f"{r['rate']:.2f} [{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}]")

    for stem, row in data["rows"].items():
        pub, sim = row["published"], row.get("simulation", {})
        bounds = [run["epsilon_lb"] for _, run in sorted(row["seeds"].items(), key=lambda kv: int(kv[0]))]
        runs = ", ".join(f"{b:.4f}" for b in bounds) + (f" ({np.mean(bounds):.4f})" if bounds else "")
        lines.append(f"| {DPSNIPER_NAMES[stem]} | {row['event']['exact']:.4f} | {pub['estimate']:.4f} → "
                     f"{pub['bound']:.4f} ({pub['attack']}) | {cell(sim.get('definition'))} | "
                     f"{cell(sim.get('dpaudit'))} | {runs or '—'} | "
                     f"{sum(b >= pub['bound'] for b in bounds)} of {len(bounds)} |")
    checks = {stem: row["check"] for stem, row in data["rows"].items() if row.get("check", {}).get("seeds")}
    if checks:
        lines += ["", "**dpaudit's runs against its best event at fewer draws**", "",
                  "| mechanism | N | runs | ε_lb: mean ± standard error | best event, dpaudit's test, expected | "
                  "mean − expected |", "|---|---|---|---|---|---|"]
        for stem, check in checks.items():
            bounds = np.array([run["epsilon_lb"] for run in check["seeds"].values()])
            spread = bounds.std(ddof=1) / np.sqrt(bounds.size) if bounds.size > 1 else math.nan
            best = check.get("best_expected", math.nan)
            lines.append(f"| {DPSNIPER_NAMES[stem]} | {check['samples']:,} | {bounds.size} | {bounds.mean():.5f} ± "
                         f"{spread:.5f} | {best:.5f} | {bounds.mean() - best:+.5f} |")
    meta = data["meta"]
    lines += ["", f"N = {meta['samples']:,} draws per side (DP-Sniper's total); DP-Sniper's definition: "
              f"two Clopper–Pearson bounds at {DEFINITION_LEVEL:g} each on its {DPSNIPER_FINAL_DRAWS:,} final "
              f"draws; dpaudit's test: the joint test at the level and on the certification draws of its runs' "
              f"headline evidence.  Simulated: {meta['draws']:,} seeded binomial count pairs per column "
              f"(seed {meta['seed']}), P with 95% Clopper–Pearson intervals.  DP-Sniper's bound is the better of "
              f"its two published attacks; 'estimate' is that attack's published point estimate.  Fewer draws: "
              f"seeds 10⁶ + the file's seed onwards; 'best event' = the largest bound the joint test certifies at "
              f"the candidates' expected counts, on the certification draws and at the level of the runs' headline."]
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=ROWS, default=list(ROWS))
    parser.add_argument("--seeds", type=int, default=0, help="dpaudit runs on the file's seed + 1 … + K")
    parser.add_argument("--draws", type=int, default=400, help="simulated count pairs per column")
    parser.add_argument("--seed", type=int, default=20261126, help="seed of the simulation")
    parser.add_argument("--samples", type=int, default=DPSNIPER_DRAWS_PER_SIDE)
    parser.add_argument("--check-seeds", type=int, default=0,
                        help="dpaudit runs at --check-samples on K seeds, against its best event's expectation")
    parser.add_argument("--check-samples", type=int, default=20_000_000)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    for name, value in (("--draws", args.draws), ("--samples", args.samples), ("--check-samples", args.check_samples)):
        if value < 2:
            parser.error(f"{name} must be at least 2, got {value}")
    path = args.out / "gap.json"
    data = json.loads(path.read_text()) if path.exists() else {"rows": {}}
    data["meta"] = {"samples": args.samples, "draws": args.draws, "seed": args.seed}
    args.out.mkdir(parents=True, exist_ok=True)

    def save():
        write_atomic(path, json.dumps(data, indent=2).encode())
        write_atomic(args.out / "gap.md", render(data).encode())

    for stem in args.only:
        row = data["rows"].setdefault(stem, {"seeds": {}})
        row["published"], row["event"] = _published(stem), ideal_event(stem)
        base_seed = _spec(stem).seed
        _adopt_literature_run(stem, base_seed, args.samples, row["seeds"])
        run_seeds(stem, range(base_seed + 1, base_seed + 1 + args.seeds), args.samples, row["seeds"], save)
        headline = [run["headline"] for run in row["seeds"].values() if run["headline"].get("test") == "joint"]
        certification = (headline[0]["n"], headline[0]["level"]) if headline else None
        row["simulation"] = simulate(row["event"], row["published"]["bound"], draws=args.draws, seed=args.seed,
                                     certification=certification, slot=headline_slots(_spec(stem).claim)[0])
        if args.check_seeds:
            check = row.setdefault("check", {"samples": args.check_samples, "seeds": {}})
            if check["samples"] != args.check_samples:
                check.clear()
                check.update(samples=args.check_samples, seeds={})
            first = 1_000_000 + base_seed  # seeds apart from the runs at N
            run_seeds(stem, range(first, first + args.check_seeds), args.check_samples, check["seeds"], save)
            joint = [run["headline"] for run in check["seeds"].values() if run["headline"].get("test") == "joint"]
            if joint:
                check["best_expected"] = best_expected(stem, joint[0]["n"], joint[0]["level"],
                                                       headline_slots(_spec(stem).claim)[0])
                check["certification"] = [joint[0]["n"], joint[0]["level"]]
        save()
    print(render(data), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
