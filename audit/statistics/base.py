"""What every test statistic is: a fixed, picklable map from mechanism outputs to scores.

The engine certifies events {T ≥ t} of a 1-D statistic T (see :mod:`audit.selection`).  Whatever T
is, a certified bound is valid as long as T was fixed before the samples that certify it were
drawn: T only decides *which* events are counted, never how.  A learned statistic is therefore
fitted on the training phase's own samples (:mod:`audit.statistics.training`) and then frozen.
"""

from __future__ import annotations

from typing import Any, Callable, Union

import numpy as np

__all__ = ["Statistic", "KINDS", "check_statistic", "statistic_label"]

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


def check_statistic(value: Any) -> Any:
    """Validate ``run_audit``'s ``statistic`` argument: a name of :data:`KINDS`, a
    :class:`~audit.statistics.classifier.Classifier` spec, a fitted :class:`Statistic` or a callable."""
    from .classifier import Classifier

    if isinstance(value, (Statistic, Classifier)) or (callable(value) and not isinstance(value, str)):
        return value
    if isinstance(value, str) and value in KINDS:
        return value
    if isinstance(value, str):
        import difflib

        close = difflib.get_close_matches(value, KINDS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"`statistic` must be one of {', '.join(map(repr, KINDS))} or a callable "
                         f"outputs -> scores, got {value!r}{hint}")
    raise TypeError(f"`statistic` must be one of {', '.join(map(repr, KINDS))} or a callable "
                    f"outputs -> scores, got {value!r}")


def statistic_label(value: Union[str, Callable]) -> str:
    """A stable text for the statistic option (names, or a callable's qualified name)."""
    if isinstance(value, str):
        return value
    if hasattr(value, "label") and not callable(value):
        return str(value.label)
    from dataclasses import is_dataclass

    if is_dataclass(value) and not isinstance(value, type):  # its fields are part of what it computes
        return f"callable:{type(value).__module__}.{value!r}"
    module = getattr(value, "__module__", None) or type(value).__module__
    name = getattr(value, "__qualname__", None) or type(value).__qualname__
    return f"callable:{module}.{name}"
