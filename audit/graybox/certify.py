"""From "where" to "how much, certified": the engine's audit aimed at a finding.

Each finding names a pair and the output columns it implicates.  The certified audit
(:func:`audit.run_audit`) then runs on that pair alone with a statistic fixed by the finding
before any draw (so no selection is paid for):

- a Gaussian sensitivity finding: the likelihood ratio of the implicated columns,
  s(y) = (Σ⁺Δ)ᵀ y_S (Neyman–Pearson for N(f, Σ) against N(f + Δ, Σ));
- a Laplace sensitivity finding: Σ_j (|y_j − f_j| − |y_j − f_j − Δ_j|)/b_j with f_j read from the
  replay (the exact log-likelihood ratio of the product of Laplace coordinates);
- an unnoised-flow finding: the implicated column (or combination of columns) itself;
- a control-flow finding: the engine's ``"auto"`` statistic (the finding implicates no column).

The result is the engine's verdict with its certified ε, δ and μ lower bounds, or the plain
statement that no end-to-end bound was certified (post-processing may hide the finding from the
release, or the draws were too few).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from .findings import Certification, Finding, FindingKind

__all__ = ["AimedLinear", "AimedLaplace", "aimed_finding", "aimed_statistic", "certification_of"]


@dataclass(frozen=True)
class AimedLinear:
    """s(y) = Σ_j w_j y_{c_j}: a fixed linear score of the implicated columns."""

    columns: tuple[int, ...]
    weights: tuple[float, ...]

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        outputs = np.asarray(outputs, dtype=np.float64)
        return outputs[:, list(self.columns)] @ np.asarray(self.weights)


@dataclass(frozen=True)
class AimedLaplace:
    """s(y) = Σ_j (|y_j − f_j| − |y_j − f_j − Δ_j|)/b_j: the Laplace log-likelihood ratio."""

    columns: tuple[int, ...]
    centres: tuple[float, ...]
    shifts: tuple[float, ...]
    scales: tuple[float, ...]

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        y = np.asarray(outputs, dtype=np.float64)[:, list(self.columns)]
        f, d, b = (np.asarray(v) for v in (self.centres, self.shifts, self.scales))
        return ((np.abs(y - f) - np.abs(y - f - d)) / b).sum(axis=1)


def aimed_finding(findings) -> Optional[Finding]:
    """The finding an audit is aimed at: one that implicates output columns (so it fixes the
    statistic), an exact one (a certain falsification of the claim) first; None when no finding
    implicates a column (a control-flow finding: the audit over every pair, the finding's among
    them, is the stronger test). ``dpaudit run --graybox`` and ``dpaudit sweep --graybox`` both
    aim by this rule."""
    for wanted in (lambda f: f.exact and f.columns, lambda f: f.columns):
        chosen = [f for f in findings if wanted(f)]
        if chosen:
            return chosen[0]
    return None


def aimed_statistic(finding: Finding) -> Any:
    """The statistic fixed by ``finding`` (``"auto"`` when it implicates no column)."""
    detail = finding.detail
    if finding.kind is FindingKind.SENSITIVITY and detail.get("family") == "gaussian":
        return AimedLinear(finding.columns, tuple(float(w) for w in detail["direction"]))
    if finding.kind is FindingKind.SENSITIVITY and detail.get("family") == "laplace":
        return AimedLaplace(finding.columns, tuple(detail["centres"]), tuple(detail["delta"]), tuple(detail["scales"]))
    if finding.kind is FindingKind.UNNOISED_FLOW and finding.columns:
        weights = detail.get("weights") or [1.0 if detail.get("neighbour", 1.0) >= detail.get("base", 0.0) else -1.0]
        return AimedLinear(finding.columns, tuple(float(w) for w in weights))
    return "auto"


def certification_of(report: Any, samples: Any, confidence: float, statistic: Any) -> Certification:
    """The :class:`Certification` an engine report gives a finding: its bounds, or why none."""
    name = statistic if isinstance(statistic, str) else type(statistic).__name__
    if str(report.verdict) == "VIOLATED":
        parts = [f"ε ≥ {report.epsilon_lower_bound:.4g} at δ = {report.reference_delta:g}"
                 if report.epsilon_lower_bound > 0 else None,
                 f"δ ≥ {report.delta_lower_bound:.3g} at ε = {report.reference_epsilon:g}"
                 if report.delta_lower_bound > 0 else None,
                 f"μ ≥ {report.mu_lower_bound:.4g}" if report.mu_lower_bound > 0 else None]
        statement = (f"VIOLATED, certified at {confidence:.4g}: " + ", ".join(p for p in parts if p)
                     + f" ({samples} draws per side, statistic {name})")
    else:
        statement = (f"no end-to-end bound certified with {samples} draws per side (statistic {name}): "
                     "post-processing may hide the finding from the release, or the draws were too few")
    return Certification(str(report.verdict), float(report.epsilon_lower_bound), float(report.delta_lower_bound),
                         float(report.mu_lower_bound), int(samples or 0), float(confidence), name, statement)
