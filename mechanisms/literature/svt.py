"""The sparse vector technique variants of the DP-testing benchmark suite.

SVT1–SVT6 are Algorithms 1–6 of Lyu, Su & Li, "Understanding the Sparse Vector Technique for
Differential Privacy", PVLDB 10(6), 2017; SVT34Parallel runs SVT3 and SVT4 side by side and
NumericalSVT is from Wang, Ding, Wang, Kifer & Zhang, "Proving Differential Privacy with Shadow
Execution", PLDI 2019.  Parameters are DP-Sniper's (S&P 2021): ε = 0.1, k = 10 queries, cutoff
c = 1 (c = 2 for SVT34Parallel and NumericalSVT), threshold T = 0.5 for SVT1 and 1 otherwise.
Neighbouring inputs are answer vectors with |q_i − q'_i| ≤ 1 for every i (component-wise).

All variants compare q_i + ν_i with ρ + T, for a noisy threshold ρ and per-query noise ν_i (ε₁,
ε₂ split ε; Lap(s) is Laplace of scale s):

======== ============= ================ ======== ============================================
variant  ρ             ν_i              halts    truth (pure ε, at the published parameters)
======== ============= ================ ======== ============================================
SVT1     Lap(1/ε₁)     Lap(2c/ε₂)       after c  ≤ ε (Lyu et al., Alg. 1 proof)
SVT2     Lap(c/ε₁)*    Lap(2c/ε₂)       after c  ≤ ε (Lyu et al., Alg. 2 proof)
SVT3     Lap(1/ε₁)     Lap(c/ε₂)        after c  k·ε₂/c exact, 0.5 (releases q_i + ν_i; below)
SVT4     Lap(1/ε₁)**   Lap(1/ε₂)        after c  ≥ 0.1725 (quadrature), ≤ (1 + 6c)ε/4 = 0.175
SVT5     Lap(1/ε₁)     none             never    ∞ (support argument, below)
SVT6     Lap(1/ε₁)     Lap(1/ε₂)        never    ≥ 0.4145 (quadrature), ≤ k·ε₂ = 0.5 (below)
======== ============= ================ ======== ============================================

ε₁ = ε₂ = ε/2 except ** ε₁ = ε/4; * ρ is redrawn after every ⊤.

Outputs, one column per query: 1.0 for ⊤ (above), 0.0 for ⊥, −1.0 for a query not answered
because the mechanism halted.  Variants that release values (SVT3, NumericalSVT) append k
columns holding the released value where the answer is ⊤ and 0.0 elsewhere.

Derivations (checked in ``tests/mechanisms/test_literature_svt.py`` by a second route):

- *Pattern probabilities.*  For the variants with one threshold draw (all but SVT2 with c > 1),
  P_q(pattern) = ∫ f_ρ(r) Π_{⊥} F_ν(r + T − q_i) Π_{⊤} (1 − F_ν(r + T − q_i)) dr over the
  answered queries, computed by adaptive quadrature between the integrand's kinks
  (:func:`pattern_probability`).  A pattern's log-ratio between two inputs is a lower value of
  the true ε; SVT4 and SVT6 take theirs from DP-Sniper's witness pairs.
- *Pointwise upper bound.*  For fixed r each factor F_ν(r + T − q_i) or 1 − F_ν(·) changes by
  at most e^{1/s_ν} when q_i moves by 1 (log F of a Laplace is 1/s-Lipschitz), so with k
  queries and no shift of ρ every pattern's probability changes by at most e^{k/s_ν}: SVT6 is
  k·ε₂-DP (0.5 for k = 10), finite for finitely many queries.  Lyu et al.'s "∞" for SVT6 is
  the limit of unboundedly many queries; it is not the truth of this 10-query instance.
- *SVT3 exact.*  The output (⊥ on queries 1…k−1, ⊤ with value v on query k) has density
  ∫_{r ≤ v − T} f_ρ(r) Π_{i<k} F_ν(r + T − q_i) f_ν(v − q_k) dr.  The pointwise bound above
  (with f_ν in place of one factor) gives ratio ≤ e^{k/s_ν} for every output, s_ν = c/ε₂.  For
  q = (1, …, 1) and q' = (2, …, 2, 0) and v ≤ T = 1, every r in the range has r + T − q_i ≤ 0,
  where F_ν(x) = ½e^{x/s}, so the integrands differ by the constant factor
  e^{(k−1)/s}·f_ν(v − 1)/f_ν(v) = e^{(k − 2 + 2v)/s} for v ∈ [0, 1]: the loss tends to k/s_ν as
  v → 1.  Hence ε = k·ε₂/c exactly (0.5 for c = 1; 0.25 for the c = 2 copy in SVT34Parallel).
- *SVT5 is not ε-DP for any ε.*  With no query noise the pattern is a function of ρ.  For
  q' = (1, …, 1) only the all-⊤ and all-⊥ patterns occur; for q = (2,…,2, 0,…,0) (five each)
  the pattern ⊤^5 ⊥^5 occurs exactly when −1 < ρ + T − 1 ≤ 1, with probability
  1 − e^{−1/s_ρ} > 0 for T = 1 and s_ρ = 1/ε₁ (0.0488 at ε = 0.1).
"""

from __future__ import annotations

import itertools
import math
from typing import Any, Optional, Sequence

import numpy as np
from scipy import integrate

from ..validation import check_finite_positive, check_int
from .base import LiteratureMechanism, LiteratureTruth, TruthKind, laplace_noise

__all__ = [
    "SparseVectorTechnique1",
    "SparseVectorTechnique2",
    "SparseVectorTechnique3",
    "SparseVectorTechnique4",
    "SparseVectorTechnique5",
    "SparseVectorTechnique6",
    "SVT34Parallel",
    "NumericalSVT",
    "pattern_probability",
    "ABOVE",
    "BELOW",
    "HALTED",
]

#: Output codes of one query.
ABOVE, BELOW, HALTED = 1.0, 0.0, -1.0
_LYU = "Lyu, Su & Li, PVLDB 2017"
#: DP-Sniper's witness pairs (published), on which the SVT4 and SVT6 lower values are computed.
SVT4_WITNESS = ((1.0,) * 10, (2.0,) * 5 + (0.0,) * 5)
SVT6_WITNESS = ((1.0,) * 5 + (0.0,) * 5, (0.0,) * 5 + (1.0,) * 5)
SVT6_PATTERN = (ABOVE,) * 5 + (BELOW,) * 5


def _laplace_cdf(x: float, scale: float) -> float:
    if scale == 0.0:  # no noise: a step
        return 1.0 if x > 0 else 0.0
    return 0.5 * math.exp(x / scale) if x < 0 else 1.0 - 0.5 * math.exp(-x / scale)


def pattern_probability(pattern: Sequence[float], queries: Sequence[float], threshold: float,
                        rho_scale: float, nu_scale: float) -> float:
    """P(pattern) for a sparse vector with one threshold draw ρ ~ Lap(rho_scale).

    P = ∫ f_ρ(r) Π_{⊥} F_ν(r + T − q_i) Π_{⊤} (1 − F_ν(r + T − q_i)) dr over the answered
    queries (``HALTED`` entries are skipped; ⊤ means q_i + ν_i ≥ ρ + T).  ``nu_scale = 0`` is
    SVT5's noiseless comparison.  Adaptive quadrature between the integrand's kinks, relative
    tolerance 1e-11, on a range that leaves out less than e^{−80} of ρ's mass.
    """
    terms = [(flag, q) for flag, q in zip(pattern, queries) if flag != HALTED]

    def integrand(r: float) -> float:
        value = math.exp(-abs(r) / rho_scale) / (2.0 * rho_scale)
        for flag, q in terms:
            below = _laplace_cdf(r + threshold - q, nu_scale)
            value *= below if flag == BELOW else 1.0 - below
        return value

    kinks = sorted({0.0, *(q - threshold for _, q in terms)})
    reach = 80.0 * max(rho_scale, nu_scale)
    points = [kinks[0] - reach, *kinks, kinks[-1] + reach]
    return math.fsum(integrate.quad(integrand, a, b, epsabs=0.0, epsrel=1e-11, limit=200)[0]
                     for a, b in zip(points[:-1], points[1:]) if b > a)


def _check_queries(queries: Any) -> int:
    """k, at most 32,767 so that counts of ⊤ answers fit the sampler's int16 running sums."""
    queries = check_int("queries", queries)
    if queries > 32_767:
        raise ValueError(f"`queries` must be at most 32767, got {queries!r}")
    return queries


def halting_patterns(queries: int) -> list[tuple[float, ...]]:
    """The k + 1 possible patterns of a cutoff-1 sparse vector: ⊤ at query i, or never."""
    patterns = [(BELOW,) * i + (ABOVE,) + (HALTED,) * (queries - i - 1) for i in range(queries)]
    return patterns + [(BELOW,) * queries]


class _SparseVector(LiteratureMechanism):
    """Shared sampler: q_i + ν_i ≥ ρ + T, halting after ``cutoff`` ⊤ answers if ``halts``."""

    rho_share = 0.5          # ε₁ = rho_share · ε
    rho_times_cutoff = False  # ρ ~ Lap(c/ε₁) instead of Lap(1/ε₁)
    nu_factor: Optional[float] = 2.0  # ν ~ Lap(nu_factor · c / ε₂); None: Lap(1/ε₂); 0: no noise
    halts = True
    redraw = False           # redraw ρ after every ⊤ (SVT2)
    releases_values = False  # append the released q_i + ν_i (SVT3)

    def __init__(self, epsilon: float = 0.1, cutoff: int = 1, threshold: float = 1.0,
                 queries: int = 10, relation: Any = "add-remove") -> None:
        self._init_claim(epsilon, relation)
        self.cutoff = check_int("cutoff", cutoff)
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
            raise TypeError(f"`threshold` must be a finite number, got {threshold!r}")
        self.threshold = float(threshold)
        self.input_dim = _check_queries(queries)
        eps1 = self.rho_share * self.epsilon
        eps2 = self.epsilon - eps1
        self.eps2 = eps2
        self.rho_scale = (self.cutoff if self.rho_times_cutoff else 1.0) / eps1
        if self.nu_factor is None:
            self.nu_scale = 1.0 / eps2
        else:
            self.nu_scale = self.nu_factor * self.cutoff / eps2
        self.truth = self._truth()

    def _truth(self) -> LiteratureTruth:
        raise NotImplementedError  # pragma: no cover - every subclass defines it

    def _sample(self, queries, size, rng):
        k = self.input_dim
        noisy = queries + (laplace_noise(rng, self.nu_scale, (size, k)) if self.nu_scale > 0
                           else np.zeros((size, k)))
        if self.redraw:
            above = self._redrawn_comparisons(noisy, size, rng)
        else:
            rho = laplace_noise(rng, self.rho_scale, (size, 1))
            above = noisy >= rho + self.threshold
        flags = above.astype(np.float64)
        if self.halts:
            answered_before = np.cumsum(above, axis=1, dtype=np.int16) - above
            flags[answered_before >= self.cutoff] = HALTED
        if not self.releases_values:
            return flags
        return np.hstack([flags, np.where(flags == ABOVE, noisy, 0.0)])

    def _redrawn_comparisons(self, noisy, size, rng):
        """SVT2: the m-th threshold draw is used until the m-th ⊤ (loop over the k queries)."""
        rho = laplace_noise(rng, self.rho_scale, (size, self.cutoff))
        rows, count = np.arange(size), np.zeros(size, dtype=np.int64)
        above = np.empty(noisy.shape, dtype=bool)
        for i in range(self.input_dim):
            current = rho[rows, np.minimum(count, self.cutoff - 1)]
            above[:, i] = noisy[:, i] >= current + self.threshold
            count += above[:, i]
        return above

    def pattern_probability(self, pattern, queries) -> float:
        """Exact P(pattern) for this variant (one threshold draw; SVT2 only with cutoff 1)."""
        if self.redraw and self.cutoff > 1 or self.releases_values:
            raise NotImplementedError(f"pattern probabilities of {self.name} are not implemented")
        return pattern_probability(pattern, queries, self.threshold, self.rho_scale, self.nu_scale)

    def patterns(self) -> list[tuple[float, ...]]:
        """Every possible output: k + 1 patterns with cutoff 1, 2^k without halting (k ≤ 12)."""
        if self.halts and self.cutoff == 1 and not self.releases_values:
            return halting_patterns(self.input_dim)
        if not self.halts and self.input_dim <= 12:
            return [tuple(float(b) for b in bits) for bits in itertools.product((BELOW, ABOVE), repeat=self.input_dim)]
        raise NotImplementedError(f"the output patterns of {self.name} are not enumerated")

    def pair_distributions(self, a, b) -> tuple[np.ndarray, np.ndarray]:
        """Exact probabilities of every pattern (:meth:`patterns`) under inputs a and b."""
        a, b = self.check_input(a), self.check_input(b)
        patterns = self.patterns()
        return tuple(np.array([self.pattern_probability(p, x) for p in patterns]) for x in (a, b))

    def pair_epsilon(self, a, b) -> float:
        """Exact pure ε between inputs a and b: the largest pattern log-ratio (∞ if a pattern is
        possible under one input only)."""
        pa, pb = self.pair_distributions(a, b)
        if np.any((pa == 0) != (pb == 0)):
            return math.inf
        both = pa > 0
        return float(np.max(np.abs(np.log(pa[both] / pb[both]))))

    @property
    def parameters(self):
        return f"ε={self.epsilon:g}, c={self.cutoff}, T={self.threshold:g}, k={self.input_dim}"


class SparseVectorTechnique1(_SparseVector):
    """Lyu, Su & Li 2017, Alg. 1 (their proposed SVT): ρ ~ Lap(2/ε), ν ~ Lap(4c/ε), halts after c ⊤.

    Truth: ε-DP (Lyu et al. 2017, proof of Alg. 1); the exact sup is unknown.
    """

    def _truth(self):
        return LiteratureTruth(TruthKind.HOLDS, None, self.epsilon, f"{_LYU}, Alg. 1 is ε-DP")


class SparseVectorTechnique2(_SparseVector):
    """Lyu, Su & Li 2017, Alg. 2 (Dwork & Roth's SVT): ρ ~ Lap(2c/ε) redrawn after every ⊤,
    ν ~ Lap(4c/ε), halts after c ⊤.

    Truth: ε-DP (Lyu et al. 2017, Alg. 2); the exact sup is unknown.
    """

    rho_times_cutoff = True
    redraw = True

    def _truth(self):
        return LiteratureTruth(TruthKind.HOLDS, None, self.epsilon, f"{_LYU}, Alg. 2 is ε-DP")


class SparseVectorTechnique3(_SparseVector):
    """Lyu, Su & Li 2017, Alg. 3 (Roth's lecture notes): ρ ~ Lap(2/ε), ν ~ Lap(2c/ε), halts after
    c ⊤ and releases q_i + ν_i with every ⊤.

    Truth: exactly k·ε₂/c = kε/(2c) (0.5 at the published c = 1, k = 10); see the module docstring.
    """

    nu_factor = 1.0
    releases_values = True

    def _truth(self):
        value = self.input_dim / self.nu_scale
        return LiteratureTruth(TruthKind.EXACT, value, value,
                               "derivation in mechanisms.literature.svt: k/s_ν with s_ν = c/ε₂")


class SparseVectorTechnique4(_SparseVector):
    """Lyu, Su & Li 2017, Alg. 4: ε₁ = ε/4, ρ ~ Lap(4/ε), ν ~ Lap(4/(3ε)) (no factor c), halts after c ⊤.

    Truth: Lyu et al. prove ((1 + 6c)/4)ε-DP (0.175 at c = 1) and show the claimed ε fails;
    a proven lower value is the largest pattern log-ratio on DP-Sniper's witness pair
    (1,…,1) / (2,…,2, 0,…,0), 0.1725 by quadrature (cutoff 1 only; else unknown).
    """

    rho_share = 0.25
    nu_factor = None

    def _truth(self):
        upper = (1 + 6 * self.cutoff) / 4 * self.epsilon
        if self.cutoff != 1 or self.input_dim != len(SVT4_WITNESS[0]):
            return LiteratureTruth(TruthKind.HOLDS if upper <= self.epsilon else TruthKind.UNKNOWN,
                                   None, upper, f"{_LYU}: Alg. 4 is ((1 + 6c)/4)ε-DP")
        lower = self.pair_epsilon(*SVT4_WITNESS)
        return LiteratureTruth(TruthKind.LOWER, lower, upper,
                               f"quadrature on DP-Sniper's witness pair; upper: {_LYU}")


class SparseVectorTechnique5(_SparseVector):
    """Lyu, Su & Li 2017, Alg. 5: ρ ~ Lap(2/ε), no query noise, never halts.

    Truth: not ε-DP for any ε (support argument in the module docstring).
    """

    nu_factor = 0.0
    halts = False

    def _truth(self):
        return LiteratureTruth(TruthKind.EXACT, math.inf, None,
                               "support argument in mechanisms.literature.svt")


class SparseVectorTechnique6(_SparseVector):
    """Lyu, Su & Li 2017, Alg. 6: ρ ~ Lap(2/ε), ν ~ Lap(2/ε) (no factor c), never halts.

    Truth for k queries: ≤ k·ε₂ (pointwise bound, module docstring) and ≥ the log-ratio of the
    pattern ⊤^5 ⊥^5 on DP-Sniper's witness pair (1^5, 0^5) / (0^5, 1^5), 0.4145 by quadrature
    (k = 10), which is that pair's exact ε (all 1024 patterns, checked in a slow test).  Not ε-DP
    for any ε only in the limit of unboundedly many queries.
    """

    nu_factor = None
    halts = False

    def _truth(self):
        upper = self.input_dim * self.eps2
        if self.input_dim != len(SVT6_WITNESS[0]):
            return LiteratureTruth(TruthKind.UNKNOWN, None, upper, "pointwise bound k·ε₂")
        a, b = (self.pattern_probability(SVT6_PATTERN, x) for x in SVT6_WITNESS)
        return LiteratureTruth(TruthKind.LOWER, math.log(a / b), upper,
                               "quadrature of one pattern on DP-Sniper's witness pair; upper k·ε₂")


class SVT34Parallel(LiteratureMechanism):
    """SVT3 and SVT4 run side by side on the same answers (DP-Sniper, S&P 2021), c = 2, T = 1.

    Output: SVT3's 2k columns, then SVT4's k columns.  Claim: basic composition of the two
    claimed ε, 2ε = 0.2.  Truth: at least SVT3's exact kε/(2c) = 0.25 (dropping the SVT4 columns
    is post-processing) and at most that plus SVT4's ((1 + 6c)/4)ε = 0.325 (composition).
    """

    def __init__(self, epsilon: float = 0.1, cutoff: int = 2, threshold: float = 1.0,
                 queries: int = 10, relation: Any = "add-remove") -> None:
        self.svt3 = SparseVectorTechnique3(epsilon, cutoff, threshold, queries, relation)
        self.svt4 = SparseVectorTechnique4(epsilon, cutoff, threshold, queries, relation)
        self._init_claim(epsilon, relation, claimed=2 * check_finite_positive("epsilon", epsilon))
        self.cutoff, self.threshold, self.input_dim = self.svt3.cutoff, self.svt3.threshold, self.svt3.input_dim
        lower = self.svt3.truth.epsilon
        self.truth = LiteratureTruth(TruthKind.LOWER, lower, lower + self.svt4.truth.upper,
                                     "SVT3's exact ε (post-processing); upper by composition with SVT4's bound")

    def _sample(self, queries, size, rng):
        return np.hstack([self.svt3._sample(queries, size, rng), self.svt4._sample(queries, size, rng)])

    @property
    def parameters(self):
        return f"ε={self.epsilon:g} each, c={self.cutoff}, T={self.threshold:g}, k={self.input_dim}"


class NumericalSVT(LiteratureMechanism):
    """Numerical sparse vector (Wang et al., PLDI 2019): ρ₁ ~ Lap(3/ε), ν_i ~ Lap(6c/ε); a ⊤
    answer releases q_i + η_i with η_i ~ Lap(3c/ε); halts after c ⊤.

    Output: k flags, then k values (the release where ⊤, 0.0 elsewhere).  Truth: ε-DP (verified
    by ShadowDP, Wang et al. 2019); the exact sup is unknown.
    """

    def __init__(self, epsilon: float = 0.1, cutoff: int = 2, threshold: float = 1.0,
                 queries: int = 10, relation: Any = "add-remove") -> None:
        self._init_claim(epsilon, relation)
        self.cutoff = check_int("cutoff", cutoff)
        self.threshold = float(threshold)
        self.input_dim = _check_queries(queries)
        self.truth = LiteratureTruth(TruthKind.HOLDS, None, self.epsilon,
                                     "Wang et al., PLDI 2019 (ShadowDP proof)")

    def _sample(self, queries, size, rng):
        k, c, eps = self.input_dim, self.cutoff, self.epsilon
        rho = laplace_noise(rng, 3.0 / eps, (size, 1))
        above = queries + laplace_noise(rng, 6.0 * c / eps, (size, k)) >= rho + self.threshold
        released = queries + laplace_noise(rng, 3.0 * c / eps, (size, k))
        flags = above.astype(np.float64)
        flags[np.cumsum(above, axis=1, dtype=np.int16) - above >= c] = HALTED
        return np.hstack([flags, np.where(flags == ABOVE, released, 0.0)])

    @property
    def parameters(self):
        return f"ε={self.epsilon:g}, c={self.cutoff}, T={self.threshold:g}, k={self.input_dim}"
