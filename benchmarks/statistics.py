"""``python -m benchmarks.statistics``: what the learned test statistics buy, as ratios.

Prints Markdown tables (and writes them with ``--out DIR`` to ``DIR/statistics.md`` and
``DIR/statistics.json``):

1. report-noisy-max (index) with the differing item in the middle and last: linear vs auto;
2. discrete outputs (k-ary randomized response, a sparse vector's ⊤/⊥ patterns) with the
   categorical statistic, against the *single-event limit*: the ε that the best event E (a set of
   atoms ranked by the exact likelihood ratio, both orientations) would certify at its mean counts
   n·P(E), n·Q(E), with the engine's headline Bonferroni level (:mod:`benchmarks.limits`' real-count
   Clopper–Pearson bounds).  For randomized response the atom probabilities are exact; for the
   sparse vector they are estimated from 10⁷ separate draws per side (said so in the table);
3. Gaussian noise whose scale depends on the data, against a false (1, 0.05) claim;
4. floating-point Laplace (numpy's legacy sampler, the textbook inverse CDF) and Mironov's snapping
   fix, with the classifier statistic on bit-pattern features (logistic regression, and gradient
   boosting on the first sampler to show what it costs), against a pure 0.1 claim.

``"auto"`` against every named statistic on the bundled, literature and faulty-zoo cases is
:mod:`benchmarks.auto_choice`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import integrate, stats

import scenarios
from audit import run_audit
from audit.selection import Budget
from audit.slots import headline_slots
from audit.statistics import Classifier
from audit.bounds import epsilon_lower_bound
from audit.statistics.atoms import row_keys
from mechanisms import ApproxDP, PureDP
from mechanisms.floating_point import NaiveLaplace, SnappingLaplace

from .limits import cp_lower_real, cp_upper_real

SEED = 20261123


# --- the example mechanisms -----------------------------------------------------------------------

def report_noisy_max_index(data, size, rng, epsilon=0.1):
    """argmax_i (x_i + Lap(2/ε)): report-noisy-max returning the index (Dwork & Roth §3.3)."""
    x = np.asarray(data, dtype=np.float64).ravel()
    return np.argmax(x[None, :] + rng.laplace(scale=2.0 / epsilon, size=(size, x.size)), axis=1)


class RandomizedResponse:
    """k-ary randomized response (Kairouz, Oh & Viswanath 2016): the input category with
    probability e^ε/(e^ε + k − 1), each other one with 1/(e^ε + k − 1).  Exactly ε-DP: on two
    different inputs the largest atom ratio is e^ε, so δ(ε') = Σ_x (q(x) − e^ε' p(x))₊ is 0 at ε' = ε."""

    def __init__(self, k: int, epsilon: float):
        self.k, self.epsilon = k, epsilon
        self.name = f"randomized-response(k={k}, eps={epsilon:g})"
        self.claim = PureDP(epsilon)

    def __call__(self, data, size, rng):
        value = int(np.asarray(data).ravel()[0])
        truthful = rng.random(size) < math.exp(self.epsilon) / (math.exp(self.epsilon) + self.k - 1)
        other = rng.integers(0, self.k - 1, size)
        return np.where(truthful, value, other + (other >= value))

    def privacy_profile(self, epsilon, relation=None):
        """δ(ε') for any two different inputs: (e^ε − e^ε')₊/(e^ε + k − 1)."""
        return max(0.0, math.exp(self.epsilon) - math.exp(epsilon)) / (math.exp(self.epsilon) + self.k - 1)

    def epsilon_for_delta(self, delta, relation=None):
        """ε(δ) = ln(e^ε − δ(e^ε + k − 1)), the inverse of :meth:`privacy_profile` (0 when ≤ 0)."""
        value = math.exp(self.epsilon) - delta * (math.exp(self.epsilon) + self.k - 1)
        return max(0.0, math.log(value)) if value > 0 else 0.0


def randomized_response(k: int, epsilon: float) -> RandomizedResponse:
    return RandomizedResponse(k, epsilon)


class SparseVector:
    """Sparse vector with one ⊤ (Lyu, Su & Li 2017, Algorithm 1, c = 1, Δ = 1): ρ ~ Lap(2/ε),
    ν_i ~ Lap(4/ε); answer ⊤ (1) for the first i with q_i + ν_i ≥ T + ρ, ⊥ (0) before it, and
    stop (−1 afterwards).  ε-DP (their Theorem 2); its exact ε on a given pair is not known here."""

    def __init__(self, epsilon: float = 0.1, threshold: float = 1.0):
        self.epsilon, self.threshold = epsilon, threshold
        self.name = f"sparse-vector-alg1(eps={epsilon:g}, c=1)"
        self.claim = PureDP(epsilon)

    def __call__(self, data, size, rng):
        q = np.asarray(data, dtype=np.float64).ravel()
        rho = rng.laplace(scale=2.0 / self.epsilon, size=(size, 1))
        noisy = q[None, :] + rng.laplace(scale=4.0 / self.epsilon, size=(size, q.size))
        above = noisy >= self.threshold + rho
        first = np.where(above.any(axis=1), np.argmax(above, axis=1), q.size)
        index = np.arange(q.size)[None, :]
        return np.where(index < first[:, None], 0, np.where(index == first[:, None], 1, -1)).astype(np.int8)

    def privacy_profile(self, epsilon, relation=None):
        raise NotImplementedError("the exact profile of this sparse vector pair is unknown")

    def epsilon_for_delta(self, delta, relation=None):
        raise NotImplementedError("the exact ε of this sparse vector pair is unknown")


sparse_vector = SparseVector()


class ScaleGaussian:
    """N(0, 1) on D = [0], N(0, 1.5²) on D' = [1], claimed at its exact δ(1) (a tight claim)."""

    name = "scale-gaussian(σ 1 vs 1.5)"

    def __init__(self):
        self.claim = ApproxDP(1.0, scale_gaussian_delta(1.0))

    def __call__(self, data, size, rng):
        return scale_gaussian(data, size, rng)

    def privacy_profile(self, epsilon, relation=None):
        return scale_gaussian_delta(float(epsilon))

    def epsilon_for_delta(self, delta, relation=None):
        if float(delta) == self.claim.delta:
            return 1.0
        raise NotImplementedError("ε(δ) of the scale pair is only tabulated at the claim's δ")


def scale_gaussian(data, size, rng):
    """N(0, 1) on D = [0], N(0, 1.5²) on D' = [1]: the means agree, only the scale leaks."""
    return rng.normal(scale=1.0 if np.asarray(data).ravel()[0] == 0 else 1.5, size=size)


def scale_gaussian_delta(epsilon: float) -> float:
    """Exact δ(ε) = max over orders of ∫ (q − e^ε p)₊ for p = N(0, 1), q = N(0, 1.5²) (quadrature)."""
    p, q = stats.norm(0, 1).pdf, stats.norm(0, 1.5).pdf
    first = integrate.quad(lambda x: max(0.0, q(x) - math.exp(epsilon) * p(x)), -40, 40, limit=400, points=[-3, 3])[0]
    second = integrate.quad(lambda x: max(0.0, p(x) - math.exp(epsilon) * q(x)), -40, 40, limit=400, points=[-3, 3])[0]
    return max(first, second)


# --- the single-event limit for discrete outputs ----------------------------------------------------

def single_event_limit(p: np.ndarray, q: np.ndarray, n: int, level: float, delta: float = 0.0) -> float:
    """Best ε over atom sets ranked by the exact ratio, at mean counts (module docstring)."""
    best = 0.0
    for a, b in ((q, p), (p, q)):  # orientation: the event is more likely under a
        order = np.argsort(-(np.log(a + 1e-300) - np.log(b + 1e-300)), kind="stable")
        prob_a, prob_b = np.cumsum(a[order]), np.cumsum(b[order])
        alpha_hi = cp_upper_real(n * prob_b, n, level)
        beta_hi = 1.0 - cp_lower_real(n * prob_a, n, level)
        best = max(best, float(epsilon_lower_bound(alpha_hi, beta_hi, delta).max()))
    return best


def _pattern_probabilities(mechanism, pair, draws: int, seed: int):
    """Atom probabilities of both sides estimated from ``draws`` separate samples each (in chunks
    of 10⁶, atoms keyed as the categorical statistic keys them)."""
    rng = np.random.default_rng(seed)
    counts = []
    for data in pair:
        keys = []
        for start in range(0, draws, 1_000_000):
            out = np.asarray(mechanism(np.asarray(data, dtype=float), min(1_000_000, draws - start), rng))
            keys.append(row_keys(out.reshape(out.shape[0], -1).astype(np.float64)))
        counts.append(np.unique(np.concatenate(keys), return_counts=True))
    atoms = np.union1d(counts[0][0], counts[1][0])
    probs = []
    for keys, count in counts:
        full = np.zeros(atoms.size)
        full[np.searchsorted(atoms, keys)] = count
        probs.append(full / draws)
    return probs


# --- the studies ---------------------------------------------------------------------------------

def _audit(mechanism, pair, claim, samples, statistic, n_jobs):
    started = time.perf_counter()
    report = run_audit(mechanism, scenarios.custom([pair]), claim=claim, samples=samples, seed=SEED,
                       progress=False, n_jobs=n_jobs, statistic=statistic)
    return report, time.perf_counter() - started


def study_report_noisy_max(samples, n_jobs):
    rows = []
    base = [1, 1, 1, 1, 1]
    for where, neighbour in (("middle", [2, 2, 0, 2, 2]), ("last", [2, 2, 2, 2, 0])):
        for statistic in ("linear", "auto"):
            report, seconds = _audit(report_noisy_max_index, (base, neighbour), PureDP(0.1), samples,
                                     statistic, n_jobs)
            rows.append({"differing item": where, "statistic": statistic,
                         "chosen": report.statistic["pairs"][0].get("auto_choice", statistic),
                         "epsilon_lb": report.epsilon_lower_bound, "seconds": seconds})
    return rows


def study_discrete(samples, n_jobs):
    rows = []
    claim = PureDP(1.0)
    level = Budget(0.05, headline_slots(claim), 1).headline_level
    k, epsilon = 7, 1.0
    p_true = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    for pair in (([3], [4]), ([0], [6])):
        p = np.full(k, (1 - p_true) / (k - 1)); p[pair[0][0]] = p_true
        q = np.full(k, (1 - p_true) / (k - 1)); q[pair[1][0]] = p_true
        limit = single_event_limit(p, q, samples, level)
        report, seconds = _audit(randomized_response(k, epsilon), pair, claim, samples, "categorical", n_jobs)
        rows.append({"mechanism": f"randomized response k={k}, ε=1, pair {pair[0][0]} vs {pair[1][0]}",
                     "probabilities": "exact", "epsilon_lb": report.epsilon_lower_bound,
                     "limit": limit, "ratio": report.epsilon_lower_bound / limit, "seconds": seconds})
    pair = ([1.0] * 5 + [0.0] * 5, [0.0] * 5 + [1.0] * 5)
    claim = PureDP(0.1)
    level = Budget(0.05, headline_slots(claim), 1).headline_level
    p, q = _pattern_probabilities(sparse_vector, pair, 10_000_000, SEED + 1)
    limit = single_event_limit(p, q, samples, level)
    report, seconds = _audit(sparse_vector, pair, claim, samples, "categorical", n_jobs)
    rows.append({"mechanism": "sparse vector (Lyu et al. Alg. 1, c=1, ε=0.1), 10 queries",
                 "probabilities": "estimated from 10⁷ separate draws per side",
                 "epsilon_lb": report.epsilon_lower_bound, "limit": limit,
                 "ratio": report.epsilon_lower_bound / limit, "seconds": seconds})
    return rows


def study_scale(samples, n_jobs):
    rows = []
    exact = scale_gaussian_delta(1.0)
    for statistic in ("linear", "auto"):
        report, seconds = _audit(scale_gaussian, ([0.0], [1.0]), ApproxDP(1.0, 0.05), samples, statistic, n_jobs)
        rows.append({"statistic": statistic, "chosen": report.statistic["pairs"][0].get("auto_choice", statistic),
                     "delta_lb": report.delta_lower_bound, "exact_delta": exact,
                     "verdict": report.verdict.value, "seconds": seconds})
    return rows


def study_floating_point(samples, n_jobs):
    rows = []
    for mechanism in (NaiveLaplace(0.1, "numpy-legacy"), NaiveLaplace(0.1, "inverse-cdf"), SnappingLaplace(0.1)):
        options = ["linear", "classifier"] + (["boosting"] if mechanism.name.endswith("legacy(eps=0.1)") else [])
        for statistic in options:
            option = Classifier(estimator="boosting") if statistic == "boosting" else statistic
            report, seconds = _audit(mechanism, ([0.0], [1.0]), PureDP(0.1), samples, option, n_jobs)
            rows.append({"mechanism": mechanism.name,
                         "statistic": "classifier (boosting)" if statistic == "boosting" else
                         ("classifier (logistic)" if statistic == "classifier" else statistic),
                         "epsilon_lb": report.epsilon_lower_bound, "verdict": report.verdict.value,
                         "seconds": seconds, "load": os.getloadavg()[0]})
    return rows


# --- output ------------------------------------------------------------------------------------

def _table(header, rows, fields):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(f)) for f in fields) + " |")
    return "\n".join(lines)


def _cell(value):
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return ", ".join(map(str, value))
    return str(value)


def render(results, samples) -> str:
    out = [f"Samples per pair and side (total over all phases): {samples:,}; seed {SEED}.", ""]
    out += ["### Report-noisy-max (index), ε = 0.1, pure claim", "",
            _table(["differing item", "statistic", "chosen", "ε_lb", "s"], results["rnm"],
                   ["differing item", "statistic", "chosen", "epsilon_lb", "seconds"]), ""]
    out += ["### Discrete outputs, categorical statistic vs the single-event limit", "",
            _table(["mechanism", "atom probabilities", "ε_lb", "single-event limit", "ratio", "s"],
                   results["discrete"], ["mechanism", "probabilities", "epsilon_lb", "limit", "ratio", "seconds"]), ""]
    out += ["### Data-dependent scale (σ 1 vs 1.5), false claim (1, 0.05)", "",
            _table(["statistic", "chosen", "δ_lb at ε = 1", "exact δ(1)", "verdict", "s"], results["scale"],
                   ["statistic", "chosen", "delta_lb", "exact_delta", "verdict", "seconds"]), ""]
    out += ["### Floating-point Laplace, pure 0.1 claim, pair 0 vs 1", "",
            _table(["mechanism", "statistic", "ε_lb", "verdict", "s"], results["floating_point"],
                   ["mechanism", "statistic", "epsilon_lb", "verdict", "seconds"]), ""]
    loads = [r["load"] for r in results["floating_point"] if "load" in r]
    if loads:
        out += [f"1-minute load during the floating-point runs: {min(loads):.1f}–{max(loads):.1f} (2 cores, shared).", ""]
    return "\n".join(out)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--only", nargs="*", choices=("rnm", "discrete", "scale", "floating_point"))
    args = parser.parse_args(argv)
    studies = {"rnm": study_report_noisy_max, "discrete": study_discrete, "scale": study_scale,
               "floating_point": study_floating_point}
    results = {}
    for name, study in studies.items():
        if args.only and name not in args.only:
            results[name] = []
            continue
        print(f"running {name} ...", file=sys.stderr)
        results[name] = study(args.samples, args.jobs)
    text = render(results, args.samples) if not args.only else json.dumps(results, indent=1, default=str)
    print(text)
    if args.out:
        from audit.checkpoint import write_atomic

        write_atomic(args.out / "statistics.md", text.encode())
        write_atomic(args.out / "statistics.json", json.dumps(results, indent=1, default=str).encode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
