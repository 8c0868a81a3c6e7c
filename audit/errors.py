"""Errors raised by the audit engine."""

from __future__ import annotations

__all__ = ["MechanismError", "CheckpointError", "ReproducibilityWarning", "CheckpointWarning"]


class MechanismError(RuntimeError):
    """The audited mechanism raised, or returned output that breaks the mechanism protocol.

    The message names the mechanism, the neighbour pair, the side (base or neighbour) and the
    phase, so that a failure deep inside a parallel run is still actionable.
    """


class CheckpointError(ValueError):
    """A checkpoint file is unreadable or belongs to a different audit."""


class ReproducibilityWarning(UserWarning):
    """The mechanism gave different outputs for two generators seeded alike: it draws from
    somewhere other than its ``rng``, so the same seed will not give the same report."""


class CheckpointWarning(UserWarning):
    """A checkpoint was resumed with a setting taken from it (``seed=None`` adopts its seed)."""
