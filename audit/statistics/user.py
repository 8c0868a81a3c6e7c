"""A user's own statistic: any callable ``outputs (n, k) -> scores (n,)`` (white-box knowledge)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .base import Statistic
from .registry import statistic_label

__all__ = ["UserStatistic"]


@dataclass(frozen=True)
class UserStatistic(Statistic):
    """Wraps the callable and checks what it returns: shape (n,), finite numbers."""

    function: Callable
    kind = "callable"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        try:
            scores = self.function(outputs)
        except Exception as exc:
            raise ValueError(f"the `statistic` callable {self.label} raised {type(exc).__name__}: {exc}") from exc
        scores = np.asarray(scores)
        if scores.shape not in ((outputs.shape[0],), (outputs.shape[0], 1)):
            raise ValueError(f"the `statistic` callable {self.label} must return shape "
                             f"({outputs.shape[0]},), got {scores.shape}")
        if not np.issubdtype(scores.dtype, np.number) or np.issubdtype(scores.dtype, np.complexfloating):
            raise ValueError(f"the `statistic` callable {self.label} returned dtype {scores.dtype}, "
                             "expected real numbers")
        scores = scores.reshape(-1).astype(np.float64)
        if not np.isfinite(scores).all():
            raise ValueError(f"the `statistic` callable {self.label} returned NaN or inf scores")
        return scores

    @property
    def label(self) -> str:
        return statistic_label(self.function).removeprefix("callable:")

    def describe(self, threshold: float) -> str:
        return f"{self.label}(output) >= {threshold:.9g}"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "callable": self.label}
