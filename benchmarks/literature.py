"""The literature suite side by side with DP-Sniper's published bounds.

``python -m benchmarks.literature`` audits every file of ``dpaudit run --suite literature`` at
2·10⁶ and 2·10⁷ samples per pair and side in total (``--samples`` changes that) and writes
``literature.md`` (the table README quotes) and ``literature.json`` (every figure) to ``--out``.

Columns: the claim; what is known of the true ε (:class:`mechanisms.literature.base.LiteratureTruth`);
the exact ε on the audited pair where it is computable (``pair_epsilon``: the most any auditor can
certify on that pair); DP-Sniper's published 90% lower bounds with logistic regression and with
the MLP and their wall seconds (Bichsel et al., S&P 2021; ``reference/published_dpsniper_sp2021.csv``);
dpaudit's certified ε_lb (at the file's confidence, 99%, jointly over everything the report prints),
its wall seconds and verdict per sample count, the statistic ``"auto"`` chose; and ε_lb / DP-Sniper's
best bound.

**Confidence.**  DP-Sniper publishes one 90% Clopper–Pearson lower bound per mechanism, so the
benchmark audits at confidence 0.9 by default (``--confidence``; ``--confidence file`` keeps each
file's own 0.99).  A dpaudit bound at 0.9 is still simultaneous over everything its report prints
(both orders of the pair, every quantity and curve), so it is the stricter of the two.

**Equal draws.**  DP-Sniper (DDConfig defaults) draws, per input of its final witness pair,
n_train = 1.07·10⁷ to train, n = 1.07·10⁷ to place the threshold and n_final = 2·10⁸ for the final
estimate: 2.214·10⁸ (its search adds n_check = 1.07·10⁷ per candidate pair, and trains on every
candidate).  The engine's ``samples`` is the total per pair and side over all its phases
(:mod:`audit.allocation`), so equal draws is N = 2.214·10⁸ rounded down to a million;
``--equal-draws`` adds that column.

``--statistic NAME`` passes ``statistic=NAME`` to ``run_audit``; without it each file's own
``[audit] statistic`` is used (``"auto"`` unless the file names one).  Early stopping is off: the table measures tightness.  ``--resume`` keeps the entries already in
``literature.json`` (same sample count, statistic and jobs) and runs only the missing ones.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

import scenarios
from audit.spec import load_spec
from audit import run_audit
from audit.checkpoint import write_atomic

__all__ = ["DPSNIPER_DRAWS_PER_SIDE", "EQUAL_DRAWS_SAMPLES", "engine_draws_per_side", "published",
           "run_literature", "render_markdown", "main"]

#: DP-Sniper's confidence: one 90% Clopper–Pearson lower bound per mechanism.
DPSNIPER_CONFIDENCE = 0.9
#: DP-Sniper's draws per input for its final estimate (``n_final``) ...
DPSNIPER_FINAL_DRAWS = 200_000_000
#: ... and in all for its final pair: training, threshold, final estimate.
DPSNIPER_DRAWS_PER_SIDE = 10_700_000 + 10_700_000 + DPSNIPER_FINAL_DRAWS
#: N (total per pair and side) at equal draws, rounded down to a million.
EQUAL_DRAWS_SAMPLES = DPSNIPER_DRAWS_PER_SIDE // 1_000_000 * 1_000_000
REFERENCE = Path(__file__).resolve().parent / "reference" / "published_dpsniper_sp2021.csv"
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "literature"

#: Suite file stem -> DP-Sniper's mechanism name (the published table's row order).
DPSNIPER_NAMES = {
    "laplace": "LaplaceMechanism", "truncated-geometric": "TruncatedGeometricMechanism",
    "noisy-hist1": "NoisyHist1", "noisy-hist2": "NoisyHist2",
    "report-noisy-max1": "ReportNoisyMax1", "report-noisy-max2": "ReportNoisyMax2",
    "report-noisy-max3": "ReportNoisyMax3", "report-noisy-max4": "ReportNoisyMax4",
    "svt1": "SparseVectorTechnique1", "svt2": "SparseVectorTechnique2",
    "svt3": "SparseVectorTechnique3", "svt4": "SparseVectorTechnique4",
    "svt5": "SparseVectorTechnique5", "svt6": "SparseVectorTechnique6",
    "rappor": "Rappor", "one-time-rappor": "OneTimeRappor", "laplace-parallel": "LaplaceParallel",
    "svt34-parallel": "SVT34Parallel", "prefix-sum": "PrefixSum", "numerical-svt": "NumericalSVT",
}

#: DP-Sniper's input domains (S&P 2021 experiments): component-wise neighbours?, value range.
PATTERN_DOMAINS = {
    "laplace": (False, -10, 10), "truncated-geometric": (False, 0, 5), "noisy-hist1": (False, 0, 10),
    "noisy-hist2": (False, 0, 10), "rappor": (False, -10, 10), "one-time-rappor": (False, -10, 10),
    "laplace-parallel": (False, -10, 10),
}

#: Why a row falls short of the truth or of DP-Sniper (structural; the numbers are in the table).
NOTES = {
    "laplace": "1-D output, threshold events are optimal: only sampling width",
    "truncated-geometric": "{z ≥ 2} has ratio exactly 9/8 and is a threshold event: only sampling width",
    "noisy-hist1": "Fisher direction ≈ the changed bin: near-optimal; sampling width",
    "noisy-hist2": "DP-Sniper is capped at ln(1/c) = ln 100 = 4.605 by its probability floor c = 0.01",
    "report-noisy-max1": "index as a number; {index = 0} is a threshold event here: sampling width",
    "report-noisy-max2": "as ReportNoisyMax1",
    "report-noisy-max3": "left tail of the value is the optimal event: sampling width",
    "report-noisy-max4": "true ε = ∞: the bound grows with samples (outputs near the support edge are rare)",
    "svt1": "⊤/⊥ patterns scored categorically reach the ideal single event: sample count",
    "svt2": "as SVT1",
    "svt3": "flags and released values (flag-value); loss-0.5 outputs have probability ~1e-7: the bound grows with N",
    "svt4": "as SVT1",
    "svt5": "a pattern of probability 0.049 is impossible under the other input: δ > 0 certified",
    "svt6": "pattern of probability 4.4e-4 carries 0.41; DP-Sniper's c = 0.01 floor cannot use it",
    "rappor": "the 6 differing bits' log-ratios summed are the likelihood ratio: sampling width",
    "one-time-rappor": "as Rappor",
    "laplace-parallel": "loss near 0.1 needs all 20 copies in the tails; sum of copies is not the exact LR",
    "svt34-parallel": "30 mixed flag/value columns, scored per pattern block and column (flag-value): sampling width",
    "prefix-sum": "the last prefix sum is the sum statistic: near-optimal linear",
    "numerical-svt": "flags and released values (flag-value); exact ε unknown",
}


def engine_draws_per_side(samples: int, output_dim: int) -> int:
    """Draws per pair and side of one audit: ``samples`` itself (the total over all phases)."""
    return samples


def published(path: Path = REFERENCE) -> dict[str, dict[str, str]]:
    """DP-Sniper's published rows by mechanism name."""
    with open(path, newline="") as handle:
        return {row["mechanism"]: row for row in csv.DictReader(handle)}


def _pair_epsilon(mechanism: Any, pair: Any) -> Optional[float]:
    method = getattr(mechanism, "pair_epsilon", None)
    if method is None:
        return None
    try:
        return float(method(pair.base, pair.neighbor))
    except (NotImplementedError, ValueError, TypeError):
        return None


def ideal_single_event(mechanism: Any, pair: Any, samples: int, claim: Any, confidence: float) -> Optional[float]:
    """ε_lb the best single event could certify at ``samples`` per side: the single-threshold limit
    (:mod:`benchmarks.limits`) of the exact likelihood-ratio statistic, at the engine's headline level.

    Needs ``mechanism.pair_distributions`` (discrete outputs with exact atom probabilities); the
    atoms are ranked by likelihood ratio, so thresholds of the rank are the Neyman–Pearson events.
    """
    from audit.selection import Budget
    from audit.slots import headline_slots

    from .limits import single_threshold_limit

    method = getattr(mechanism, "pair_distributions", None)
    if method is None:
        return None
    try:
        pa, pb = method(pair.base, pair.neighbor)
    except (NotImplementedError, ValueError, TypeError):
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        order = np.argsort(np.nan_to_num(np.log(pa) - np.log(pb), nan=0.0))
    tails = [np.concatenate([np.cumsum(p[order][::-1])[::-1], [0.0]]) for p in (pa, pb)]
    m = len(pa)

    def survival(tail):
        return lambda t: tail[np.clip(np.ceil(np.asarray(t, dtype=np.float64)), 0, m).astype(int)]

    level = Budget(1.0 - confidence, headline_slots(claim), 1).headline_level
    limit = single_threshold_limit(survival(tails[0]), survival(tails[1]), np.arange(m + 1.0),
                                   samples=samples, delta=float(claim.reference_delta),
                                   epsilon_level=level, mu_level=level)
    return float(limit.epsilon)


def _audit(spec, samples: int, jobs: int, statistic: Optional[str], confidence: Optional[float]) -> dict:
    # The file's own statistic unless one is given; no early stopping: the table measures how tight
    # the bound gets, and an audit that stops at its first violated look reports that look's bound.
    options = {"statistic": statistic or getattr(spec, "statistic", "auto")}
    started = time.perf_counter()
    report = run_audit(spec.mechanism, spec.scenario, claim=spec.claim, samples=samples,
                       confidence=spec.confidence if confidence is None else confidence, seed=spec.seed,
                       n_jobs=jobs, progress=False, accuracy=False, early_stopping=False, **options)
    seconds = time.perf_counter() - started
    pairs = report.statistic.get("pairs", [])
    return {"samples": samples, "epsilon_lb": report.epsilon_lower_bound,
            "delta_lb": report.delta_lower_bound, "verdict": report.verdict.value,
            "seconds": seconds, "statistic": ", ".join(dict.fromkeys(str(p.get("auto_choice") or p.get("kind"))
                                                                    for p in pairs)),
            "auto_rules": [p.get("auto", {}).get("rule") for p in pairs],
            "confidence": spec.confidence if confidence is None else confidence, "load": os.getloadavg(),
            "draws_per_side": engine_draws_per_side(samples, report.runtime["output_dim"])}


def pattern_scenario(stem: str, spec) -> Any:
    """All of StatDP's input patterns on DP-Sniper's domain for this mechanism (vouched pairs)."""
    from mechanisms.literature.base import statdp_patterns

    component_wise, low, high = PATTERN_DOMAINS.get(stem, (True, -10, 10))
    pairs = statdp_patterns(spec.mechanism.input_dim, component_wise, low, high)
    return scenarios.custom(pairs, spec.scenario.relation)


def run_literature(samples: Sequence[int], *, jobs: int = 2, statistic: Optional[str] = None,
                   only: Optional[Sequence[str]] = None, out: Path = DEFAULT_OUT,
                   resume: bool = False, patterns: str = "witness", confidence: Optional[float] = DPSNIPER_CONFIDENCE,
                   log=print) -> dict:
    """Audit the suite at each sample count; save ``literature.json`` after every audit.

    ``patterns="witness"`` audits the files' pairs (DP-Sniper's published witnesses);
    ``"all"`` audits every StatDP pattern of :func:`pattern_scenario` instead (the confidence is
    split over the pairs, and each pair costs a full audit's draws).  ``confidence``: every audit's
    (None: each file's own).
    """
    if patterns not in ("witness", "all"):
        raise ValueError(f"`patterns` must be 'witness' or 'all', got {patterns!r}")
    reference = published()
    path = Path(out) / "literature.json"
    results: dict = {}
    if resume and path.exists():
        results = json.loads(path.read_text()).get("rows", {})
    meta = {"jobs": jobs, "statistic": statistic, "patterns": patterns, "machine": _machine(),
            "dpsniper_draws_per_side": DPSNIPER_DRAWS_PER_SIDE, "confidence": confidence}
    for file in scenarios.bundled_suite("literature"):
        stem = file.stem
        if only and stem not in only:
            continue
        spec = load_spec(file)
        if patterns == "all":
            from dataclasses import replace

            spec = replace(spec, scenario=pattern_scenario(stem, spec))
        row = results.setdefault(stem, {"runs": []})
        truth = spec.mechanism.truth
        row.update({"name": spec.name, "mechanism": spec.mechanism.name, "claim": spec.claim.epsilon,
                    "truth": truth.describe(), "truth_kind": truth.kind.value,
                    "expected": spec.expected, "pairs": [p.label for p in spec.scenario.pairs],
                    "pair_epsilon": None if patterns == "all" else _pair_epsilon(spec.mechanism, spec.scenario.pairs[0]),
                    "dpsniper": reference.get(DPSNIPER_NAMES.get(stem, ""), {})})
        for n in samples:
            if any(r["samples"] == n and r.get("requested_statistic") == statistic and r.get("jobs") == jobs
                   and r.get("confidence") == (spec.confidence if confidence is None else confidence)
                   for r in row["runs"]):
                continue
            run = _audit(spec, n, jobs, statistic, confidence)
            run["ideal_single_event"] = None if patterns == "all" else ideal_single_event(
                spec.mechanism, spec.scenario.pairs[0], n, spec.claim, run["confidence"])
            run.update({"requested_statistic": statistic, "jobs": jobs})
            row["runs"] = [r for r in row["runs"] if r["samples"] != n] + [run]
            log(f"{stem:22s} N={n:>11,d}  ε_lb={run['epsilon_lb']:.4g}  {run['verdict']:11s} "
                f"{run['seconds']:7.1f}s  {run['statistic']}  load {run['load'][0]:.1f}")
            write_atomic(path, json.dumps({"meta": meta, "rows": results}, indent=2).encode())
    write_atomic(path, json.dumps({"meta": meta, "rows": results}, indent=2).encode())
    return {"meta": meta, "rows": results}


def _machine() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            model = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), "")
    except OSError:
        model = platform.processor()
    return f"{model or platform.machine()}, {os.cpu_count()} logical CPUs, Python {platform.python_version()}"


def _num(value: Optional[float], digits: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return "∞" if math.isinf(value) else f"{value:.{digits}g}"


def render_markdown(data: dict, samples: Sequence[int]) -> str:
    """The README table."""
    rows = data["rows"]
    order = list(DPSNIPER_NAMES)
    head = ["mechanism", "claim", "truth", "ε on pair", "DP-Sniper LR (s)", "DP-Sniper MLP (s)"]
    head += [f"dpaudit N={n:.0e} (s) [ideal event]" for n in samples]
    head += ["statistic (s at largest N)", "vs DP-Sniper", "verdict", "expected", "why short"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for stem in sorted(rows, key=lambda s: order.index(s) if s in order else len(order)):
        row = rows[stem]
        ref = row.get("dpsniper") or {}
        lr, mlp = ref.get("ddsearch_logreg_eps_lcb90"), ref.get("ddsearch_mlp_eps_lcb90")
        cells = [DPSNIPER_NAMES.get(stem, stem), _num(row["claim"]), row["truth"], _num(row["pair_epsilon"]),
                 f"{lr} ({ref.get('ddsearch_logreg_time_s')})" if lr else "—",
                 f"{mlp} ({ref.get('ddsearch_mlp_time_s')})" if mlp else "—"]
        runs = {r["samples"]: r for r in row["runs"]}
        for n in samples:
            run = runs.get(n)
            ideal = "" if run is None or run.get("ideal_single_event") is None else \
                f" [{_num(run['ideal_single_event'])}]"
            cells.append("—" if run is None else
                         f"{_num(run['epsilon_lb'])} ({run['seconds']:.0f}){' V' if run['verdict'] == 'VIOLATED' else ''}"
                         f"{ideal}")
        last = runs[max(runs)] if runs else None
        cells.append("—" if last is None else f"{last.get('statistic') or '—'} ({last['seconds']:.0f})")
        best = max((float(v) for v in (lr, mlp) if v), default=None)
        cells.append("—" if last is None or not best else f"{last['epsilon_lb'] / best:.2f}")
        cells.append("—" if last is None else last["verdict"])
        cells.append(row["expected"] or "—")
        cells.append(NOTES.get(stem, ""))
        lines.append("| " + " | ".join(cells) + " |")
    meta = data["meta"]
    pairs = ("every StatDP pattern" if meta.get("patterns") == "all" else "DP-Sniper's witness pair")
    statistic = meta["statistic"] or "each file's own"
    level = f"{meta['confidence']:.0%}" if meta.get("confidence") else "each file's (99%)"
    lines += ["", f"N = samples per pair and side (total over all phases); V = VIOLATED. dpaudit: {pairs}, {level} confidence jointly over every "
              f"printed bound, {meta['jobs']} jobs, statistic {statistic} (what it chose at the largest N, and the seconds it took); "
              f"machine: {meta['machine']}.  DP-Sniper: 90% Clopper–Pearson lower bound, "
              f"{DPSNIPER_DRAWS_PER_SIDE:.4g} draws per side on its witness pair (plus its search), "
              "seconds on the authors' machine.  'vs DP-Sniper' = dpaudit ε_lb at the largest N / "
              "DP-Sniper's better bound.  [ideal event] = the ε_lb the best single event (exact "
              "likelihood-ratio ranking of the pair's discrete outputs) would certify at that N and the "
              "same level: where dpaudit is well below it, the statistic, not the sample count, limits the row."]
    return "\n".join(lines) + "\n"


def _count(text: str) -> int:
    value = float(text)
    if value != int(value) or value < 1:
        raise argparse.ArgumentTypeError(f"sample counts must be positive integers, got {text!r}")
    return int(value)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.literature", description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=_count, nargs="+", default=[2_000_000, 20_000_000],
                        help="samples per pair and side in total (default: 2e6 2e7)")
    parser.add_argument("--equal-draws", action="store_true",
                        help=f"also run at DP-Sniper's draws per side (N = {EQUAL_DRAWS_SAMPLES:,})")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--statistic", default=None, help="passed to run_audit(statistic=...) when given")
    parser.add_argument("--only", nargs="+", default=None, help="suite file stems to run (default: all)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--resume", action="store_true", help="keep finished entries of OUT/literature.json")
    parser.add_argument("--patterns", choices=("witness", "all"), default="witness",
                        help="the files' witness pair, or every StatDP pattern (default: witness)")
    parser.add_argument("--confidence", default=str(DPSNIPER_CONFIDENCE),
                        help="every audit's confidence, or 'file' for each file's own (default: DP-Sniper's 0.9)")
    parser.add_argument("--render", action="store_true", help="only redraw OUT/literature.md from OUT/literature.json")
    args = parser.parse_args(argv)
    samples = list(dict.fromkeys(args.samples + ([EQUAL_DRAWS_SAMPLES] if args.equal_draws else [])))
    if args.render:
        data = json.loads((Path(args.out) / "literature.json").read_text())
    else:
        confidence = None if args.confidence == "file" else float(args.confidence)
        data = run_literature(samples, jobs=args.jobs, statistic=args.statistic, only=args.only,
                              out=args.out, resume=args.resume, patterns=args.patterns, confidence=confidence)
    table = render_markdown(data, samples)
    write_atomic(Path(args.out) / "literature.md", table.encode())
    print(table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
