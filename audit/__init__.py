"""dpaudit's audit engine: certified Monte Carlo evidence about privacy and accuracy claims.

``run_audit`` returns an :class:`AuditReport` whose lower bounds on ε(δ), δ(ε) and μ, trade-off band
and verdict hold simultaneously at the stated confidence; ``run_accuracy_audit`` checks error
quantiles, variance and worst-case error claims.

The names below are imported when first used (PEP 562), so ``import audit`` — and with it every
``dpaudit`` command, ``--help`` included — does not pay for SciPy and the engine until it needs them.
"""

import importlib
from pathlib import Path
from typing import Any

from .lazy import lazy_module
from .moved import install_moved_modules
from .version import __version__

_accuracy = lazy_module("audit.accuracy")
_engine = lazy_module("audit.engine")
_errors = lazy_module("audit.errors")
_intervals = lazy_module("audit.intervals")
_settings = lazy_module("audit.settings")
_spec = lazy_module("audit.spec")
_report = lazy_module("audit.report")
_graybox = lazy_module("audit.graybox.certified")

install_moved_modules()  # audit.output, audit.html, audit.plots: now in audit.render

_FOLDER = Path(__file__).parent
#: Where each public name lives.
_HOMES = {
    "AccuracyReport": _accuracy, "ColumnAccuracy": _accuracy, "run_accuracy_audit": _accuracy,
    "run_audit": _engine,
    "CheckpointError": _errors, "CheckpointWarning": _errors, "MechanismError": _errors,
    "ConfidenceInterval": _intervals, "cp_interval": _intervals, "cp_lower": _intervals, "cp_upper": _intervals,
    "AuditSettings": _settings, "SettingsError": _settings,
    "AuditSpec": _spec, "load_spec": _spec,
    "AuditReport": _report, "EpsilonCurve": _report, "JointViolation": _report, "PairResult": _report,
    "TradeoffCurve": _report, "Verdict": _report, "Violation": _report,
    "graybox_audit": _graybox,
}

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


def __getattr__(name: str) -> Any:
    """A public name, imported from its module at first use (PEP 562)."""
    home = _HOMES.get(name)
    if home is not None:
        value = getattr(home, name)
    elif (_FOLDER / f"{name}.py").is_file() or (_FOLDER / name / "__init__.py").is_file():
        value = importlib.import_module(f"{__name__}.{name}")  # a submodule, as `import audit` gave before
    else:
        raise AttributeError(f"module 'audit' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
