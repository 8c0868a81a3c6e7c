"""Where dpaudit is below DP-Sniper's published bound at its own draws: how much luck either side needs.

At DP-Sniper's 2.214·10⁸ draws two literature rows certify a little less than DP-Sniper published
(``benchmarks/results/literature/dpsniper-draws``).  A published lower bound is one draw of a
random variable, so a shortfall says little until both sides' spread is known.  For a row whose
exact output distributions are known, with A = P(E) on the side an event E is more likely under
and B on the other, this benchmark simulates, on DP-Sniper's n = 2·10⁸ final draws per side:

* **DP-Sniper's procedure** (``"dpsniper"``): on the exact likelihood-ratio ordering (the best its
  classifier can learn), its threshold leaves the fraction c = 0.01 of the less likely side's draws
  above it and splits ties with weight q (``DPSniper._find_threshold``); its count is
  Σ(1 above + q·1 tied) truncated to an integer and its bound ln(CP_lo(k_A, n, 0.05) /
  CP_hi(k_B, n, 0.05)) (``MlAttack.check``, ``EpsEstimator._compute_lcb``, confidence 0.9).  It
  also gives the spread of that event's estimate ln(k_A/k_B), against which DP-Sniper's published
  point estimate (``ddsearch_*_eps_est`` in the same CSV as its bounds) is set.
* **The ideal event at DP-Sniper's definition** (``"ideal"``): the likelihood-ratio event with the
  largest bound at its expected counts, without the floor c (by Neyman–Pearson no event of the
  same A has a smaller B).
* **dpaudit's joint test of the ideal event** (``"dpaudit"``, :mod:`audit.joint_bounds`), at the
  level and on the certification draws of dpaudit's runs' headline evidence.

And it runs dpaudit:

* **Seeds**: rerun at N on other seeds (``--seeds K``: the file's seed + 1 … + K), as the
  literature benchmark runs it (witness pair, confidence 0.9, no early stopping), with that
  benchmark's own run on the file's seed (``benchmarks/results/literature/dpsniper-draws``).
* **Fewer draws** (``--check-seeds K`` at ``--check-samples``, default 2·10⁷): K runs whose mean,
  with its standard error, is set against the largest bound dpaudit's joint test certifies at the
  expected counts of a shortlist of candidate events, with those runs' certification draws and
  level.  Runs at N cost minutes each; here enough of them show what the statistic's event costs.

Every probability is estimated from ``--draws`` seeded simulated count pairs and printed with its
95% Clopper–Pearson interval.  Candidate events: the upper sets of OneTimeRappor's 64 atoms on the
differing bits ranked by exact likelihood ratio (``pair_distributions``), and ReportNoisyMax3's
left tails {max < c} of the exact Laplace-max CDF Π_j F(c − q_j) (the tails below min q carry its
whole ratio e^{k/b}, docstring of ``ReportNoisyMax3``).

Run: ``python -m benchmarks.dpsniper_gap [--seeds K] [--check-seeds K] [--draws R]``; results in
``benchmarks/results/literature/dpsniper-gap/`` (``gap.json`` is resumed: runs already made at the
same N are kept, runs at another N are dropped).
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

from .literature import (DPSNIPER_CONFIDENCE, DPSNIPER_DRAWS_PER_SIDE, DPSNIPER_FINAL_DRAWS, DPSNIPER_NAMES,
                         published)

__all__ = ["ideal_event", "dpsniper_event", "best_expected", "definition_bound", "simulate", "run_seeds",
           "render", "main"]

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "literature" / "dpsniper-gap"
#: The literature benchmark's runs at DP-Sniper's draws (the files' own seeds).
LITERATURE_RUNS = ROOT / "benchmarks" / "results" / "literature" / "dpsniper-draws"
#: The rows below DP-Sniper at its draws.
ROWS = ("report-noisy-max3", "one-time-rappor")
#: DP-Sniper's probability floor c: its threshold leaves this fraction of one side's draws above it.
DPSNIPER_FLOOR = 0.01
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


def dpsniper_event(stem: str) -> dict:
    """The event DP-Sniper's attack takes on the ideal ordering: its threshold leaves the fraction
    c of the less likely side's draws above it, splitting ties with weight q (its
    ``DPSniper._find_threshold`` and ``MlAttack.check``).  Returned as the part wholly above the
    threshold (``full``: A, B), the tied part (``tie``: A, B) and q, so that q·tie_B + full_B = c.
    On a continuous output (ReportNoisyMax3) the "tie" is the sliver between two grid cuts, and q
    interpolates between them."""
    a, b, exact, name = _family(stem)
    i = int(np.searchsorted(b, DPSNIPER_FLOOR))  # first candidate reaching c on the less likely side
    full = (float(a[i - 1]), float(b[i - 1])) if i else (0.0, 0.0)
    tie = (float(a[i]) - full[0], float(b[i]) - full[1])
    return {"full": full, "tie": tie, "q": (DPSNIPER_FLOOR - full[1]) / tie[1], "exact": exact, "event": name}


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


def _summary(bounds: np.ndarray, expected: float, published_bound: float) -> dict:
    return {"expected": float(expected), "mean": float(bounds.mean()), "sd": float(bounds.std(ddof=1)),
            "reaches_published": _rate(int((bounds >= published_bound).sum()), bounds.size)}


def simulate(event: dict, published_bound: float, *, draws: int, seed: int, dpsniper: Optional[dict] = None,
             certification: Optional[tuple[int, float]] = None, slot=None) -> dict:
    """Monte Carlo of the bounds on DP-Sniper's n_final draws per side: the ideal ``event`` at
    DP-Sniper's definition (``"ideal"``); given ``dpsniper`` (:func:`dpsniper_event`), DP-Sniper's
    own count of its event, Σ(1 above + q·1 tied) truncated to an integer as its code does, with the
    spread of its estimate ln(k_A/k_B) (``"dpsniper"``); given ``certification`` = (n, joint level)
    and the headline ``slot``, dpaudit's joint test of the ideal event on n draws (``"dpaudit"``).
    Seeded: the same seed gives the same figures."""
    if (certification is None) != (slot is None):
        raise ValueError(f"`certification` and `slot` go together, got certification={certification!r}, slot={slot!r}")
    rng = np.random.default_rng(seed)
    n = DPSNIPER_FINAL_DRAWS
    ka, kb = rng.binomial(n, event["A"], draws), rng.binomial(n, event["B"], draws)
    result = {"ideal": _summary(definition_bound(ka, kb, n), definition_bound(round(event["A"] * n),
                                                                           round(event["B"] * n), n),
                                published_bound)}
    if dpsniper is not None:
        counts = []
        for side in (0, 1):  # one multinomial per side: wholly above, tied, below
            cells = [dpsniper["full"][side], dpsniper["tie"][side]]
            drawn = rng.multinomial(n, cells + [1.0 - sum(cells)], size=draws)
            counts.append(np.floor(drawn[:, 0] + dpsniper["q"] * drawn[:, 1]))
        means = [np.floor(n * (dpsniper["full"][side] + dpsniper["q"] * dpsniper["tie"][side])) for side in (0, 1)]
        result["dpsniper"] = _summary(definition_bound(counts[0], counts[1], n), definition_bound(*means, n),
                                      published_bound)
        result["dpsniper"]["estimate_sd"] = float(np.log(counts[0] / counts[1]).std(ddof=1))
    if certification is not None:
        m, level = certification
        ka, kb = rng.binomial(m, event["A"], draws), rng.binomial(m, event["B"], draws)
        joint = np.array([JointTest(slot, int(x), int(y), m, level).lower_bound() for x, y in zip(ka, kb)])
        expected = JointTest(slot, round(event["A"] * m), round(event["B"] * m), m, level).lower_bound()
        result["dpaudit"] = dict(_summary(joint, expected, published_bound), n=m, level=level)
    return result


def _headline_evidence(report) -> dict:
    data = report.to_dict()
    index = data["witness"]["epsilon"]["evidence"]
    return {key: data["evidence"][index].get(key) for key in
            ("event", "family", "test", "level", "n", "count_more_likely", "count_other")}


def run_seeds(stem: str, seeds: Sequence[int], samples: int, done: dict, save, log=print,
              statistic: Optional[str] = None) -> None:
    """Audit ``stem`` at ``samples`` on each seed not yet in ``done`` (seed → run), as
    ``benchmarks.literature`` does (with the file's statistic unless ``statistic`` is given),
    saving after each."""
    spec = _spec(stem)
    for seed in seeds:
        if str(seed) in done:
            continue
        started = time.perf_counter()
        report = run_audit(spec.mechanism, spec.scenario, claim=spec.claim, samples=samples,
                           confidence=DPSNIPER_CONFIDENCE, seed=seed, n_jobs=2, progress=False,
                           accuracy=False, early_stopping=False,
                           statistic=statistic or getattr(spec, "statistic", "auto"))
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
    lines = ["| mechanism | exact ε | DP-Sniper published: estimate → bound | its estimate − exact ε, in sd | "
             "DP-Sniper's procedure, its event (floor c): expected, mean ± sd, P(≥ published) | "
             "ideal event, DP-Sniper's definition: expected, P(≥ published) | ideal event, dpaudit's test: "
             "expected, mean ± sd, P(≥ published) | dpaudit runs at N: ε_lb per seed (mean) | runs ≥ published |",
             "|---|---|---|---|---|---|---|---|---|"]

    def cell(part, spread=True):
        if part is None:
            return "—"
        r = part["reaches_published"]
        middle = f", {part['mean']:.4f} ± {part['sd']:.4f}" if spread else ""
        return f"{part['expected']:.4f}{middle}, {r['rate']:.2f} [{r['ci95'][0]:.2f}, {r['ci95'][1]:.2f}]"

    footer = set()
    for stem, row in data["rows"].items():
        pub, sim = row["published"], row.get("simulation", {})
        bounds = [run["epsilon_lb"] for _, run in sorted(row["seeds"].items(), key=lambda kv: int(kv[0]))]
        runs = ", ".join(f"{b:.4f}" for b in bounds) + (f" ({np.mean(bounds):.4f})" if bounds else "")
        dpsniper = sim.get("dpsniper")
        offset = f"{(pub['estimate'] - row['event']['exact']) / dpsniper['estimate_sd']:+.1f}" if dpsniper else "—"
        lines.append(f"| {DPSNIPER_NAMES[stem]} | {row['event']['exact']:.4f} | {pub['estimate']:.4f} → "
                     f"{pub['bound']:.4f} ({pub['attack']}) | {offset} | {cell(dpsniper)} | "
                     f"{cell(sim.get('ideal'), spread=False)} | {cell(sim.get('dpaudit'))} | {runs or '—'} | "
                     f"{sum(b >= pub['bound'] for b in bounds)} of {len(bounds)} |")
        footer.add((row.get("samples"), sim.get("draws"), sim.get("seed")))
    checks = [(stem, check) for stem, row in data["rows"].items() for key, check in row.items()
              if key.startswith("check") and check.get("seeds")]
    if checks:
        lines += ["", "**dpaudit's runs against its best event at fewer draws**", "",
                  "| mechanism | statistic | N | runs | ε_lb: mean ± standard error | best event, dpaudit's test, "
                  "expected | mean − expected |", "|---|---|---|---|---|---|---|"]
        for stem, check in checks:
            bounds = np.array([run["epsilon_lb"] for run in check["seeds"].values()])
            spread = bounds.std(ddof=1) / np.sqrt(bounds.size) if bounds.size > 1 else math.nan
            best = check.get("best_expected", math.nan)
            lines.append(f"| {DPSNIPER_NAMES[stem]} | {check.get('statistic', 'auto')} | {check['samples']:,} | "
                         f"{bounds.size} | {bounds.mean():.5f} ± "
                         f"{spread:.5f} | {best:.5f} | {bounds.mean() - best:+.5f} |")
    settings = "; ".join(f"N = {n:,} draws per side{' (DP-Sniper’s total)' if n == DPSNIPER_DRAWS_PER_SIDE else ''}"
                         + (f", {draws:,} simulated count pairs per column (seed {seed})" if draws else "")
                         for n, draws, seed in sorted(footer, key=str) if n is not None)
    lines += ["", f"{settings}.  DP-Sniper's definition: two Clopper–Pearson bounds at {DEFINITION_LEVEL:g} each on "
              f"its {DPSNIPER_FINAL_DRAWS:,} final draws.  Its procedure: the threshold leaves c = {DPSNIPER_FLOOR:g} "
              f"of the less likely side above it (ties split by weight q), counts truncated to integers, as its "
              f"code does; 'in sd' = (published estimate − exact ε) / the simulated sd of that event's estimate.  "
              f"Ideal event: the likelihood-ratio event with the largest expected bound at DP-Sniper's definition, "
              f"without the floor c.  dpaudit's test: the joint test at the level and on the certification draws of "
              f"its runs' headline evidence.  P with 95% Clopper–Pearson intervals.  DP-Sniper's bound is the "
              f"better of its two published attacks; 'estimate' is that attack's published point estimate.  Fewer "
              f"draws: seeds 10⁶ + the file's seed onwards; 'best event' = the largest bound the joint test "
              f"certifies at the expected counts of the best of a shortlist of candidate events, on the "
              f"certification draws and at the level of the runs' headline."]
    return "\n".join(lines) + "\n"


def _certification(runs: dict) -> Optional[tuple[int, float]]:
    """The (certification draws, level) of most of the runs whose headline was a joint test."""
    pairs = [(run["headline"]["n"], run["headline"]["level"]) for run in runs.values()
             if run["headline"].get("test") == "joint"]
    return max(set(pairs), key=pairs.count) if pairs else None


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
    parser.add_argument("--check-statistic", default=None, help="the check runs' statistic (default: the file's)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    for name, value, least in (("--draws", args.draws, 2), ("--samples", args.samples, 2),
                               ("--check-samples", args.check_samples, 2), ("--seeds", args.seeds, 0),
                               ("--check-seeds", args.check_seeds, 0)):
        if value < least:
            parser.error(f"{name} must be at least {least}, got {value}")
    path = args.out / "gap.json"
    data = json.loads(path.read_text()) if path.exists() else {"rows": {}}
    data.pop("meta", None)
    args.out.mkdir(parents=True, exist_ok=True)

    def save():
        write_atomic(path, json.dumps(data, indent=2).encode())
        write_atomic(args.out / "gap.md", render(data).encode())

    for stem in args.only:
        row = data["rows"].setdefault(stem, {"samples": args.samples, "seeds": {}})
        if row.setdefault("samples", args.samples) != args.samples:  # runs at another N are not these
            row.update(samples=args.samples, seeds={})
        row["published"], row["event"] = _published(stem), ideal_event(stem)
        base_seed, slot = _spec(stem).seed, headline_slots(_spec(stem).claim)[0]
        _adopt_literature_run(stem, base_seed, args.samples, row["seeds"])
        run_seeds(stem, range(base_seed + 1, base_seed + 1 + args.seeds), args.samples, row["seeds"], save)
        certification = _certification(row["seeds"])
        row["simulation"] = dict(simulate(row["event"], row["published"]["bound"], draws=args.draws, seed=args.seed,
                                          dpsniper=dpsniper_event(stem), certification=certification,
                                          slot=slot if certification else None),
                                 draws=args.draws, seed=args.seed)
        if args.check_seeds:
            key = "check" if args.check_statistic is None else f"check {args.check_statistic}"
            check = row.setdefault(key, {"samples": args.check_samples, "seeds": {}})
            if check["samples"] != args.check_samples:
                check.clear()
                check.update(samples=args.check_samples, seeds={})
            check["statistic"] = args.check_statistic or getattr(_spec(stem), "statistic", "auto")
            first = 1_000_000 + base_seed  # seeds apart from the runs at N (the same for every statistic)
            run_seeds(stem, range(first, first + args.check_seeds), args.check_samples, check["seeds"], save,
                      statistic=args.check_statistic)
            certified = _certification(check["seeds"])
            if certified:
                check["best_expected"] = best_expected(stem, *certified, slot)
                check["certification"] = list(certified)
        save()
    print(render(data), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
