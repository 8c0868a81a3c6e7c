"""What every test statistic is: a fixed, picklable map from mechanism outputs to scores.

The engine certifies events {T ≥ t} of a 1-D statistic T (see :mod:`audit.selection`).  Whatever T
is, a certified bound is valid as long as T was fixed before the samples that certify it were
drawn: T only decides *which* events are counted, never how.  A learned statistic is therefore
fitted on the training phase's own samples (:mod:`audit.statistics.training`) and then frozen.
"""

from __future__ import annotations

from dataclasses import is_dataclass
from typing import Callable, Union

import numpy as np

__all__ = ["Statistic", "KINDS", "statistic_label"]

#: The statistics ``run_audit(statistic=...)`` accepts by name (a callable is accepted too).
KINDS = ("auto", "linear", "categorical", "binned", "classifier")


class Statistic:
    """Base of the fitted statistics: ``T(outputs) -> scores`` plus a description of its events.

    Subclasses are frozen dataclasses (small and picklable: they travel to every worker).
    """

    kind: str = "statistic"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def describe(self, threshold: float) -> str:
        """The event {T ≥ threshold} in the statistic's own terms."""
        return f"T >= {threshold:.9g}"

    def to_dict(self) -> dict:
        return {"kind": self.kind}


def statistic_label(value: Union[str, Callable]) -> str:
    """A stable text for the statistic option (names, or a callable's qualified name)."""
    if isinstance(value, str):
        return value
    if hasattr(value, "label") and not callable(value):
        return str(value.label)
    if is_dataclass(value) and not isinstance(value, type):  # its fields are part of what it computes
        return f"callable:{type(value).__module__}.{value!r}"
    module = getattr(value, "__module__", None) or type(value).__module__
    name = getattr(value, "__qualname__", None) or type(value).__qualname__
    return f"callable:{module}.{name}"
