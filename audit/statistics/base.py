"""What every test statistic is: a fixed, picklable map from mechanism outputs to scores.

The engine certifies events {T ≥ t} of a 1-D statistic T (see :mod:`audit.selection`).  Whatever T
is, a certified bound is valid as long as T was fixed before the samples that certify it were
drawn: T only decides *which* events are counted, never how.  A learned statistic is therefore
fitted on the training phase's own samples (:mod:`audit.statistics.training`) and then frozen.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Statistic", "ordered"]


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

    def lanes(self) -> tuple["Statistic", ...]:
        """The statistics whose threshold events the fixed-design audit counts, this one first
        (:class:`~audit.statistics.lanes.Lanes`): just itself unless it carries alternates."""
        return (self,)


def ordered(values: np.ndarray) -> np.ndarray:
    """Scores with NaN mapped to −inf and every other value kept: a fixed monotone map (NaN lowest,
    with −inf) under which a statistic of huge outputs, whose scores may overflow, still ranks every
    output, and which a histogram bins like any value (±inf in the extreme bins)."""
    values = np.asarray(values, dtype=np.float64)
    return np.where(np.isnan(values), -np.inf, values)
