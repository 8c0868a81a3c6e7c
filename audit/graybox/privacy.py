"""What a claim affords a replayed noise call, and the exact privacy of the noised coordinates.

When the released coordinates S carry y_S = f_S(D) + W z (z independent standard noise, W the
footprint found by the replay) the projection of the release onto S is a post-processing of it,
so its exact privacy on the pair is a *lower* bound on the mechanism's (Dwork & Roth 2014,
Prop. 2.1): a projection that violates the claim falsifies the claim.

- Gaussian z: the projection is N(f, WWᵀ) against N(f′, WWᵀ), whose trade-off curve is exactly
  G_μ with μ = ‖Δ‖ in the Mahalanobis norm, μ² = Δᵀ(WWᵀ)⁺Δ (after whitening, a Gaussian shift
  of that norm: Dong, Roth & Su 2022), if Δ = f′ − f lies in the range of WWᵀ (else a direction
  without noise separates them: δ = 1).  The claim affords μ_claim (a μ-GDP claim), or the largest μ whose profile
  δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018, Thm 8) stays below the claim's
  δ(ε) at every ε checked (for an (ε, δ) claim: δ_μ(ε) ≤ δ, which is exact since G_μ ≥ f_{ε,δ}
  iff δ_μ(ε) ≤ δ).
- Laplace z, one element per coordinate: a product of Lap(f_j, b_j) against Lap(f′_j, b_j), whose
  pure privacy loss is exactly Σ|Δ_j|/b_j (Dwork & Roth 2014, Thm 3.6); its hockey-stick δ(ε) is
  at least that of the r coordinates with the largest a_j = |Δ_j|/b_j, each replaced by the r-th
  largest (δ grows with each shift), which :func:`mechanisms.zoo.faulty.laplace_product_profile`
  gives exactly for r ≤ 10.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mechanisms.gdp import gdp_delta
from mechanisms.zoo.faulty import laplace_product_profile

__all__ = ["gaussian_allowance", "laplace_allowance", "epsilon_grid"]

#: Relative slack below which a measured quantity is not called larger than the allowed one
#: (floating-point rounding of the replayed arithmetic).
RELATIVE_SLACK = 1e-9


def epsilon_grid(claim: Any) -> np.ndarray:
    """The ε' at which a claim's profile is compared: its own ε and a grid up to 4·max(ε, 1)."""
    top = 4.0 * max(float(claim.epsilon) if math.isfinite(claim.epsilon) else 1.0, 1.0)
    grid = np.concatenate([[float(claim.epsilon)] if math.isfinite(claim.epsilon) else [], np.linspace(0.0, top, 81)])
    return np.unique(grid)


def _claimed_delta(claim: Any, grid: np.ndarray) -> np.ndarray:
    return np.asarray(claim.delta_at(grid), dtype=np.float64)


#: The largest μ each claim affords, by the claim's δ(ε') on the grid (a claim's profile is fixed,
#: and a pair check would otherwise bisect it again for every pair: the fixed cost of a fast mechanism).
_AFFORDED: dict[bytes, float] = {}
#: Above this μ a claim is taken to afford every shift (δ_μ(ε) < 1e-15 fails only for μ ≫ ε).
_MU_CAP = 1e3


def _afforded_mu(grid: np.ndarray, claimed: np.ndarray) -> float:
    """The largest μ whose profile δ_μ(ε') stays below the claim's δ(ε') on ``grid`` (bisection, cached)."""
    key = grid.tobytes() + claimed.tobytes()  # the bisection reads nothing else
    if key in _AFFORDED:
        return _AFFORDED[key]

    def fits(m: float) -> bool:
        return bool(np.all(gdp_delta(grid, m) <= claimed * (1 + RELATIVE_SLACK) + 1e-15))

    low, high = 0.0, 1.0
    while fits(high) and high < _MU_CAP:
        low, high = high, 2.0 * high
    if fits(high):
        threshold = math.inf
    else:
        for _ in range(60):
            middle = (low + high) / 2.0
            low, high = (middle, high) if fits(middle) else (low, middle)
        threshold = low
    if len(_AFFORDED) < 4096:
        _AFFORDED[key] = threshold
    return threshold


def gaussian_allowance(mu: float, claim: Any) -> tuple[bool, float, dict]:
    """(violates, μ the claim affords, witness) for an exact μ-GDP pair.

    The witness is the ε' with the largest excess δ_μ(ε') − δ_claim(ε') when the claim is violated.
    """
    if claim.gaussian_mu is not None:
        allowed = float(claim.gaussian_mu)
        return mu > allowed * (1 + RELATIVE_SLACK), allowed, {}
    grid = epsilon_grid(claim)
    claimed = _claimed_delta(claim, grid)

    threshold = _afforded_mu(grid, claimed)
    allowed = min(threshold, max(4.0 * mu, 1.0))
    excess = gdp_delta(grid, mu) - claimed
    worst = int(np.argmax(excess))
    violates = bool(excess[worst] > claimed[worst] * RELATIVE_SLACK + 1e-15)
    witness = {"epsilon": float(grid[worst]), "delta": float(gdp_delta(grid[worst], mu)),
               "claimed_delta": float(claimed[worst])} if violates else {}
    return violates, allowed, witness


def _laplace_delta_lower(shifts: np.ndarray, epsilon: np.ndarray) -> np.ndarray:
    ordered = np.sort(np.abs(shifts))[::-1]
    best = np.zeros_like(epsilon, dtype=np.float64)
    for r in range(1, min(10, ordered.size) + 1):
        if ordered[r - 1] <= 0:
            break
        best = np.maximum(best, laplace_product_profile(epsilon, float(ordered[r - 1]), r))
    return best


def laplace_allowance(shifts: np.ndarray, claim: Any) -> tuple[bool, float, dict]:
    """(violates, ε the claim affords, witness) for a product of Laplace coordinates with
    a_j = |Δ_j|/b_j: pure ε = Σ a_j against the claim's ε (exact for a pure claim), and for a
    claim with δ > 0 a lower bound on the pair's δ(ε') above the claim's δ(ε')."""
    shifts = np.abs(np.asarray(shifts, dtype=np.float64))
    epsilon_pair = float(shifts.sum())
    allowed = float(claim.epsilon)
    grid = epsilon_grid(claim)
    claimed = _claimed_delta(claim, grid)
    if np.all(claimed == 0.0) or getattr(claim, "kind", "") == "pure-dp":  # exact: no profile needed
        violates = epsilon_pair > allowed * (1 + RELATIVE_SLACK)
        return violates, allowed, ({"pure_epsilon": epsilon_pair} if violates else {})
    if epsilon_pair == 0.0:  # nothing moves: δ(ε') = 0 everywhere
        return False, allowed, {}
    lower = _laplace_delta_lower(shifts, grid)
    excess = lower - claimed
    worst = int(np.argmax(excess))
    violates = bool(excess[worst] > claimed[worst] * RELATIVE_SLACK + 1e-15)
    witness = {"epsilon": float(grid[worst]), "delta_at_least": float(lower[worst]),
               "claimed_delta": float(claimed[worst])} if violates else {}
    return violates, allowed, witness
