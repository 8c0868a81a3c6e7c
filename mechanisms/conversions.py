"""Conversions between privacy notions, each valid (never optimistic) and stating its direction.

- **Rényi DP → (ε, δ).**  If D_α(P‖Q) ≤ ε_R for an order α > 1 (both orders of every pair), then
  for every ε ≥ 0

      δ(ε) ≤ exp((α − 1)(ε_R − ε)) · (1 − 1/α)^{α−1} / α

  (Canonne, Kamath & Steinke 2020, Proposition 12, stated for zCDP and proved from one Rényi
  order; Balle, Barthe, Gaboardi, Hsu & Sato 2020, Theorem 21, the same bound written as
  ε = ε_R + ln((α − 1)/α) − (ln δ + ln α)/(α − 1)).  Any order gives a valid bound, so the
  minimum over a finite set of orders is valid; minimising over a grid of orders can only give
  a *larger* δ than the infimum over all orders, i.e. it errs toward the claim.  Each order also
  gives δ(ε) ≤ δ(0) = TV(P, Q) ≤ √(1 − e^{−KL}) ≤ √(1 − e^{−ε_R}) (Bretagnolle–Huber, and
  KL = D_1 ≤ D_α); the minimum of both bounds is the one dp-accounting's ``compute_delta`` uses.
- **ρ-zCDP** is D_α ≤ ρα for every α > 1 (Bun & Steinke 2016), so its profile is the infimum of
  the bound above over α with ε_R = ρα, taken here over a fixed log-spaced grid of orders.
- **Profile → trade-off.**  (ε, δ(ε))-DP for every ε implies T ≥ f_{ε,δ(ε)} for every ε, hence

      T(α) ≥ sup_ε max{0, 1 − δ(ε) − e^ε α, e^{−ε}(1 − δ(ε) − α)}

  (Dong, Roth & Su 2022, Proposition 2.12 / docs/ground-truth.md §3).  :func:`profile_tradeoff` takes the
  supremum over a finite grid of ε only, which is *at most* the true supremum: the curve it
  returns lies on or below the one the profile implies, so a point below it is below the implied
  curve too and no violation is ever declared that the profile does not imply.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

__all__ = ["RDP_ORDER_GRID", "rdp_to_delta", "zcdp_to_delta", "profile_tradeoff", "profile_epsilon",
           "epsilon_grid"]

#: Orders α over which ρ-zCDP conversions are minimised (log-spaced in α − 1).
RDP_ORDER_GRID = 1.0 + np.geomspace(1e-4, 1e5, 3000)
#: Rows of α processed at once by :func:`profile_tradeoff` (bounds memory).
_ALPHA_CHUNK = 256


def rdp_to_delta(epsilon, orders, rdp_epsilons) -> np.ndarray:
    """min over orders of exp((α − 1)(ε_R − ε))(1 − 1/α)^{α−1}/α, capped at 1 (module docstring).

    Vectorized in ``epsilon``; ``orders`` and ``rdp_epsilons`` are matching 1-D arrays.
    """
    epsilon = np.asarray(epsilon, dtype=np.float64)
    orders = np.asarray(orders, dtype=np.float64)
    rdp = np.asarray(rdp_epsilons, dtype=np.float64)
    flat = epsilon.reshape(-1, 1)
    log_delta = ((orders - 1.0) * (rdp - flat) + (orders - 1.0) * np.log1p(-1.0 / orders)
                 - np.log(orders))
    with np.errstate(divide="ignore"):
        log_tv = 0.5 * np.log1p(-np.exp(-rdp))  # −inf for ε_R = 0: identical distributions
    log_delta = np.minimum(log_delta, log_tv)
    return np.minimum(1.0, np.exp(np.minimum(log_delta.min(axis=1), 0.0))).reshape(epsilon.shape)


def zcdp_to_delta(epsilon, rho: float) -> np.ndarray:
    """δ(ε) implied by ρ-zCDP: :func:`rdp_to_delta` with ε_R = ρα over :data:`RDP_ORDER_GRID`."""
    epsilon = np.asarray(epsilon, dtype=np.float64)
    out = np.empty(epsilon.size)
    flat = epsilon.ravel()
    for start in range(0, flat.size, _ALPHA_CHUNK):  # bounded memory: chunk × orders
        part = flat[start:start + _ALPHA_CHUNK]
        out[start:start + part.size] = rdp_to_delta(part, RDP_ORDER_GRID, rho * RDP_ORDER_GRID)
    return out.reshape(epsilon.shape)


def profile_epsilon(delta: float, profile: Callable[[np.ndarray], np.ndarray], upper: float) -> float:
    """inf{ε ≥ 0 : δ(ε) ≤ delta} for a non-increasing ``profile``, rounded *up*.

    Bisection keeps an ε with δ(ε) ≤ delta at the upper end and returns it, so the value is never
    below the infimum (it errs toward the claim: the claimed ε looks larger).  ``inf`` when even
    ``upper`` (doubled up to 2^20 · upper) does not reach ``delta``.
    """
    if delta >= 1.0:
        return 0.0
    if float(profile(np.array([0.0]))[0]) <= delta:
        return 0.0
    high = upper
    while float(profile(np.array([high]))[0]) > delta:
        high *= 2.0
        if high > upper * 2.0**20:
            return math.inf
    low = 0.0
    for _ in range(200):
        if high - low <= 1e-12 * max(1.0, high):
            break
        middle = 0.5 * (low + high)
        if float(profile(np.array([middle]))[0]) <= delta:
            high = middle
        else:
            low = middle
    return high


def epsilon_grid(upper: float) -> np.ndarray:
    """The ε grid of :func:`profile_tradeoff`: 0, 2048 linear and 512 log-spaced points to ``upper``."""
    upper = max(upper, 1e-3)
    return np.unique(np.concatenate([np.linspace(0.0, upper, 2048), np.geomspace(1e-5, upper, 512)]))


def profile_tradeoff(alpha, epsilons: np.ndarray, deltas: np.ndarray) -> np.ndarray:
    """max over the grid of max{0, 1 − δ_i − e^{ε_i} α, e^{−ε_i}(1 − δ_i − α)} (module docstring).

    A lower bound on the trade-off curve the profile implies (the grid misses the supremum by a
    little, never overshoots it).  Symmetric in the sense f = f⁻¹, like every f_{ε,δ}.
    """
    alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, 1.0)
    flat = alpha.ravel()
    scale = np.exp(np.minimum(np.asarray(epsilons, dtype=np.float64), 700.0))
    keep = 1.0 - np.asarray(deltas, dtype=np.float64)
    out = np.empty(flat.size)
    for start in range(0, flat.size, _ALPHA_CHUNK):
        a = flat[start:start + _ALPHA_CHUNK, None]
        with np.errstate(over="ignore", invalid="ignore"):
            first = keep - np.where(a > 0, scale * a, 0.0)
        second = (keep - a) / scale
        out[start:start + a.shape[0]] = np.maximum(first, second).max(axis=1)
    return np.maximum(out, 0.0).reshape(alpha.shape)
