"""The DP-testing literature's benchmark mechanisms (StatDP, DP-Sniper), except sparse vector.

Each class is one mechanism of the suite shared by StatDP (Ding, Wang, Wang, Zhang & Kifer,
"Detecting Violations of Differential Privacy", CCS 2018) and DP-Sniper (Bichsel, Steffen,
Bogunovic & Vechev, "DP-Sniper: Black-Box Discovery of Differential Privacy Violations using
Classifiers", S&P 2021), at the published ε = 0.1 and parameters.  Inputs are vectors of query
answers (see :mod:`mechanisms.literature.base`); outputs are float64 ``(size, k)`` arrays drawn
in one vectorized call.  The sparse vector variants live in :mod:`mechanisms.literature.svt`.

Neighbourhoods, as in the papers' input patterns: *one-entry* (one answer differs by at most 1;
Laplace, TruncatedGeometric, NoisyHist, LaplaceParallel, Rappor where any two values are
neighbours) or *component-wise* (every answer may differ by at most 1; ReportNoisyMax,
PrefixSum and the sparse vector family).

======================= ============ ============================================================
mechanism               claim        truth (pure ε)
======================= ============ ============================================================
Laplace                 0.1          0.1 exact (whole profile exact)
TruncatedGeometric      ln(9/8)      ln(9/8) = 0.1178 exact, by rational enumeration
NoisyHist1              0.1          0.1 exact (whole profile exact)
NoisyHist2              0.1          10 exact (whole profile exact)
ReportNoisyMax1, 2      0.1          ≤ 0.1 (published proofs), exact unknown
ReportNoisyMax3         0.1          kε/2 = 0.25 exact (derivation below)
ReportNoisyMax4         0.1          ∞ exact (support argument)
Rappor                  0.4001       0.4001 exact on integers in [-10, 10]
OneTimeRappor           0.8007       0.8007 exact on integers in [-10, 10]
LaplaceParallel         0.1          0.1 exact
PrefixSum               0.1          kε = 1.0 exact under component-wise neighbours
======================= ============ ============================================================
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import integrate

from ..validation import check_finite_positive, check_int
from .base import LiteratureMechanism, LiteratureTruth, TruthKind, laplace_noise

__all__ = [
    "LiteratureLaplace",
    "TruncatedGeometric",
    "NoisyHist1",
    "NoisyHist2",
    "ReportNoisyMax1",
    "ReportNoisyMax2",
    "ReportNoisyMax3",
    "ReportNoisyMax4",
    "Rappor",
    "OneTimeRappor",
    "LaplaceParallel",
    "PrefixSum",
    "murmur3_32",
]

_DING = "Ding, Wang, Wang, Zhang & Kifer, CCS 2018"


class LiteratureLaplace(LiteratureMechanism):
    """q + Lap(1/ε) on one query answer (the suite's "LaplaceMechanism").

    Truth: a shift by 1 of Lap(1/ε) is exactly ε-DP with the closed-form profile of
    GROUND_TRUTH §2 (Dwork & Roth 2014, Thm 3.6).
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
    with the closed-form profile of GROUND_TRUTH §2.
    """

    scale_times_epsilon = False


class NoisyHist2(_NoisyHist):
    """Histogram + Lap(ε) per bin: the scale is ε instead of 1/ε (Ding et al. 2018, Alg. 10; buggy).

    One bin shifting by 1 under Lap(ε) is a Laplace pair of ε₀ = 1/ε: exactly 10-DP at ε = 0.1,
    with the closed-form profile of GROUND_TRUTH §2.
    """

    scale_times_epsilon = True


class _ReportNoisyMax(LiteratureMechanism):
    exponential: bool
    report_value: bool

    def __init__(self, epsilon: float = 0.1, queries: int = 5, relation: Any = "add-remove") -> None:
        self._init_claim(epsilon, relation)
        self.input_dim = check_int("queries", queries)
        self.scale = 2.0 / self.epsilon
        self.truth = self._truth()

    def _truth(self) -> LiteratureTruth:
        raise NotImplementedError  # pragma: no cover - every subclass defines it

    def _sample(self, queries, size, rng):
        shape = (size, self.input_dim)
        noise = rng.exponential(self.scale, shape) if self.exponential else laplace_noise(rng, self.scale, shape)
        noisy = noise + queries
        if self.report_value:
            return noisy.max(axis=1, keepdims=True)
        return noisy.argmax(axis=1).astype(np.float64).reshape(size, 1)

    def index_probabilities(self, queries) -> np.ndarray:
        """Exact P(argmax = i) = ∫ f(t − q_i) Π_{j≠i} F(t − q_j) dt, by quadrature between kinks."""
        q = self.check_input(queries)
        s = self.scale
        if self.exponential:
            def pdf(x):
                return np.where(x >= 0, np.exp(-np.maximum(x, 0) / s) / s, 0.0)

            def cdf(x):
                return np.where(x >= 0, -np.expm1(-np.maximum(x, 0) / s), 0.0)
        else:
            def pdf(x):
                return np.exp(-np.abs(x) / s) / (2 * s)

            def cdf(x):
                return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / s), 1 - 0.5 * np.exp(-np.maximum(x, 0) / s))
        points = np.unique(q)
        edges = [points[0] - 80 * s, *points, points[-1] + 80 * s]
        result = np.empty(q.size)
        for i in range(q.size):
            def integrand(t, i=i):
                values = cdf(t - q)
                values[i] = pdf(t - q[i])
                return float(np.prod(values))
            result[i] = math.fsum(integrate.quad(integrand, lo, hi, epsabs=0.0, epsrel=1e-11, limit=200)[0]
                                  for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo)
        return result

    def pair_distributions(self, a, b) -> tuple[np.ndarray, np.ndarray]:
        """Exact index probabilities under inputs a and b (index variants)."""
        if self.report_value:
            raise NotImplementedError(f"pair_distributions of {self.name} is not implemented")
        return self.index_probabilities(a), self.index_probabilities(b)

    def pair_epsilon(self, a, b) -> float:
        """Exact pure ε between inputs a and b (index variants): max_i |ln P_a(i)/P_b(i)|."""
        if self.report_value:
            raise NotImplementedError(f"pair_epsilon of {self.name} is not implemented")
        return float(np.max(np.abs(np.log(self.index_probabilities(a) / self.index_probabilities(b)))))

    @property
    def parameters(self):
        return f"ε={self.epsilon:g}, queries={self.input_dim}"


class ReportNoisyMax1(_ReportNoisyMax):
    """argmax_i (q_i + Lap(2/ε)): the index (Ding et al. 2018, Alg. 5; correct).

    Truth: ε-DP for component-wise neighbours, by the argument of Dwork & Roth 2014, Claim 3.9:
    with the other noises fixed, i wins iff its noise exceeds a cut-off that moves by at most 2
    between neighbours (q_i down by 1, a rival up by 1), and a Lap(b) tail changes by at most
    e^{2/b} = e^ε over a shift of 2.  The exact sup over inputs is unknown.
    """

    exponential, report_value = False, False

    def _truth(self):
        return LiteratureTruth(TruthKind.HOLDS, None, self.epsilon,
                               "report noisy max with Lap(2/ε) (Dwork & Roth 2014, Claim 3.9; docstring)")


class ReportNoisyMax2(_ReportNoisyMax):
    """argmax_i (q_i + Exp(2/ε)): the index (Ding et al. 2018, Alg. 6; correct).

    Truth: ε-DP, by the argument of :class:`ReportNoisyMax1`: the Exp(b) survival function
    changes by at most e^{2/b} = e^ε when its argument moves by 2.  The exact sup is unknown.
    """

    exponential, report_value = True, False

    def _truth(self):
        return LiteratureTruth(TruthKind.HOLDS, None, self.epsilon,
                               f"noisy max with Exp(2/ε) noise is ε-DP ({_DING}, Alg. 6; docstring)")


class ReportNoisyMax3(_ReportNoisyMax):
    """max_i (q_i + Lap(2/ε)): the noisy maximum *value* (Ding et al. 2018, Alg. 7; buggy).

    Truth: exactly kε/2 (= 0.25 for k = 5 queries, b = 2/ε).  Upper: the density of the output
    is f_q(t) = Σ_i f(t − q_i) Π_{j≠i} F(t − q_j) with f, F the Lap(b) density and cdf; when each
    q_j moves by at most 1, f and F each change by a factor at most e^{1/b} (log f and log F are
    1/b-Lipschitz), so every term, hence the sum, changes by at most e^{k/b}.  Attained: for
    q' = q + 1 (all above) and t < min q, F(t − q_j) = ½e^{(t−q_j)/b} and f = F/b, so
    f_q(t) ∝ e^{kt/b} and f_q(t)/f_{q'}(t) = e^{k/b} exactly, on an event of probability 2^{−k}
    under q = 0.
    """

    exponential, report_value = False, True

    def _truth(self):
        value = self.input_dim / self.scale
        return LiteratureTruth(TruthKind.EXACT, value, value,
                               "derivation in ReportNoisyMax3's docstring: k/b with b = 2/ε")


class ReportNoisyMax4(_ReportNoisyMax):
    """max_i (q_i + Exp(2/ε)): the noisy maximum *value* (Ding et al. 2018, Alg. 8; buggy).

    Truth: not ε-DP for any ε.  Exponential noise is ≥ 0, so M(q) ≥ max_i q_i surely, while
    P_q(M < max q + 1) = Π_i (1 − e^{−(max q + 1 − q_i)/b}) > 0; for q' = q + 1 the event
    {M < max q + 1} has probability 0 under q' and positive probability under q.
    """

    exponential, report_value = True, True

    def _truth(self):
        return LiteratureTruth(TruthKind.EXACT, math.inf, None,
                               "support argument in ReportNoisyMax4's docstring")


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86_32 of ``data`` as a signed 32-bit int (the value ``mmh3.hash`` returns).

    Written from Appleby's public specification (SMHasher); RAPPOR's Bloom filter in DP-Sniper
    hashes ``str(value)`` with seeds 0, …, h − 1.
    """
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    def scramble(k: int) -> int:
        return (rotl((k * 0xCC9E2D51) & mask, 15) * 0x1B873593) & mask

    h = seed & mask
    blocks = len(data) // 4
    for i in range(blocks):
        h ^= scramble(int.from_bytes(data[4 * i: 4 * i + 4], "little"))
        h = (rotl(h, 13) * 5 + 0xE6546B64) & mask
    tail = data[4 * blocks:]
    if tail:
        h ^= scramble(int.from_bytes(tail, "little"))
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def _check_probability(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ValueError(f"`{name}` must be in (0, 1), got {value!r}")
    return float(value)


class _BloomResponse(LiteratureMechanism):
    """Randomized response on the Bloom filter of an integer value (RAPPOR's report)."""

    def __init__(self, epsilon: float, hashes: int, filter_size: int, domain: tuple[int, int],
                 relation: Any) -> None:
        self.hashes = check_int("hashes", hashes)
        self.filter_size = check_int("filter_size", filter_size)
        low, high = (check_int("domain[0]", domain[0], minimum=-(2 ** 31)),
                     check_int("domain[1]", domain[1], minimum=-(2 ** 31)))
        if high <= low:
            raise ValueError(f"`domain` must be (low, high) with low < high, got {domain!r}")
        self.domain = (low, high)
        self._init_claim(epsilon, relation)
        self.input_dim = 1
        exact = self.domain_epsilon()
        self.truth = LiteratureTruth(TruthKind.EXACT, exact, exact,
                                     "per-bit losses summed over differing Bloom bits, maximised over the domain")

    def bloom_bits(self, value: int) -> np.ndarray:
        """The Bloom filter of ``value``: bit mmh3(str(value), seed=i) mod m set for i < h."""
        bits = np.zeros(self.filter_size, dtype=bool)
        for i in range(self.hashes):
            bits[murmur3_32(str(int(value)).encode(), i) % self.filter_size] = True
        return bits

    # P(reported bit = 1 | Bloom bit = 1) and (| Bloom bit = 0)
    p_one: float
    p_zero: float

    def pair_epsilon(self, a: Any, b: Any) -> float:
        """Exact pure ε between values a and b (integers or 1-vectors), both orders.

        Bits are independent and each differing bit contributes its largest loss: a bit set only
        in a gives at most ln(p₁/p₀) (reported 1) and one set only in b at most
        ln((1 − p₀)/(1 − p₁)) (reported 0), in the order (a, b); and symmetrically.
        """
        A, B = (self.bloom_bits(int(np.asarray(x, dtype=np.float64).reshape(-1)[0])) for x in (a, b))
        up, down = math.log(self.p_one / self.p_zero), math.log((1 - self.p_zero) / (1 - self.p_one))
        only_a, only_b = int(np.sum(A & ~B)), int(np.sum(B & ~A))
        return max(only_a * up + only_b * down, only_b * up + only_a * down)

    def pair_distributions(self, a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
        """Exact probabilities of every report on the bits where the Bloom filters of a and b
        differ (the other bits have the same law under both, so these carry the whole likelihood ratio)."""
        A, B = (self.bloom_bits(int(np.asarray(x, dtype=np.float64).reshape(-1)[0])) for x in (a, b))
        differ = np.flatnonzero(A != B)
        reports = np.array(list(itertools.product([0, 1], repeat=len(differ))), dtype=bool).reshape(-1, len(differ))
        result = []
        for bits in (A, B):
            p = np.where(bits[differ], self.p_one, self.p_zero)
            result.append(np.prod(np.where(reports, p, 1.0 - p), axis=1))
        return result[0], result[1]

    def domain_epsilon(self) -> float:
        """Exact pure ε over all pairs of integers in ``domain`` (any two values are neighbours)."""
        values = range(self.domain[0], self.domain[1] + 1)
        return max(self.pair_epsilon(a, b) for a, b in itertools.combinations(values, 2))

    def check_input(self, dataset):
        queries = super().check_input(dataset)
        value = queries[0]
        if value != round(value) or not self.domain[0] <= value <= self.domain[1]:
            raise ValueError(f"`dataset` must be an integer value in [{self.domain[0]}, "
                             f"{self.domain[1]}], got {value!r}")
        return queries

    def _sample(self, queries, size, rng):
        probability = np.where(self.bloom_bits(int(queries[0])), self.p_one, self.p_zero)
        return (rng.random((size, self.filter_size)) < probability).astype(np.float64)


class Rappor(_BloomResponse):
    """RAPPOR's report: Bloom filter, permanent then instantaneous randomized response
    (Erlingsson, Pihur & Korolova, CCS 2014, steps 1–3), a fresh permanent response per report.

    With h hashes into m bits, the permanent response keeps a bit with probability 1 − f and
    sets it to 1 or 0 with probability f/2 each; the instantaneous one reports 1 with probability
    q (bit 1) or p (bit 0).  Per bit, P(report 1 | bit 1) = q* = ½f(p + q) + (1 − f)q and
    P(report 1 | bit 0) = p* = ½f(p + q) + (1 − f)p, independently across bits; the sampler draws
    these composite Bernoullis directly (the same distribution).

    Claim: the paper's ε₁ = h ln(q*(1 − p*)/(p*(1 − q*))) = 0.4001 for h = 4, f = 0.75,
    p = 0.45, q = 0.55.  Truth: exact, :meth:`pair_epsilon` maximised over the integer domain
    (DP-Sniper's [−10, 10]); it equals ε₁ when two values have disjoint Bloom filters.
    """

    def __init__(self, hashes: int = 4, filter_size: int = 20, f: float = 0.75, p: float = 0.45,
                 q: float = 0.55, domain: tuple[int, int] = (-10, 10), relation: Any = "add-remove") -> None:
        for name, value in (("f", f), ("p", p), ("q", q)):
            _check_probability(name, value)
        if not p < q:
            raise ValueError(f"`p` must be < `q`, got p={p!r}, q={q!r}")
        self.f, self.p, self.q = float(f), float(p), float(q)
        self.p_one = 0.5 * f * (p + q) + (1 - f) * q
        self.p_zero = 0.5 * f * (p + q) + (1 - f) * p
        claimed = hashes * math.log(self.p_one * (1 - self.p_zero) / (self.p_zero * (1 - self.p_one)))
        super().__init__(claimed, hashes, filter_size, tuple(domain), relation)

    @property
    def parameters(self):
        return f"h={self.hashes}, m={self.filter_size}, f={self.f:g}, p={self.p:g}, q={self.q:g}"


class OneTimeRappor(_BloomResponse):
    """RAPPOR's permanent randomized response alone (Erlingsson et al. 2014, steps 1–2).

    Per bit, P(report 1 | bit 1) = 1 − f/2 and P(report 1 | bit 0) = f/2.  Claim: the paper's
    ε_∞ = 2h ln((1 − f/2)/(f/2)) = 0.8007 for h = 4, f = 0.95.  Truth: exact, as for
    :class:`Rappor`.
    """

    def __init__(self, hashes: int = 4, filter_size: int = 20, f: float = 0.95,
                 domain: tuple[int, int] = (-10, 10), relation: Any = "add-remove") -> None:
        self.f = _check_probability("f", f)
        self.p_one, self.p_zero = 1 - 0.5 * f, 0.5 * f
        claimed = 2 * hashes * math.log(self.p_one / self.p_zero)
        super().__init__(claimed, hashes, filter_size, tuple(domain), relation)

    @property
    def parameters(self):
        return f"h={self.hashes}, m={self.filter_size}, f={self.f:g}"


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
