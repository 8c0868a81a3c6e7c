"""The libraries ``dpaudit sweep`` knows, found by name: built in, registered, or plugged in.

A library is one module that builds a :class:`~scenarios.libraries.catalogue.Library` and calls
:func:`register_library` with it.  Three ways in:

- the built-in catalogues (:data:`BUILT_IN`: diffprivlib, OpenDP, Opacus), imported on first use because
  they need their optional library; where an installed release predates a catalogue's API, the
  catalogue for older releases (:data:`OLDER_RELEASES`) is imported instead;
- any module that calls :func:`register_library` before the sweep runs;
- a third-party package that declares an entry point in the group ``dpaudit.libraries``
  (``[project.entry-points."dpaudit.libraries"] mylib = "mypackage.dpaudit_catalogue"``): the
  module is imported the first time its name is asked for, and must register a library of
  that name.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import importlib.util
import sys

from .catalogue import Library

__all__ = ["BUILT_IN", "OLDER_RELEASES", "ENTRY_POINT_GROUP", "register_library", "library", "library_names"]

#: Library name → the module that registers it.
BUILT_IN = {"diffprivlib": "scenarios.libraries.diffprivlib", "opendp": "scenarios.libraries.opendp",
            "opacus": "scenarios.libraries.opacus", "pydp": "scenarios.libraries.pydp",
            "pipeline-dp": "scenarios.libraries.pipelinedp", "smartnoise-sql": "scenarios.libraries.snsql",
            "smartnoise-synth": "scenarios.libraries.snsynth", "dpmm": "scenarios.libraries.dpmm",
            "jax-privacy": "scenarios.libraries.jax_privacy",
            "synthcity": "scenarios.libraries.synthcity",
            "tumult": "scenarios.libraries.tumult"}
#: Library → (a module only newer releases have, the catalogue module for the releases without it[, a
#: module only those older releases have, when the two share no package: the older catalogue is
#: then chosen only where it is found]).
OLDER_RELEASES = {"opendp": ("opendp.prelude", "scenarios.libraries.opendp_legacy"),
                  "opacus": ("opacus.optimizers", "scenarios.libraries.opacus_legacy"),
                  "smartnoise-sql": ("snsql", "scenarios.libraries.snsql_legacy", "opendp.smartnoise.sql")}
#: The entry-point group third-party catalogues declare.
ENTRY_POINT_GROUP = "dpaudit.libraries"

_REGISTRY: dict[str, Library] = {}


def register_library(lib: Library) -> Library:
    """Register ``lib`` under ``lib.name`` (the same object again is allowed; another is refused)."""
    if not isinstance(lib, Library):
        raise TypeError(f"`lib` must be a scenarios.libraries.Library, got {lib!r}")
    known = _REGISTRY.get(lib.name)
    if known is not None and known is not lib:
        raise ValueError(f"a library named {lib.name!r} is already registered")
    _REGISTRY[lib.name] = lib
    return lib


def _plugged_in() -> dict[str, str]:
    """Entry-point name → module of the ``dpaudit.libraries`` group."""
    return {ep.name: ep.value.split(":")[0] for ep in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def _import_failure(name: str, exc: ImportError) -> str:
    """Why a catalogue did not import: the extra to install, or, when the library is installed,
    that this release does not import with what is installed here (not a missing extra)."""
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return str(exc)
    cause = exc.__cause__ or exc
    return (f"{name} {version} is installed but its catalogue cannot use it here ({type(cause).__name__}: "
            f"{str(cause).strip().splitlines()[0] if str(cause).strip() else ''}); sweep a release in an "
            f"environment of its own with `dpaudit sweep {name}==VERSION`")


def _older_release(name: str) -> str | None:
    """The catalogue module for an installed release older than the built-in catalogue, or None."""
    if name not in OLDER_RELEASES:
        return None
    probe, module, *older = OLDER_RELEASES[name]
    try:
        present = importlib.util.find_spec(probe) is not None
    except ImportError:  # the library itself is not installed: the built-in catalogue says how to install it
        return None
    except ValueError:  # in sys.modules without a spec (a module made at run time): there unless blocked (None)
        present = sys.modules.get(probe) is not None
    if present:
        return None
    try:
        return module if all(importlib.util.find_spec(other) is not None for other in older) else None
    except (ImportError, ValueError):  # a parent package that is another library (opendp without .smartnoise)
        return None


def library_names() -> tuple[str, ...]:
    """Every name :func:`library` can answer: built in, registered and plugged in."""
    return tuple(sorted(set(BUILT_IN) | set(_REGISTRY) | set(_plugged_in())))


def library(name: str) -> Library:
    """The library registered as ``name``, importing its module the first time.

    Raises
    ------
    ValueError
        For an unknown name (the closest known one is suggested).
    ImportError
        If the library's module needs a package that is not installed (the message says which).
    """
    if not isinstance(name, str):
        raise TypeError(f"`library` must be a library name, got {name!r}")
    if name not in _REGISTRY:
        module = _older_release(name) or BUILT_IN.get(name) or _plugged_in().get(name)
        if module is None:
            close = difflib.get_close_matches(name, library_names(), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"unknown library {name!r}: known are {', '.join(library_names())}{hint}")
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ImportError(_import_failure(name, exc)) from exc
        if name not in _REGISTRY:
            raise ValueError(f"module {module!r} did not register a library named {name!r}")
    return _REGISTRY[name]
