"""``run_accuracy_audit``: Monte Carlo evidence about a mechanism's accuracy claims.

The errors e = M(D) − f(D) are drawn in seeded chunks (like :mod:`audit.engine`) and reduced to
exceedance counts, power sums and maxima.  Three kinds of claim are checked:

* error quantiles: the claim P(|e_j| > a₁) ≤ α per query, a₁ = ``error_bound(alpha, 1)``, and
  P(max_j |e_j| > a_k) ≤ α over the k queries, a_k = ``error_bound(alpha, k)``; refuted when the
  one-sided Clopper–Pearson lower bound on the exceedance rate exceeds α;
* variance: ``noise_variance()`` per output column; refuted when the lower end of an asymptotic
  interval for the variance exceeds the claim (more noise than declared).  The interval is
  s² ± z·√((m₄ − s⁴)/n) with the empirical fourth central moment m₄: for Gaussian errors it agrees
  with the chi-square interval to O(n^{-1/2}), and unlike the chi-square interval it stays valid for
  heavier-tailed noise such as Laplace;
* worst case: where the noise is bounded (``worst_case_error()``, e.g. the truncated Laplace bound τ),
  any larger error is a certain violation.

All one-sided tests share 1 − ``confidence`` by Bonferroni, so a mechanism that meets its claims is
reported VIOLATED with probability at most 1 − ``confidence`` (asymptotically for the variance).
A variance clearly *below* the claim is not an accuracy failure; it is reported in
``variance_below_claim`` because it may mean less privacy noise than declared.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from typing import Any, Optional

import numpy as np
from scipy import stats
from tqdm.auto import tqdm

from mechanisms.base import mechanism_name
from mechanisms.validation import check_int, check_open_unit, check_seed

from .executor import check_backend, check_n_jobs, make_executor
from .intervals import ConfidenceInterval, cp_interval, cp_lower
from .report import Verdict, jsonable
from .sampling import Binning, Phase, chunk_plan, chunk_rng, chunk_size_for, draw_outputs, single_threaded_blas

__all__ = ["run_accuracy_audit", "AccuracyReport", "ColumnAccuracy"]

HISTOGRAM_BINS = 200


@dataclass(frozen=True)
class ColumnAccuracy:
    """Evidence about one output column's error."""

    column: int
    is_query: bool
    claimed_bound: Optional[float]
    exceedances: Optional[int]
    exceedance: Optional[ConfidenceInterval]
    claimed_variance: Optional[float]
    sample_variance: float
    variance: ConfidenceInterval
    max_abs_error: float


@dataclass(frozen=True)
class AccuracyReport:
    """The result of :func:`run_accuracy_audit`."""

    mechanism: str
    alpha: float
    samples: int
    confidence: float
    seed: int
    verdict: Verdict
    violations: tuple[str, ...]
    columns: tuple[ColumnAccuracy, ...]
    queries: int
    max_error_bound: Optional[float]
    max_error_exceedances: Optional[int]
    max_error_exceedance: Optional[ConfidenceInterval]
    worst_case_bound: Optional[float]
    max_abs_error: float
    variance_below_claim: tuple[int, ...]
    histogram: dict
    runtime: dict = field(compare=False)

    def to_dict(self, include_runtime: bool = True) -> dict:
        data = {f.name: jsonable(getattr(self, f.name)) for f in fields(self)}
        if not include_runtime:
            data.pop("runtime")
        return data

    def summary(self) -> str:
        lines = [f"accuracy of {self.mechanism}: {self.verdict.value} (α = {self.alpha:g}, "
                 f"{self.samples:,} samples)"]
        lines += [f"  violation: {v}" for v in self.violations[:5]]
        return "\n".join(lines)


@dataclass(frozen=True)
class _AccuracyJob:
    mechanism: Any
    name: str
    dataset: Any
    truth: np.ndarray
    bound_1: Optional[np.ndarray]  # per column (NaN for non-query columns)
    query_columns: np.ndarray
    bound_k: Optional[float]
    histogram_edges: np.ndarray
    entropy: int


def _accuracy_chunk(job: _AccuracyJob, chunk: int, size: int):
    rng = chunk_rng(job.entropy, 0, 0, Phase.ACCURACY, chunk)
    with single_threaded_blas():  # the same draws wherever the chunk runs (audit.sampling)
        outputs = draw_outputs(job.mechanism, job.dataset, size, rng, f"accuracy chunk {chunk}",
                               job.name, job.truth.shape[0])
    errors = outputs - job.truth
    absolute = np.abs(errors)
    squares = errors * errors  # products, not powers: np.power is ~80x slower here
    edges = job.histogram_edges
    binning = Binning(float(edges[0]), float(edges[1] - edges[0]), edges.size - 1)
    result = {
        "sums": np.stack([errors.sum(0), squares.sum(0), (squares * errors).sum(0), (squares * squares).sum(0)]),
        "max": absolute.max(axis=0),
        "histogram": binning.counts(errors[:, job.query_columns[0]])[1:-1],  # drop under/overflow
    }
    if job.bound_1 is not None:
        result["exceed"] = (absolute > job.bound_1).sum(axis=0)
    if job.bound_k is not None:
        result["exceed_max"] = int((absolute[:, job.query_columns].max(axis=1) > job.bound_k).sum())
    return result


def run_accuracy_audit(mechanism: Any, dataset: Any, *, alpha: float = 0.05, samples: int = 200_000,
                       confidence: float = 0.95, seed: Optional[int] = None, true_answer: Any = None,
                       n_jobs: int = 1, backend: str = "loky", progress: bool = True,
                       **backend_options) -> AccuracyReport:
    """Check ``mechanism``'s accuracy claims on ``dataset`` (see the module docstring).

    ``true_answer`` is f(dataset), the noiseless output; it defaults to
    ``mechanism.true_answer(dataset)``.  Claims come from ``mechanism.error_bound``,
    ``noise_variance`` and ``worst_case_error`` where the mechanism has them.
    """
    started = time.perf_counter()
    if not callable(mechanism):
        raise TypeError(f"`mechanism` must be callable (dataset, size, rng) -> array, got {mechanism!r}")
    name = mechanism_name(mechanism)
    alpha = check_open_unit("alpha", alpha)
    samples = check_int("samples", samples, minimum=2)
    confidence = check_open_unit("confidence", confidence)
    n_jobs, backend = check_n_jobs(n_jobs), check_backend(backend)
    seed = check_seed(seed)
    if seed is None:
        seed = int(np.random.SeedSequence().entropy)
    truth = _truth(mechanism, dataset, true_answer, name)
    k = truth.shape[0]
    query_columns = np.array(getattr(mechanism, "query_columns", range(k)), dtype=np.int64)
    if query_columns.size == 0 or query_columns.min() < 0 or query_columns.max() >= k:
        raise ValueError(f"mechanism {name!r}: `query_columns` {query_columns.tolist()} do not fit {k} outputs")

    bound_1 = bound_k = None
    if callable(getattr(mechanism, "error_bound", None)):
        bound_1 = np.full(k, np.inf)
        bound_1[query_columns] = float(mechanism.error_bound(alpha, 1))
        bound_k = float(mechanism.error_bound(alpha, int(query_columns.size)))
    claimed_var = None
    if callable(getattr(mechanism, "noise_variance", None)):
        claimed_var = np.broadcast_to(np.asarray(mechanism.noise_variance(), dtype=np.float64), (k,))
    worst = getattr(mechanism, "worst_case_error", None)
    worst = worst() if callable(worst) else None

    scale = np.sqrt(claimed_var[query_columns[0]]) if claimed_var is not None else None
    job = _AccuracyJob(mechanism, name, dataset, truth, bound_1, query_columns, bound_k,
                       _histogram_edges(mechanism, dataset, truth, query_columns[0], scale, seed, name), seed)

    plan = chunk_plan(samples, chunk_size_for(k))
    totals: dict[str, Any] = {}
    with make_executor(backend, n_jobs, **backend_options) as executor, \
            tqdm(total=len(plan), disable=not progress, desc=f"accuracy {name}", unit="chunk") as bar:
        # One ordered stream: results are folded in chunk order whatever worker ran them.
        for result in executor.map(_accuracy_chunk, [(job, c, s) for c, s in enumerate(plan)]):
            for key, value in result.items():
                if key == "max":
                    totals[key] = np.maximum(totals[key], value) if key in totals else value
                else:
                    totals[key] = totals[key] + value if key in totals else value
            bar.update(1)
    return _report(name, alpha, samples, confidence, seed, totals, job, claimed_var, worst, started,
                   {"n_jobs": n_jobs, "backend": backend})


def _truth(mechanism, dataset, true_answer, name) -> np.ndarray:
    if true_answer is None:
        function = getattr(mechanism, "true_answer", None)
        if not callable(function):
            raise ValueError(f"mechanism {name!r} has no true_answer(dataset); pass `true_answer`")
        true_answer = function(dataset)
    truth = np.asarray(true_answer, dtype=np.float64).ravel()
    if truth.size == 0 or not np.isfinite(truth).all():
        raise ValueError(f"`true_answer` must be a non-empty finite vector, got {true_answer!r}")
    return truth


def _histogram_edges(mechanism, dataset, truth, column, scale, seed, name) -> np.ndarray:
    if scale is None or not np.isfinite(scale) or scale <= 0:
        pilot = draw_outputs(mechanism, dataset, 4096, chunk_rng(seed, 0, 1, Phase.ACCURACY, 0),
                             "accuracy pilot", name, truth.shape[0])[:, column] - truth[column]
        scale = max(float(np.std(pilot)), 1e-12)
    return np.linspace(-6.0 * scale, 6.0 * scale, HISTOGRAM_BINS + 1)


def _report(name, alpha, samples, confidence, seed, totals, job, claimed_var, worst, started, runtime):
    k = job.truth.shape[0]
    n = samples
    queries = job.query_columns
    tests = (len(queries) + 1 if job.bound_1 is not None else 0) + (k if claimed_var is not None else 0)
    level = (1.0 - confidence) / max(tests, 1)
    z = float(stats.norm.isf(level))
    s1, s2, s3, s4 = totals["sums"] / n
    variance = s2 - s1 ** 2
    m4 = s4 - 4 * s1 * s3 + 6 * s1 ** 2 * s2 - 3 * s1 ** 4
    half = z * np.sqrt(np.maximum(m4 - variance ** 2, 0.0) / n)
    violations, below = [], []
    columns = []
    for j in range(k):
        is_query = bool(np.any(queries == j))
        exceed = interval = bound = None
        if job.bound_1 is not None and is_query:
            bound = float(job.bound_1[j])
            exceed = int(totals["exceed"][j])
            interval = cp_interval(exceed, n, 1.0 - 2.0 * level)
            if float(cp_lower(exceed, n, level)) > alpha:
                violations.append(f"column {j}: P(|error| > {bound:.6g}) ≥ {interval.low:.4g} > α = {alpha:g} "
                                  f"({exceed} of {n} draws)")
        claimed = None if claimed_var is None else float(claimed_var[j])
        var_ci = ConfidenceInterval(float(variance[j] - half[j]), float(variance[j] + half[j]),
                                    1.0 - 2.0 * level)
        if claimed is not None and var_ci.low > claimed:
            violations.append(f"column {j}: error variance ≥ {var_ci.low:.6g} > claimed {claimed:.6g}")
        if claimed is not None and var_ci.high < claimed:
            below.append(j)
        columns.append(ColumnAccuracy(j, is_query, bound, exceed, interval, claimed, float(variance[j]),
                                      var_ci, float(totals["max"][j])))
    max_interval = max_exceed = None
    if job.bound_k is not None:
        max_exceed = int(totals["exceed_max"])
        max_interval = cp_interval(max_exceed, n, 1.0 - 2.0 * level)
        if float(cp_lower(max_exceed, n, level)) > alpha:
            violations.append(f"max over {len(queries)} queries: P(max |error| > {job.bound_k:.6g}) ≥ "
                              f"{max_interval.low:.4g} > α = {alpha:g}")
    max_abs = float(totals["max"][queries].max())
    if worst is not None and max_abs > float(worst) * (1 + 1e-12):
        violations.append(f"an error of {max_abs:.6g} exceeds the worst-case bound {float(worst):.6g} "
                          "(a certain violation)")
    histogram = {"column": int(queries[0]), "edges": [float(e) for e in job.histogram_edges],
                 "counts": [int(c) for c in totals["histogram"]],
                 "claimed_variance": None if claimed_var is None else float(claimed_var[queries[0]]),
                 "claimed_bound": None if job.bound_1 is None else float(job.bound_1[queries[0]])}
    return AccuracyReport(
        name, alpha, samples, confidence, int(seed), Verdict.VIOLATED if violations else Verdict.NOT_REFUTED,
        tuple(violations), tuple(columns), int(len(queries)), job.bound_k, max_exceed, max_interval,
        None if worst is None else float(worst), max_abs, tuple(below), histogram,
        dict(runtime, wall_time_s=time.perf_counter() - started))
