"""Numbers for people: significant digits, ∞ as a symbol, a missing value as a word."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["format_number"]


def format_number(value: Any, digits: int = 4, missing: str = "unknown") -> str:
    """``value`` to ``digits`` significant digits; ∞ and −∞ as symbols, ``None`` as ``missing``
    (0 prints as ``0``)."""
    if value is None:
        return missing
    number = float(value)
    if math.isinf(number):
        return "∞" if number > 0 else "−∞"
    return f"{number:.{digits}g}"
