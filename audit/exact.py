"""What is exactly true of a mechanism, for reports: its exact ε(δ), δ(ε), μ and trade-off curve.

A reference mechanism knows its exact privacy (docs/ground-truth.md); a user's mechanism usually does
not, and its report then says "unknown".  :func:`exact_truth` gathers what a report shows next to
the certified bounds; :func:`exact_value` asks the mechanism for one value, remembering the values of
immutable reference mechanisms (equal parameters, equal truth).
"""

from __future__ import annotations

import enum
import math
import platform
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import scipy
import statsmodels

from mechanisms.parameters import FrozenParameters

from .selection import DELTA_GRID
from .version import __version__

__all__ = ["Truth", "exact_truth", "exact_value", "is_immutable", "ratio", "versions", "PLOT_ALPHAS"]

#: α values at which claimed and exact trade-off curves are tabulated for plots.
PLOT_ALPHAS = np.unique(np.concatenate([[0.0], np.geomspace(1e-8, 1e-2, 25), np.linspace(0.0, 1.0, 101)]))


@dataclass(frozen=True)
class Truth:
    """A mechanism's exact ε at the claim's δ, δ at its ε, μ, ε(δ) on :data:`DELTA_GRID` and trade-off
    curve on :data:`PLOT_ALPHAS`; None where it does not know them."""

    epsilon: Optional[float]
    delta: Optional[float]
    mu: Optional[float]
    curve: Optional[tuple[float, ...]]
    tradeoff: Optional[tuple[float, ...]]


def exact_truth(mechanism: Any, claim: Any) -> Truth:
    """What ``mechanism`` knows exactly, at the points of ``claim`` a report shows."""
    relation = claim.relation.value
    tradeoff = exact_value(mechanism, "tradeoff", PLOT_ALPHAS, relation=relation)
    tradeoff = None if tradeoff is None else tuple(float(v) for v in tradeoff)
    epsilon = _as_float(exact_value(mechanism, "epsilon_for_delta", claim.reference_delta, relation=relation))
    delta = exact_value(mechanism, "privacy_profile", claim.epsilon, relation=relation)
    delta = None if delta is None else float(np.asarray(delta))
    mu = _as_float(exact_value(mechanism, "exact_mu", relation))
    curve = None
    if epsilon is not None:
        values = [exact_value(mechanism, "epsilon_for_delta", float(d), relation=relation) for d in DELTA_GRID]
        curve = None if any(v is None for v in values) else tuple(float(v) for v in values)
    return Truth(epsilon, delta, mu, curve, tradeoff)


def exact_value(mechanism, method: str, *args, **kwargs):
    """The mechanism's exact value, or None where it does not know it.  Values of an immutable
    reference mechanism (:func:`is_immutable`: equal parameters, equal truth) are remembered, so
    repeated audits of one mechanism compute its exact curves once (some take a second: an
    accountant's ε(δ) on the 40 δ of the curve)."""
    function = getattr(mechanism, method, None)
    if not callable(function):
        return None
    if is_immutable(mechanism):
        key = (method, tuple(_hashable(a) for a in args), tuple(sorted((k, _hashable(v)) for k, v in kwargs.items())))
        return _remembered_exact(mechanism, key, lambda: function(*args, **kwargs))
    return _call_exact(function, *args, **kwargs)


def is_immutable(value) -> bool:
    """Whether ``value`` is built only of numbers, strings, enums, tuples and reference mechanisms
    (:class:`mechanisms.gaussian.FrozenParameters`) made of them: a composition of a user's
    mutable mechanism is not, so its truth is recomputed every time."""
    if isinstance(value, FrozenParameters):
        return all(is_immutable(parameter) for _, parameter in value._params)
    if isinstance(value, tuple):
        return all(is_immutable(item) for item in value)
    return value is None or isinstance(value, (bool, int, float, str, enum.Enum))


def _call_exact(function, *args, **kwargs):
    try:
        return function(*args, **kwargs)
    except (NotImplementedError, ValueError):
        return None


def _hashable(value):
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    return value


_EXACT_VALUES: dict = {}
_EXACT_VALUES_MAX = 4096
_MISSING = object()


def _remembered_exact(mechanism, key, compute):
    """``compute()`` (None if it raises NotImplementedError/ValueError), remembered per mechanism
    and ``key``; the memory is cleared when it holds :data:`_EXACT_VALUES_MAX` values.  Audits run
    in threads may clear it at any time, so the value returned is the one looked up or computed here,
    never re-read after it is stored."""
    full_key = (mechanism, key)
    value = _EXACT_VALUES.get(full_key, _MISSING)
    if value is _MISSING:
        value = _call_exact(compute)
        if len(_EXACT_VALUES) >= _EXACT_VALUES_MAX:
            _EXACT_VALUES.clear()
        _EXACT_VALUES[full_key] = value
    return value.copy() if isinstance(value, np.ndarray) else value


def _as_float(value) -> Optional[float]:
    return None if value is None else float(value)


def ratio(numerator, denominator) -> Optional[float]:
    if numerator is None or denominator is None or not math.isfinite(denominator) or denominator <= 0:
        return None
    return float(numerator) / float(denominator)



def versions() -> dict:
    """The versions a report records: dpaudit, Python and the numerical libraries."""
    return {"dpaudit": __version__, "python": platform.python_version(), "numpy": np.__version__,
            "scipy": scipy.__version__, "statsmodels": statsmodels.__version__}
