"""What a library's catalogue is made of: entries, their grid points (cases), and coverage.

A *library* (:class:`Library`) is a DP library whose public API the sweep audits.  Its catalogue
is a tuple of :class:`Entry`: one public mechanism, query, model, accountant, measurement or
combinator, with the privacy the library states for it (quoted, with its source), the neighbour
relation it promises, and a parameter grid.  Each grid point becomes a :class:`Case`, one row of
a sweep: a mechanism in the protocol of :mod:`mechanisms.base`, the claim, the neighbouring pairs
(a :class:`~scenarios.Scenario` or a :class:`~scenarios.SearchSpec`) and the per-call ``release``
function written with the library's own API, which a reproduction script shows as it is.

Coverage is measured, not assumed: :meth:`Library.coverage` compares the library's enumerated
public API with the names the entries cover and the names the library module excludes, each with
its reason (not DP, not auditable as a black box, not yet written).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable, Mapping, Optional

from mechanisms.adapters.released import HEADER
from mechanisms.claims import Claim, Relation, as_relation
from mechanisms.validation import check_probability

__all__ = ["Case", "Entry", "Library", "Coverage", "KINDS", "COSTS", "REASONS", "NotInRelease", "missing_api",
           "require_library", "point_label", "release_numbers"]

#: What an entry is.
KINDS = ("mechanism", "query", "model", "accountant", "measurement", "combinator")
#: What one release costs, which sets its share of a sweep's budget: a vectorized batch path, one
#: call of a noise primitive (tens of microseconds), one query (about a millisecond), one model
#: fit (milliseconds to tens of milliseconds), or one fit of a synthetic-data pipeline with its
#: inference (a second or more: dpmm's MST fits in about 3 s of CPU on eight records).
COSTS = ("batch", "call", "query", "fit", "pipeline")
#: Why a public name is not in the catalogue.
REASONS = ("not DP", "not auditable as a black box", "not yet written", "covered through another entry")


class NotInRelease(Exception):
    """Raised by an entry's ``build`` (or found by :func:`missing_api`) when the installed release
    lacks the name or the parameter a grid point needs: the sweep reports that row as "not in
    this release", which is neither a verdict nor an error, and does not plan it."""


def point_label(point: Mapping[str, Any], *, skip: tuple[str, ...] = (), empty: str = "") -> str:
    """A grid point's label, ``"k=v, k=v"`` with string quotes dropped (``epsilon=1.0, kind=banded``),
    leaving out the keys in ``skip``; ``empty`` when nothing is left."""
    return ", ".join(f"{k}={v!r}".replace("'", "") for k, v in point.items() if k not in skip) or empty


def require_library(module: str, *, catalogue: str, install: str) -> ModuleType:
    """Import ``module`` for a library's catalogue, or raise one ``ImportError`` saying how to install it.

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"dpmm.pipelines"``.
    catalogue : str
        The library's name in ``dpaudit sweep NAME``, e.g. ``"dpmm"``.
    install : str
        The command that installs what is missing, e.g. ``"pip install dpmm"``.

    Raises
    ------
    ImportError
        ``the dpmm catalogue needs dpmm: pip install dpmm (importing 'dpmm.pipelines' failed: ...)``,
        with the original error chained (:func:`scenarios.libraries.registry.library` tells a
        missing library from an installed release that does not import here).
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"the {catalogue} catalogue needs {module.split('.')[0]}: {install} "
                          f"(importing {module!r} failed: {exc})") from exc


def _resolves(name: str) -> Optional[bool]:
    """Whether the dotted ``name`` exists in the installed packages; None when its top-level
    package does not import (then the name is a label, not a path, and nothing is decided)."""
    parts = name.split(".")
    try:
        target: Any = importlib.import_module(parts[0])
    except Exception:  # noqa: BLE001 - a label, or a package that does not import: undecided
        return None
    for index in range(1, len(parts)):
        try:
            target = getattr(target, parts[index])
            continue
        except AttributeError:
            pass
        module = ".".join(parts[: index + 1])
        try:
            target = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name == module:  # not a module either: the name is absent
                return False
            return None  # the module is there but needs one that is not (snsynth 1.0.5 on a new scikit-learn)
        except Exception:  # noqa: BLE001 - the module is there but does not import here: undecided
            return None
    return True


def release_numbers(version: str) -> tuple[int, ...]:
    """The numeric release segment of a version string, padded with zeros to three numbers, for a
    catalogue to compare the installed release with the one that fixed an issue or changed an API:
    "1.5" → (1, 5, 0), "0.14.2" → (0, 14, 2).  A pre-, development, post or local release counts as
    the release it is numbered for ("0.15.0rc1", "0.14.2.dev3", "1.5.3.post1", "0.14.2+local");
    () when the string does not start with a number.  (The sweep's ordering of releases on an index,
    :func:`audit.sweep.releases.version_key`, orders pre-releases before their release instead.)"""
    match = re.match(r"v?(\d+(?:\.\d+)*)", version.strip())
    if match is None:
        return ()
    numbers = tuple(int(part) for part in match.group(1).split("."))
    return numbers + (0,) * max(0, 3 - len(numbers))


def missing_api(names: tuple[str, ...]) -> Optional[str]:
    """Why an entry covering the public ``names`` is not in the installed release, or None.

    An entry is absent when none of its names resolves while their packages import (a release
    older than the name, or one that removed it).  Names whose top-level package does not import
    are labels and decide nothing.
    """
    found = [_resolves(name) for name in names]
    if any(f is True for f in found) or not any(f is False for f in found):
        return None
    return "not in this release: " + ", ".join(n for n, f in zip(names, found) if f is False) + " not found"


def _check_text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"`{name}` must be a non-empty string, got {value!r}")
    return value


@dataclass(frozen=True, eq=False)
class Case:
    """One grid point of one entry: a row of a sweep.

    Attributes
    ----------
    entry : str
        The entry's name, e.g. ``"models.LinearRegression"``.
    point : str
        The grid point's label, e.g. ``"ε=1, bounds_X=(0, 100)"``; unique within the entry.
    params : mapping
        The grid point's parameters (JSON types), for the report.
    mechanism : callable
        ``mechanism(dataset, size, rng) -> (size, k)``, usually a
        :class:`~mechanisms.adapters.released.LibraryRelease`.
    claim : Claim
        What the library claims for this grid point.
    scenario : Scenario or SearchSpec
        The neighbouring inputs (the neighbour families, or a search over a domain).
    release : callable
        ``release(data, random_state, **release_params)``: one release with the library's API,
        the function a reproduction script carries.
    release_params : mapping
        Keyword arguments of ``release`` (Python literals, so a script can write them out).
    cost : str
        One of :data:`COSTS`.
    statistic : str or object
        The audit's statistic option (``"auto"`` unless the entry knows better).
    known : str
        A documented issue this case exercises (``"IBM/differential-privacy-library#105"``), or "".
    layout : tuple of (name, capacity)
        The blocks of the vector ``release`` returns, in order: ``(name, None)`` for one raw value,
        ``(name, c)`` for a block :func:`mechanisms.adapters.released.encode` wrote with capacity c.
        Used to name a coordinate in reports and scripts; empty if unknown.
    graybox : bool
        Whether the row is a gray-box row: its pairs are recorded on D and replayed on D′ before
        its audit (:mod:`audit.sweep.graybox`), and the audit draws what a perfectly separating
        event needs rather than the budget (for a release too costly for a black-box row: a model
        fit of seconds).
    min_samples : int
        Draws per pair and side the row takes at least (0: its budget's).  For a row whose known
        violation rests on an event too rare for its cost's budget (a grain of the released double
        seen on one release in twenty), so that the built-in sweep refutes it by default; the
        number is set from a measurement across sweep seeds, and only changes how strong the
        evidence can be, not its validity, provided those seeds' draws are not the published row's
        (another sweep seed, or a library whose noise no seed reaches); otherwise the choice must be
        paid for (docs/libraries/pipeline-dp.md shows how).
    event_rate : float
        For a gray-box row: the probability, on the side where it occurs, of the event the row
        expects to separate its pair when the other side never shows it (1: a perfect event).  The
        row draws what such an event needs to refute the claim
        (:func:`audit.sweep.plan.refutable_samples`).  A conservative value measured on draws that
        are not the row's (a new category that a synthetic table shows on a third of the fits).
        Like ``min_samples``, it changes how strong the evidence can be, not its validity.
    """

    entry: str
    point: str
    params: Mapping[str, Any]
    mechanism: Any
    claim: Claim
    scenario: Any
    release: Callable[..., Any]
    release_params: Mapping[str, Any]
    cost: str
    statistic: Any = "auto"
    known: str = ""
    layout: tuple = ()
    graybox: bool = False
    min_samples: int = 0
    event_rate: float = 1.0

    def __post_init__(self) -> None:
        _check_text("entry", self.entry)
        _check_text("point", self.point)
        if self.cost not in COSTS:
            raise ValueError(f"`cost` must be one of {COSTS}, got {self.cost!r}")
        if isinstance(self.min_samples, bool) or not isinstance(self.min_samples, int) or self.min_samples < 0:
            raise ValueError(f"{self.entry} [{self.point}]: `min_samples` must be an integer >= 0, "
                             f"got {self.min_samples!r}")
        try:
            object.__setattr__(self, "event_rate", check_probability("event_rate", self.event_rate))
        except ValueError as exc:
            raise ValueError(f"{self.entry} [{self.point}]: {exc}") from None
        if not isinstance(self.claim, Claim):
            raise TypeError(f"`claim` must be a mechanisms.claims.Claim, got {self.claim!r}")
        if not callable(self.release) or not callable(self.mechanism):
            raise TypeError(f"{self.entry} [{self.point}]: `release` and `mechanism` must be callable")
        object.__setattr__(self, "params", dict(self.params))
        object.__setattr__(self, "release_params", dict(self.release_params))

    @property
    def key(self) -> str:
        """``"entry [point]"``: the row's name in a sweep."""
        return f"{self.entry} [{self.point}]"

    def coordinate(self, index: int) -> str:
        """What coordinate ``index`` of the release vector is, from :attr:`layout`
        (``"coef_[2]"``, ``"size of classes_"``); the coordinate after the release vector is
        ``"raised"`` (1 when the call raised)."""
        position = 0
        for name, capacity in self.layout:
            width = 1 if capacity is None else HEADER + capacity
            if index < position + width:
                offset = index - position
                if capacity is None:
                    return name
                if offset < HEADER:
                    return ("size of ", "leading dimension of ", "non-finite count of ")[offset] + name
                return f"{name}[{offset - HEADER}] (flattened)"
            position += width
        if self.layout and index == position:
            return "raised (1 if the call raised)"
        return f"output[{index}]"


@dataclass(frozen=True, eq=False)
class Entry:
    """One public mechanism, query, model, accountant, measurement or combinator of a library.

    Attributes
    ----------
    name : str
        Short name within the library, e.g. ``"tools.mean"``.
    api : tuple of str
        The public names it covers, fully qualified (``"diffprivlib.tools.mean"``).
    kind : str
        One of :data:`KINDS`.
    claim_text : str
        The privacy the library states, quoted or paraphrased, with its source (docstring, page).
    relation : Relation
        The neighbour relation the library promises.
    grid : tuple of mappings
        The grid points' parameters.
    build : callable
        ``build(point) -> Case`` for each point of ``grid``.
    """

    name: str
    api: tuple[str, ...]
    kind: str
    claim_text: str
    relation: Relation
    grid: tuple[Mapping[str, Any], ...]
    build: Callable[[Mapping[str, Any]], Case]

    def __post_init__(self) -> None:
        _check_text("name", self.name)
        _check_text("claim_text", self.claim_text)
        if self.kind not in KINDS:
            raise ValueError(f"{self.name}: `kind` must be one of {KINDS}, got {self.kind!r}")
        object.__setattr__(self, "api", tuple(self.api))
        object.__setattr__(self, "relation", as_relation(self.relation))
        object.__setattr__(self, "grid", tuple(self.grid))
        if not self.api or not self.grid:
            raise ValueError(f"{self.name}: `api` and `grid` must not be empty")

    def cases(self) -> tuple[Case, ...]:
        """Every grid point as a :class:`Case` (labels checked to be distinct)."""
        cases = tuple(self.build(point) for point in self.grid)
        labels = [case.point for case in cases]
        if len(set(labels)) != len(labels):
            raise ValueError(f"{self.name}: grid point labels repeat: {labels}")
        return cases


@dataclass(frozen=True)
class Coverage:
    """Which public names of a library the catalogue audits, and why the others are left out.

    ``covered`` maps each covered name to the entries that audit it; ``excluded`` maps a name to
    its reason (:data:`REASONS`, with details); ``unaccounted`` lists public names that are
    neither: a new release's additions, which the report flags.
    """

    public: tuple[str, ...]
    covered: Mapping[str, tuple[str, ...]]
    excluded: Mapping[str, str]
    unaccounted: tuple[str, ...]

    @property
    def fraction(self) -> float:
        """Public DP entries audited (directly, or through another entry that runs them) over public
        names that are DP entries (not excluded as "not DP")."""
        dp = [n for n in self.public if not self.excluded.get(n, "").startswith("not DP")]
        audited = [n for n in dp if n in self.covered or self.excluded.get(n, "").startswith("covered through")]
        return len(audited) / len(dp) if dp else 1.0

    def to_dict(self) -> dict:
        return {"public": list(self.public), "covered": {k: list(v) for k, v in self.covered.items()},
                "excluded": dict(self.excluded), "unaccounted": list(self.unaccounted),
                "fraction": self.fraction}


@dataclass(frozen=True, eq=False)
class Library:
    """A DP library the sweep knows: its catalogue, its public API and how scripts call it.

    Attributes
    ----------
    name : str
        The name ``dpaudit sweep NAME`` takes.
    distribution : str
        The installed distribution whose version the report records.
    entries : callable
        ``entries() -> tuple of Entry`` (builds the catalogue; imports the library).
    public_api : callable
        ``public_api() -> tuple of str``: the library's public DP-relevant names, enumerated from the
        installed release (``__all__``, ``dir`` of its packages).
    excluded : mapping
        Public name → why it is not audited (starting with one of :data:`REASONS`).
    script_header : str
        The import lines of a reproduction script (the names ``release`` functions use).
    helpers : tuple of callables
        Plain functions ``release`` functions call, whose source a script carries.
    seeded : bool
        Whether the library's randomness follows ``random_state`` (scripts then fix a seed).
    witness_issues : mapping
        Text in a VIOLATED row's witness statistic → the upstream issue such a refutation matches,
        for a fault known only once the audit has named what tells the datasets apart (diffprivlib:
        ``"grain of "`` → the floating-point rounding of its noise primitives, #94).  Linked to the
        row's ``known`` by :func:`audit.sweep.rows.linked_known`.
    """

    name: str
    distribution: str
    entries: Callable[[], tuple[Entry, ...]]
    public_api: Callable[[], tuple[str, ...]]
    excluded: Mapping[str, str] = field(default_factory=dict)
    script_header: str = "import numpy as np\n"
    helpers: tuple[Callable[..., Any], ...] = ()
    seeded: bool = True
    witness_issues: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_text("name", self.name)
        _check_text("distribution", self.distribution)
        for text, issue in self.witness_issues.items():
            _check_text("witness_issues key", text)
            _check_text(f"witness_issues[{text!r}]", issue)
        for name, reason in self.excluded.items():
            if not any(reason.startswith(r) for r in REASONS):
                raise ValueError(f"{self.name}: the reason for leaving out {name!r} must start with one of "
                                 f"{REASONS}, got {reason!r}")

    def version(self) -> Optional[str]:
        """The installed release's version, or None if the distribution is not installed."""
        try:
            return importlib.metadata.version(self.distribution)
        except importlib.metadata.PackageNotFoundError:
            return None

    def coverage(self, entries: tuple[Entry, ...]) -> Coverage:
        """Coverage of :meth:`public_api` by ``entries`` and :attr:`excluded`."""
        public = tuple(self.public_api())
        covered: dict[str, list[str]] = {}
        for entry in entries:
            for name in entry.api:
                covered.setdefault(name, []).append(entry.name)
        # Exclusions may name what only other releases have (diffprivlib's Wishart): report those present.
        excluded = {name: reason for name, reason in self.excluded.items() if name not in covered and name in public}
        unaccounted = tuple(n for n in public if n not in covered and n not in excluded)
        return Coverage(public, {k: tuple(v) for k, v in covered.items()}, excluded, unaccounted)
