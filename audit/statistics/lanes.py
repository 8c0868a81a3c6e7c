"""Several statistics per pair, their events chosen together on the selection draws.

A statistic chosen on training draws can miss what another one sees: a region that one side
reaches with probability 10⁻⁵ holds a handful of training draws, too few to rank candidates by,
yet dozens of selection draws and a hundred certification draws, enough to refute a claim.
:class:`Lanes` therefore carries, beside the chosen (*primary*) statistic, the other fitted
candidates (*alternates*).  The fixed-design audit counts the threshold events of every lane on the
same draws (:mod:`audit.stages`), and each headline quantity takes every lane's best event on the
selection draws: the best one, and every other that the selection draws cannot rank below it, are
certified, each at an equal share of the quantity's level (:func:`audit.selection._contenders`).
Which events, from which lanes, and at which shares are fixed before any certification draw is
counted, and the shares sum to the quantity's level, so the union bound holds as for a single event
(docs/method.md, "The guarantee").  The curve family counts the primary lane only, so its
Bonferroni share per pair is unchanged.

Called as a function, a :class:`Lanes` is its primary statistic: the anytime audit and every other
user of a single score see that one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .base import Statistic

__all__ = ["Lanes"]


@dataclass(frozen=True)
class Lanes(Statistic):
    """The ``primary`` statistic with ``alternates`` whose events compete on the selection draws;
    ``names`` labels every lane, the primary first."""

    primary: Statistic
    alternates: tuple[Statistic, ...]
    names: tuple[str, ...]

    def __post_init__(self) -> None:
        if len(self.names) != 1 + len(self.alternates):
            raise ValueError(f"`names` must label the primary and each alternate, got {self.names!r} "
                             f"for {1 + len(self.alternates)} lanes")

    @property
    def kind(self) -> str:  # type: ignore[override]
        return self.primary.kind

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        return self.primary(outputs)

    def describe(self, threshold: float) -> str:
        return self.primary.describe(threshold)

    def to_dict(self) -> dict:
        """The primary's record, with ``lanes`` (every lane's name, the primary first) and
        ``alternates`` (each alternate's own record, in that order), so that an event of any lane
        can be described and recounted from the report."""
        return dict(self.primary.to_dict(), lanes=list(self.names),
                    alternates=[alternate.to_dict() for alternate in self.alternates])

    def lanes(self) -> tuple[Statistic, ...]:
        return (self.primary,) + self.alternates
