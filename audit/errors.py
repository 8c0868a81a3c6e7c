"""Errors raised by the audit engine."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

__all__ = ["MechanismError", "CheckpointError", "ReproducibilityWarning", "CheckpointWarning"]


class MechanismError(RuntimeError):
    """The audited mechanism raised, or returned output that breaks the mechanism protocol.

    The message names the mechanism, the neighbour pair, the side (base or neighbour) and the
    phase, so that a failure deep inside a parallel run is still actionable.
    """


class CheckpointError(ValueError):
    """A checkpoint file is unreadable, belongs to a different audit, or cannot be told apart
    from another audit's.

    ``differs`` maps each part of the checkpoint's key that differs from the audit's
    (:data:`audit.checkpoint.PART_NAMES`) to its (saved, current) texts; it is empty when the file
    is unreadable, predates keys with parts, or cannot be fingerprinted in full.  ``unverified``
    lists what of the mechanism or statistic could not be fingerprinted when that is the reason
    (the keys match, but an edit to those parts would go unnoticed); ``unreadable`` is true when
    the file is not a readable checkpoint.
    """

    def __init__(self, message: str, differs: Optional[Mapping[str, tuple]] = None, *,
                 unverified: Sequence[str] = (), unreadable: bool = False) -> None:
        super().__init__(message)
        self.differs = dict(differs or {})
        self.unverified = tuple(unverified)
        self.unreadable = bool(unreadable)


class ReproducibilityWarning(UserWarning):
    """The mechanism gave different outputs for two generators seeded alike: it draws from
    somewhere other than its ``rng``, so the same seed will not give the same report."""


class CheckpointWarning(UserWarning):
    """A checkpoint was resumed with a setting taken from it (``seed=None`` adopts its seed)."""
