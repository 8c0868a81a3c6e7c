"""dpaudit's audit engine: certified Monte Carlo evidence about privacy and accuracy claims.

``run_audit`` returns an :class:`AuditReport` whose lower bounds on ε(δ), δ(ε) and μ, trade-off band
and verdict hold simultaneously at the stated confidence; ``run_accuracy_audit`` checks error
quantiles, variance and worst-case error claims.
"""

from .accuracy import AccuracyReport, ColumnAccuracy, run_accuracy_audit
from .engine import run_audit
from .graybox.certified import graybox_audit
from .errors import CheckpointError, CheckpointWarning, MechanismError
from .intervals import ConfidenceInterval, cp_interval, cp_lower, cp_upper
from .settings import AuditSettings, SettingsError
from .spec import AuditSpec, load_spec
from .moved import install_moved_modules
from .report import AuditReport, EpsilonCurve, JointViolation, PairResult, TradeoffCurve, Verdict, Violation
from .version import __version__

install_moved_modules()  # audit.output, audit.html, audit.plots: now in audit.render

__all__ = [
    "AccuracyReport",
    "AuditSettings",
    "AuditSpec",
    "SettingsError",
    "load_spec",
    "AuditReport",
    "CheckpointError",
    "CheckpointWarning",
    "ColumnAccuracy",
    "ConfidenceInterval",
    "EpsilonCurve",
    "MechanismError",
    "PairResult",
    "TradeoffCurve",
    "Verdict",
    "Violation",
    "JointViolation",
    "cp_interval",
    "cp_lower",
    "cp_upper",
    "graybox_audit",
    "run_accuracy_audit",
    "run_audit",
    "__version__",
]
