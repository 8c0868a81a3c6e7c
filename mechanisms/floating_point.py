"""Laplace noise in floating point: two naive implementations and Mironov's snapping fix.

The Laplace mechanism x + Lap(λ) with λ = Δ/ε is ε-DP over the reals.  Implemented with doubles it
is not: the sampled noise takes only the values reachable from a uniform double through ``log``,
and the addition x + y rounds differently for different x, so the *sets* of reachable outputs (and
the low-order bits of the outputs) depend on x (Mironov, "On significance of the least significant
bits for differential privacy", CCS 2012, §3–4).  Mironov shows for the textbook implementation
that some outputs are reachable from one input and not its neighbour, so no finite ε holds; we do
not re-derive that for each implementation below, so their exact ε is reported as unknown, and the
audit's certified bound is the evidence.

* :class:`NaiveLaplace` ``variant="numpy-legacy"``: numpy's ``RandomState.laplace`` (the
  generator DP-Sniper's floating-point experiment used); ``variant="inverse-cdf"``: the textbook
  x − λ·sgn(u)·ln(1 − 2|u|), u uniform on [−½, ½);
* :class:`SnappingLaplace`: Mironov's snapping mechanism (his §5.2),
  clamp_B(⌊clamp_B(x) + S·λ·ln U*⌉_Λ), Λ the smallest power of two ≥ λ, U* a uniform double
  drawn with the exact probability of its rounding interval; Mironov's Theorem 1 proves it
  (1/λ + 2⁻⁴⁹B/λ)-DP for λ < B < 2⁴⁶λ (assuming a correctly rounded ``log``; numpy's is accurate to
  about one ulp, a caveat Mironov also states).

The input is the query answer itself (sensitivity 1): audit them with ``scenarios.custom`` on
the pair ([0.0], [1.0]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .claims import PureDP
from .validation import check_choice, check_finite_positive

__all__ = ["NaiveLaplace", "SnappingLaplace", "NAIVE_VARIANTS"]

NAIVE_VARIANTS = ("numpy-legacy", "inverse-cdf")


def _answer(dataset) -> float:
    values = np.asarray(dataset, dtype=np.float64).ravel()
    if values.size != 1:
        raise ValueError(f"`dataset` must be one query answer, got shape {np.shape(dataset)}")
    return float(values[0])


@dataclass(frozen=True)
class NaiveLaplace:
    """x + Lap(1/ε) computed naively in doubles; claims (unsoundly) pure ε-DP."""

    epsilon: float = 0.1
    variant: str = "numpy-legacy"
    claim: PureDP = field(init=False)
    name: str = field(init=False)

    def __post_init__(self):
        check_finite_positive("epsilon", self.epsilon)
        check_choice("variant", self.variant, NAIVE_VARIANTS)
        object.__setattr__(self, "claim", PureDP(float(self.epsilon)))
        object.__setattr__(self, "name", f"naive-laplace-{self.variant}(eps={self.epsilon:g})")

    def __call__(self, dataset, size: int, rng: np.random.Generator) -> np.ndarray:
        x, scale = _answer(dataset), 1.0 / self.epsilon
        if self.variant == "numpy-legacy":
            # A legacy RandomState seeded from the chunk's generator: reproducible per chunk.
            state = np.random.RandomState(np.random.MT19937(int(rng.integers(2**32))))
            return state.laplace(x, scale, size).reshape(-1, 1)
        u = rng.random(size) - 0.5
        return (x - scale * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))).reshape(-1, 1)


@dataclass(frozen=True)
class SnappingLaplace:
    """Mironov's snapping mechanism with bound ``bound``; claims his Theorem 1's ε."""

    epsilon: float = 0.1
    bound: float = 1000.0
    claim: PureDP = field(init=False)
    name: str = field(init=False)

    def __post_init__(self):
        check_finite_positive("epsilon", self.epsilon)
        check_finite_positive("bound", self.bound)
        scale = 1.0 / self.epsilon
        if not scale < self.bound < 2.0**46 * scale:
            raise ValueError(f"`bound` must lie in (1/epsilon, 2**46/epsilon) = ({scale:g}, "
                             f"{2.0**46 * scale:g}) for Mironov's Theorem 1, got {self.bound!r}")
        object.__setattr__(self, "claim", PureDP(float(self.epsilon + 2.0**-49 * self.bound * self.epsilon)))
        object.__setattr__(self, "name", f"snapping-laplace(eps={self.epsilon:g}, B={self.bound:g})")

    @property
    def snap(self) -> float:
        """Λ: the smallest power of two ≥ λ = 1/ε."""
        return 2.0 ** math.ceil(math.log2(1.0 / self.epsilon))

    def __call__(self, dataset, size: int, rng: np.random.Generator) -> np.ndarray:
        x = min(max(_answer(dataset), -self.bound), self.bound)
        # U* uniform on (0, 1) rounded down to a double: exponent e ~ Geometric(½) (P(e = j) =
        # 2^−j) and a uniform 52-bit mantissa give U* = (1 + m·2⁻⁵²)·2^−e exactly.
        exponent = rng.geometric(0.5, size)
        mantissa = rng.integers(0, 1 << 52, size, dtype=np.int64).astype(np.float64)
        uniform = np.ldexp(1.0 + mantissa * 2.0**-52, -exponent)
        sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
        noisy = x + sign * (1.0 / self.epsilon) * np.log(uniform)
        snapped = self.snap * np.round(noisy / self.snap)  # division by a power of two is exact
        return np.clip(snapped, -self.bound, self.bound).reshape(-1, 1)
