"""Named test statistics: what ``run_audit(statistic="name")`` can learn, found by name.

A named statistic says how it is learned from the training phase and nothing else: which
summaries a training chunk must keep (moments, atom counts, raw rows; :class:`TrainingPlan`),
whether it needs training draws at all for a given output dimension, and a ``fit`` function from
the two sides' :class:`~audit.statistics.training.TrainingData` to a frozen
:class:`~audit.statistics.base.Statistic`.  The engine, the settings, the scenario files and the
CLI all look names up here, so adding a statistic is one call to :func:`register_statistic` in the
file that defines it.
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass, is_dataclass
from typing import Any, Callable, Optional, Union

from .base import Statistic
from .classifier import Classifier
from .training import TrainingData, TrainingPlan

__all__ = ["FitContext", "NamedStatistic", "register_statistic", "named_statistic", "statistic_names",
           "check_statistic", "statistic_label", "resolve_statistic", "RAW_ROWS"]

#: Raw rows kept per side for statistics that learn from rows (and ``"auto"``'s comparison).
RAW_ROWS = 1 << 18
_RAW_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class FitContext:
    """What a fit function may use besides the training data: the claim, a seed derived from the
    audit's, the pair's label (for messages), the output dimension, the options of a spec
    object such as :class:`~audit.statistics.classifier.Classifier` (None for a bare name), and
    the draws per side the statistic will score (``samples``; None when unknown)."""

    claim: Any
    seed: int
    label: str
    output_dim: int
    spec: Any = None
    samples: Optional[int] = None


#: ``fit(base, neighbour, context) -> (statistic, notes)``; ``base``/``neighbour`` are None when the
#: statistic learns nothing for this output dimension and budget.
FitFunction = Callable[[Optional[TrainingData], Optional[TrainingData], FitContext], tuple[Statistic, dict]]


@dataclass(frozen=True)
class NamedStatistic:
    """A statistic registered under ``name``.

    ``learns(output_dim, draws)`` says whether it is learned from ``draws`` training draws per side
    (``draws=None``: from any number); ``moments(output_dim)``, ``atom_limit``, ``raw_rows`` and
    ``columns`` (per-column and pattern counts) say what a training chunk keeps for it.
    """

    name: str
    summary: str
    fit: FitFunction
    learns: Callable[[int, Optional[int]], bool]
    moments: Callable[[int], bool]
    atom_limit: int = 0
    raw_rows: bool = False
    columns: bool = False

    def training_plan(self, n_train: int, chunk: int, output_dim: int) -> TrainingPlan:
        """What each training chunk keeps: raw rows are capped at :data:`RAW_ROWS` in all (fewer
        for wide outputs), spread evenly over the training chunks."""
        chunks = max(1, math.ceil(n_train / chunk))
        cap = min(RAW_ROWS, max(1024, _RAW_ELEMENTS // output_dim))
        return TrainingPlan(moments=self.moments(output_dim), atom_limit=self.atom_limit,
                            rows_per_chunk=math.ceil(cap / chunks) if self.raw_rows else 0,
                            columns=self.columns)


_REGISTRY: dict[str, NamedStatistic] = {}


def _never(output_dim: int) -> bool:
    return False


def _always(output_dim: int, draws: Optional[int] = None) -> bool:
    return True


def register_statistic(name: str, fit: FitFunction, *, summary: str = "",
                       learns: Callable[[int, Optional[int]], bool] = _always,
                       moments: Callable[[int], bool] = _never, atom_limit: int = 0,
                       raw_rows: bool = False, columns: bool = False) -> NamedStatistic:
    """Register a statistic under ``name`` (a new name, or the same definition again)."""
    if not isinstance(name, str) or not name or name != name.strip():
        raise ValueError(f"`name` must be a non-empty string without surrounding spaces, got {name!r}")
    if not callable(fit):
        raise TypeError(f"`fit` must be callable (base, neighbour, context) -> (statistic, notes), got {fit!r}")
    entry = NamedStatistic(name, summary, fit, learns, moments, int(atom_limit), bool(raw_rows), bool(columns))
    if name in _REGISTRY and _qualified(_REGISTRY[name].fit) != _qualified(fit):
        raise ValueError(f"a statistic named {name!r} is already registered (by "
                         f"{_qualified(_REGISTRY[name].fit)})")
    _REGISTRY[name] = entry
    return entry


def _qualified(function: Callable) -> str:
    """Where a function is defined: registering the same definition again (a module imported
    twice) is allowed, another one under a taken name is not."""
    return f"{getattr(function, '__module__', '?')}.{getattr(function, '__qualname__', repr(function))}"


def statistic_names() -> tuple[str, ...]:
    """The registered names, in registration order."""
    return tuple(_REGISTRY)


def named_statistic(name: str) -> NamedStatistic:
    """The registered statistic ``name`` (``check_statistic`` has already accepted it)."""
    return _REGISTRY[name]


def resolve_statistic(option: Any) -> Optional[NamedStatistic]:
    """The registered statistic an option names: a name, or a spec object such as
    :class:`Classifier` (registered as ``"classifier"``); None for a callable or a fitted statistic."""
    if isinstance(option, Classifier):
        return _REGISTRY["classifier"]
    if isinstance(option, str):
        return _REGISTRY[option]
    return None


def _choices() -> str:
    return ", ".join(map(repr, _REGISTRY))


def check_statistic(value: Any) -> Any:
    """Validate ``run_audit``'s ``statistic`` argument: a registered name, a
    :class:`~audit.statistics.classifier.Classifier` spec, a fitted :class:`Statistic` or a callable."""
    if isinstance(value, (Statistic, Classifier)) or (callable(value) and not isinstance(value, str)):
        return value
    if isinstance(value, str) and value in _REGISTRY:
        return value
    if isinstance(value, str):
        close = difflib.get_close_matches(value, list(_REGISTRY), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"`statistic` must be one of {_choices()} or a callable outputs -> scores, "
                         f"got {value!r}{hint}")
    raise TypeError(f"`statistic` must be one of {_choices()} or a callable outputs -> scores, got {value!r}")


def statistic_label(value: Union[str, Callable]) -> str:
    """A stable text for the statistic option (names, or a callable's qualified name)."""
    if isinstance(value, str):
        return value
    if hasattr(value, "label") and not callable(value):
        return str(value.label)
    if is_dataclass(value) and not isinstance(value, type):  # its fields are part of what it computes
        return f"callable:{type(value).__module__}.{value!r}"
    module = getattr(value, "__module__", None) or type(value).__module__
    name = getattr(value, "__qualname__", None) or type(value).__qualname__
    return f"callable:{module}.{name}"
