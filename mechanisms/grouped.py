"""Lebeda's correlated Gaussian mechanism for disjoint groups of queries (Algorithm 2, Lemma 4.2).

A row is x ∈ [0, 1]^{m·d} made of m groups of d entries (group j = columns j·d : (j+1)·d) and is
non-zero in at most one group.  Following line 8 of Algorithm 2, a row belongs to the group that
holds its non-zero entries, and an all-zero row belongs to no group; n_j counts the rows of group
j.  Every group runs Algorithm 1 with its own shared noise η_j:

    x̃_{j,i} = f(X)_{j,i} + η_j + z_{j,i},   ỹ_j = n_j + 2η_j,

with, for the relation the noise is calibrated for,

- add/remove: η_j ~ N(0, a = (√d + 1)/(4μ²)), z ~ N(0, b = (d + √d)/(4μ²));
- replacement, ``eta="paper"`` (as printed): a = 4/μ², b = d/μ²;
- replacement, ``eta="tight"``: a = 1/μ², b = d/μ² (enough for the proof; docs/ground-truth.md §5).

Output layout: for each group j, its d noisy counts, then ỹ_j (k = m·(d + 1) columns).

**Exact privacy.**  Per group, (x̃_j − ỹ_j/2·1, ỹ_j) = (f_j − n_j/2·1 + z_j, n_j + 2η_j) has
independent noise (variances b and 4a), so a pair of neighbours has trade-off curve G_m with

    m² = Σ_j ‖Δf_j − Δn_j/2·1‖²/b + Δn_j²/(4a).

- add/remove: adding a row that is non-zero in group j moves only group j, Δn_j = 1 and
  Δf_j = x_j ∈ [0, 1]^d, so m² ≤ d/(4b) + 1/(4a) (an all-ones group row attains it); an all-zero
  row moves nothing.
- replacement (x in group j, x' in group l): (i) j = l: Δn = 0, m² = ‖x_j − x'_j‖²/b ≤ d/b,
  attained by complementary 0/1 rows for d ≥ 2 (for d = 1 only approached, x' → 0⁺);
  (ii) j ≠ l (needs m ≥ 2): m² ≤ d/(2b) + 1/(2a), attained by all-ones rows; (iii) x' = 0:
  m² ≤ d/(4b) + 1/(4a).  Hence μ_rep² = max(d/b, d/(2b) + 1/(2a)) (case (ii) only if m ≥ 2).

Resulting exact μ (in units of μ; for d = 1, case (i) is a supremum):

==============  =============  =================================================
noise for       add/remove     replacement
==============  =============  =================================================
add/remove      1              2·√(√d/(√d + 1)) (case i; case ii gives √2 ≤ it)
replace/paper   √5/4 ≈ 0.559   1 (case i; case ii gives √(5/8))
replace/tight   1/√2 ≈ 0.707   1 (cases i and ii both attain it)
==============  =============  =================================================

References
----------
C. J. Lebeda, "Better Gaussian Mechanism using Correlated Noise" (2024): Algorithm 2, Lemma 4.2; docs/ground-truth.md §5.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Union

import numpy as np

from .base import GaussianShapedMechanism
from .claims import GaussianDP, Relation, as_relation
from .correlated import solve_error_bound
from .validation import (
    check_choice,
    check_dataset,
    check_finite_positive,
    check_int,
    check_open_unit,
    check_size,
)

__all__ = ["GroupedCorrelatedGaussianMechanism"]

ETA_CHOICES = ("paper", "tight")


@dataclass(frozen=True)
class GroupedCorrelatedGaussianMechanism(GaussianShapedMechanism):
    """Algorithm 2 of Lebeda: correlated Gaussian noise per group of d queries.

    Parameters
    ----------
    mu : float
        GDP parameter (> 0) under ``relation``.
    groups : int
        Number m of groups; rows are in [0, 1]^{m·d} and non-zero in at most one group.
    d : int
        Queries per group (the paper's d).  The row width is ``row_dim`` = m·d.
    relation : {"add-remove", "replace"}
        The relation the noise is calibrated for and the claim ``GaussianDP(mu, relation)``
        refers to.
    eta : {"paper", "tight"}
        Replacement calibration of η_j: the printed N(0, 4/μ²) or the sufficient N(0, 1/μ²).
        Has no effect under add/remove.

    References
    ----------
    Lebeda, "Better Gaussian Mechanism using Correlated Noise", Algorithm 2 and Lemma 4.2.
    """

    mu: float
    groups: int
    d: int
    relation: Union[Relation, str] = Relation.ADD_REMOVE
    eta: str = "paper"
    #: Variance a of each group's shared noise η_j.
    eta_variance: float = field(init=False, repr=False)
    #: Variance b of each independent z_{j,i}.
    z_variance: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        mu = check_finite_positive("mu", self.mu)
        setattr_ = object.__setattr__
        setattr_(self, "mu", mu)
        setattr_(self, "groups", check_int("groups", self.groups, minimum=1))
        d = check_int("d", self.d, minimum=1)
        setattr_(self, "d", d)
        relation = as_relation(self.relation)
        setattr_(self, "relation", relation)
        eta = check_choice("eta", self.eta, ETA_CHOICES)
        setattr_(self, "eta", eta)
        if relation is Relation.ADD_REMOVE:  # Algorithm 2 lines 4 and 6, add/remove case
            a = (math.sqrt(d) + 1.0) / (4.0 * mu * mu)
            b = (d + math.sqrt(d)) / (4.0 * mu * mu)
        else:  # replacement case: η_j ~ N(0, 4/μ²) as printed or 1/μ² ("tight"); z ~ N(0, d/μ²)
            a = (4.0 if eta == "paper" else 1.0) / (mu * mu)
            b = d / (mu * mu)
        setattr_(self, "eta_variance", a)
        setattr_(self, "z_variance", b)

    # -- description ------------------------------------------------------------------------------
    @property
    def row_dim(self) -> int:
        """Width of a data row, m·d."""
        return self.groups * self.d

    @property
    def claim(self) -> GaussianDP:
        """μ-GDP under the calibrated relation (Lemma 4.2)."""
        return GaussianDP(self.mu, self.relation)

    @property
    def name(self) -> str:
        calibration = ("add-remove" if self.relation is Relation.ADD_REMOVE
                       else f"replace/{self.eta}")
        return (f"GroupedCorrelatedGaussian[{calibration}](μ={self.mu:g}, "
                f"groups={self.groups}, d={self.d})")

    def __repr__(self) -> str:
        return (f"GroupedCorrelatedGaussianMechanism(mu={self.mu!r}, groups={self.groups!r}, "
                f"d={self.d!r}, relation={self.relation.value!r}, eta={self.eta!r})")

    # -- data -------------------------------------------------------------------------------------
    def _check_groups(self, dataset: Any) -> tuple[np.ndarray, np.ndarray]:
        """Validate rows (shape, range, one non-zero group) and return (data, membership (n, m))."""
        data = check_dataset(dataset, self.row_dim)
        member = (data.reshape(-1, self.groups, self.d) != 0.0).any(axis=2)
        spread = member.sum(axis=1)
        if np.any(spread > 1):
            row = int(np.argmax(spread > 1))
            where = np.flatnonzero(member[row]).tolist()
            raise ValueError(
                f"`dataset` row {row} is non-zero in groups {where}; "
                "Algorithm 2 allows at most one non-zero group per row"
            )
        return data, member

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        # Same door as ReferenceMechanism.__call__, with rows of width m·d and the group check.
        data, member = self._check_groups(dataset)
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        return self._draw(data, member, size, rng)

    def _sample(self, data: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        data, member = self._check_groups(data)
        return self._draw(data, member, size, rng)

    def _draw(self, data: np.ndarray, member: np.ndarray, size: int,
              rng: np.random.Generator) -> np.ndarray:
        m, d = self.groups, self.d
        mean = self._mean(data, member)  # (m, d + 1)
        out = rng.standard_normal((size, m, d + 1))  # per group: z (standardised), then η_j
        eta = out[:, :, d] * math.sqrt(self.eta_variance)
        counts = out[:, :, :d]
        counts *= math.sqrt(self.z_variance)
        counts += eta[:, :, None]  # line 7: x̃_{j,k} = f(X)_{j,k} + η_j + z_{j,k}
        out[:, :, d] = 2.0 * eta  # line 8: ỹ_j = n_j + 2η_j
        out += mean
        return out.reshape(size, m * (d + 1))

    def _mean(self, data: np.ndarray, member: np.ndarray) -> np.ndarray:
        sums = data.sum(axis=0).reshape(self.groups, self.d)
        sizes = member.sum(axis=0).astype(np.float64)  # n_j; all-zero rows count nowhere
        return np.concatenate([sums, sizes[:, None]], axis=1)

    def true_answer(self, dataset: Any) -> np.ndarray:
        """Per group j: the d column sums of group j, then n_j (rows non-zero in group j)."""
        data, member = self._check_groups(dataset)
        return self._mean(data, member).ravel()

    def output_mean(self, dataset: Any) -> np.ndarray:
        """E[M(X)], equal to :meth:`true_answer`."""
        return self.true_answer(dataset)

    @property
    def output_dim(self) -> int:
        return self.groups * (self.d + 1)

    @property
    def query_columns(self) -> tuple[int, ...]:
        """The count columns j·(d + 1) + i, i < d (group sizes excluded)."""
        return tuple(j * (self.d + 1) + i for j in range(self.groups) for i in range(self.d))

    def output_covariance(self) -> np.ndarray:
        """Block-diagonal covariance: per group a·11ᵀ + b·I on the counts, 2a to ỹ_j, 4a for ỹ_j."""
        a, b, d = self.eta_variance, self.z_variance, self.d
        block = np.full((d + 1, d + 1), a)
        block[np.arange(d), np.arange(d)] += b
        block[:d, d] = block[d, :d] = 2.0 * a
        block[d, d] = 4.0 * a
        return np.kron(np.eye(self.groups), block)

    # -- exact privacy ----------------------------------------------------------------------------
    def exact_mu(self, relation: Union[Relation, str, None] = None) -> float:
        """Exact μ of the worst neighbour pair under ``relation`` (default: the calibrated one).

        add/remove: √(d/(4b) + 1/(4a)).  Replacement: √max(d/b, d/(2b) + 1/(2a)), the second
        term (moving a row across groups) only when there are at least two groups.  See the
        module docstring for the derivation and the table of values.
        """
        relation = self._relation(relation)
        a, b, d = self.eta_variance, self.z_variance, self.d
        if relation is Relation.ADD_REMOVE:
            return math.sqrt(d / (4.0 * b) + 1.0 / (4.0 * a))
        within = d / b  # complement a row inside one group
        across = d / (2.0 * b) + 1.0 / (2.0 * a) if self.groups >= 2 else 0.0
        return math.sqrt(max(within, across))

    # -- accuracy ---------------------------------------------------------------------------------
    def noise_variance(self) -> np.ndarray:
        """Per column: a + b for each count, 4a for each group size ỹ_j."""
        block = np.append(np.full(self.d, self.eta_variance + self.z_variance),
                          4.0 * self.eta_variance)
        return np.tile(block, self.groups)

    def error_bound(self, alpha: float, k: int = 1) -> float:
        """Exact a with P(max over the first k count columns |error| > a) = α.

        The first k count columns fill the groups in order: ⌊k/d⌋ whole groups and k mod d counts
        of the next.  Groups are independent, so the coverage is the product of each group's
        Algorithm 1 coverage ∫ φ_a(e)[Φ((t−e)/√b) − Φ((−t−e)/√b)]^{k_j} de.  The value is exact
        for any k counts laid out that way (within a group any counts are alike).  Any other
        layout of k counts needs a bound no larger than √(a+b)·Φ⁻¹((1 + (1 − α)^{1/k})/2), the
        value for one count per group (Šidák's inequality).
        """
        alpha = check_open_unit("alpha", alpha)
        k = check_int("k", k, minimum=1)
        total = self.groups * self.d
        if k > total:
            raise ValueError(f"`k` must be an integer in [1, groups·d={total}], got {k!r}")
        full, rest = divmod(k, self.d)
        blocks = [self.d] * full + ([rest] if rest else [])
        return solve_error_bound(alpha, self.eta_variance, self.z_variance, blocks)
