"""Input validation shared by every public constructor and entry point.

Each helper checks one parameter, names it and echoes the offending value, e.g.
``ValueError: `delta` must be in (0, 1), got 1.5``.  Validation happens once, at the
door; the numerical code behind it assumes valid input.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = [
    "check_finite_positive",
    "check_open_unit",
    "check_int",
    "check_choice",
    "check_probability",
    "check_seed",
    "check_dataset",
    "check_size",
    "check_epsilon_delta",
]


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _real(name: str, value: Any) -> float:
    if not _is_real(value):
        raise TypeError(f"`{name}` must be a real number, got {value!r}")
    value = float(value)
    if math.isnan(value):
        raise ValueError(f"`{name}` must not be NaN, got {value!r}")
    return value


def check_finite_positive(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is finite and > 0."""
    value = _real(name, value)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"`{name}` must be a finite number > 0, got {value!r}")
    return value


def check_open_unit(name: str, value: Any) -> float:
    """Return ``value`` as a float if it lies in the open interval (0, 1)."""
    value = _real(name, value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"`{name}` must be in (0, 1), got {value!r}")
    return value


def check_probability(name: str, value: Any) -> float:
    """Return ``value`` as a float if it is a real number in (0, 1] (a probability that may be 1);
    a ValueError naming ``name`` otherwise (a bool, a string or NaN included)."""
    if not _is_real(value) or not 0.0 < float(value) <= 1.0:
        raise ValueError(f"`{name}` must be a number in (0, 1], got {value!r}")
    return float(value)


def check_int(name: str, value: Any, minimum: int = 1) -> int:
    """Return ``value`` as an int if it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}, got {value!r}")
    return value


def check_seed(seed: Any) -> "int | None":
    """A seed is ``None`` (fresh entropy) or a non-negative integer."""
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"`seed` must be a non-negative integer or None, got {seed!r}")
    if seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer or None, got {seed!r}")
    return int(seed)


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``choices`` (exact match, no prefixes)."""
    if not isinstance(value, str):
        raise TypeError(f"`{name}` must be one of {choices}, got {value!r}")
    if value not in choices:
        raise ValueError(f"`{name}` must be one of {choices}, got {value!r}")
    return value


def check_size(size: Any) -> int:
    """The number of outputs a mechanism is asked to draw."""
    return check_int("size", size, minimum=1)


def check_dataset(dataset: Any, d: int, *, name: str = "dataset", unit: bool = True) -> np.ndarray:
    """Validate a dataset of rows in [0, 1]^d and return it as a float64 ``(n, d)`` array.

    An empty dataset (n = 0) is valid: add/remove neighbours of it have one row.  With
    ``unit=False`` the values may be any reals (mechanisms that clip or check their own domain).
    """
    try:
        array = np.asarray(dataset, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be a numeric (n, {d}) array, got {type(dataset).__name__}") from exc
    if array.ndim == 1 and d == 1:
        array = array.reshape(-1, 1)
    if array.ndim != 2 or array.shape[1] != d:
        raise ValueError(f"`{name}` must have shape (n, {d}), got shape {array.shape}")
    if np.isnan(array).any():
        raise ValueError(f"`{name}` contains NaN")
    if unit and array.size and (array.min() < 0.0 or array.max() > 1.0):
        raise ValueError(
            f"`{name}` values must lie in [0, 1], got values in [{array.min()!r}, {array.max()!r}]"
        )
    return array


def check_epsilon_delta(epsilon: Any, delta: Any) -> "tuple[float | None, float | None]":
    """An optional (ε, δ) claim: both given (ε > 0, δ ∈ (0, 1)) or neither."""
    if (epsilon is None) != (delta is None):
        raise ValueError(f"give both `epsilon` and `delta` or neither; got epsilon={epsilon!r}, "
                         f"delta={delta!r}")
    if epsilon is None:
        return None, None
    return check_finite_positive("epsilon", epsilon), check_open_unit("delta", delta)
