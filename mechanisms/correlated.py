"""Lebeda's correlated Gaussian mechanism for d bounded queries (Algorithm 1, Lemmas 3.5, 3.6).

Rows are x ∈ [0, 1]^d, the query is f(X) = Σ x (column sums) and n = |X|.  Algorithm 1 adds one
shared Gaussian η to every count and independent Gaussians z_i, and also releases a noisy size:

    η ~ N(0, a),  z ~ N(0, b·I_d),   x̃ = f(X) + η·1 + z,   ñ = n + 2η,

with a = (1 + d/C²)/(4μ²) and b = (d + C²)/(4μ²) (Lebeda, Lemma 3.5; Algorithm 1 is C = d^{1/4},
a = (√d + 1)/(4μ²), b = (d + √d)/(4μ²)).  The output covariance is Corollary 3.1's matrix:
a + b on the count diagonal, a between counts, 2a between a count and ñ, 4a for ñ.

**Exact privacy.**  The map (x̃, ñ) ↦ (x̃ − ñ/2·1, ñ) = (f − n/2·1 + z, n + 2η) is a bijection
(Lemma 3.4) that decorrelates the noise, so a neighbour pair whose (f, n) differ by (Δf, Δn) has
trade-off curve G_m with

    m² = ‖Δf − Δn/2·1‖² / b + Δn² / (4a).

- add/remove (Δn = ±1, ±Δf ∈ [0, 1]^d): the worst pair adds or removes an all-ones (or all-zeros)
  row, μ_eff² = d/(4b) + 1/(4a), which equals μ² for every C > 0;
- replacement (Δn = 0, Δf ∈ [−1, 1]^d): the worst pair replaces a row by its complement,
  μ_rep² = d/b = 4μ²d/(d + C²); for Algorithm 1 this is 4μ²√d/(√d + 1), i.e. 1.907μ at d = 100.
  The paper proves Algorithm 1 only under add/remove; a replacement claim is a misuse that an
  audit must flag (docs/ground-truth.md §5).

**Lemma 3.6 (public size).**  With ``n_known`` given, the release is
f(X) − n/2·1 + n_known/2·1 + Z with Z ~ N(0, d/(4μ²)·I_d) and no size column.  The released mean
f − n/2·1 + const moves by ±(x − ½·1) under add/remove (norm ≤ √d/2) and by x − x' under
replacement (norm ≤ √d), so μ_eff = μ (add/remove) and μ_rep = 2μ (replacement).  Its error is
exactly Z only on datasets with |X| = n_known; otherwise every count is biased by
(n_known − |X|)/2, which :meth:`CorrelatedGaussianMechanism.output_mean` shows.

References
----------
C. J. Lebeda, "Better Gaussian Mechanism using Correlated Noise" (2024): Algorithm 1, Lemmas 3.1, 3.4–3.6, Corollary 3.1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

import numpy as np
from scipy import optimize, special

from .base import GaussianShapedMechanism
from .claims import GaussianDP, Relation, as_relation
from .validation import check_dataset, check_finite_positive, check_int, check_open_unit

__all__ = ["CorrelatedGaussianMechanism"]


# -- accuracy of shared-plus-independent Gaussian noise --------------------------------------------
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(16)
_X_MAX = 40.0  # ∫_40^∞ φ underflows to 0 in double precision


def _block_log_coverage(t: float, a: float, b: float, k: int) -> float:
    """log P(max_{i ≤ k} |η + z_i| ≤ t) for η ~ N(0, a), z_i ~ N(0, b) i.i.d. (docs/ground-truth.md §5).

    With η = √a·x, x ~ N(0, 1), and P(x) = P(|√a·x + z| ≤ t), the coverage is ∫ φ(x) P(x)^k dx.
    It is computed as log1p(−T) from the tail T = ∫ φ(x) [1 − P(x)^k] dx, so that tiny tails keep
    their relative precision (the coverage itself is used when T > ½).  Both integrands are even
    in x; the quadrature is composite 16-point Gauss–Legendre on [0, 40], with panels of width
    ≤ ¼ and, where P(x) drops from 1 to 0 (|x| ≈ t/√a, over a few √(b/a)), ≤ √(b/a)/2.
    """
    if k == 0:
        return 0.0
    sb = math.sqrt(b)
    if a == 0.0:
        return k * math.log1p(-2.0 * special.ndtr(-t / sb))
    sa = math.sqrt(a)
    width = sb / sa
    edges = np.linspace(0.0, _X_MAX, int(4 * _X_MAX) + 1)
    if width < 0.5:
        knee = t / sa
        fine = np.arange(knee - 24.0 * width, knee + 24.0 * width, width / 2.0)
        edges = np.union1d(edges, fine[(fine > 0.0) & (fine < _X_MAX)])
    half = np.diff(edges)[:, None] / 2.0
    x = (edges[:-1, None] + half + half * _GL_NODES).ravel()
    w = (half * _GL_WEIGHTS).ravel() * np.exp(-0.5 * x * x) * (2.0 / math.sqrt(2.0 * math.pi))
    e = sa * x
    outside = special.ndtr((-t - e) / sb) + special.ndtr((e - t) / sb)  # 1 − P(x)
    with np.errstate(divide="ignore"):
        log_inside = k * np.log1p(-np.minimum(outside, 1.0))  # log P(x)^k
    tail = float(np.dot(w, -np.expm1(log_inside)))
    if tail < 0.5:
        return math.log1p(-tail)
    cover = float(np.dot(w, np.exp(log_inside)))
    return math.log(cover) if cover > 0.0 else -math.inf


def max_error_tail(t: float, a: float, b: float, blocks: Sequence[int]) -> float:
    """P(max |error| > t) over independent blocks; block j has ``blocks[j]`` queries sharing one η.

    Each query's error is η_j + z_{j,i}, η_j ~ N(0, a), z ~ N(0, b), everything independent
    across blocks, so the coverage is the product of the blocks' coverages.
    """
    log_cover = sum(_block_log_coverage(t, a, b, k) for k in blocks)
    return -math.expm1(log_cover)


def solve_error_bound(alpha: float, a: float, b: float, blocks: Sequence[int]) -> float:
    """The exact a_α with P(max |error| > a_α) = α for the block layout ``blocks``.

    Bracket: the one-query bound √(a+b)·Φ⁻¹(1 − α/2) (a max over more queries exceeds it with
    probability ≥ α) and the union bound √(a+b)·Φ⁻¹(1 − α/(2k)); Brent's method on log tails.
    """
    k = int(sum(blocks))
    sd = math.sqrt(a + b)
    low = sd * -float(special.ndtri(alpha / 2.0))  # Φ⁻¹(1 − α/2), without cancellation
    if k == 1:
        return low
    high = sd * -float(special.ndtri(alpha / (2.0 * k)))
    target = math.log(alpha)

    def excess(t: float) -> float:
        return math.log(max_error_tail(t, a, b, blocks)) - target

    if excess(low) <= 0.0:  # numerically at the one-query bound (all mass in η)
        return low
    while excess(high) > 0.0:  # the union bound is an upper bound; guard against rounding
        high *= 1.01
    return optimize.brentq(excess, low, high, xtol=1e-13 * high, rtol=1e-15, maxiter=500)


@dataclass(frozen=True)
class CorrelatedGaussianMechanism(GaussianShapedMechanism):
    """Lebeda's correlated Gaussian mechanism for d queries with values in [0, 1].

    Parameters
    ----------
    mu : float
        The GDP parameter the noise is calibrated for (> 0).
    d : int
        Number of queries; rows are in [0, 1]^d.
    c : float, optional
        Lemma 3.5's balance parameter C > 0; ``None`` means Algorithm 1 (C = d^{1/4}, the minimum
        per-query variance).  Larger C makes ñ more accurate and the counts less accurate.
    n_known : int, optional
        The public dataset size (>= 0).  Given, the mechanism is Lemma 3.6: counts only, per-query
        variance d/(4μ²).  Cannot be combined with ``c``.
    relation : {"add-remove", "replace"}
        Relation of the claim ``GaussianDP(mu, relation)``.  The paper proves the guarantee only
        under add/remove; a replacement claim is accepted on purpose so that audits can catch it.

    Output columns: the d noisy counts, then ñ = n + 2η (omitted for Lemma 3.6).

    References
    ----------
    Lebeda, "Better Gaussian Mechanism using Correlated Noise", Algorithm 1, Lemmas 3.4–3.6,
    Corollary 3.1; docs/ground-truth.md §5.
    """

    mu: float
    d: int
    c: Optional[float] = None
    n_known: Optional[int] = None
    relation: Union[Relation, str] = Relation.ADD_REMOVE
    #: Variance a of the shared noise η (0 for Lemma 3.6).
    eta_variance: float = field(init=False, repr=False)
    #: Variance b of each independent z_i (d/(4μ²) for Lemma 3.6).
    z_variance: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        mu = check_finite_positive("mu", self.mu)
        d = check_int("d", self.d, minimum=1)
        c = None if self.c is None else check_finite_positive("c", self.c)
        n_known = None if self.n_known is None else check_int("n_known", self.n_known, minimum=0)
        if c is not None and n_known is not None:
            raise ValueError(
                f"`c` has no meaning for the Lemma 3.6 variant (`n_known`={n_known!r}); got c={c!r}"
            )
        setattr_ = object.__setattr__
        setattr_(self, "mu", mu)
        setattr_(self, "d", d)
        setattr_(self, "c", c)
        setattr_(self, "n_known", n_known)
        setattr_(self, "relation", as_relation(self.relation))
        if n_known is not None:
            a, b = 0.0, d / (4.0 * mu * mu)  # Lemma 3.6: Z ~ N(0, d/(4μ²) I_d)
        else:
            c2 = math.sqrt(d) if c is None else c * c  # C² (Algorithm 1: C = d^{1/4})
            a = (1.0 + d / c2) / (4.0 * mu * mu)  # Lemma 3.5: A/4 with A = (d/C² + 1)/μ²
            b = (d + c2) / (4.0 * mu * mu)  # Lemma 3.5: B/4 with B = (d + C²)/μ²
        setattr_(self, "eta_variance", a)
        setattr_(self, "z_variance", b)

    # -- description ------------------------------------------------------------------------------
    @property
    def variant(self) -> str:
        """``"alg1"``, ``"lemma3.5"`` (explicit C) or ``"lemma3.6"`` (public size)."""
        if self.n_known is not None:
            return "lemma3.6"
        return "alg1" if self.c is None else "lemma3.5"

    @property
    def releases_size(self) -> bool:
        """Whether the last output column is the noisy size ñ."""
        return self.n_known is None

    @property
    def claim(self) -> GaussianDP:
        """μ-GDP under the relation the user passed (Theorem 3.1 proves it for add/remove)."""
        return GaussianDP(self.mu, self.relation)

    @property
    def name(self) -> str:
        extra = ""
        if self.c is not None:
            extra = f", C={self.c:g}"
        elif self.n_known is not None:
            extra = f", n_known={self.n_known}"
        if self.relation is not Relation.ADD_REMOVE:
            extra += f", {self.relation}"
        return f"CorrelatedGaussian[{self.variant}](μ={self.mu:g}, d={self.d}{extra})"

    def __repr__(self) -> str:
        return (f"CorrelatedGaussianMechanism(mu={self.mu!r}, d={self.d!r}, c={self.c!r}, "
                f"n_known={self.n_known!r}, relation={self.relation.value!r})")

    # -- answers and sampling ---------------------------------------------------------------------
    @property
    def output_dim(self) -> int:
        return self.d + 1 if self.releases_size else self.d

    @property
    def query_columns(self) -> tuple[int, ...]:
        return tuple(range(self.d))

    def true_answer(self, dataset: Any) -> np.ndarray:
        """The query answers: column sums f(X), then n = |X| when ñ is released."""
        data = check_dataset(dataset, self.d)
        sums = data.sum(axis=0)
        return np.append(sums, float(data.shape[0])) if self.releases_size else sums

    def output_mean(self, dataset: Any) -> np.ndarray:
        """E[M(X)]: the true answer, except for Lemma 3.6, whose counts are shifted by
        (n_known − |X|)/2 (the release is f − n/2·1 + n_known/2·1 + Z)."""
        data = check_dataset(dataset, self.d)
        mean = self.true_answer(data)
        if self.n_known is not None:
            mean = mean + (self.n_known - data.shape[0]) / 2.0
        return mean

    def output_covariance(self) -> np.ndarray:
        """Covariance of one output (Corollary 3.1 / Figure 2): a·11ᵀ + b·I on the counts,
        2a between counts and ñ, 4a for ñ."""
        a, b, d = self.eta_variance, self.z_variance, self.d
        cov = np.full((self.output_dim, self.output_dim), a)
        cov[np.arange(d), np.arange(d)] += b
        if self.releases_size:
            cov[:d, d] = cov[d, :d] = 2.0 * a
            cov[d, d] = 4.0 * a
        return cov

    def _sample(self, data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        d, n = self.d, float(data.shape[0])
        sums = data.sum(axis=0)
        if not self.releases_size:
            # Lemma 3.6: f(X) − n/2·1 + n_known/2·1 + Z
            out = rng.standard_normal((size, d))
            out *= math.sqrt(self.z_variance)
            out += sums + (self.n_known - n) / 2.0
            return out
        out = rng.standard_normal((size, d + 1))  # columns: z (standardised), then η
        eta = out[:, d] * math.sqrt(self.eta_variance)
        counts = out[:, :d]
        counts *= math.sqrt(self.z_variance)
        counts += eta[:, None]
        counts += sums  # Algorithm 1 line 6: x̃ = f(X) + η + z
        out[:, d] = n + 2.0 * eta  # Algorithm 1 return: ñ = n + 2η
        return out

    # -- exact privacy ----------------------------------------------------------------------------
    def exact_mu(self, relation: Union[Relation, str, None] = None) -> float:
        """Exact μ of the worst neighbour pair under ``relation`` (default: the claim's).

        With the decorrelating bijection of Lemma 3.4, m² = ‖Δf − Δn/2·1‖²/b + Δn²/(4a):
        add/remove gives d/(4b) + 1/(4a) (= μ² for every C; Lemma 3.6: d/(4b) = μ²),
        replacement gives d/b (Algorithm 1: 4μ²√d/(√d + 1); Lemma 3.6: 4μ²).
        """
        relation = self._relation(relation)
        a, b, d = self.eta_variance, self.z_variance, self.d
        if relation is Relation.REPLACE:
            return math.sqrt(d / b)
        return math.sqrt(d / (4.0 * b) + (1.0 / (4.0 * a) if a > 0 else 0.0))

    # -- accuracy ---------------------------------------------------------------------------------
    def noise_variance(self) -> np.ndarray:
        """Per column: a + b for each count (Lemma 3.5: (d + C² + d/C² + 1)/(4μ²); Algorithm 1:
        (d + 2√d + 1)/(4μ²); Lemma 3.6: d/(4μ²)), then 4a for ñ."""
        counts = np.full(self.d, self.eta_variance + self.z_variance)
        return np.append(counts, 4.0 * self.eta_variance) if self.releases_size else counts

    def error_bound(self, alpha: float, k: int = 1) -> float:
        """Exact a with P(max over k of the d counts |error| > a) = α (any k counts alike).

        k = 1: √(a + b)·Φ⁻¹(1 − α/2).  k ≤ d: the root of
        ∫ φ_a(e) [Φ((t − e)/√b) − Φ((−t − e)/√b)]^k de = 1 − α (docs/ground-truth.md §5), by composite
        Gauss–Legendre quadrature and Brent's method (tail probabilities agree with 40-digit
        quadrature to ~1e-14 relative; the root to ~1e-13).  Lemma 3.6 (a = 0):
        √b·Φ⁻¹((1 + (1 − α)^{1/k})/2).  For Lemma 3.6 the bound describes the error on datasets
        with |X| = n_known.
        """
        alpha = check_open_unit("alpha", alpha)
        k = check_int("k", k, minimum=1)
        if k > self.d:
            raise ValueError(f"`k` must be an integer in [1, d={self.d}], got {k!r}")
        if self.eta_variance == 0.0:
            miss = -math.expm1(math.log1p(-alpha) / k)  # 1 − (1 − α)^{1/k}
            return math.sqrt(self.z_variance) * -float(special.ndtri(miss / 2.0))
        return solve_error_bound(alpha, self.eta_variance, self.z_variance, [k])
