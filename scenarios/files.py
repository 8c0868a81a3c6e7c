"""Scenario files: one audit written down in TOML, loaded into validated objects.

A scenario file names a mechanism (a reference mechanism of
:data:`mechanisms.REFERENCE_MECHANISMS` with its constructor's parameters, or a user object given
as ``"package.module:attribute"``), the claim to audit (default: the mechanism's own), the
scenario (a builder of :mod:`scenarios.builders`) and the audit settings::

    name = "gaussian-classical-eps7"     # optional, default: the file's stem
    expected = "violated"                # optional: what the exact truth says ("holds"/"violated")
    note = "free text"                   # optional

    [mechanism]
    name = "gaussian"                    # or: callable = "package.module:attribute"
    calibration = "classical"            # ... keyword arguments of the constructor
    epsilon = 7.0
    delta = 0.1

    [claim]                              # optional; omitted = the mechanism's own claim
    type = "approx-dp"                   # "approx-dp" (epsilon, delta) | "pure-dp" (epsilon) | "gdp" (mu)
                                         # | "zcdp" (rho) | "rdp" (orders, epsilons)
                                         # | "profile" (epsilons + deltas, or callable = "module:attr"
                                         #   naming a delta(epsilon) function or a dp-accounting DpEvent);
                                         # the last three take an optional reference_delta (default 1e-5);
                                         # any claim type registered with mechanisms.claims works too
    epsilon = 7.0
    delta = 0.1

    [scenario]
    kind = "counting"                    # "counting" | "bounded" | "grouped" (+ groups) | "custom"
    d = 1
    n = 10                               # optional, default 10
    relation = "add-remove"              # optional, default "add-remove"
    pairs = "worst-case"                 # optional; "random" needs count (and seed)

    [audit]                              # optional: settings of the audit, read by audit.spec
    samples = 2000000                    # (audit.settings.FILE_KEYS; the defaults are
    confidence = 0.95                    #  audit.settings.AuditSettings')
    seed = 20261121

Rules:

- The sub-table ``[mechanism.inner]`` describes a wrapped mechanism (e.g. the one a
  ``composition`` runs ``k`` times), built by the same rules and passed as the constructor's
  ``mechanism`` (or ``inner``) parameter; any other parameter given as a sub-table is also
  built as a mechanism.
- If a constructor (or factory) takes a ``relation`` parameter, the scenario's relation is
  passed to it, so the mechanism's claim is stated under the audited relation; a
  ``mechanism.relation`` (or ``claim.relation``) that differs from the scenario's is an error.
- ``kind = "custom"`` takes inputs that are not datasets of rows (e.g. vectors of query answers),
  one ``[[scenario.pair]]`` table per pair with ``base``, ``neighbor`` (arrays of numbers) and an
  optional ``label``; the pairs are vouched for by the file, not checked (:func:`scenarios.custom`).
- ``callable``: a class, or any object when further keys are given, is called with the keys as
  keyword arguments (a factory); otherwise the object itself is the mechanism.  The module is
  imported from ``sys.path``, else from the scenario file's own folder (which is then put at the
  front of ``sys.path``, as pytest's "prepend" import mode does for test modules).  Importing the
  module runs its code, as any plugin mechanism does; nothing in the file is evaluated.
- Every problem is a line of one :class:`ScenarioFileError`, reading ``"<path>: <key.path> <what
  is wrong>, got <value>"``, with the closest known key for an unknown one; warnings raised while
  constructing the mechanism (e.g. a calibration used outside its proven range, on purpose) are
  kept in :attr:`ScenarioFile.warnings` for the report.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
import json
import re
import sys
import warnings
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Callable, Optional, Union

import numpy as np

try:  # Python ≥ 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10 (pyproject depends on tomli)
    import tomli as tomllib

import mechanisms
from mechanisms.claims import Claim, Relation, as_relation, claim_from_config, claim_types

from . import builders
from . import scenario as scenario_module
from . import search as search_module
from .scenario import Scenario

__all__ = ["ScenarioFile", "ScenarioFileError", "read", "bundled_suite", "SUITES", "EXPECTED_VALUES"]

#: Allowed values of the top-level ``expected`` key.
EXPECTED_VALUES = ("holds", "violated")

#: The sub-table of a wrapper mechanism (e.g. a composition) that describes the wrapped one.
_INNER = "inner"
#: Constructor parameters that receive the mechanism described by [mechanism.inner].
_INNER_PARAMETERS = ("inner", "mechanism")
_TOP_KEYS = ("name", "expected", "note", "mechanism", "claim", "scenario", "audit")
_CALLABLE_PATTERN = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")
_BACKTICK_NAME = re.compile(r"^`([A-Za-z_]\w*)`\s*")


class ScenarioFileError(ValueError):
    """A scenario file is malformed.  ``messages`` holds one line per problem, each naming the file
    and the key path (``"<path>: <key.path> <what is wrong>, got <value>"``); the error's text is
    those lines, so every problem of a file is reported at once."""

    def __init__(self, messages: "str | list[str]"):
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        super().__init__("\n".join(self.messages))


@dataclass(frozen=True)
class ScenarioFile:
    """What a scenario file describes, its ``[audit]`` table aside (:mod:`audit.spec` reads that
    one into the audit's settings; this layer does not know the audit's options).

    Attributes
    ----------
    name : str
    path : pathlib.Path
    mechanism : Mechanism
        The constructed mechanism (any callable ``(dataset, size, rng) -> (size, k)``).
    claim : Claim or None
        The claim to audit: the file's ``[claim]``, else the mechanism's own ``claim``
        (``None`` if it has none).
    scenario : Scenario
    expected : {"holds", "violated"} or None
        What the exact truth says about the claim, when the file states it.
    note : str
    warnings : tuple of str
        Warnings raised while constructing the mechanism.
    audit : dict
        The file's ``[audit]`` table as written (empty when absent).
    """

    name: str
    path: Path
    mechanism: Any
    claim: Optional[Claim]
    scenario: Scenario
    expected: Optional[str]
    note: str
    warnings: tuple[str, ...] = ()
    audit: dict = field(default_factory=dict)


# -- small helpers ---------------------------------------------------------------------------------
def _show(value: Any) -> str:
    """A value as written in TOML (strings in double quotes, true/false)."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a table"
    return repr(value)


class _Context:
    """Formats errors for one file: ``"<path>: <key.path> <problem>, got <value>"``."""

    def __init__(self, path: str, folder: Optional[Path] = None) -> None:
        self.path = path
        self.folder = folder  # where `callable = "module:attr"` also looks for the module
        self.problems: list[str] = []

    def error(self, key: str, problem: str, value: Any = None, *, show_value: bool = True) -> ScenarioFileError:
        suffix = f", got {_show(value)}" if show_value else ""
        return ScenarioFileError(f"{self.path}: {key} {problem}{suffix}")

    def rephrase(self, key: str, exc: Exception) -> ScenarioFileError:
        """Prefix a constructor's own message with the file and the table's key path.

        ```epsilon` must be ...`` becomes ``<path>: mechanism.epsilon must be ...``.
        """
        message = str(exc)
        match = _BACKTICK_NAME.match(message)
        if match:
            return ScenarioFileError(f"{self.path}: {key}.{match.group(1)} {message[match.end():]}")
        return ScenarioFileError(f"{self.path}: {key}: {message}")

    def table(self, data: dict, key: str, name: str, *, required: bool) -> Optional[dict]:
        if name not in data:
            if required:
                raise self.error(_join(key, name), "is missing (a required table)", show_value=False)
            return None
        value = data[name]
        if not isinstance(value, dict):
            raise self.error(_join(key, name), "must be a table", value)
        return value

    def unknown_keys(self, data: dict, key: str, allowed: tuple[str, ...], what: str) -> None:
        """Refuse every unknown key of a table at once, each with the closest known key."""
        errors = [self.error(_join(key, name), f"is not a known key of {what} (known: "
                             f"{', '.join(allowed)}){_did_you_mean(name, allowed)}", data[name])
                  for name in data if name not in allowed]
        if errors:
            raise ScenarioFileError([m for e in errors for m in e.messages])

    def attempt(self, build: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``build(*args)``, or None after recording its :class:`ScenarioFileError` in
        :attr:`problems`: independent parts of a file are all checked, and reported together."""
        try:
            return build(*args, **kwargs)
        except ScenarioFileError as exc:
            self.problems.extend(exc.messages)
            return None

    def string(self, data: dict, key: str, name: str, choices: Optional[tuple[str, ...]] = None,
               default: Optional[str] = None) -> Optional[str]:
        if name not in data:
            return default
        value = data[name]
        if not isinstance(value, str):
            raise self.error(_join(key, name), "must be a string", value)
        if choices is not None and value not in choices:
            raise self.error(_join(key, name), f"must be one of {', '.join(map(_show, choices))}", value)
        return value

    def integer(self, data: dict, key: str, name: str, minimum: int, default: Any) -> Any:
        if name not in data:
            return default
        value = data[name]
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(_join(key, name), "must be an integer", value)
        if value < minimum:
            raise self.error(_join(key, name), f"must be an integer >= {minimum}", value)
        return value


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name


def _did_you_mean(name: str, known: Any) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


# -- the mechanism ---------------------------------------------------------------------------------
def _import_object(ctx: _Context, key: str, target: Any) -> Any:
    if not isinstance(target, str) or not _CALLABLE_PATTERN.match(target):
        raise ctx.error(key, 'must be a string "package.module:attribute"', target)
    module_name, attribute = target.split(":")
    obj = _import_module(ctx, key, module_name, target)
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise ctx.error(key, f"names no attribute {part!r} in module {module_name!r}", target)
        obj = getattr(obj, part)
    return obj


def _import_module(ctx: _Context, key: str, module_name: str, target: str) -> Any:
    """Import ``module_name`` from ``sys.path``, else from the scenario file's own folder.

    A module beside the file (``my_module.py`` next to ``my_count.toml``) is found the way pytest
    finds test modules in its default "prepend" import mode: the folder is put at the front of
    ``sys.path`` (and stays there, so worker processes started later import it too).
    """
    top = module_name.split(".")[0]
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        folder = ctx.folder
        beside = folder is not None and ((folder / f"{top}.py").is_file() or (folder / top).is_dir())
        if exc.name != top or not beside:
            where = f" and in the scenario file's folder {str(folder)!r}" if folder is not None else ""
            raise ctx.error(key, f"cannot be imported (ModuleNotFoundError: {exc}); looked on sys.path"
                            f"{where}", target) from None
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
        importlib.invalidate_caches()
    except Exception as exc:  # any failure while importing user code: name it, don't crash
        raise ctx.error(key, f"cannot be imported ({type(exc).__name__}: {exc})", target) from None
    try:
        return importlib.import_module(module_name)
    except Exception as exc:
        raise ctx.error(key, f"cannot be imported ({type(exc).__name__}: {exc})", target) from None


def _parameters(factory: Callable) -> Optional[dict[str, inspect.Parameter]]:
    """Keyword parameters of ``factory``; ``None`` if it accepts any keyword (``**kwargs``).

    For a class that defines ``__init__`` its signature is used (a ``__new__`` that only
    dispatches may declare looser defaults).
    """
    try:
        if inspect.isclass(factory) and factory.__init__ is not object.__init__:
            signature = inspect.signature(factory.__init__)
            signature = signature.replace(parameters=list(signature.parameters.values())[1:])
        else:
            signature = inspect.signature(factory)
    except (TypeError, ValueError):
        return None
    params = {name: p for name, p in signature.parameters.items()
              if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    if any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values()):
        return None
    return params


def _resolve(ctx: _Context, table: dict, key: str) -> tuple[Any, str, bool]:
    """The factory (or object) a mechanism table names, how to call it out, and whether to call it."""
    has_name, has_callable = "name" in table, "callable" in table
    if not (has_name or has_callable):
        raise ctx.error(_join(key, "name"), 'is missing (give `name` = a reference mechanism, or '
                        '`callable` = "package.module:attribute")', show_value=False)
    if has_name and has_callable:
        raise ctx.error(_join(key, "callable"), "cannot be given together with "
                        f"{_join(key, 'name')} (choose one)", table["callable"])
    if has_name:
        name, known = table["name"], mechanisms.REFERENCE_MECHANISMS
        if not isinstance(name, str) or name not in known:
            raise ctx.error(_join(key, "name"), "must be one of "
                            f"{', '.join(map(_show, sorted(known)))}", name)
        return known[name], repr(name), True
    target = table["callable"]
    factory = _import_object(ctx, _join(key, "callable"), target)
    # A class, or any object given keyword arguments, is a factory; else it is the mechanism.
    call = inspect.isclass(factory) or len(table) > 1
    if not callable(factory):
        raise ctx.error(_join(key, "callable"), "is not a mechanism (not callable)", target)
    return factory, repr(target), call


def _build_mechanism(ctx: _Context, table: dict, key: str, relation: Relation) -> Any:
    factory, what, call = _resolve(ctx, table, key)
    if not call:
        return factory
    arguments = {k: v for k, v in table.items() if k not in ("name", "callable")}
    params = _parameters(factory)  # None: the factory takes **kwargs, nothing to check against
    positional: list[Any] = []
    inner = arguments.pop(_INNER, None)
    if inner is not None:
        if not isinstance(inner, dict):
            raise ctx.error(_join(key, _INNER), "must be a table describing the wrapped mechanism",
                            inner)
        target = next((name for name in _INNER_PARAMETERS if params and name in params), None)
        if params is not None and target is None:
            raise ctx.error(_join(key, _INNER), f"cannot be passed: {what} takes no wrapped "
                            "mechanism (no `mechanism` or `inner` parameter)", show_value=False)
        if target in arguments:
            raise ctx.error(_join(key, target), f"cannot be given together with "
                            f"{_join(key, _INNER)}", arguments[target])
        built = _build_mechanism(ctx, inner, _join(key, _INNER), relation)
        if target is None:  # a factory taking **kwargs: pass the wrapped mechanism first
            positional.append(built)
        else:
            arguments[target] = built
    if params is not None:
        for name in arguments:
            if name not in params:
                raise ctx.error(_join(key, name), f"is not a parameter of {what} (known: "
                                f"{', '.join(sorted(params))})", arguments[name])
        for name, param in params.items():
            if param.default is param.empty and name not in arguments and name != "relation":
                hint = f"; give it as [{_join(key, _INNER)}]" if name in _INNER_PARAMETERS else ""
                raise ctx.error(_join(key, name), f"is missing (a required parameter of {what}"
                                f"{hint})", show_value=False)
    if "relation" in arguments:
        try:
            given = as_relation(arguments["relation"])
        except (TypeError, ValueError):
            raise ctx.error(_join(key, "relation"), 'must be "add-remove" or "replace"',
                            arguments["relation"]) from None
        if given is not relation:
            raise ctx.error(_join(key, "relation"), "must equal scenario.relation "
                            f"({_show(relation.value)}) or be omitted", arguments["relation"])
    if params is not None and "relation" in params:
        arguments["relation"] = relation.value  # the claim is stated under the audited relation
    for name, value in list(arguments.items()):
        if isinstance(value, dict):  # any other sub-table is a nested mechanism too
            arguments[name] = _build_mechanism(ctx, value, _join(key, name), relation)
    try:
        mechanism = factory(*positional, **arguments)
    except (TypeError, ValueError, NotImplementedError) as exc:
        raise ctx.rephrase(key, exc) from None
    if not callable(mechanism):
        raise ctx.error(key, f"built by {what} is not a mechanism (not callable): "
                        f"{type(mechanism).__name__}", show_value=False)
    return mechanism


# -- claim, scenario ------------------------------------------------------------------------------
def _build_claim(ctx: _Context, table: dict, relation: Relation) -> Claim:
    """The ``[claim]`` table through the claim registry (:func:`mechanisms.claims.claim_types`):
    its ``type`` picks the class, which parses the rest of the table."""
    kinds = tuple(claim_types())
    kind = ctx.string(table, "claim", "type", kinds)
    if kind is None:
        raise ctx.error("claim.type", f"is missing (one of {', '.join(map(_show, kinds))})", show_value=False)
    claimed = ctx.string(table, "claim", "relation", ("add-remove", "replace"), relation.value)
    if claimed != relation.value:
        raise ctx.error("claim.relation", f"must equal scenario.relation ({_show(relation.value)}) "
                        "or be omitted", claimed)
    try:
        return claim_from_config(table, relation, load_object=lambda key, target: _import_object(
            ctx, f"claim.{key}", target))
    except ScenarioFileError:
        raise
    except (TypeError, ValueError) as exc:
        raise ctx.rephrase("claim", exc) from None


_SCENARIO_KINDS = ("counting", "bounded", "grouped", "custom")
_SCENARIO_KEYS = ("kind", "d", "n", "relation", "pairs", "count", "seed")


def _build_custom_scenario(ctx: _Context, table: dict) -> Scenario:
    """``kind = "custom"``: [[scenario.pair]] tables of inputs vouched for by the file."""
    ctx.unknown_keys(table, "scenario", ("kind", "relation", "pair"), "a custom scenario")
    relation = ctx.string(table, "scenario", "relation", ("add-remove", "replace"), "add-remove")
    entries = table.get("pair")
    if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
        raise ctx.error("scenario.pair", "must be one or more [[scenario.pair]] tables", entries)
    pairs = []
    for index, entry in enumerate(entries):
        key = f"scenario.pair[{index}]"
        ctx.unknown_keys(entry, key, ("base", "neighbor", "label"), "a custom pair")
        arrays = []
        for name in ("base", "neighbor"):
            value = entry.get(name)
            if not isinstance(value, list) or not value or not all(
                    isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
                raise ctx.error(f"{key}.{name}", "must be a non-empty array of numbers", value)
            arrays.append(value)
        pairs.append((*arrays, ctx.string(entry, key, "label", default=f"pair #{index}")))
    try:
        return scenario_module.custom(pairs, relation)
    except (TypeError, ValueError) as exc:
        raise ctx.rephrase("scenario", exc) from None


def _build_scenario(ctx: _Context, table: dict) -> Scenario:
    if table.get("pairs") == "search":  # a search over a domain (scenarios/search.py, issue 13)
        try:
            return search_module.from_table(table)
        except (TypeError, ValueError) as exc:
            raise ctx.rephrase("scenario", exc) from None
    kind = ctx.string(table, "scenario", "kind", _SCENARIO_KINDS)
    if kind is None:
        raise ctx.error("scenario.kind", "is missing (one of \"counting\", \"bounded\", \"grouped\", "
                        "\"custom\")", show_value=False)
    if kind == "custom":
        return _build_custom_scenario(ctx, table)
    allowed = _SCENARIO_KEYS + (("groups",) if kind == "grouped" else ())
    ctx.unknown_keys(table, "scenario", allowed, f"a {kind} scenario")
    for name in ("d",) + (("groups",) if kind == "grouped" else ()):
        if name not in table:
            raise ctx.error(f"scenario.{name}", f"is missing (required by a {kind} scenario)",
                            show_value=False)
    options = {
        "d": ctx.integer(table, "scenario", "d", 1, None),
        "n": ctx.integer(table, "scenario", "n", 0, 10),
        "relation": ctx.string(table, "scenario", "relation", ("add-remove", "replace"), "add-remove"),
        "pairs": ctx.string(table, "scenario", "pairs", builders.PAIR_MODES, "worst-case"),
        "count": ctx.integer(table, "scenario", "count", 1, None),
        "seed": ctx.integer(table, "scenario", "seed", 0, None),
    }
    try:
        if kind == "grouped":
            return builders.grouped(ctx.integer(table, "scenario", "groups", 1, None), **options)
        return getattr(builders, kind)(**options)
    except (TypeError, ValueError) as exc:
        raise ctx.rephrase("scenario", exc) from None


def _check_fit(ctx: _Context, mechanism: Any, scenario: Scenario) -> None:
    """Draw one output on the first pair: catches a row width the mechanism does not take, and an
    output that is not one row per draw.

    The mechanism is the user's code, so anything it raises is reported with the file, the
    mechanism's name, the exception's type and where it was called (as the audit engine does); the
    row width is blamed only when the mechanism declares another (its ``d``).
    """
    name = mechanisms.mechanism_name(mechanism)
    searched = getattr(scenario, "domain", None)  # a SearchSpec holds its domain (issue 13)
    if hasattr(searched, "example"):
        example, where = searched.example(), "when called on an example dataset of the search domain"
    else:
        pair = scenario.pairs[0]
        example = pair.base
        where = f"when called on the base dataset of pair {pair.label!r} while loading the file"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            returned = mechanism(example, 1, np.random.default_rng(0))
    except (TypeError, ValueError) as exc:
        width, declared = np.shape(example)[-1], getattr(mechanism, "d", None)
        if isinstance(declared, int) and not isinstance(declared, bool) and declared != width:
            raise ScenarioFileError(
                f"{ctx.path}: scenario does not fit the mechanism: rows of width {width}, but mechanism "
                f"{name!r} takes d = {declared} (set scenario.d = {declared}, or mechanism.d = {width}); it raised {type(exc).__name__}: {exc} ({where})") from None
        raise ScenarioFileError(
            f"{ctx.path}: mechanism {name!r} raised {type(exc).__name__}: {exc} ({where})") from None
    except Exception as exc:  # the user's code: name the file, the mechanism and the exception
        raise ScenarioFileError(
            f"{ctx.path}: mechanism {name!r} raised {type(exc).__name__}: {exc} ({where})") from exc
    output = np.asarray(returned)
    if output.ndim not in (1, 2) or output.shape[0] != 1:
        fix = ("return np.asarray(...) of shape (size, k) or (size,), one row per draw" if output.ndim == 0 else
               "it must return one row per draw, shape (size, k) or (size,)")
        raise ScenarioFileError(f"{ctx.path}: mechanism {name!r} returned {type(returned).__name__} of shape "
                                f"{output.shape} for size 1 ({where}); {fix}")


# -- public entry points ---------------------------------------------------------------------------

def load_toml(path: Union[str, Path]) -> dict:
    """The TOML table of scenario file ``path``; :class:`ScenarioFileError` naming the file when it
    cannot be read or is not valid TOML."""
    try:
        with Path(path).open("rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ScenarioFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioFileError(f"{path}: is not valid TOML ({exc})") from None

def read(path: Union[str, Path], *,
         check_audit: Optional[Callable[[dict], list[str]]] = None) -> ScenarioFile:
    """Read and validate a scenario file (its ``[audit]`` table through ``check_audit``).

    Parameters
    ----------
    path : str or pathlib.Path
        A TOML file following the schema in this module's docstring.
    check_audit : callable, optional
        ``check_audit(table) -> messages``: the problems of the ``[audit]`` table, each starting
        with the key in backticks (:meth:`audit.settings.AuditSettings.from_table` says what they
        are; this layer does not know the audit's options).  They are reported with the others.

    Returns
    -------
    ScenarioFile

    Raises
    ------
    ScenarioFileError
        Listing every problem found, each naming the file and the key path: an unreadable or
        invalid TOML file, an unknown key (at any level, mechanism parameters included, with the
        closest known key), a wrong type, a missing field, an unknown mechanism, a bad or
        unimportable ``module:attribute``, or a constructor's own validation error.  Independent
        tables are all checked before it is raised.
    """
    ctx = _Context(str(path), Path(path).resolve().parent)
    file = Path(path)
    data = load_toml(path)
    ctx.attempt(ctx.unknown_keys, data, "", _TOP_KEYS, "a scenario file")
    name = ctx.attempt(ctx.string, data, "", "name", default=file.stem)
    if name is not None and not name.strip():
        ctx.problems.extend(ctx.error("name", "must not be empty", name).messages)
    expected = ctx.attempt(ctx.string, data, "", "expected", EXPECTED_VALUES)
    note = ctx.attempt(ctx.string, data, "", "note", default="")

    scenario_table = ctx.attempt(ctx.table, data, "", "scenario", required=True)
    scenario = None if scenario_table is None else ctx.attempt(_build_scenario, ctx, scenario_table)
    relation = scenario.relation if scenario is not None else _relation_or_default(scenario_table)
    mechanism_table = ctx.attempt(ctx.table, data, "", "mechanism", required=True)
    mechanism = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if mechanism_table is not None:
            mechanism = ctx.attempt(_build_mechanism, ctx, mechanism_table, "mechanism", relation)
    claim_table = ctx.attempt(ctx.table, data, "", "claim", required=False)
    claim = None
    if claim_table is not None:
        claim = ctx.attempt(_build_claim, ctx, claim_table, relation)
    elif mechanism is not None:
        claim = getattr(mechanism, "claim", None)
        claimed_relation = getattr(claim, "relation", relation)
        if claim is not None and claimed_relation != relation:
            ctx.problems.extend(ctx.error(
                "mechanism", f"claims privacy under {_show(str(claimed_relation))} but scenario.relation is "
                f"{_show(relation.value)}; add a [claim] table", show_value=False).messages)
    if mechanism is not None and scenario is not None:
        ctx.attempt(_check_fit, ctx, mechanism, scenario)
    audit = ctx.attempt(ctx.table, data, "", "audit", required=False) or {}
    if check_audit is not None:
        ctx.problems.extend(ctx.rephrase("audit", ValueError(message)).messages[0]
                            for message in check_audit(audit))
    if ctx.problems:
        raise ScenarioFileError(ctx.problems)
    return ScenarioFile(name=name, path=file, mechanism=mechanism, claim=claim, scenario=scenario,
                        expected=expected, note=note, audit=dict(audit),
                        warnings=tuple(f"{w.category.__name__}: {w.message}" for w in caught))


def _relation_or_default(table: Optional[dict]) -> Relation:
    """The relation a broken ``[scenario]`` table names, so the other tables can still be checked."""
    try:
        return as_relation((table or {}).get("relation", "add-remove"))
    except (TypeError, ValueError):
        return Relation.ADD_REMOVE


#: The bundled suites: "default" is the folder scenarios/suite/ itself, each other its subfolder.
SUITES = ("default", "thirdparty", "literature", "dpsgd", "torch")


def bundled_suite(name: str = "default") -> list[Path]:
    """The scenario files shipped in ``scenarios/suite/``, sorted by file name.

    ``"default"`` gives the files directly in ``suite/``; ``"thirdparty"`` those in
    ``suite/thirdparty/`` (audits of other libraries' mechanisms, which need the optional
    ``thirdparty`` dependencies); ``"literature"`` those in ``suite/literature/`` (the
    DP-testing literature's benchmark mechanisms, :mod:`mechanisms.literature`); ``"dpsgd"`` those in
    ``suite/dpsgd/`` (DP-SGD configurations, :mod:`mechanisms.dpsgd`); ``"torch"`` those in
    ``suite/torch/`` (PyTorch/Opacus trainers, :mod:`mechanisms.zoo.trainers`, which need the
    optional ``torch`` dependencies).  Located with
    :mod:`importlib.resources`, so it works from an installed package.
    """
    if name not in SUITES:
        raise ValueError(f"`name` must be one of {SUITES}, got {name!r}")
    root = resources.files("scenarios").joinpath("suite")
    if name != "default":
        root = root.joinpath(name)
    if not root.is_dir():
        return []
    return sorted((Path(str(entry)) for entry in root.iterdir()
                   if entry.is_file() and entry.name.endswith(".toml")), key=lambda p: p.name)
