"""Validation of ``dpaudit sweep`` against released versions with a documented, later fixed violation.

For each target below, the buggy and the fixed release are each swept by ``dpaudit sweep
LIB==VERSION --entries ENTRY``: the release in a cached virtual environment of its own
(:mod:`audit.sweep.releases`, ``~/.cache/dpaudit/envs``), with the pins it needs, and this
checkout's unchanged catalogue.  The sweep must refute the target row on the buggy release and not
on the fixed one.

Targets:

- **diffprivlib 0.4.0 → 0.4.1, LinearRegression** (IBM/differential-privacy-library#34, fixed by
  PR #35, released in 0.4.1).  ``_construct_regression_obj`` calibrated the noise of the objective's
  y² coefficient to ``np.abs(bounds_y[i]).max() ** 2`` — the lower-bound vector of ``bounds_y``
  instead of the target's own (lower, upper) pair.  The target row is the grid point ``data=y
  only``: its pairs change one label and leave X alone (the diagonal X² term,
  IBM/differential-privacy-library#105, is still wrong in every release and is caught by the other
  grid point on both versions).
- **OpenDP 0.4.0 → 0.5.0, make_base_laplace** (the 0.5.0 changelog's *Security* entry: the float
  Laplace sampler replaced "to address precision-based attacks", Haney et al. 2022).  0.4 releases
  v + noise rounded in floating point, so 1 + noise lies on the grid of multiples of 2^-53 while
  noise alone does not: the coordinates statistic's grain view separates them.
- **OpenDP 0.4.0 → 0.5.0, make_randomized_response_bool** (opendp/opendp#480, fixed by #481: the
  0.5.0 changelog's "Fixed function in make_randomized_response_bool"; 0.4 could lie with the true value).
- **OpenDP 0.14.0 → 0.15.0, make_randomized_response_bitvec** (opendp/opendp#2707, fixed by #2708:
  the flip bits were sampled for all but the last bit, which was released as it is).
- **Opacus 1.5.2 → 1.5.3, ghost clipping** (meta-pytorch/opacus#664, the 1.5.3 changelog's "Fix the
  clipping operation for ghost clipping when using the PrivacyEngine interface"): 1.5-1.5.2's
  ``make_private`` built ``GradSampleModuleFastGradientClipping`` without ``max_grad_norm``, so
  per-sample gradients were clipped to its default 1 while the noise was σ·``max_grad_norm``.  The
  target row is the grid point ``grad_sample_mode=ghost`` (C = 0.2) on two-dimensional rows, swept
  alone: a row of ``make_private`` trains 3,000 models a pair, and the entry's other points are in
  the current release's sweep.
- **SmartNoise Synth 1.0.5 → 1.0.6, DPcovariance** (opendp/smartnoise-sdk#622, fixed by #624 in
  1.0.6): ``DPcovariance.release`` clipped the data to the bounds, then computed the covariance of
  the raw data, with noise calibrated to the bounds; an outlier beyond them moves cov(x, x) without
  limit.  The target row is the grid point ``epsilon=1.0``.
- **OpenDP 0.3.0 → 0.4.0, make_base_stability** (the 0.4.0 changelog's *Security* entry: it
  "underestimated the sensitivity of queries"; removed for ``make_base_ptr``).  Its check accepts
  ``scale ≥ d_in/(ε n)``, noise n times too small for counts that move by 1: after ``make_count_by``
  on 10 records, one replaced, it claims (1.0006, 1e-6) where the two changed counts give ε = 10.
  The fixed release must report the entry "not in this release".
- **OpenDP 0.3.0 → 0.4.0, the integer sized bounded sum** (the 0.4.0 changelog's *Security* entry:
  "fixed integer truncation issue in the sized bounded sum privacy relation").  0.3's stability
  constant (upper − lower)/2 is computed in the integer type, so on bounds [0, 1] it is 0 and the
  chain with ``make_base_geometric`` accepts any ε (its claim is read at the floor, 1e-6) while one
  record 0 → 1 moves the sum by 1.  The target row is ``kind=sized_bounded_sum``, swept alone.
- **diffprivlib 0.4.1 → 0.5.0, Wishart** (IBM/differential-privacy-library#42): the Wishart
  mechanism adds a Wishart matrix G Gᵀ to a second-moment matrix; the noise is positive definite, so
  a release below A + x xᵀ in x's direction comes only from the dataset without x, with
  probability P(χ²₃ < (2ε)²) = 0.74 at ε = 1.  Deprecated in 0.4 as not DP and removed in 0.5.0:
  the fixed release must report the entry "not in this release".

- **OpenDP 0.4.0 → 0.5.0, make_base_gaussian and make_base_analytic_gaussian** (the same *Security*
  entry as the Laplace: both float Gaussians replaced; the analytic one removed, so the fixed release
  must report it "not in this release").  0.4 releases v + noise in doubles, on v's grid.
- **PipelineDP 0.2.1 → 0.3.0, VECTOR_SUM** (OpenMined/PipelineDP#551, fixed by #556 in 0.3.0):
  0.2.1 clipped the partition's total to ``vector_max_norm`` instead of each unit's sum, so one unit
  beyond the bound turns a total of −M into +M, twice the sensitivity the noise assumes; and its
  noise's sensitivity, l0 · max_contributions_per_partition, leaves M out (#552, changed by #559 in
  the same release).  The target row is ``vector_max_norm=5.0``, where both show.  At M = 1 the
  first alone is not refutable with private partitions: the accountant gives half of ε to the
  selection, which a partition of 60 units passes on both datasets, so the sum's Laplace scale is
  1/(ε/2) = 2 and the shift of 2M = 2 costs ε/2 + ε/2 = ε, exactly the claim.
- **SmartNoise SQL 0.1.1 → 0.1.2, SUM over a column without bounds** (opendp/smartnoise-sdk#317,
  fixed by PR #318 on 2020-12-15, first released in ``opendp-smartnoise`` 0.1.2): a column whose
  metadata gives no bounds had sensitivity None, which the reader reads as a grouping key's, so
  ``SUM`` was released with no noise (``AVG`` was noisy only through its count).  These releases
  ship as ``opendp-smartnoise`` and are swept by the catalogue for releases before 1.0
  (``scenarios/libraries/snsql_legacy.py``).  The target row is ``SUM [bounds=None]``, swept
  alone; 0.1.2 refuses that query (``ValueError``), so it must report the row "not in this release".
- **OpenDP 0.14.1 → 0.14.2, the integer Laplace at scale 3** (opendp/opendp#2638, fixed by #2639):
  ``sample_bernoulli_exp1`` drew Bernoulli(x/k) with dashu's ``RBig / UBig``, which for x = a/b
  returned (a/g)/(⌊b/g⌋·k), g = gcd(a, k).  The discrete Laplace of scale 3 draws its remainder
  u ∈ {0, 1, 2} with Bernoulli(exp(−u/3)); at u = 2 that probability is 0.6090 instead of 0.5134,
  so P(Y = 2)/P(Y = 3) = e^0.504 where the claim 1/3 allows e^0.333.  The row's batched draws
  (the vector form of the same noise) resolve it; at scale 1 the sampler meets no such x.
- **OpenDP 0.5.0 → 0.6.0, ``make_lipschitz_float_mul`` on [1, 4]** (#582, 0.6.0 changelog,
  *Fixed*): 0.5 clamped the constant to the bounds instead of the value, so c = 1/4 on data in
  [1, 4] became 1 and the value was released unscaled, while the map claims |c|·d_in.  Chained
  with a Laplace of scale 1/4 the claim is ε = 1 and a shift of 1 costs ε = 4.  The entry's other
  point, bounds (0, 4), where the constant lies inside the bounds, is refuted on neither release.
- **OpenDP 0.12.1 → 0.13.0, a Polars group-by over explicit keys** (opendp/opendp#2344, fixed by
  #2345, changelog *Privacy Impacting*): the empty partitions' fill was one noisy scalar broadcast
  to every key without a record, so those keys tie; the row releases each key's sum and the number
  of tied keys (4 on the empty table, 3 with one record in key 0).  The release environments from
  0.11 on install the release's ``polars`` extra.

- **Opacus 1.5.3 → 1.5.4, ghost clipping on sequences** (meta-pytorch/opacus#751, the 1.5.4
  changelog's "Fix the norm calculation of bias under ghost clipping"): 1.5-1.5.3's
  ``compute_linear_norm_sample`` took the norm of a bias's per-sample gradient on (batch, L, d)
  activations as ‖G Gᵀ‖_F, G the sequence's L × d output gradients, where it is ‖Gᵀ1‖.  On the grid
  point ``tokens=8, grad_sample_mode=ghost`` (L = 8, d = 1, C = 0.2) a sequence whose tokens each
  have gradient a = √(C/L) is normed L·a² = C and passes unclipped with its true norm √(LC) = 6.3·C.
  The target row is that point, swept alone.

- **Opacus 0.11.0 → 0.12.0, Poisson batches** (meta-pytorch/opacus#128, the 0.12.0 changelog's "Fix
  batch construction and privacy engine"): 0.11 trained on the user's shuffled ``DataLoader``, every
  record in one batch an epoch, while its accountant composed the Poisson-subsampled Gaussian at
  q = batch/sample size; with the default mean loss each step's noise is divided by the size of the
  batch just seen.  On n = 8 = 2B records the added record makes a third batch of one, whose noise is
  four times the others' (``scenarios/libraries/opacus_legacy.py``).  0.12 kept that construction
  (it warns that its budget is "incorrect") and added Poisson batches, so the target on the fixed
  release is a point of its own: Poisson batches at q = 1/2 with the same mean loss.  The buggy
  release's target is the shuffled point; both releases' other rows are in the table.

``--range LIB SPEC`` also runs ``dpaudit sweep LIB --versions SPEC`` (e.g. ``opacus last:10``) and
writes its per-version table to ``benchmarks/results/sweep_versions_LIB.md``.

Run ``nice -n 5 python benchmarks/sweep_versions.py`` (``--budget small`` for a quick look).
Results: ``benchmarks/results/sweep_versions.md`` and ``.json``, with the CPU time of each sweep
and the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"

from audit.sweep.releases import ensure_environment, sweep_in_environment  # noqa: E402


@dataclass(frozen=True)
class Target:
    library: str
    buggy: str
    fixed: str
    entry: str
    point: str
    issue: str
    #: sweep only the target grid point (``--entries 'ENTRY [*POINT*]'``), not the entry's whole grid
    only_point: bool = False
    #: the fix removed the entry, or refuses the grid point: the fixed release must report it "not in this release"
    removed: bool = False
    #: the results folder under the release's (default: the entry's name); set where another target
    #: sweeps another point of the same entry on the same release
    folder: str = ""
    #: the grid point that is the target on the fixed release, where the fix is a construction of its
    #: own and the buggy one stays (default: ``point``)
    fixed_point: str = ""

    def point_of(self, role: str) -> str:
        """The target grid point on the ``role`` release."""
        return self.fixed_point if role == "fixed" and self.fixed_point else self.point

    def expected(self, role: str) -> str:
        """The verdict the unchanged sweep must give the target row on the ``role`` release."""
        return "VIOLATED" if role == "buggy" else "ABSENT" if self.removed else "NOT_REFUTED"


TARGETS = (
    Target("diffprivlib", "0.4.0", "0.4.1", "models.LinearRegression", "data=y only",
           "IBM/differential-privacy-library#34 (fixed by PR #35, released in 0.4.1)"),
    Target("opendp", "0.4.0", "0.5.0", "measurements.make_base_laplace", "scale=1.0",
           "OpenDP 0.5.0 changelog, Security: float Laplace replaced to address precision-based attacks"),
    Target("opendp", "0.4.0", "0.5.0", "measurements.make_randomized_response_bool", "prob=0.75",
           "opendp/opendp#480, fixed by #481 (OpenDP 0.5.0 changelog: fixed function in make_randomized_response_bool)"),
    Target("opendp", "0.14.0", "0.15.0", "measurements.randomized_response", "kind=bitvec",
           "opendp/opendp#2707, fixed by #2708 (the bit-vector randomized response left its last bit unprotected)"),
    Target("opacus", "1.5.2", "1.5.3", "PrivacyEngine.make_private", "steps=2, grad_sample_mode=ghost",
           "meta-pytorch/opacus#664, released in 1.5.3 (make_private's ghost clipping clipped to 1, not max_grad_norm)",
           only_point=True),
    Target("smartnoise-synth", "1.0.5", "1.0.6", "models.DPcovariance", "epsilon=1.0",
           "opendp/smartnoise-sdk#622, fixed by #624 in 1.0.6 (the covariance clipped the data, then used the raw data)"),
    Target("opendp", "0.3.0", "0.4.0", "measurements.make_base_stability", "n=10",
           "OpenDP 0.4.0 changelog, Security: make_base_stability underestimated the sensitivity of queries; "
           "removed in 0.4.0 for make_base_ptr", removed=True),
    Target("opendp", "0.3.0", "0.4.0", "chains.sized", "kind=sized_bounded_sum",
           "OpenDP 0.4.0 changelog, Security: fixed integer truncation issue in the sized bounded sum privacy relation",
           only_point=True),
    Target("diffprivlib", "0.4.1", "0.5.0", "mechanisms.Wishart", "epsilon=1.0",
           "IBM/differential-privacy-library#42 (the Wishart mechanism is not DP; deprecated in 0.4, removed in 0.5.0)",
           removed=True),
    Target("opendp", "0.4.0", "0.5.0", "measurements.make_base_gaussian", "scale=6.0",
           "OpenDP 0.5.0 changelog, Security: float Gaussian replaced to address precision-based attacks"),
    Target("opendp", "0.4.0", "0.5.0", "measurements.make_base_analytic_gaussian", "scale=1.0",
           "OpenDP 0.5.0 changelog, Security: float Gaussians replaced to address precision-based attacks; "
           "make_base_analytic_gaussian removed for make_base_gaussian", removed=True),
    Target("pipeline-dp", "0.2.1", "0.3.0", "aggregate.VECTOR_SUM", "vector_max_norm=5.0",
           "OpenMined/PipelineDP#551 and #552, fixed by #556 and #559 in 0.3.0 (VectorSum clipped the partition's "
           "total, not each unit's contribution, and its noise left vector_max_norm out of the sensitivity)"),
    Target("smartnoise-sql", "0.1.1", "0.1.2", "SUM", "bounds=None",
           "opendp/smartnoise-sdk#317, fixed by #318 in opendp-smartnoise 0.1.2 (a column without bounds summed with "
           "no noise; 0.1.2 refuses the query)", only_point=True, removed=True),
    Target("opendp", "0.14.1", "0.14.2", "measurements.make_laplace[int]", "scale=3.0",
           "opendp/opendp#2638, fixed by #2639 in 0.14.2 (the exact Bernoulli(exp(-x)) sampler under the discrete "
           "noise divided x by k with dashu's faulty RBig / UBig, cmpute/dashu#57)"),
    Target("opacus", "1.5.3", "1.5.4", "PrivacyEngine.make_private", "tokens=8, grad_sample_mode=ghost",
           "meta-pytorch/opacus#751, released in 1.5.4 (ghost clipping's per-sample norm of a Linear bias on sequence "
           "inputs was ‖GGᵀ‖_F, not ‖Σ_t g_t‖)", only_point=True, folder="PrivacyEngine.make_private [tokens]"),
    Target("opendp", "0.5.0", "0.6.0", "transformations.make_lipschitz_float_mul", "bounds=(1.0, 4.0)",
           "opendp/opendp#582 in 0.6.0 (changelog, Fixed: clamping in make_lipschitz_float_mul; 0.5 clamped the "
           "constant to the bounds instead of the value)"),
    Target("opendp", "0.12.1", "0.13.0", "measurements.make_private_lazyframe", "keys=4",
           "opendp/opendp#2344, fixed by #2345 in 0.13.0 (changelog, Privacy Impacting: a Polars group-by with "
           "explicit keys filled every empty partition with one noisy value, broadcast)"),
    Target("opacus", "0.11.0", "0.12.0", "PrivacyEngine.attach", "noise_multiplier=4.0, max_grad_norm=1.0, rows=8",
           "meta-pytorch/opacus#128, released in 0.12.0 (0.11 trained on the user's shuffled batches of fixed size, "
           "the last one smaller, with an accountant for Poisson sampling; 0.12.0 added Poisson batches, and warns "
           "that the shuffled construction's budget is incorrect)",
           fixed_point="sample_rate=0.5, epochs=1, loss_reduction=mean"),
)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def sweep(target: Target, version: str, out: Path, budget: str, seed: int,
          reuse: bool) -> tuple[dict, int, float, Optional[float]]:
    """The target's entry swept on one release; its document, exit status, CPU seconds and the
    1-minute load at its end (with ``reuse``, a finished sweep of the same budget and seed in
    ``out`` is read back instead, with the load saved then: None if none was)."""
    stamp = Path(out) / "benchmark.json"
    if reuse and stamp.is_file():
        saved = json.loads(stamp.read_text())
        if (saved["budget"], saved["seed"]) == (budget, seed) and saved["document"].get("finished", True):
            return saved["document"], saved["status"], saved["cpu_s"], saved.get("load_1min")
    python = ensure_environment(target.library, target.library, version, log=lambda line: print(line, flush=True))
    before = _cpu()
    status, document, last = sweep_in_environment(
        python, target.library, ["--entries", f"{target.entry} [*{target.point}*]" if target.only_point else target.entry,
                                 "--budget", budget, "--seed", str(seed), "--no-progress"],
        out)
    if document is None:
        raise RuntimeError(f"{target.library}=={version}: no report ({last})")
    cpu, load = _cpu() - before, os.getloadavg()[0]
    stamp.write_text(json.dumps({"budget": budget, "seed": seed, "status": status, "cpu_s": cpu, "load_1min": load,
                                 "document": document}))
    return document, status, cpu, load


def _shown(verdict: str) -> str:
    return "not in this release" if verdict == "ABSENT" else verdict


def _fmt(value) -> str:
    return "—" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)


def run_range(library: str, spec: str, budget: str, entries: list[str], out: Path) -> int:
    """``dpaudit sweep LIB --versions SPEC``; its table goes to benchmarks/results/sweep_versions_LIB.md."""
    command = [sys.executable, "-m", "audit.cli", "sweep", library, "--versions", spec, "--budget", budget,
               "--out", str(out / f"range-{library}"), "--no-progress"] + (["--entries", *entries] if entries else [])
    started, before = time.perf_counter(), _cpu()
    status = subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL).returncode
    table = (out / f"range-{library}" / "versions.md").read_text()
    note = (f"\n`{' '.join(['dpaudit', *command[3:]])}`: exit status {status}, {time.perf_counter() - started:.0f} s "
            f"wall, {_cpu() - before:.0f} s CPU, 1-minute load {os.getloadavg()[0]:.1f} at the end.\n")
    (RESULTS / f"sweep_versions_{library}.md").write_text(table + note)
    print(table + note)
    return status


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budget", choices=("small", "default"), default="default")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--only", nargs="*", help="library names whose targets run (default: all)")
    parser.add_argument("--reuse", action="store_true", help="read back the targets already swept at this budget and seed")
    parser.add_argument("--range", nargs=2, metavar=("LIB", "SPEC"), help="also sweep LIB over releases SPEC")
    parser.add_argument("--range-entries", nargs="*", default=[], help="entries of the range sweep (default: all)")
    parser.add_argument("--range-budget", choices=("small", "default"), default="small")
    args = parser.parse_args(argv)
    rows = []
    for target in TARGETS:
        if args.only and target.library not in args.only:
            continue
        for role, version in (("buggy", target.buggy), ("fixed", target.fixed)):
            started = time.perf_counter()
            document, status, cpu, load = sweep(target, version, args.out / "sweep_versions" / f"{target.library}-{version}"
                                          / (target.folder or target.entry), args.budget, args.seed, args.reuse)
            for row in document["rows"]:
                is_target = row["entry"] == target.entry and (target.point_of(role) in row["point"] or row["point"] == "*")
                rows.append({"expected": target.expected(role) if is_target else None, "library": target.library, "version": version, "role": role, "issue": target.issue,
                             "row": row["key"], "target": is_target,
                             "verdict": row.get("verdict") or row.get("status", "ERROR").upper(),
                             "epsilon_lb": row.get("epsilon_lb"), "statistic": (row.get("witness") or {}).get("statistic"),
                             "status": status, "cpu_s": cpu, "wall_s": time.perf_counter() - started,
                             "load_1min": load, "budget": args.budget, "seed": args.seed,
                             "error": row.get("error") or row.get("reason")})
    if not rows and args.range:  # only the range sweep was asked for: keep the targets' results
        return run_range(args.range[0], args.range[1], args.range_budget, args.range_entries, args.out)
    targets = [r for r in rows if r["target"]]
    met = bool(targets) and all(r["verdict"] == r["expected"] for r in targets)
    lines = [f"**Documented-and-fixed violations, swept on the buggy and the fixed release (budget "
             f"`{args.budget}`, seed {args.seed}; CPU seconds of each sweep, 1-minute load average beside it: the "
             "machine was shared)**", "",
             "| library | version | role | row | target | verdict | ε_lb | statistic | expected | met | CPU s | load |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        expected = r["expected"] or "—"
        ok = ("yes" if r["verdict"] == expected else "**no**") if r["target"] else "—"
        lines.append(f"| {r['library']} | {r['version']} | {r['role']} | {r['row']} | {'yes' if r['target'] else 'no'} "
                     f"| {_shown(r['verdict'])} | {_fmt(r['epsilon_lb'])} | {r['statistic'] or '—'} | {_shown(expected)} | {ok} | "
                     f"{'—' if r['cpu_s'] != r['cpu_s'] else format(r['cpu_s'], '.0f')} | {'—' if r['load_1min'] is None else format(r['load_1min'], '.1f')} |")
    lines += ["", "Target rows: " + "; ".join(f"{t.library} {t.entry} [{t.point}], {t.buggy} → {t.fixed}"
                                              + (f" [{t.fixed_point}]" if t.fixed_point else "") + f": {t.issue}"
                                              for t in TARGETS if not args.only or t.library in args.only)]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sweep_versions.md").write_text("\n".join(lines) + "\n")
    (args.out / "sweep_versions.json").write_text(json.dumps({"met": met, "rows": rows}, indent=1))
    print("\n".join(lines))
    status = 0 if met else 1
    if args.range:
        range_status = run_range(args.range[0], args.range[1], args.range_budget, args.range_entries, args.out)
        status = status or (0 if range_status in (0, 1) else range_status)
    return status


if __name__ == "__main__":
    sys.exit(main())
