"""Every option of an audit in one frozen object: its defaults, its validation, its text forms.

:func:`audit.run_audit`, the scenario-file loader (:mod:`audit.spec`), the command line and the
pytest plugin all build an :class:`AuditSettings` here, so each value is checked in one place with
one message per mistake (``ValueError: `confidence` must be in (0, 1), got 1.5``), whichever door
it came through: a keyword argument, a scenario file's ``[audit]`` table, a command-line option or a
pytest option.  Text forms (command line, pytest options) are parsed by :meth:`AuditSettings.parse`,
which accepts exact integers written as ``100000``, ``100_000``, ``100,000``, ``1e5`` or ``2.5e6``.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import numbers
import os
import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Mapping, Optional

from mechanisms.validation import check_open_unit, check_seed

from .parallelism import DASK_OPTIONS, check_backend, check_n_jobs
from .statistics import check_statistic, statistic_label

__all__ = ["AuditSettings", "SettingsError", "FILE_KEYS", "ANYTIME_SAMPLES", "exact_integer", "option_type"]

#: The settings a scenario file's ``[audit]`` table may set.  The others say how *this machine*
#: runs an audit (workers, backend, progress bar, checkpoint file), not what the audit is.
FILE_KEYS = ("samples", "confidence", "seed", "statistic", "early_stopping", "accuracy", "anytime", "graybox")

#: The maximum draws per pair and side of an anytime audit given ``samples=None``.
ANYTIME_SAMPLES = 2_000_000

_GROUPED_DIGITS = re.compile(r"[+-]?\d{1,3}(,\d{3})+")
_INTEGER_FORMS = "e.g. 100000, 100_000, 100,000 or 1e5"


class SettingsError(ValueError):
    """One or more invalid settings; ``errors`` holds one message per mistake, each starting with
    the setting's name in backticks (``\\`samples\\` must be ...``)."""

    def __init__(self, errors: list[str]):
        super().__init__("; ".join(errors))
        self.errors = list(errors)


def exact_integer(text: str) -> int:
    """An exact integer written as ``100000``, ``100_000``, ``100,000``, ``1e5`` or ``2.5e6``.

    Scientific notation is accepted only when it denotes an integer exactly (``1.5e0`` is not
    one); the value is parsed with :class:`fractions.Fraction`, so nothing is rounded.
    """
    cleaned = text.strip().replace("_", "")
    if _GROUPED_DIGITS.fullmatch(cleaned):  # thousands separators, in groups of three only
        cleaned = cleaned.replace(",", "")
    try:
        value = Fraction(cleaned)
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"not an integer: {text!r}") from None
    if value.denominator != 1 or "/" in cleaned:
        raise ValueError(f"not an integer: {text!r}")
    return int(value)


def _count(value: Any) -> Optional[int]:
    """``samples``: an integer ≥ 1 (a float that is exactly an integer, TOML's ``1e6``, counts), or
    None: an anytime audit with at most :data:`ANYTIME_SAMPLES` draws."""
    if value is None:
        return None
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral)):
        if float(value).is_integer():
            value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`samples` must be a positive integer ({_INTEGER_FORMS}), got {value!r}")
    if value < 1:
        raise ValueError(f"`samples` must be a positive integer ({_INTEGER_FORMS}), got {value!r}")
    return int(value)


def _flag(name: str):
    def check(value: Any) -> bool:
        if not isinstance(value, bool):
            raise TypeError(f"`{name}` must be True or False, got {value!r}")
        return value
    return check


def _checkpoint(value: Any) -> Optional[Path]:
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)) or not str(value):
        raise TypeError(f"`checkpoint` must be a file path or None, got {value!r}")
    return Path(value)


def _backend_options(value: Any) -> dict:
    if not isinstance(value, Mapping):
        raise TypeError(f"`backend_options` must be a mapping of backend options, got {value!r}")
    return dict(value)


#: How each field is checked (and normalised); every check names the field and echoes the value.
_CHECKS = {
    "samples": _count,
    "confidence": lambda value: check_open_unit("confidence", value),
    "seed": check_seed,
    "statistic": check_statistic,
    "early_stopping": _flag("early_stopping"),
    "accuracy": _flag("accuracy"),
    "anytime": _flag("anytime"),
    "n_jobs": check_n_jobs,
    "backend": check_backend,
    "backend_options": _backend_options,
    "checkpoint": _checkpoint,
    "assume_unchanged": _flag("assume_unchanged"),
    "progress": _flag("progress"),
    "graybox": _flag("graybox"),
}


@dataclass(frozen=True)
class AuditSettings:
    """How to audit: every option of :func:`audit.run_audit` with its default.

    Attributes
    ----------
    samples : int or None
        Draws per pair and per side in total, over all phases (:mod:`audit.allocation`); with
        ``anytime``, the most the audit may draw.  None means ``anytime=True`` with at most
        :data:`ANYTIME_SAMPLES`.
    confidence : float
        Every bound of the report holds simultaneously with at least this probability, and a
        claim that holds is reported VIOLATED with probability at most 1 − ``confidence``.
    seed : int or None
        The same seed gives the same report for any ``n_jobs``/``backend``; None draws fresh
        entropy (recorded in the report).
    statistic : str, Classifier or callable
        The test statistic: a registered name (:func:`audit.statistics.statistic_names`), a
        :class:`~audit.statistics.Classifier` spec, or a callable ``outputs -> scores``.
    early_stopping : bool
        Look at the evidence three times and stop at the first look that certifies a violation.
    accuracy : bool
        Also audit the accuracy claims of mechanisms that declare them.
    anytime : bool
        Draw in growing rounds and stop as soon as a violation is certified, the budget
        ``samples`` is spent or more draws are unlikely to refute the claim; every bound is valid at
        the stopping time (:mod:`audit.anytime`).  ``early_stopping`` does not apply.
    n_jobs, backend, backend_options
        Parallelism: workers (-1 = all cores), any joblib backend or ``"dask"``, and the options of
        ``backend="dask"`` (``scheduler``, ``window``, ``share_arguments``, ``dashboard_address``).
    checkpoint : path or None
        Save progress atomically after each batch; rerunning the same audit resumes.  A checkpoint
        is resumed only by the audit that wrote it: the same seed, settings, pairs, claim, and a
        mechanism (and callable statistic) with the same code, closure, defaults, globals and
        parameters (:mod:`audit.fingerprint`); anything else is refused, naming what differs.
        With ``seed=None`` a checkpoint's seed is adopted with a ``CheckpointWarning``.
    assume_unchanged : bool
        Resume a checkpoint even though part of the mechanism or statistic cannot be fingerprinted
        (an object that can be neither pickled nor read; the refusal lists it): you vouch that it
        has not changed since the checkpoint was written.
    progress : bool
        Show a progress bar.
    graybox : bool
        First record every random call on D and replay it on D′ for each pair
        (:mod:`audit.graybox`); a finding names its call site, and the audit is then aimed at the
        pair and output columns it implicates (docs/graybox.md).
    """

    samples: Optional[int] = 2_000_000
    confidence: float = 0.95
    seed: Optional[int] = None
    statistic: Any = "auto"
    early_stopping: bool = True
    accuracy: bool = True
    anytime: bool = False
    n_jobs: int = 1
    backend: str = "loky"
    backend_options: Mapping[str, Any] = field(default_factory=dict)
    checkpoint: Optional[Path] = None
    assume_unchanged: bool = False
    progress: bool = True
    graybox: bool = False

    def __post_init__(self) -> None:
        errors = []
        for name, check in _CHECKS.items():
            try:
                object.__setattr__(self, name, check(getattr(self, name)))
            except (TypeError, ValueError) as exc:
                errors.append(exc)
        if not errors:
            try:
                _check_backend_options(self.backend, self.backend_options)
            except TypeError as exc:
                errors.append(exc)
        if len(errors) == 1:
            raise errors[0]
        if errors:
            raise SettingsError([str(e) for e in errors])

    @property
    def sequential(self) -> bool:
        """Whether the audit is an anytime one (``anytime``, or ``samples=None``)."""
        return self.anytime or self.samples is None

    @property
    def budget(self) -> int:
        """``samples``, or :data:`ANYTIME_SAMPLES` for ``samples=None``."""
        return ANYTIME_SAMPLES if self.samples is None else self.samples

    # -- building --------------------------------------------------------------------------------
    def replace(self, **changes: Any) -> "AuditSettings":
        """A copy with ``changes`` (validated); ``None`` values are ignored except for ``seed`` and
        ``checkpoint``, where None is a value."""
        changes = {k: v for k, v in changes.items() if v is not None or k in ("seed", "checkpoint")}
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_options(cls, options: Mapping[str, Any], *, base: Optional["AuditSettings"] = None,
                     where: str = "run_audit") -> "AuditSettings":
        """``base`` (default: the defaults) with the keyword ``options`` of ``where`` applied: the
        fields of this class, plus the Dask options (``scheduler`` ...), which go to
        ``backend_options``.  An unknown keyword is refused naming the closest field."""
        base = cls() if base is None else base
        fields = {f.name for f in dataclasses.fields(cls)}
        changes, backend_options = {}, dict(base.backend_options)
        for name, value in options.items():
            if name in fields:
                changes[name] = value
            elif name in DASK_OPTIONS:
                backend_options[name] = value
            else:
                close = difflib.get_close_matches(name, sorted(fields | set(DASK_OPTIONS)), n=1)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                raise TypeError(f"{where}() got an unknown keyword argument `{name}`: it is not a parameter "
                                f"of {where}{hint} (parameters: {', '.join(sorted(fields))}; options of "
                                f"backend='dask': {', '.join(DASK_OPTIONS)})")
        if backend_options != dict(base.backend_options):
            changes["backend_options"] = backend_options
        return dataclasses.replace(base, **changes)

    @classmethod
    def from_table(cls, table: Mapping[str, Any], *, base: Optional["AuditSettings"] = None) -> "AuditSettings":
        """``base`` with a scenario file's ``[audit]`` table applied (keys :data:`FILE_KEYS`).

        Raises :class:`SettingsError` listing every mistake (an unknown key, a wrong value), each
        message starting with the key in backticks, so the loader can prefix the file and table.
        """
        base = cls() if base is None else base
        errors, changes = [], {}
        for name, value in table.items():
            if name not in FILE_KEYS:
                close = difflib.get_close_matches(name, FILE_KEYS, n=1)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                errors.append(f"`{name}` is not a known key of [audit] (known: {', '.join(FILE_KEYS)}){hint}, "
                              f"got {value!r}")
                continue
            try:
                changes[name] = _CHECKS[name](value)
            except (TypeError, ValueError) as exc:
                errors.append(str(exc))
        if errors:
            raise SettingsError(errors)
        return dataclasses.replace(base, **changes)

    @staticmethod
    def parse(name: str, text: str) -> Any:
        """The value of setting ``name`` written as text (command line, pytest option), validated.

        Integers take every exact form of :func:`exact_integer`; booleans ``true``/``false``.
        """
        if name not in _CHECKS:
            raise ValueError(f"`{name}` is not an audit setting (known: {', '.join(_CHECKS)})")
        value: Any = text
        if name in ("samples", "seed", "n_jobs"):
            try:
                value = exact_integer(text)
            except ValueError:
                pass  # the check below names the setting and echoes the text
        elif name == "confidence":
            try:
                value = float(text)
            except ValueError:
                pass
        elif name in ("early_stopping", "accuracy", "anytime", "assume_unchanged", "progress", "graybox") and text.strip().lower() in ("true", "false"):
            value = text.strip().lower() == "true"
        try:
            return _CHECKS[name](value)
        except (TypeError, ValueError) as exc:
            message = str(exc)
            if value is not text:  # echo what the user wrote, not our parse of it
                message = message.rsplit(", got ", 1)[0] + f", got {text!r}"
            raise ValueError(message) from None

    # -- reading ---------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """JSON-able: the statistic as its label, the checkpoint as a string."""
        return {"samples": self.samples, "confidence": self.confidence, "seed": self.seed,
                "statistic": statistic_label(self.statistic), "early_stopping": self.early_stopping,
                "accuracy": self.accuracy, "anytime": self.anytime, "n_jobs": self.n_jobs, "backend": self.backend,
                "backend_options": {k: str(v) for k, v in self.backend_options.items()},
                "checkpoint": None if self.checkpoint is None else str(self.checkpoint),
                "assume_unchanged": self.assume_unchanged, "progress": self.progress,
                **({"graybox": True} if self.graybox else {})}


def _check_backend_options(backend: str, options: Mapping[str, Any]) -> None:
    for name in options:
        if name not in DASK_OPTIONS:
            raise TypeError(f"`backend_options` has an unknown option `{name}` (options of backend='dask': "
                            f"{', '.join(DASK_OPTIONS)})")
        if backend != "dask":
            raise TypeError(f"`{name}` is an option of backend='dask', not of backend={backend!r}")


def option_type(name: str) -> Callable[[str], Any]:
    """An ``argparse`` type for the audit setting ``name``: its text form
    (:meth:`AuditSettings.parse`), so the command line and the pytest plugin accept exactly what
    scenario files and ``run_audit`` accept, with the same message (without the leading name,
    which argparse already gives: ``argument --samples: must be a positive integer ...``)."""

    def parse(text: str) -> Any:
        try:
            return AuditSettings.parse(name, text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc).removeprefix(f"`{name}` ")) from None

    parse.__name__ = name  # argparse names the type in some of its messages
    return parse
