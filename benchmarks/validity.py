"""Validity and power of the auditor: repeated seeded audits of correct and faulty mechanisms.

**Validity.**  Every correct reference mechanism is audited at its own claim R times with
independent seeds.  The engine promises (audit/selection.py) that a claim that holds is reported
VIOLATED with probability at most γ = 1 − confidence per audit, and that every certified lower
bound holds (simultaneously) with probability ≥ confidence.  The study reports the observed
false-VIOLATED count with its two-sided 95% Clopper–Pearson interval, to be compared with γ, and
the coverage of each certified bound: the fraction of runs with ε_lb ≤ exact ε (at the claim's δ),
δ_lb ≤ exact δ (at the claim's ε) and μ_lb ≤ exact μ (Gaussian-shaped mechanisms only).

**Power.**  Every mechanism of :data:`scenarios.faulty_cases.FAULTY_MECHANISMS` is audited R_power
times at the engine's default sample count, and R_grid times at each sample count of a doubling
grid (``grid_start``·2^i below the default, then the default), smallest first, until one detects the fault (verdict
VIOLATED) in ≥ 95% of runs: the smallest such count is reported.

Runs are independent jobs (joblib, one audit per job with ``n_jobs=1``); run i of case c at
sample count n uses the seed ``SeedSequence(seed, spawn_key=(crc32(c), n, i))``, so the study is
reproducible and no two audits share samples.

Usage (from the repository root)::

    python benchmarks/validity.py --quick --out results/validity-quick     # ~1-2 min
    python benchmarks/validity.py --n-jobs 2 --out results/validity         # full study

or, importable: :func:`run_study` returns a :class:`StudyResult` (``to_markdown()``, ``to_dict()``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
import zlib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from joblib import Parallel, delayed
from tqdm.auto import tqdm

import scenarios
from audit import Verdict, anytime, cp_interval, run_audit
from audit.report import jsonable
from audit.testing import assert_claim
from mechanisms import (Composition, CorrelatedGaussianMechanism, GaussianMechanism, LaplaceMechanism, PureDP,
                        TruncatedLaplaceMechanism)
from mechanisms.validation import check_int, check_open_unit
from mechanisms.zoo.faulty import exact_truth
from scenarios.faulty_cases import FAULTY_MECHANISMS

__all__ = ["REFERENCE_CASES", "FULL", "QUICK", "ValidityRow", "PowerRow", "GridPoint", "StudyResult",
           "run_study", "main", "run_seed"]

#: How the correct mechanisms are audited (:func:`run_study`'s ``mode``).
MODES = ("fixed", "anytime", "plugin")
#: Detection rate a sample count must reach to count as "detected" in the grid search.
DETECTION_TARGET = 0.95
#: Confidence of the Clopper–Pearson intervals printed around observed rates.
RATE_CONFIDENCE = 0.95
#: Relative slack for "bound ≤ exact": absorbs floating-point rounding of the exact value only.
_ROUNDING = 1e-12


# -- the correct reference mechanisms, each at its own claim --------------------------------------
def _gaussian_analytic():
    """Analytic Gaussian (Balle & Wang), (1, 1e-5)-DP: tight, δ(1) = 1e-5 exactly."""
    return GaussianMechanism(1.0, 1e-5), scenarios.counting(1)


def _gaussian_classical():
    """Classical Gaussian at ε = 0.5 < 1 (Dwork & Roth Thm A.1 applies): valid, loose."""
    return GaussianMechanism(0.5, 1e-5, calibration="classical"), scenarios.counting(1)


def _laplace():
    """Laplace, scale 1/ε on a sum of rows in [0, 1]: exactly 1-DP."""
    return LaplaceMechanism(1.0), scenarios.counting(1)


def _truncated_laplace():
    """Geng's truncated Laplace, (1, 1e-5)-DP: δ(ε') = 1e-5 for every ε' ≥ 1 (tight)."""
    return TruncatedLaplaceMechanism(1.0, 1e-5), scenarios.counting(1)


def _discrete_gaussian():
    """Discrete Gaussian (exact sampler), σ = 3.742, (1, 1e-5)-DP: exact δ(1) = 9.943e-6 (tight)."""
    from mechanisms import DiscreteGaussianMechanism

    return DiscreteGaussianMechanism(3.742, 1.0, 1e-5), scenarios.counting(1)


def _subsampled_gaussian():
    """Poisson-subsampled Gaussian, σ = 1, q = 0.3, claiming (2.9216, 1e-5): dp-accounting's
    pessimistic ε(1e-5) = 2.92151 rounded up (tight; the true ε is at most that)."""
    from mechanisms import PoissonSubsampledGaussian

    return PoissonSubsampledGaussian(1.0, 0.3, epsilon=2.9216, delta=1e-5), scenarios.counting(1, n=0)


def _correlated_gaussian():
    """Lebeda's Algorithm 1, d = 4, 1-GDP under add/remove: exactly μ = 1 (tight)."""
    return CorrelatedGaussianMechanism(1.0, 4), scenarios.counting(4)


def _composition():
    """Four runs of N(0, 2²) on a count, each 0.5-GDP: exactly 1-GDP by composition (tight)."""
    return Composition(GaussianMechanism(sigma=2.0), 4), scenarios.counting(1)


def _randomized_response():
    """7-ary randomized response at ε = 1 on the middle labels 3 vs 4, categorical statistic."""
    from benchmarks.statistics import randomized_response

    return randomized_response(7, 1.0), scenarios.custom([([3], [4])]), "categorical"


def _sparse_vector():
    """Sparse vector (Lyu et al. Alg. 1, c = 1), ε = 0.1, its ⊤/⊥ patterns, categorical statistic."""
    from benchmarks.statistics import SparseVector

    return SparseVector(), scenarios.custom([([1.0] * 5 + [0.0] * 5, [0.0] * 5 + [1.0] * 5)]), "categorical"


def _binned_scale():
    """Gaussian noise whose scale depends on the data, at its exact δ(1), binned statistic."""
    from benchmarks.statistics import ScaleGaussian

    return ScaleGaussian(), scenarios.custom([([0.0], [1.0])]), "binned"


def _classifier_vector():
    """Lebeda's Algorithm 1, d = 2, 1-GDP (tight), scored by a logistic-regression classifier."""
    from audit.statistics import Classifier

    return (CorrelatedGaussianMechanism(1.0, 2), scenarios.counting(2),
            Classifier(estimator="logistic", features="values"))


def _laplace_parallel_additive():
    """20 copies of q + Lap(200) (LaplaceParallel), claim 0.1 = its exact ε, additive statistic."""
    from mechanisms.literature import LaplaceParallel

    return LaplaceParallel(), scenarios.custom([([1.0], [0.0])]), "additive"


def _svt3_flag_value():
    """SVT3 (⊤/⊥ flags and released values, c = 1), claimed at its exact ε = 0.5, flag-and-value
    statistic, on the pair whose loss tends to 0.5 (mechanisms.literature.svt)."""
    from mechanisms.literature import SparseVectorTechnique3

    mechanism = _Claimed(SparseVectorTechnique3(), PureDP(0.5))
    return mechanism, scenarios.custom([([1.0] * 10, [2.0] * 9 + [0.0])]), "flag-value"


def _sparse_histogram_auto():
    """Stability-based histogram with threshold ln(1/δ)/ε, claimed at its exact δ(1) = p = e/2000
    (tight at ε = 1), default statistic: the new bin released is the one-sided rare event."""
    from mechanisms.zoo.faulty_rare import SparseHistogram

    probe = SparseHistogram(1.0, 1e-3)
    mechanism = SparseHistogram(1.0, 1e-3, claimed_delta=probe.release_probability)
    return mechanism, scenarios.from_pairs(mechanism.worst_pairs(), "add-remove")


def _truncated_laplace_far_tail():
    """Geng's truncated Laplace at (1, 1e-4), tight: its one-sided tail holds exactly δ, the region
    the far-tail audits refute when τ is too small; default statistic (every candidate a lane)."""
    return TruncatedLaplaceMechanism(1.0, 1e-4), scenarios.counting(1)


def _laplace_parallel_auto():
    """LaplaceParallel at its exact claim, default statistic (weak signal: auto's structural rule)."""
    return _laplace_parallel_additive()[:2]


def _gaussian_zcdp_curve():
    """Gaussian mechanism under its exact ρ-zCDP curve claim (ρ = 1/(2σ²), σ = 2: tight at every
    δ), default statistic: the ranking by the whole ε(δ) profile."""
    from mechanisms import ZCDP

    return _Claimed(GaussianMechanism(sigma=2.0), ZCDP(1.0 / 8.0)), scenarios.counting(1)


class _Claimed:
    """A mechanism with another claim (its truth unchanged): the validity study's tight claims."""

    def __init__(self, mechanism, claim):
        self._mechanism, self.claim = mechanism, claim
        self.name = f"{mechanism.name} claimed {claim.label}"

    def __call__(self, dataset, size, rng):
        return self._mechanism(dataset, size, rng)

    def __getattr__(self, attribute):
        return getattr(self._mechanism, attribute)
def _coordinates_vector():
    """Lebeda's Algorithm 1, d = 4, 1-GDP (tight), scored by the coordinates statistic (the coordinate
    and view chosen on held-out training draws; the sweep's statistic for vector releases)."""
    return CorrelatedGaussianMechanism(1.0, 4), scenarios.counting(4), "coordinates"


#: Correct mechanisms of the validity study: name -> zero-argument factory of (mechanism, scenario)
#: or (mechanism, scenario, statistic) where the case exercises a particular test statistic.
REFERENCE_CASES: dict[str, Callable[[], tuple[Any, Any]]] = {
    "gaussian-analytic": _gaussian_analytic,
    "gaussian-classical": _gaussian_classical,
    "laplace": _laplace,
    "truncated-laplace": _truncated_laplace,
    "discrete-gaussian": _discrete_gaussian,
    "subsampled-gaussian": _subsampled_gaussian,
    "correlated-gaussian": _correlated_gaussian,
    "composition": _composition,
    "randomized-response-categorical": _randomized_response,
    "sparse-vector-categorical": _sparse_vector,
    "vector-classifier": _classifier_vector,
    "scale-gaussian-binned": _binned_scale,
    "laplace-parallel-additive": _laplace_parallel_additive,
    "svt3-flag-value": _svt3_flag_value,
    "sparse-histogram-auto": _sparse_histogram_auto,
    "truncated-laplace-far-tail-auto": _truncated_laplace_far_tail,
    "laplace-parallel-auto": _laplace_parallel_auto,
    "gaussian-zcdp-curve-auto": _gaussian_zcdp_curve,
    "vector-coordinates": _coordinates_vector,
}

#: Parameters of the full study (~30–40 min on 2 cores) and of ``--quick`` (~1–2 min).
FULL = {"runs": 400, "samples": 200_000, "power_runs": 40, "default_samples": 1_000_000,
        "grid_runs": 40, "grid_start": 1_000}
QUICK = {"runs": 10, "samples": 10_000, "power_runs": 5, "default_samples": 128_000,
         "grid_runs": 5, "grid_start": 2_000}


def _factory(kind: str, name: str) -> Callable[[], tuple[Any, Any]]:
    return REFERENCE_CASES[name] if kind == "correct" else FAULTY_MECHANISMS[name]


def run_seed(seed: int, case: str, samples: int, run: int) -> int:
    """The audit seed of run ``run`` of ``case`` at ``samples``: independent streams per job."""
    key = (zlib.crc32(case.encode()), int(samples), int(run))
    return int(np.random.SeedSequence(seed, spawn_key=key).generate_state(1, np.uint64)[0])


def _audit_once(kind: str, name: str, samples: int, seed: int, confidence: float, mode: str = "fixed") -> dict:
    """One audit (the job run by a worker): the verdict and the certified bounds.

    ``mode`` "fixed" is the default design; "anytime" an anytime audit with at most ``samples``
    draws, monitored after every round up to the budget (the futility rule is switched off, so no
    run stops before it has had every chance to raise a false alarm); "plugin" the pytest plugin's
    ``assert_claim(accuracy=True)``, whose failure (privacy or accuracy) is the event counted."""
    cpu = time.process_time()
    made = _factory(kind, name)()
    mechanism, scenario = made[:2]
    statistic = made[2] if len(made) > 2 else "auto"
    if mode == "plugin":
        return _plugin_once(mechanism, scenario, samples, seed, confidence, statistic, cpu)
    if mode == "anytime":
        anytime.FUTILITY_START = math.inf  # continuous monitoring up to the budget (this worker only)
    report = run_audit(mechanism, scenario, samples=samples, confidence=confidence, seed=seed,
                       n_jobs=1, progress=False, accuracy=False, statistic=statistic, anytime=mode == "anytime")
    return {"violated": report.verdict is Verdict.VIOLATED,
            "epsilon_lb": float(report.epsilon_lower_bound),
            "delta_lb": float(report.delta_lower_bound),
            "mu_lb": float(report.mu_lower_bound),
            "chose_early": "chose_early" in (report.draws or {}).get("looks", {}),
            "draws_per_side": int((report.draws or {}).get("per_side", 0)),
            "wall_time_s": float(report.runtime["wall_time_s"]),
            "cpu_time_s": time.process_time() - cpu}


def _plugin_once(mechanism, scenario, samples, seed, confidence, statistic, cpu) -> dict:
    """One ``assert_claim(accuracy=True)``: whether it failed, and on what."""
    failed, message = False, ""
    try:
        report = assert_claim(mechanism, scenario, samples=samples, seed=seed, confidence=confidence, accuracy=True,
                              statistic=statistic)
    except AssertionError as error:
        failed, message, report = True, str(error), None
    return {"violated": failed, "privacy_failed": "privacy claim" in message,
            "accuracy_failed": "accuracy claims" in message,
            "epsilon_lb": float(report.epsilon_lower_bound) if report else math.nan,
            "delta_lb": float(report.delta_lower_bound) if report else math.nan,
            "mu_lb": float(report.mu_lower_bound) if report else math.nan, "chose_early": False,
            "draws_per_side": int(report.draws["per_side"]) if report else 0,
            "wall_time_s": 0.0, "cpu_time_s": time.process_time() - cpu}


# -- results ------------------------------------------------------------------------------------
def _rate(count: int, runs: int) -> dict:
    interval = cp_interval(count, runs, RATE_CONFIDENCE)
    return {"count": count, "runs": runs, "rate": count / runs, "low": interval.low, "high": interval.high}


def _fmt(value: Optional[float], digits: int = 4) -> str:
    if value is None:
        return "–"
    if math.isinf(value):
        return "∞"
    return f"{value:.{digits}g}"


def _fmt_rate(rate: dict) -> str:
    return f"{rate['count']}/{rate['runs']} = {rate['rate']:.3f} [{rate['low']:.3f}, {rate['high']:.3f}]"


def _covered(bounds: Sequence[float], exact: Optional[float]) -> Optional[float]:
    if exact is None or (isinstance(exact, float) and math.isnan(exact)):
        return None
    limit = exact * (1.0 + _ROUNDING) if math.isfinite(exact) else math.inf
    return float(np.mean(np.asarray(bounds) <= limit))


@dataclass(frozen=True)
class ValidityRow:
    """A correct mechanism audited ``runs`` times at its own claim."""

    case: str
    mechanism: str
    truth: dict
    samples: int
    false_violated: dict  # count, runs, rate, low, high (two-sided 95% Clopper–Pearson)
    allowed_rate: float  # γ = 1 − confidence
    within_bound: bool  # the interval's lower end is ≤ γ: no evidence of a rate above γ
    coverage_epsilon: Optional[float]
    coverage_delta: Optional[float]
    coverage_mu: Optional[float]
    mean_epsilon_lb: float
    mean_mu_lb: float
    runs: tuple[dict, ...] = field(repr=False)
    chose_early: int = 0  # runs that chose early (audit.allocation)
    accuracy_failures: int = 0  # plugin mode: runs failed by the accuracy audit
    median_draws: float = 0.0  # draws per side in total, median over runs


@dataclass(frozen=True)
class GridPoint:
    """Detection rate of one faulty mechanism at one sample count."""

    samples: int
    detection: dict


@dataclass(frozen=True)
class PowerRow:
    """A faulty mechanism: detection at the default sample count and on the doubling grid."""

    case: str
    mechanism: str
    fault: str
    truth: dict
    default_samples: int
    detection_default: dict
    grid: tuple[GridPoint, ...]
    min_samples_detected: Optional[int]  # None: below the target everywhere up to the default
    runs: tuple[dict, ...] = field(repr=False)  # the audits at the default sample count


@dataclass(frozen=True)
class StudyResult:
    """Everything :func:`run_study` measured, with its parameters and wall time."""

    parameters: dict
    validity: tuple[ValidityRow, ...]
    power: tuple[PowerRow, ...]
    wall_time_s: float
    machine: dict

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        """JSON with non-finite floats as the strings "inf"/"nan" (:func:`audit.report.jsonable`)."""
        return json.dumps(jsonable(self.to_dict()), indent=2, allow_nan=False)

    def to_markdown(self) -> str:
        p = self.parameters
        mode = p.get("mode", "fixed")
        how = {"fixed": f"{p['samples']:,} samples per pair and side (all phases)",
               "anytime": f"anytime audits of at most {p['samples']:,} samples per pair and side, each "
                          "monitored after every round up to its budget (futility rule off)",
               "plugin": f"through `assert_claim(accuracy=True)` (the pytest plugin), {p['samples']:,} samples, "
                         "a failure of the privacy or the accuracy audit counted"}[mode]
        lines = [f"Validity: each correct mechanism audited {p['runs']} times at its claim, {how}, "
                 f"confidence {p['confidence']}. "
                 "False-VIOLATED rate with its two-sided 95% Clopper–Pearson interval; coverage = "
                 "fraction of runs whose certified lower bound is ≤ the exact value.", "",
                 "| mechanism | claim | exact ε / δ / μ | false VIOLATED [95% CP] | allowed | "
                 "ε_lb ≤ ε | δ_lb ≤ δ | μ_lb ≤ μ | mean ε_lb | mean μ_lb |",
                 "|---|---|---|---|---|---|---|---|---|---|"]
        for row in self.validity:
            t = row.truth
            lines.append(
                f"| {row.mechanism} | {t['claim']} | {_fmt(t['exact_epsilon'])} / {_fmt(t['exact_delta'])}"
                f" / {_fmt(t['exact_mu'])} | {_fmt_rate(row.false_violated)} | ≤ {row.allowed_rate:g}"
                f"{'' if row.within_bound else ' ✗'} | {_fmt(row.coverage_epsilon, 3)} | "
                f"{_fmt(row.coverage_delta, 3)} | {_fmt(row.coverage_mu, 3)} | "
                f"{_fmt(row.mean_epsilon_lb)} | {_fmt(row.mean_mu_lb)} |")
        if mode == "plugin":
            lines += ["", "Failures by the accuracy audit: " + ", ".join(
                f"{row.mechanism} {row.accuracy_failures}/{len(row.runs)}" for row in self.validity) + "."]
        if mode == "anytime":
            lines += ["", "Median draws per side in total: " + ", ".join(
                f"{row.mechanism} {row.median_draws:,.0f}" for row in self.validity) + "."]
        if any(row.chose_early for row in self.validity):
            lines += ["", "Runs that chose early (`audit.allocation`): " + ", ".join(
                f"{row.mechanism} {row.chose_early}/{len(row.runs)}" for row in self.validity) + "."]
        if not self.power:
            lines += ["", "Power: not measured in this run (`--faulty` named no faulty mechanism)."]
        else:
            lines += ["", f"Power: each faulty mechanism audited {p['power_runs']} times at "
                      f"{p['default_samples']:,} samples, and {p['grid_runs']} times per sample count of "
                      f"the doubling grid from {p['grid_start']:,} until detected in ≥ "
                      f"{DETECTION_TARGET:.0%} of runs.", "",
                      "| faulty mechanism | fault | claim | exact ε / δ / μ | detected at "
                      f"{p['default_samples']:,} [95% CP] | smallest n detected ≥ {DETECTION_TARGET:.0%} |",
                      "|---|---|---|---|---|---|"]
        for row in self.power:
            t = row.truth
            smallest = "> default" if row.min_samples_detected is None else f"{row.min_samples_detected:,}"
            if row.min_samples_detected is not None:
                rate = next(g.detection for g in row.grid if g.samples == row.min_samples_detected)
                smallest += f" ({rate['count']}/{rate['runs']})"
            lines.append(
                f"| {row.mechanism} | {row.fault} | {t['claim']} | {_fmt(t['exact_epsilon'])} / "
                f"{_fmt(t['exact_delta'])} / {_fmt(t['exact_mu'])} | {_fmt_rate(row.detection_default)}"
                f" | {smallest} |")
        lines += ["", f"Wall time {self.wall_time_s:.0f} s with n_jobs = {p['n_jobs']} "
                  f"({self.machine['cpu_count']} CPUs); {self.machine['audits']} audits, "
                  f"{self.machine['audit_cpu_s']:.0f} CPU-seconds in total."]
        return "\n".join(lines)


# -- the study ----------------------------------------------------------------------------------
class _Runner:
    """Runs lists of audit jobs in parallel with one shared progress bar."""

    def __init__(self, n_jobs: int, confidence: float, seed: int, progress: bool, mode: str = "fixed"):
        self.confidence, self.seed, self.mode = confidence, seed, mode
        self.parallel = Parallel(n_jobs=n_jobs, return_as="generator")
        self.bar = tqdm(total=0, disable=not progress, desc="validity study", unit="audit")
        self.cpu_seconds = 0.0  # summed over all audits (the workers' process time)
        self.audits = 0

    def __enter__(self) -> "_Runner":
        self.parallel.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.parallel.__exit__(*exc)
        self.bar.close()

    def run(self, jobs: Sequence[tuple[str, str, int, int]]) -> list[dict]:
        """Jobs are (kind, case, samples, run); results come back in job order."""
        self.bar.total += len(jobs)
        self.bar.refresh()
        results = []
        calls = (delayed(_audit_once)(kind, case, samples, run_seed(self.seed, case, samples, run),
                                      self.confidence, self.mode if kind == "correct" else "fixed")
                 for kind, case, samples, run in jobs)
        for result in self.parallel(calls):
            results.append(result)
            self.cpu_seconds += result["cpu_time_s"]
            self.audits += 1
            self.bar.update(1)
        return results


def _check_cases(names: Optional[Sequence[str]], registry: dict, what: str) -> tuple[str, ...]:
    if names is None:
        return tuple(registry)
    names = tuple(names)
    for name in names:
        if name not in registry:
            raise ValueError(f"`{what}` must name entries of {sorted(registry)}, got {name!r}")
    return names


def _grid(start: int, stop: int) -> list[int]:
    """start·2^i below ``stop``, then ``stop`` itself (the default sample count)."""
    points = [start]
    while points[-1] * 2 < stop:
        points.append(points[-1] * 2)
    if points[-1] != stop:
        points.append(stop)
    return points


def run_study(*, cases: Optional[Sequence[str]] = None, faulty: Optional[Sequence[str]] = None,
              runs: int = FULL["runs"], samples: int = FULL["samples"],
              power_runs: int = FULL["power_runs"], default_samples: int = FULL["default_samples"],
              grid_runs: int = FULL["grid_runs"], grid_start: int = FULL["grid_start"],
              confidence: float = 0.95, seed: int = 20261121, n_jobs: int = 1,
              progress: bool = True, mode: str = "fixed") -> StudyResult:
    """Run the validity and power study and return its table.

    Parameters
    ----------
    cases : names of :data:`REFERENCE_CASES` (default all; ``[]`` skips validity).
    faulty : names of :data:`scenarios.faulty_cases.FAULTY_MECHANISMS` (default all; ``[]`` skips power).
    runs, samples : audits per correct mechanism, and their samples per pair and side (total over all phases).
    power_runs, default_samples : audits per faulty mechanism at the default sample count.
    grid_runs, grid_start : audits per grid point; first point of the doubling grid
        (grid_start·2^i ≤ default_samples), searched upwards until detection ≥ 95%.
    confidence : the audits' confidence (γ = 1 − confidence is the allowed false-alarm rate).
    seed : base seed; every audit's seed is :func:`run_seed` of it.
    n_jobs : joblib workers over audits (each audit runs single-threaded).
    progress : show a tqdm bar.
    mode : how the correct mechanisms are audited: "fixed" (the default design), "anytime" (an
        anytime audit with at most ``samples`` draws, monitored after every round, futility off) or
        "plugin" (``audit.testing.assert_claim(accuracy=True)``: a failure of either audit counts).
    """
    if mode not in MODES:
        raise ValueError(f"`mode` must be one of {MODES}, got {mode!r}")
    cases = _check_cases(cases, REFERENCE_CASES, "cases")
    faulty = _check_cases(faulty, FAULTY_MECHANISMS, "faulty")
    runs, samples = check_int("runs", runs), check_int("samples", samples)
    power_runs, grid_runs = check_int("power_runs", power_runs), check_int("grid_runs", grid_runs)
    default_samples = check_int("default_samples", default_samples)
    grid_start = check_int("grid_start", grid_start)
    if grid_start > default_samples:
        raise ValueError(f"`grid_start` must be <= default_samples={default_samples}, got {grid_start!r}")
    confidence = check_open_unit("confidence", confidence)
    seed = check_int("seed", seed, minimum=0)
    started = time.perf_counter()
    parameters = {"cases": list(cases), "faulty": list(faulty), "runs": runs, "samples": samples,
                  "power_runs": power_runs, "default_samples": default_samples,
                  "grid_runs": grid_runs, "grid_start": grid_start, "confidence": confidence,
                  "seed": seed, "n_jobs": n_jobs, "detection_target": DETECTION_TARGET, "mode": mode}

    with _Runner(n_jobs, confidence, seed, progress, mode) as runner:
        # Phase 1: everything whose size is known in advance, the costly power runs first.
        jobs = [("faulty", c, default_samples, r) for c in faulty for r in range(power_runs)]
        jobs += [("correct", c, samples, r) for c in cases for r in range(runs)]
        results = runner.run(jobs)
        by_case: dict[tuple[str, int], list[dict]] = {}
        for (_, case, n, _), result in zip(jobs, results):
            by_case.setdefault((case, n), []).append(result)
        # Phase 2: the doubling grid, one level at a time for every case not yet detected.
        grids: dict[str, list[GridPoint]] = {c: [] for c in faulty}
        pending = list(faulty)
        for n in _grid(grid_start, default_samples):
            if not pending:
                break
            if n == default_samples and power_runs >= grid_runs:  # already measured
                level = {c: by_case[(c, n)] for c in pending}
            else:
                level_jobs = [("faulty", c, n, r) for c in pending for r in range(grid_runs)]
                level = {}
                for (_, case, _, _), result in zip(level_jobs, runner.run(level_jobs)):
                    level.setdefault(case, []).append(result)
            for case in list(pending):
                detected = sum(r["violated"] for r in level[case])
                grids[case].append(GridPoint(n, _rate(detected, len(level[case]))))
                if detected >= DETECTION_TARGET * len(level[case]):
                    pending.remove(case)

    validity = tuple(_validity_row(c, by_case[(c, samples)], samples, confidence) for c in cases)
    power = tuple(_power_row(c, by_case[(c, default_samples)], default_samples, grids[c]) for c in faulty)
    return StudyResult(parameters, validity, power, time.perf_counter() - started,
                       {"cpu_count": os.cpu_count(), "audits": runner.audits,
                        "audit_cpu_s": runner.cpu_seconds, "python": platform.python_version(),
                        "numpy": np.__version__, "platform": platform.platform()})


def _validity_row(case: str, results: list[dict], samples: int, confidence: float) -> ValidityRow:
    mechanism = REFERENCE_CASES[case]()[0]
    truth = exact_truth(mechanism)
    false = _rate(sum(r["violated"] for r in results), len(results))
    gamma = 1.0 - confidence
    column = lambda key: [r[key] for r in results]  # noqa: E731
    return ValidityRow(
        case=case, mechanism=mechanism.name, truth=truth, samples=samples,
        false_violated=false, allowed_rate=gamma, within_bound=false["low"] <= gamma,
        coverage_epsilon=_covered(column("epsilon_lb"), truth["exact_epsilon"]),
        coverage_delta=_covered(column("delta_lb"), truth["exact_delta"]),
        coverage_mu=_covered(column("mu_lb"), truth["exact_mu"]),
        mean_epsilon_lb=float(np.nanmean(column("epsilon_lb"))), mean_mu_lb=float(np.nanmean(column("mu_lb"))),
        runs=tuple(results), chose_early=int(sum(r.get("chose_early", False) for r in results)),
        accuracy_failures=int(sum(r.get("accuracy_failed", False) for r in results)),
        median_draws=float(np.median([r.get("draws_per_side", 0) for r in results])))


def _power_row(case: str, results: list[dict], default_samples: int, grid: list[GridPoint]) -> PowerRow:
    entry = FAULTY_MECHANISMS[case]
    mechanism, _ = entry()
    detected = [g.samples for g in grid if g.detection["count"] >= DETECTION_TARGET * g.detection["runs"]]
    return PowerRow(case=case, mechanism=mechanism.name, fault=entry.fault,
                    truth=exact_truth(mechanism), default_samples=default_samples,
                    detection_default=_rate(sum(r["violated"] for r in results), len(results)),
                    grid=tuple(grid), min_samples_detected=min(detected) if detected else None,
                    runs=tuple(results))


# -- command line -------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python benchmarks/validity.py",
        description="Validity (false-alarm rate, bound coverage) and power (detection of faulty "
                    "mechanisms) of the dpaudit engine, from repeated seeded audits.")
    parser.add_argument("--quick", action="store_true",
                        help=f"small study (~1-2 min): {QUICK}")
    for key, value in FULL.items():
        parser.add_argument(f"--{key.replace('_', '-')}", type=int, default=None,
                            help=f"override (full default {value:,})")
    parser.add_argument("--cases", nargs="*", default=None, choices=sorted(REFERENCE_CASES),
                        help="correct mechanisms (default all)")
    parser.add_argument("--faulty", nargs="*", default=None, choices=sorted(FAULTY_MECHANISMS),
                        help="faulty mechanisms (default all)")
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=20261121)
    parser.add_argument("--n-jobs", type=int, default=2, help="parallel audits (default 2)")
    parser.add_argument("--out", type=Path, default=None,
                        help="directory for validity.json and validity.md")
    parser.add_argument("--no-progress", action="store_true")
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--anytime", action="store_const", dest="mode", const="anytime",
                        help="audit the correct mechanisms with anytime audits of at most --samples draws, "
                             "monitored after every round (futility rule off)")
    chosen.add_argument("--plugin", action="store_const", dest="mode", const="plugin",
                        help="audit the correct mechanisms through assert_claim(accuracy=True)")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    settings = dict(QUICK if args.quick else FULL)
    for key in FULL:
        value = getattr(args, key)
        if value is not None:
            settings[key] = value
    result = run_study(cases=args.cases, faulty=args.faulty, confidence=args.confidence,
                       seed=args.seed, n_jobs=args.n_jobs, progress=not args.no_progress,
                       mode=args.mode or "fixed", **settings)
    table = result.to_markdown()
    command = "python benchmarks/validity.py " + " ".join(sys.argv[1:] if argv is None else argv)
    print(table)
    print(f"\nwall time: {result.wall_time_s:.1f} s  ({command.strip()})")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        data = result.to_dict()
        data["command"] = command.strip()
        (args.out / "validity.json").write_text(json.dumps(jsonable(data), indent=2, allow_nan=False) + "\n")
        (args.out / "validity.md").write_text(f"Command: `{command.strip()}`\n\n{table}\n")
        print(f"wrote {args.out / 'validity.json'} and {args.out / 'validity.md'}")
    fine = all(r.within_bound for r in result.validity) and all(
        r.min_samples_detected is not None for r in result.power)
    return 0 if fine else 1


if __name__ == "__main__":
    sys.exit(main())
