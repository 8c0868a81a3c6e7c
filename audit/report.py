"""Frozen audit results: what was claimed, what is exactly true, what the evidence certifies.

Every lower bound in an :class:`AuditReport` holds simultaneously with the other bounds of the same
report with probability ≥ ``confidence`` (see :mod:`audit.selection` for the accounting).  Exact
values come from the mechanism where it provides them, and are ``None`` otherwise.  The ``runtime``
section (wall time, workers, versions) is the only part that differs between two runs with the same
seed; :meth:`AuditReport.to_dict` with ``include_runtime=False`` is bit-identical across workers,
backends and resumed runs.
"""

from __future__ import annotations

import json
import math
import warnings
from dataclasses import dataclass, field, fields, is_dataclass
from enum import Enum
from typing import Any, Optional, Union

from .slots import TRADEOFF, Slot
from .render import text
from .render.html import audit_section
from .render.plots import PlotsUnavailable, figure_png
from .render.plots import figures as draw_figures

__all__ = ["Verdict", "Violation", "JointViolation", "SequentialViolation", "EpsilonCurve", "TradeoffCurve",
           "PairResult", "AuditReport",
           "jsonable", "dumps", "draw_counts"]


class Verdict(str, Enum):
    """VIOLATED: a certified bound contradicts the claim.  NOT_REFUTED: none does (which is not a
    proof that the claim holds: an audit can only refute)."""

    VIOLATED = "VIOLATED"
    NOT_REFUTED = "NOT_REFUTED"

    def __str__(self) -> str:
        return self.value


def jsonable(value: Any) -> Any:
    """Plain JSON types; non-finite floats become the strings "inf", "-inf", "nan"."""
    if isinstance(value, Enum):
        return value.value
    if hasattr(value, "to_dict") and not isinstance(value, type):
        return jsonable(value.to_dict())
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isfinite(number):
        return number
    return "nan" if math.isnan(number) else ("inf" if number > 0 else "-inf")


def dumps(value: Any) -> str:
    return json.dumps(jsonable(value), indent=2, allow_nan=False)


def draw_counts(phases: dict, pairs: int, looks: Optional[dict] = None,
                certification: Optional[list] = None, quick_look: Optional[list] = None) -> dict:
    """How many outputs the audit drew from the mechanism, per side.

    ``phases`` maps each phase to the draws per pair and side it actually made (a phase cut short
    by early stopping counts what it drew).  Every pair has two sides (its two datasets), each drawn
    ``per_pair_per_side`` times in total, so a side over all ``pairs`` is ``per_side`` draws and the
    whole audit ``2 · per_side`` (the accuracy audit, if any, draws ``accuracy.samples`` more).
    ``certification`` lists each pair's certification draws per side, and ``quick_look`` each
    pair's draws in a quick look that did not stop the audit; where they differ between pairs
    (pairs that looked silent gave theirs to the others) they are listed, and
    ``per_pair_per_side`` shows their mean.  ``looks`` says at which look of how many the audit
    stopped.
    """
    phases = {phase: int(count) for phase, count in phases.items() if count}
    per_pair_lists = {"quick look": [int(c) for c in quick_look or []],
                      "certification": [int(c) for c in certification or []]}
    exact_total = 0
    for phase, counts in per_pair_lists.items():
        if counts:
            phases[phase] = int(round(sum(counts) / len(counts)))
            exact_total += sum(counts)
    per_pair = sum(count for phase, count in phases.items() if not per_pair_lists.get(phase))
    draws = {"per_side": int(pairs) * per_pair + exact_total, "pairs": int(pairs), "per_pair_per_side": phases}
    if len(set(per_pair_lists["certification"])) > 1:
        draws["certification_per_pair"] = per_pair_lists["certification"]
    if len(set(per_pair_lists["quick look"])) > 1:
        draws["quick_look_per_pair"] = per_pair_lists["quick look"]
    if looks is not None:
        draws["looks"] = looks
    return draws


@dataclass(frozen=True)
class Violation:
    """A certified test whose error bounds lie below the claimed trade-off curve."""

    pair: str
    slot: Slot  # the curve slot its event was chosen for (a point of the curves, or the band)
    alpha_hi: float
    beta_hi: float
    claimed_beta: float

    @property
    def message(self) -> str:
        chosen = "a point of the trade-off band" if self.slot == TRADEOFF else f"chosen for {self.slot.label}"
        return (f"pair {self.pair!r}: a test with type-I error ≤ {self.alpha_hi:.4g} and type-II error ≤ "
                f"{self.beta_hi:.4g} ({chosen}), but the claim requires type-II error ≥ "
                f"{self.claimed_beta:.4g} at that type-I error")

    def to_dict(self) -> dict:
        return {"pair": self.pair, "slot": self.slot.key, "alpha_hi": self.alpha_hi,
                "beta_hi": self.beta_hi, "claimed_beta": self.claimed_beta, "message": self.message}


@dataclass(frozen=True)
class JointViolation:
    """A headline event whose joint test certifies its quantity above what the claim allows.

    ``slot`` is the quantity (ε at a δ, δ at an ε or μ); ``bound`` is its certified lower
    bound and ``claimed`` the claim's value; the counts are the event's certification counts.
    """

    pair: str
    slot: Slot
    bound: float
    claimed: float
    count_more_likely: int
    count_other: int
    n: int

    @property
    def message(self) -> str:
        return (f"pair {self.pair!r}: one event ({self.count_more_likely:,} vs {self.count_other:,} of "
                f"{self.n:,} draws) certifies {self.slot.label} ≥ {self.bound:.4g}, but the claim allows "
                f"at most {self.claimed:.4g}")

    def to_dict(self) -> dict:
        return {"pair": self.pair, "slot": self.slot.key, "test": "joint", "bound": self.bound,
                "claimed": self.claimed, "count_more_likely": self.count_more_likely,
                "count_other": self.count_other, "n": self.n, "message": self.message}


@dataclass(frozen=True)
class SequentialViolation:
    """A headline quantity certified above what the claim allows by an anytime audit's confidence
    sequence (:mod:`audit.sequential`): ``bound`` holds at the stopping time, after ``rounds`` rounds
    of ``n`` draws per side of each pair; ``pair`` is the pair whose e-process grew most."""

    pair: str
    slot: Slot
    bound: float
    claimed: float
    rounds: int
    n: int

    @property
    def message(self) -> str:
        return (f"pair {self.pair!r}: bets on {self.rounds} rounds of events ({self.n:,} draws per side) "
                f"certify {self.slot.label} ≥ {self.bound:.4g} at the stopping time, but the claim allows at "
                f"most {self.claimed:.4g}")

    def to_dict(self) -> dict:
        return {"pair": self.pair, "slot": self.slot.key, "test": "anytime", "bound": self.bound,
                "claimed": self.claimed, "rounds": self.rounds, "n": self.n, "message": self.message}


@dataclass(frozen=True)
class EpsilonCurve:
    """Certified ε lower bound at each δ (max over pairs), next to the claim and the truth."""

    deltas: tuple[float, ...]
    lower_bounds: tuple[float, ...]
    claimed: tuple[float, ...]
    exact: Optional[tuple[float, ...]]


@dataclass(frozen=True)
class TradeoffCurve:
    """The empirical trade-off of the learned test on one pair, and what it certifies.

    Point i is one threshold test: (alpha[i], beta[i]) are its empirical errors on the
    certification samples and [alpha_lower, alpha_upper] × [beta_lower, beta_upper] a box holding
    its true errors (simultaneously for all points and all other bounds of the report).  What
    this bounds: the test's true errors are at most (alpha_upper[i], beta_upper[i]), so the pair's
    true trade-off curve satisfies T(alpha_upper[i]) ≤ beta_upper[i], an *upper* bound on T (the
    staircase of :func:`audit.render.plots.certified_staircase`).  No lower bound on T follows from
    samples: a better test may exist that the audit did not find.  ``grid``/``claimed``/``exact``
    are the claimed and exact curves for plotting.
    """

    pair: str
    alpha: tuple[float, ...]
    beta: tuple[float, ...]
    alpha_lower: tuple[float, ...]
    alpha_upper: tuple[float, ...]
    beta_lower: tuple[float, ...]
    beta_upper: tuple[float, ...]
    grid: tuple[float, ...]
    claimed: tuple[float, ...]
    exact: Optional[tuple[float, ...]]


@dataclass(frozen=True)
class PairResult:
    """Certified bounds from one neighbour pair (and its reverse, audited in both directions)."""

    label: str
    also_covers: tuple[str, ...]
    epsilon_lower_bound: float
    delta_lower_bound: float
    mu_lower_bound: float
    tradeoff: TradeoffCurve


@dataclass(frozen=True)
class AuditReport:
    """The result of :func:`audit.run_audit`."""

    mechanism: str
    claim: Any
    scenario: dict
    verdict: Verdict
    violations: tuple[Union[Violation, JointViolation, SequentialViolation], ...]
    reference_delta: float
    reference_epsilon: float
    epsilon_lower_bound: float
    delta_lower_bound: float
    mu_lower_bound: float
    epsilon_curve: EpsilonCurve
    tradeoff: TradeoffCurve
    exact_epsilon: Optional[float]
    exact_delta: Optional[float]
    exact_mu: Optional[float]
    audit_tightness: Optional[float]
    claim_slack: Optional[float]
    mu_tightness: Optional[float]
    worst_pair: str
    pairs: tuple[PairResult, ...]
    evidence: tuple[dict, ...]
    accuracy: Any
    seed: int
    samples: int
    confidence: float
    statistic: dict
    runtime: dict = field(compare=False)
    #: Outputs drawn from the mechanism per side (see :func:`draw_counts`); empty if unknown.
    draws: dict = field(default_factory=dict)
    #: Which event of ``evidence`` attains each headline bound and which one refutes the claim
    #: (:func:`audit.witness.witness_record`); empty in reports written before it was recorded.
    witness: dict = field(default_factory=dict)
    #: The gray-box record/replay of the pairs (:mod:`audit.graybox`), when ``graybox=True``.
    graybox: dict = field(default_factory=dict)

    def to_dict(self, include_runtime: bool = True) -> dict:
        data = {f.name: jsonable(getattr(self, f.name)) for f in fields(self)}
        if not include_runtime:
            data.pop("runtime")
            if isinstance(data.get("accuracy"), dict):
                data["accuracy"].pop("runtime", None)
        return data

    def to_json(self, include_runtime: bool = True) -> str:
        return json.dumps(self.to_dict(include_runtime), indent=2, allow_nan=False)

    def to_html(self, figures: bool = True) -> str:
        """This audit as an HTML fragment (:func:`audit.render.html.audit_section`), with its figures
        as embedded PNGs when ``figures`` and matplotlib is installed."""
        data = self.to_dict()
        drawn = {}
        if figures:
            try:
                drawn = {kind: figure_png(figure) for kind, figure in draw_figures(data).items()}
            except PlotsUnavailable:
                drawn = {}
        return audit_section(data, figures=drawn)

    def _repr_html_(self) -> str:
        """The notebook view: the HTML summary with its figures."""
        return self.to_html()

    def summary(self) -> str:
        """The audit in a few lines (:func:`audit.render.text.summary_text`): claim, verdict,
        certified bounds next to the claimed and exact values, draws and the first violations."""
        return text.summary_text(self.to_dict())


#: Text helpers that lived here before :mod:`audit.render.text` held them.
_MOVED_TO_RENDER_TEXT = frozenset({"TRADEOFF_MEANING", "accuracy_claim", "claim_label", "claim_scope", "draws_text",
                                   "format_number", "statistic_text"})


def __getattr__(name: str) -> Any:
    """``from audit.report import claim_label`` keeps working, with a ``DeprecationWarning``."""
    if name in _MOVED_TO_RENDER_TEXT:
        warnings.warn(f"audit.report.{name} has moved: import it from audit.render.text",
                      DeprecationWarning, stacklevel=2)
        return getattr(text, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
