"""What a gray-box check reports: findings (each exact and located), coverage notes, errors.

A :class:`Finding` is a deterministic statement about the code on one neighbouring pair, made
under identical randomness on both datasets (the record/replay coupling): the kind of fault, the
first call site it implicates, the measured quantity next to what the claim affords, and the
output columns it implicates (which the certification aims its statistic at).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Optional

from .trace import CallSite

__all__ = ["FindingKind", "Finding", "Certification", "PairCheck", "ReplayError"]


class ReplayError(ValueError):
    """A mechanism that cannot be recorded and replayed (it raises on D′, draws randomness that
    cannot be intercepted, or consumes other draws when replayed on the same input)."""


class FindingKind(str, Enum):
    """The kinds of finding a replay makes."""

    #: the random calls (their sequence, kinds, sites or calibration) differ between D and D′
    CONTROL_FLOW = "control-flow"
    #: the noise reaching an output moves by more than its scale was calibrated for
    SENSITIVITY = "sensitivity"
    #: an output (or a combination of outputs) differs between D and D′ with no noise on it
    UNNOISED_FLOW = "unnoised-flow"


@dataclass(frozen=True)
class Certification:
    """The certified audit aimed at a finding: its verdict and certified lower bounds, or why none."""

    verdict: str
    epsilon_lower_bound: float
    delta_lower_bound: float
    mu_lower_bound: float
    samples: int
    confidence: float
    statistic: str
    statement: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Finding:
    """One exact, located finding on one pair.

    Attributes
    ----------
    kind : FindingKind
    pair : str
        The pair's label.
    site : CallSite
        The first call site implicated (the divergent call; the call whose noise is too small).
    measured, allowed : float
        The quantity measured on the replay and what the claim affords for it (``nan`` where the
        kind has no number, e.g. a call present on one side only).
    quantity : str
        What ``measured``/``allowed`` are (``"‖Δ/σ‖₂ (μ)"``, ``"Σ|Δᵢ|/bᵢ (ε)"``, ``"|Δvalue|"``...).
    columns : tuple[int, ...]
        Output columns it implicates (empty: the whole output).
    message : str
        One sentence with the site and both numbers.
    detail : dict
        JSON-able specifics (both sides' parameters, the weights of the aimed statistic...).
    exact : bool
        True when the measured quantity is the exact privacy of a post-processing of the release,
        so that ``measured > allowed`` falsifies the claim with certainty.
    certification : Certification, optional
        Filled in by :func:`audit.graybox.certify.certify`.
    """

    kind: FindingKind
    pair: str
    site: CallSite
    measured: float
    allowed: float
    quantity: str
    columns: tuple[int, ...]
    message: str
    detail: dict = field(default_factory=dict)
    exact: bool = False
    certification: Optional[Certification] = None

    def to_dict(self) -> dict:
        return {"kind": self.kind.value, "pair": self.pair, "site": self.site.to_dict(), "measured": self.measured,
                "allowed": self.allowed, "quantity": self.quantity, "columns": list(self.columns),
                "message": self.message, "detail": self.detail, "exact": self.exact,
                "certification": None if self.certification is None else self.certification.to_dict()}


@dataclass(frozen=True)
class PairCheck:
    """The gray-box check of one pair: findings, what was not covered, and what it cost.

    Attributes
    ----------
    pair : str
    findings : tuple[Finding, ...]
    notes : tuple[str, ...]
        What the check did not cover (no footprint, nonlinear columns, adaptive calibrations,
        uncoupled OpenDP calls, a coupling ended by a divergent call).
    calls : int
        Random calls in the record.
    opaque_sites : tuple[CallSite, ...]
        Where OS entropy or a Rust sampler was drawn (replayed by value).
    executions : float
        Calls of the mechanism the check made, a call on a fraction of the rows counted as that
        fraction (a loop mechanism pays per row).
    seconds, execution_seconds : float
        The check's wall-clock time, and the record's (one execution, intercepted).
    rows : int
        Output rows asked for per execution.
    detail : dict
        The footprint's summary (moved columns, noise elements, μ or ε measured and allowed).
    """

    pair: str
    findings: tuple[Finding, ...]
    notes: tuple[str, ...]
    calls: int
    opaque_sites: tuple[CallSite, ...]
    executions: float
    seconds: float
    execution_seconds: float
    rows: int
    detail: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"pair": self.pair, "findings": [f.to_dict() for f in self.findings], "notes": list(self.notes),
                "calls": self.calls, "opaque_sites": [s.to_dict() for s in self.opaque_sites],
                "executions": self.executions, "seconds": self.seconds,
                "execution_seconds": self.execution_seconds, "rows": self.rows}

    def summary(self) -> Any:
        return f"{self.pair}: {len(self.findings)} finding(s), {self.calls} random calls, {self.executions} executions"
