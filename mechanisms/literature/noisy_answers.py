"""Benchmark mechanisms that add noise to query answers: Laplace, truncated geometric, noisy
histograms, parallel Laplace and prefix sums.

Each class is one mechanism of the suite shared by StatDP (Ding, Wang, Wang, Zhang & Kifer,
"Detecting Violations of Differential Privacy", CCS 2018) and DP-Sniper (Bichsel, Steffen,
Bogunovic & Vechev, "DP-Sniper: Black-Box Discovery of Differential Privacy Violations using
Classifiers", S&P 2021), at the published parameters.  Inputs are vectors of query answers (see
:mod:`mechanisms.literature.base`); outputs are float64 ``(size, k)`` arrays drawn in one
vectorized call.

Neighbourhoods, as in the papers' input patterns: *one-entry* (one answer differs by at most 1;
Laplace, TruncatedGeometric, NoisyHist, LaplaceParallel) or *component-wise* (every answer may
differ by at most 1; PrefixSum).

======================= ============ ============================================================
mechanism               claim        truth (pure ε)
======================= ============ ============================================================
Laplace                 0.1          0.1 exact (whole profile exact)
TruncatedGeometric      ln(9/8)      ln(9/8) = 0.1178 exact, by rational enumeration
NoisyHist1              0.1          0.1 exact (whole profile exact)
NoisyHist2              0.1          10 exact (whole profile exact)
LaplaceParallel         0.1          0.1 exact
PrefixSum               0.1          kε = 1.0 exact under component-wise neighbours
======================= ============ ============================================================
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..validation import check_finite_positive, check_int
from .base import LiteratureMechanism, LiteratureTruth, TruthKind, laplace_noise

__all__ = [
    "LiteratureLaplace",
    "TruncatedGeometric",
    "NoisyHist1",
    "NoisyHist2",
    "LaplaceParallel",
    "PrefixSum",
]


class LiteratureLaplace(LiteratureMechanism):
    """q + Lap(1/ε) on one query answer (the suite's "LaplaceMechanism").

    Truth: a shift by 1 of Lap(1/ε) is exactly ε-DP with the closed-form profile of
    docs/ground-truth.md §2 (Dwork & Roth 2014, Thm 3.6).
    """

    def __init__(self, epsilon: float = 0.1, relation: Any = "add-remove") -> None:
        self._init_claim(epsilon, relation)
        self.input_dim = 1
        self.laplace_epsilon = self.epsilon
        self.truth = LiteratureTruth(TruthKind.EXACT, self.epsilon, self.epsilon,
                                     "Laplace shift by 1 (Dwork & Roth 2014, Thm 3.6)")

    def _sample(self, queries, size, rng):
        return queries[0] + laplace_noise(rng, 1.0 / self.epsilon, (size, 1))

    def pair_epsilon(self, a, b) -> float:
        """Exact pure ε between inputs a and b: |a − b|·ε."""
        return float(abs(self.check_input(a)[0] - self.check_input(b)[0]) * self.epsilon)


class TruncatedGeometric(LiteratureMechanism):
    """Balcer & Vadhan's GeoSample(ε, n) on a count c ∈ {0, …, n} (arXiv:1709.05396, Alg. 4.8).

    With k = ⌈ln(2/ε)⌉ (natural log, as DP-Sniper implements it; k = 3 at ε = 0.1) and
    d = (2^{k+1} + 1)(2^k + 1)^{n−1}, the output is the smallest z with F_c(z) ≥ U for U uniform
    on {1, …, d}, where F_c(z) = 2^{k(c−z)}(2^k + 1)^{n−(c−z)} for z < c,
    F_c(z) = d − 2^{k(z−c+1)}(2^k + 1)^{n−1−(z−c)} for c ≤ z < n, and F_c(n) = d.  Sampling is
    exact: integer U and a search in the integer table F_c.

    Claim: the paper's Thm 4.7, GeoSample is ln(1 + 2^{−k})-DP: ln(9/8) = 0.1178 at ε = 0.1 (the
    parameter ε = 0.1 itself is not the guarantee; a 0.1-claim would be false).

    Truth: exact, ln(max over c, c ± 1 and z of P_c(z)/P_{c±1}(z)) computed with exact rationals
    (:meth:`exact_epsilon`); it equals ln(1 + 2^{−k}) for the published parameters.
    """

    def __init__(self, epsilon: float = 0.1, n: int = 5, relation: Any = "add-remove") -> None:
        epsilon = check_finite_positive("epsilon", epsilon)
        self.n = check_int("n", n)
        self.k = math.ceil(math.log(2.0 / epsilon))
        if self.k < 1:
            raise ValueError(f"`epsilon` must be < 2 so that k = ⌈ln(2/ε)⌉ ≥ 1, got {epsilon!r}")
        self.d = (2 ** (self.k + 1) + 1) * (2 ** self.k + 1) ** (self.n - 1)
        if self.d >= 2 ** 62:
            raise ValueError(f"`n` = {self.n} with ε = {epsilon!r} overflows the integer sampler")
        self._init_claim(epsilon, relation, claimed=math.log1p(2.0 ** -self.k))
        self.input_dim = 1
        self.truth = LiteratureTruth(TruthKind.EXACT, self.exact_epsilon(), math.log1p(2.0 ** -self.k),
                                     "exact rational enumeration of GeoSample's pmf")

    def cdf_table(self, c: int) -> list[int]:
        """The integer table F_c(0), …, F_c(n) of Alg. 4.8, step 2."""
        k, n, base = self.k, self.n, 2 ** self.k + 1
        table = [2 ** (k * (c - z)) * base ** (n - (c - z)) for z in range(c)]
        table += [self.d - 2 ** (k * (z - c + 1)) * base ** (n - 1 - (z - c)) for z in range(c, n)]
        return table + [self.d]

    def pmf(self, c: int) -> list[Fraction]:
        """Exact output probabilities P_c(0), …, P_c(n)."""
        table = [0] + self.cdf_table(c)
        return [Fraction(table[z + 1] - table[z], self.d) for z in range(self.n + 1)]

    def exact_epsilon(self) -> float:
        """ln of the largest probability ratio over neighbouring counts c, c + 1 (both orders)."""
        worst = max(max(a / b, b / a) for c in range(self.n)
                    for a, b in zip(self.pmf(c), self.pmf(c + 1)))
        return math.log(worst.numerator) - math.log(worst.denominator)

    def pair_distributions(self, a, b) -> tuple[np.ndarray, np.ndarray]:
        """Exact output probabilities under counts a and b, over z = 0, …, n."""
        return tuple(np.array([float(p) for p in self.pmf(int(self.check_input(x)[0]))]) for x in (a, b))

    def pair_epsilon(self, a, b) -> float:
        """Exact pure ε between counts a and b: ln of the largest pmf ratio (both orders)."""
        pa, pb = (self.pmf(int(self.check_input(x)[0])) for x in (a, b))
        worst = max(max(x / y, y / x) for x, y in zip(pa, pb))
        return math.log(worst.numerator) - math.log(worst.denominator)

    def check_input(self, dataset):
        queries = super().check_input(dataset)
        c = queries[0]
        if c != round(c) or not 0 <= c <= self.n:
            raise ValueError(f"`dataset` must be a count in {{0, …, {self.n}}}, got {c!r}")
        return queries

    def _sample(self, queries, size, rng):
        table = np.array(self.cdf_table(int(queries[0])), dtype=np.int64)
        u = rng.integers(1, self.d + 1, size=size, dtype=np.int64)
        return np.searchsorted(table, u, side="left").astype(np.float64).reshape(size, 1)

    @property
    def parameters(self):
        return f"ε={self.epsilon:g}, n={self.n}"


class _NoisyHist(LiteratureMechanism):
    scale_times_epsilon: bool

    def __init__(self, epsilon: float = 0.1, bins: int = 5, relation: Any = "add-remove") -> None:
        self._init_claim(epsilon, relation)
        self.input_dim = check_int("bins", bins)
        self.scale = self.epsilon if self.scale_times_epsilon else 1.0 / self.epsilon
        self.laplace_epsilon = 1.0 / self.scale
        self.truth = LiteratureTruth(
            TruthKind.EXACT, self.laplace_epsilon, self.laplace_epsilon,
            f"one bin shifts by 1 under Lap({self.scale:g}): a Laplace pair of ε₀ = 1/{self.scale:g}")

    def _sample(self, queries, size, rng):
        return queries + laplace_noise(rng, self.scale, (size, self.input_dim))

    def pair_epsilon(self, a, b) -> float:
        """Exact pure ε between histograms a and b: Σ|a_i − b_i|/scale (product of Laplace shifts)."""
        return float(np.abs(self.check_input(a) - self.check_input(b)).sum() / self.scale)

    @property
    def parameters(self):
        return f"ε={self.epsilon:g}, bins={self.input_dim}"


class NoisyHist1(_NoisyHist):
    """Histogram + Lap(1/ε) per bin (Ding et al. 2018, Alg. 9; correct).

    Neighbours change one bin by 1, so the worst pair is a single Laplace shift: exactly ε-DP,
    with the closed-form profile of docs/ground-truth.md §2.
    """

    scale_times_epsilon = False


class NoisyHist2(_NoisyHist):
    """Histogram + Lap(ε) per bin: the scale is ε instead of 1/ε (Ding et al. 2018, Alg. 10; buggy).

    One bin shifting by 1 under Lap(ε) is a Laplace pair of ε₀ = 1/ε: exactly 10-DP at ε = 0.1,
    with the closed-form profile of docs/ground-truth.md §2.
    """

    scale_times_epsilon = True


class LaplaceParallel(LiteratureMechanism):
    """``copies`` independent q + Lap(1/ε₀) releases of one answer (DP-Sniper, S&P 2021).

    Published parameters: 20 copies at ε₀ = 0.005.  Claim: basic composition, 20 · 0.005 = 0.1.
    Truth: exactly 0.1; each copy's loss is at most ε₀ and all 20 reach it together on the
    positive-probability event that every output lies beyond both answers.
    """

    def __init__(self, epsilon: float = 0.005, copies: int = 20, relation: Any = "add-remove") -> None:
        epsilon = check_finite_positive("epsilon", epsilon)
        self.copies = check_int("copies", copies)
        self._init_claim(epsilon, relation, claimed=self.copies * epsilon)
        self.input_dim = 1
        self.truth = LiteratureTruth(TruthKind.EXACT, self.claim.epsilon, self.claim.epsilon,
                                     "composition of Laplace shifts, attained jointly")

    def _sample(self, queries, size, rng):
        return queries[0] + laplace_noise(rng, 1.0 / self.epsilon, (size, self.copies))

    def pair_epsilon(self, a, b) -> float:
        """Exact pure ε between answers a and b: copies·|a − b|·ε₀."""
        return float(self.copies * abs(self.check_input(a)[0] - self.check_input(b)[0]) * self.epsilon)

    @property
    def parameters(self):
        return f"ε₀={self.epsilon:g}, copies={self.copies}"


class PrefixSum(LiteratureMechanism):
    """Prefix sums of q + Lap(1/ε) (Wang, Ding, Wang, Kifer & Zhang, PLDI 2019, "PrefixSum").

    Truth under the component-wise neighbours the benchmark audits: the prefix sums are an
    invertible linear map of y = q + Lap(1/ε)^k, so the pure ε is that of y, sup Σ|Δq_i|·ε = kε
    (= 1.0 for k = 10), attained when every answer moves by 1.  Under one-entry neighbours the
    same argument gives exactly ε.  The 0.1 claim therefore only holds for the one-entry notion.
    """

    def __init__(self, epsilon: float = 0.1, queries: int = 10, relation: Any = "add-remove") -> None:
        self._init_claim(epsilon, relation)
        self.input_dim = check_int("queries", queries)
        value = self.input_dim * self.epsilon
        self.truth = LiteratureTruth(TruthKind.EXACT, value, value,
                                     "invertible post-processing of k Laplace shifts (docstring)")

    def _sample(self, queries, size, rng):
        return np.cumsum(queries + laplace_noise(rng, 1.0 / self.epsilon, (size, self.input_dim)), axis=1)

    def pair_epsilon(self, a, b) -> float:
        """Exact pure ε between answer vectors a and b: Σ|a_i − b_i|·ε (docstring)."""
        return float(np.abs(self.check_input(a) - self.check_input(b)).sum() * self.epsilon)

    @property
    def parameters(self):
        return f"ε={self.epsilon:g}, queries={self.input_dim}"
