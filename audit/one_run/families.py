"""The trade-off families a one-run audit tests, and inverting a test over a family's parameter.

A mechanism is f-DP when every pair of neighbours has trade-off curve T ≥ f (Dong, Roth & Su 2022,
*Gaussian differential privacy*, JRSS B, Definition 2.3).  For a one-run audit the useful form is
the **blow-up** F = 1 − f: a test that rejects "canary out" with probability α when the canary is
out rejects it with probability at most F(α) when the canary is in.  F is concave and
non-decreasing; its generalized inverse

    F⁻¹(r) = inf{α ∈ [0, 1] : F(α) ≥ r}

says how often an event of probability r under "in" must happen under "out".  Two families:

- ``"gdp"``: G_μ(α) = Φ(Φ⁻¹(1 − α) − μ), so F⁻¹_μ(r) = Φ(Φ⁻¹(r) − μ) (docs/ground-truth.md §1).
  The parameter is μ.  A certified μ_lb is model-free ("the mechanism is not μ_lb-GDP"); the ε it
  is reported with, ε_{G_μ_lb}(δ) (Balle & Wang 2018, Theorem 8), bounds the mechanism's ε(δ) from
  below only when its trade-off curve is Gaussian-shaped.
- ``"approx"``: f_{ε,δ}(α) = max{0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)} (Dong, Roth & Su 2022,
  Proposition 2.5; docs/ground-truth.md §3), so
  F⁻¹_ε(r) = max{0, (r − δ)e^{−ε}, 1 − δ − e^ε(1 − r)}.  The parameter is ε at the stated δ, and a
  certified ε_lb needs no assumption on the curve's shape.

Both families are ordered: a larger parameter gives a pointwise smaller f (a weaker claim), hence a
pointwise smaller F⁻¹.  Every test built on them rejects a set of parameters of the form [0, θ*)
(shown for each test in its module), so :func:`largest_rejected` finds θ* by doubling and
bisection and returns a parameter value the test rejects: the certified bound is never above what
was rejected.
"""

from __future__ import annotations

import math
from typing import Callable, Literal

from scipy import special

from mechanisms.gdp import gdp_epsilon

__all__ = ["Family", "FAMILIES", "PARAMETER", "blow_up_inverse", "family_epsilon", "largest_rejected",
           "PARAMETER_MAX"]

Family = Literal["gdp", "approx"]
#: The families, in the order the docs list them.
FAMILIES: tuple[str, ...] = ("gdp", "approx")
#: The name of each family's parameter.
PARAMETER = {"gdp": "mu", "approx": "epsilon"}
#: The largest parameter searched: a test still rejecting there reports this value (a valid bound).
PARAMETER_MAX = {"gdp": 64.0, "approx": 200.0}
_SQRT_HALF = math.sqrt(0.5)


def _phi(x: float) -> float:
    """Φ(x), accurate in both tails."""
    return 0.5 * math.erfc(-x * _SQRT_HALF)


def blow_up_inverse(family: str, parameter: float, delta: float) -> Callable[[float], float]:
    """F⁻¹ of the family's curve at ``parameter`` (μ, or ε at ``delta``), as a scalar function."""
    if family == "gdp":
        mu = float(parameter)
        ndtri = special.ndtri
        if mu == 0.0:
            return lambda r: r

        def gaussian(r: float) -> float:
            if r <= 0.0:
                return 0.0
            if r >= 1.0:
                return 1.0
            return _phi(float(ndtri(r)) - mu)

        return gaussian
    if family == "approx":
        epsilon = float(parameter)
        shrink = math.exp(-epsilon)
        grow = math.exp(epsilon) if epsilon < 700.0 else math.inf

        def approximate(r: float) -> float:
            tail = 1.0 - delta - grow * (1.0 - r) if r < 1.0 else 1.0 - delta
            return max(0.0, (r - delta) * shrink, tail)

        return approximate
    raise ValueError(f"`family` must be one of {FAMILIES}, got {family!r}")


def family_epsilon(family: str, parameter: float, delta: float) -> float:
    """The ε at ``delta`` that the family's curve at ``parameter`` gives: ε_{G_μ}(δ) or ε itself."""
    if family == "approx":
        return float(parameter)
    if parameter <= 0.0:
        return 0.0
    if math.isinf(parameter):
        return math.inf
    return gdp_epsilon(delta, float(parameter))


def largest_rejected(rejects: Callable[[float], bool], maximum: float, tolerance: float = 1e-6) -> float:
    """θ* = sup{θ ∈ [0, maximum] : rejects(θ)} for a test rejecting exactly a set [0, θ*).

    Returns 0 when θ = 0 is not rejected, ``maximum`` when it still is, and otherwise the lower end
    of a bracket of width ≤ ``tolerance``·max(1, θ*) whose lower end is rejected: a value the test
    rejected, so the bound errs toward the claim.
    """
    if not rejects(0.0):
        return 0.0
    low, high = 0.0, min(1.0, maximum)
    while rejects(high):
        if high >= maximum:
            return float(maximum)
        low, high = high, min(2.0 * high, maximum)
    while high - low > tolerance * max(1.0, low):
        middle = 0.5 * (low + high)
        if rejects(middle):
            low = middle
        else:
            high = middle
    return float(low)

