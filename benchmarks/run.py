"""``python -m benchmarks``: throughput, tightness and memory of the audit engine, as ratios.

Prints three Markdown tables (and a summary of the engine-issue targets) and, with ``--out DIR``,
writes them to ``DIR/benchmarks.md`` and every raw figure to ``DIR/benchmarks.json``.

* Throughput (:mod:`benchmarks.throughput`): run_audit against raw numpy sampling of the same noise
  in the same process; bit generators; n_jobs 1 vs 2.
* Tightness (:mod:`benchmarks.tightness`): certified ε and μ lower bounds over the exact values, next
  to the single-threshold statistical limit (:mod:`benchmarks.limits`), with wall time and peak memory.
* Memory (:mod:`benchmarks.memory`): peak RSS at the smallest vs the largest sample count.

``--quick`` is a smoke run for CI (small sample counts, one repetition); the figures in README
come from the full run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from . import memory, throughput, tightness

__all__ = ["Config", "QUICK", "FULL", "run_benchmarks", "render_markdown", "main"]


@dataclass(frozen=True)
class Config:
    """Sample counts and repetitions of one benchmark run."""

    bit_generator_draws: int
    bit_generator_reps: int
    throughput_samples: dict = field(default_factory=dict)  # case -> samples
    throughput_reps: int = 3
    speedup_samples: int = 10_000_000
    speedup_reps: int = 3
    tightness_samples: tuple = (1_000_000, 10_000_000, 100_000_000)
    tightness_overrides: dict = field(default_factory=dict)  # case -> its own sample counts
    tightness_cases: tuple = ("gaussian", "lebeda", "truncated-laplace", "laplace")
    tightness_jobs: int = 2
    seed: int = 2024


#: Throughput is measured at 2·10⁸ total draws per side (10⁸ per phase in the first version's
#: accounting, so the figures compare with its table); tightness at 10⁶, 10⁷, 10⁸ total.
FULL = Config(bit_generator_draws=1 << 25, bit_generator_reps=5,
              throughput_samples={"gaussian": 200_000_000, "lebeda": 200_000,
                                  "truncated-laplace": 200_000_000},
              throughput_reps=3, speedup_samples=200_000_000, speedup_reps=3)
QUICK = Config(bit_generator_draws=1 << 22, bit_generator_reps=2,
               throughput_samples={"gaussian": 1_000_000, "lebeda": 5_000, "truncated-laplace": 1_000_000},
               throughput_reps=1, speedup_samples=1_000_000, speedup_reps=1,
               tightness_samples=(100_000, 1_000_000), tightness_overrides={"lebeda": (20_000,)},
               tightness_jobs=1)

#: The engine-issue targets (issue 4): (label, predicate on the results, target text).
TARGET_TEXT = {
    "gaussian_eps_1e7": "Gaussian ε_lb ≥ 0.85 at 1e7",
    "gaussian_eps_1e8": "Gaussian ε_lb ≥ 0.93 at 1e8",
    "gaussian_time_1e8": "Gaussian 1e8 audit ≤ 60 s",
    "gaussian_mu_1e7": "Gaussian μ_lb ≥ 0.99 μ at 1e7",
    "lebeda_mu_1e7": "Lebeda d=100 μ_lb ≥ 0.98 μ at 1e7",
    "throughput": "Gaussian audit ≥ 50% of raw numpy",
    "speedup": "n_jobs=2 ≥ 1.7× n_jobs=1",
    "memory": "peak memory at 1e8 ≤ 1.10 × at 1e6",
}


def run_benchmarks(config: Config, *, log: Callable[[str], None] = print,
                   parts: Sequence[str] = ("throughput", "tightness", "memory")) -> dict:
    """Run the configured benchmarks and return every figure (JSON-serialisable)."""
    results: dict[str, Any] = {"machine": throughput.machine(), "config": asdict(config)}
    started = time.perf_counter()
    if "throughput" in parts:
        log("bit generators ...")
        results["bit_generators"] = throughput.bit_generator_table(
            config.bit_generator_draws, reps=config.bit_generator_reps)
        rows = []
        for case, samples in config.throughput_samples.items():
            log(f"throughput {case} at {samples:.0e} samples ...")
            rows.append(throughput.audit_throughput(case, samples, reps=config.throughput_reps,
                                                    seed=config.seed))
        results["throughput"] = rows
        log(f"speed-up n_jobs 1 vs 2 at {config.speedup_samples:.0e} samples ...")
        results["speedup"] = throughput.speedup("gaussian", config.speedup_samples,
                                                reps=config.speedup_reps, seed=config.seed)
    if "tightness" in parts or "memory" in parts:
        rows = []
        for case in config.tightness_cases:
            for samples in config.tightness_overrides.get(case, config.tightness_samples):
                log(f"tightness {case} at {samples:.0e} samples ...")
                row = tightness.run_tightness_case(case, samples, seed=config.seed,
                                                   n_jobs=config.tightness_jobs)
                row["limit"] = tightness.limit_for(case, samples)
                rows.append(row)
        results["tightness"] = rows
        results["memory"] = memory.memory_table(rows)
    results["targets"] = targets(results)
    results["machine"]["load_average_end"] = throughput.machine().get("load_average")
    results["total_wall_s"] = time.perf_counter() - started
    return results


def _find(rows, case, samples):
    for row in rows or ():
        if row["case"] == case and row["samples"] == samples:
            return row
    return None


def targets(results: dict) -> list[dict]:
    """Each engine-issue target with the measured value (None where this run did not measure it)."""
    rows = results.get("tightness")
    out = []

    def add(key, value, ok, shown):
        out.append({"target": key, "text": TARGET_TEXT[key], "value": value,
                    "met": None if value is None else bool(ok), "shown": shown})

    g7, g8, l7 = _find(rows, "gaussian", 10**7), _find(rows, "gaussian", 10**8), _find(rows, "lebeda", 10**7)
    add("gaussian_eps_1e7", g7 and g7["epsilon_lb"], g7 and g7["epsilon_lb"] >= 0.85,
        g7 and f"{g7['epsilon_lb']:.3f}")
    add("gaussian_eps_1e8", g8 and g8["epsilon_lb"], g8 and g8["epsilon_lb"] >= 0.93,
        g8 and f"{g8['epsilon_lb']:.3f}")
    add("gaussian_time_1e8", g8 and g8["wall_s"], g8 and g8["wall_s"] <= 60.0,
        g8 and f"{g8['wall_s']:.1f} s (n_jobs={g8['n_jobs']})")
    add("gaussian_mu_1e7", g7 and g7["mu_lb"] / g7["exact_mu"], g7 and g7["mu_lb"] >= 0.99 * g7["exact_mu"],
        g7 and f"{g7['mu_lb'] / g7['exact_mu']:.4f} μ")
    add("lebeda_mu_1e7", l7 and l7["mu_lb"] / l7["exact_mu"], l7 and l7["mu_lb"] >= 0.98 * l7["exact_mu"],
        l7 and f"{l7['mu_lb'] / l7['exact_mu']:.4f} μ")
    gt = next((r for r in results.get("throughput", ()) if r["case"] == "gaussian"), None)
    add("throughput", gt and gt["ratio_median"], gt and gt["ratio_median"] >= 0.5,
        gt and f"{gt['ratio_median']:.0%} at {gt['samples']:.0e} (hot path alone {gt['ratio_sampling']:.0%})")
    sp = results.get("speedup")
    add("speedup", sp and sp["speedup_median"], sp and sp["speedup_median"] >= 1.7,
        sp and f"{sp['speedup_median']:.2f}× (raw numpy on 2 workers: {sp['raw_speedup_median']:.2f}×)")
    mem = next((r for r in results.get("memory", ()) if r["case"] == "gaussian"), None)
    full_range = mem is not None and mem["small_samples"] == 10**6 and mem["large_samples"] == 10**8
    add("memory", mem and max(mem["ratio_tree"], mem["ratio_main"]),
        mem and max(mem["ratio_tree"], mem["ratio_main"]) <= memory.MEMORY_TARGET,
        mem and (f"{max(mem['ratio_tree'], mem['ratio_main']):.3f}× "
                 f"({mem['small_samples']:.0e} → {mem['large_samples']:.0e})"
                 + ("" if full_range else ", not the target's range")))
    return out


# --- Markdown ------------------------------------------------------------------------------

def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _f(value: Optional[float], spec: str = ".3f") -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    return format(value, spec)


def render_markdown(results: dict, command: str = "python -m benchmarks") -> str:
    m = results["machine"]
    parts = [f"Measured with `{command}` on {m.get('cpu', '?')} ({m.get('cpus')} CPUs, "
             f"{m.get('memory_gb', '?')} GB), Python {m['python']}, numpy {m['numpy']}, scipy {m['scipy']}; "
             f"load average {m.get('load_average')} at start, {m.get('load_average_end')} at the end "
             f"(total {results['total_wall_s']:.0f} s)."]
    if "bit_generators" in results:
        parts.append("### Bit generators (standard normals, fresh generator per 2^20-draw chunk)\n\n" + _table(
            ["bit generator", "best M/s", "median M/s", "relative to SFC64"],
            [[r["bit_generator"], _f(r["best_M_per_s"], ".1f"), _f(r["median_M_per_s"], ".1f"),
              _f(r["relative_to_SFC64"], ".2f")] for r in results["bit_generators"]]))
    if "throughput" in results:
        parts.append("### Throughput (n_jobs=1; ratio = raw numpy time / audit time, same process)\n\n" + _table(
            ["mechanism", "samples", "draws", "raw numpy (M draws/s)", "audit (M draws/s)",
             "audit / raw", "selection + certification (s)", "hot path / raw"],
            [[r["title"], f"{r['samples']:.0e}", f"{r['draws']:.2e}", _f(r["raw_samples_per_s"] / 1e6, ".2f"),
              _f(r["audit_samples_per_s"] / 1e6, ".2f"), _f(r["ratio_median"], ".0%"),
              _f(r["statistics_s"], ".2f"), _f(r["ratio_sampling"], ".0%")]
             for r in results["throughput"]]))
        sp = results["speedup"]
        parts.append("### Parallel speed-up (Gaussian audit, loky)\n\n" + _table(
            ["samples", "n_jobs=1 (s)", "n_jobs=2 (s)", "speed-up (median)", "raw numpy on 2 workers",
             "identical reports"],
            [[f"{sp['samples']:.0e}", _f(sp["wall_n_jobs_1_s"], ".2f"), _f(sp["wall_n_jobs_2_s"], ".2f"),
              _f(sp["speedup_median"], ".2f") + "×", _f(sp["raw_speedup_median"], ".2f") + "×",
              "yes" if sp["identical_reports"] else "NO"]]))
    if "tightness" in results:
        rows = []
        for r in results["tightness"]:
            lim = r["limit"]
            mu_ratio = r["mu_lb"] / r["exact_mu"] if r["exact_mu"] else None
            mu_limit = lim["mu"] / r["exact_mu"] if r["exact_mu"] else None
            rows.append([r["title"], f"{r['samples']:.0e}", _f(r["reference_delta"], "g"),
                         _f(r["epsilon_lb"], ".4f"), _f(r["exact_epsilon"], ".4f"),
                         _f(r["epsilon_lb"] / r["exact_epsilon"]), _f(lim["epsilon"] / r["exact_epsilon"]),
                         _f(mu_ratio, ".4f"), _f(mu_limit, ".4f"), _f(r["wall_s"], ".1f"),
                         _f(r["peak_rss_tree_mb"], ".0f"), r["verdict"]])
        parts.append(f"### Tightness (confidence 0.95, n_jobs={results['tightness'][0]['n_jobs']}, "
                     f"seed {results['config']['seed']}; limit = best single threshold, see below)\n\n" + _table(
                         ["mechanism", "samples", "δ", "ε_lb", "exact ε", "ε_lb / ε", "limit / ε",
                          "μ_lb / μ", "limit / μ", "wall (s)", "peak RSS (MB)", "verdict"], rows))
    if results.get("memory"):
        parts.append("### Memory (peak RSS; tree = audit process + loky workers; flat once samples exceed "
                     "one chunk of 2^20 outputs)\n\n" + _table(
            ["mechanism", "samples", "peak tree (MB)", "ratio", "peak main process (MB)", "ratio", "≤ 1.10"],
            [[r["title"], f"{r['small_samples']:.0e} → {r['large_samples']:.0e}",
              f"{r['small_peak_tree_mb']:.0f} → {r['large_peak_tree_mb']:.0f}", _f(r["ratio_tree"]),
              f"{r['small_peak_rss_main_mb']:.0f} → {r['large_peak_rss_main_mb']:.0f}", _f(r["ratio_main"]),
              "yes" if r["meets_target"] else "no"] for r in results["memory"]]))
    parts.append("### Engine targets (issue 4)\n\n" + _table(
        ["target", "measured", "met"],
        [[t["text"], t["shown"] or "not measured in this run",
          "—" if t["met"] is None else ("yes" if t["met"] else "**no**")] for t in results["targets"]]))
    return "\n\n".join(parts) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run (CI), not for figures")
    parser.add_argument("--out", type=Path, help="directory for benchmarks.json and benchmarks.md")
    parser.add_argument("--only", default="throughput,tightness,memory",
                        help="comma-separated parts to run (throughput, tightness, memory)")
    parser.add_argument("--seed", type=int, help="audit seed (default 2024)")
    parser.add_argument("--tightness-jobs", type=int, help="n_jobs of the tightness audits")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    unknown = set(parts) - {"throughput", "tightness", "memory"}
    if unknown:
        parser.error(f"`--only` parts must be throughput, tightness or memory, got {sorted(unknown)}")
    config = QUICK if args.quick else FULL
    changes = {}
    if args.seed is not None:
        changes["seed"] = args.seed
    if args.tightness_jobs is not None:
        changes["tightness_jobs"] = args.tightness_jobs
    if changes:
        from dataclasses import replace

        config = replace(config, **changes)
    command = "python -m benchmarks " + " ".join(sys.argv[1:] if argv is None else argv)
    results = run_benchmarks(config, parts=parts, log=lambda s: print(s, file=sys.stderr, flush=True))
    text = render_markdown(results, command.strip())
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "benchmarks.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
        (args.out / "benchmarks.md").write_text(text)
    return 0
