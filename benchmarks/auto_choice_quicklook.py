"""``"auto"`` trained on the quick look's draws against ``"auto"`` trained on the main audit's own.

``python -m benchmarks.auto_choice_quicklook --only CASE ... --seeds 4`` audits each case of
:mod:`benchmarks.auto_choice` (its mechanism, scenario, claim, sample count and confidence) on seeds
``seed, seed + 1, ...`` (the seeds of ``auto_choice``'s ``--recheck``) with the default early
stopping, three ways: ``"auto"`` with :data:`audit.stages.QUICK_LOOK_TRAINS_MAIN` off (the main
audit trains on 1/16 of its own draws), ``"auto"`` with it on (trained on the quick look's draws,
re-drawn), and the case's best named statistic in ``auto_choice.json`` (which trains on nothing for
a 1-D output, so the constant does not change it).  It prints, per case, the mean certified quantity
of each and the ratios of the two ``"auto"`` means to the named one's, and writes the runs to
``--out`` (JSON; a rerun keeps the runs already there).  Audits run one per process,
``--jobs`` at a time, each with ``n_jobs=1``.  Run one invocation per ``--out`` at a time: each
rewrites the whole file with the runs it read at its start and its own.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Optional

import numpy as np
from joblib import Parallel, delayed

from audit.checkpoint import write_atomic

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "auto_choice_quicklook.json"
#: "named-quick": the best named statistic with the constant on, as the engine's default runs it (a
#: learned named statistic of a vector output then trains on the quick look's draws too).
VARIANTS = ("auto-own", "auto-quick", "named", "named-quick")


def _one(name: str, variant: str, statistic: str, seed: int) -> dict:
    """One audit of case ``name`` (runs in a worker: sets the module constant there)."""
    import audit.stages
    from audit import run_audit
    from audit.slots import states_mu
    from benchmarks.auto_choice import ZOO_SAMPLES, _option, cases

    audit.stages.QUICK_LOOK_TRAINS_MAIN = variant in ("auto-quick", "named-quick")
    case = cases(ZOO_SAMPLES)[name]
    started = time.perf_counter()
    report = run_audit(case["mechanism"], case["scenario"], claim=case["claim"], samples=case["samples"],
                       confidence=case["confidence"], seed=seed, n_jobs=1, progress=False, accuracy=False,
                       statistic=_option(statistic))
    value = report.mu_lower_bound if states_mu(report.claim) else report.epsilon_lower_bound
    looks = report.draws.get("looks", {})
    return {"case": name, "variant": variant, "statistic": statistic, "seed": seed, "value": float(value),
            "verdict": report.verdict.value, "seconds": time.perf_counter() - started,
            "load": os.getloadavg()[0], "look": looks.get("look"), "quick_look": looks.get("quick_look"),
            "training": report.statistic.get("training_samples"),
            "chose": sorted({str(p.get("auto_choice") or p.get("kind")) for p in report.statistic.get("pairs", [])})}


def _key(run: dict) -> str:
    return f"{run['case']}|{run['variant']}|{run['seed']}"


def run(only: list[str], seeds: int, jobs: int, out: Path, log=print,
        variants: tuple[str, ...] = VARIANTS) -> list[dict]:
    from benchmarks.auto_choice import ZOO_SAMPLES, cases

    every = cases(ZOO_SAMPLES)
    only = list(every) if only == ["all"] else only
    best = json.loads((Path(__file__).resolve().parent / "results" / "auto_choice.json").read_text())["rows"]
    runs = json.loads(out.read_text())["runs"] if out.exists() else []
    done = {_key(r) for r in runs}
    tasks = []
    for name in only:
        if name not in every:
            raise ValueError(f"`only`: no case {name!r} in benchmarks.auto_choice")
        for seed in range(every[name]["seed"], every[name]["seed"] + seeds):
            for variant in variants:
                statistic = best[name]["best"] if variant.startswith("named") else "auto"
                if f"{name}|{variant}|{seed}" not in done:
                    tasks.append((name, variant, statistic, seed))
    for result in Parallel(n_jobs=jobs, return_as="generator")(delayed(_one)(*task) for task in tasks):
        runs.append(result)
        log(f"{result['case']:45s} {result['variant']:10s} seed {result['seed']}  {result['value']:.4g} "
            f"{result['verdict']:12s} look {result['look']}  {result['seconds']:.1f}s  load {result['load']:.1f}")
        write_atomic(out, json.dumps({"runs": runs}, indent=1).encode())
    return runs


def summary(runs: list[dict], only: Optional[list[str]] = None, baseline: str = "named") -> str:
    """A Markdown table: per case, the means over its seeds and the two ratios, against the
    ``baseline`` variant of the named statistic (``"named"`` or ``"named-quick"``)."""
    runs = [dict(r, variant="named") if r["variant"] == baseline else r for r in runs
            if r["variant"] != "named" or baseline == "named"]
    lines = ["| case | seeds | named (best) | mean named | mean auto, own training | mean auto, quick-look training | "
             "own / named | quick / named | refuted (named, own, quick) |", "|" + "---|" * 9]
    names = only if only and only != ["all"] else list(dict.fromkeys(r["case"] for r in runs))
    for name in names:
        by = {v: sorted((r for r in runs if r["case"] == name and r["variant"] == v), key=lambda r: r["seed"])
              for v in VARIANTS}
        present = [v for v in VARIANTS if by[v]]  # auto-own may not have been run (--variants)
        if "named" not in present or "auto-quick" not in present:
            continue
        seeds = sorted(set.intersection(*({r["seed"] for r in by[v]} for v in present)))
        if not seeds:
            continue
        means = {v: float(np.mean([r["value"] for r in by[v] if r["seed"] in seeds])) if v in present
                 else float("nan") for v in VARIANTS}
        refuted = {v: str(sum(r["verdict"] == "VIOLATED" for r in by[v] if r["seed"] in seeds)) if v in present
                   else "—" for v in VARIANTS}
        ratio = {v: means[v] / means["named"] if means["named"] > 0 else float("nan") for v in VARIANTS}
        own = (f"{means['auto-own']:.4g}", f"{ratio['auto-own']:.3f}") if "auto-own" in present else ("—", "—")
        lines.append(f"| {name} | {len(seeds)} | {by['named'][0]['statistic']} | {means['named']:.4g} | "
                     f"{own[0]} | {means['auto-quick']:.4g} | {own[1]} | "
                     f"{ratio['auto-quick']:.3f} | {refuted['named']}, {refuted['auto-own']}, {refuted['auto-quick']} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", required=True,
                        help="cases of benchmarks.auto_choice (full names), or 'all'")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS),
                        help="which audits to run (default all three)")
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--baseline", choices=("named", "named-quick"), default="named",
                        help="the named variant the table compares with")
    args = parser.parse_args(argv)
    runs = run(args.only, args.seeds, args.jobs, args.out, variants=tuple(args.variants))
    print(summary(runs, args.only, args.baseline))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
