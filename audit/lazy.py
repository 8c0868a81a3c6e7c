"""Modules imported on first use, so that ``import audit`` and ``dpaudit --help`` stay cheap.

Importing the engine pulls in SciPy, joblib and every statistic (about a second of CPU); the
command line's ``--help``, ``list`` and ``theory`` need none of it.  A module that uses another only
in some of its functions declares it at its top as ``engine = lazy_module("audit.engine")``: the
name is bound at once, and the module is imported at the first attribute read (``engine.run_audit``),
by :func:`importlib.import_module`, so it is the one module object every other import sees.

The declaration stays at the top of the module, where tests/project/test_architecture.py reads it
as an import like any other (cycles and layers are checked through it).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

__all__ = ["LazyModule", "lazy_module"]


class LazyModule:
    """A stand-in for module ``name`` that imports it when one of its attributes is first read."""

    __slots__ = ("_lazy_name",)

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_lazy_name", name)

    def _lazy_load(self) -> ModuleType:
        return importlib.import_module(self._lazy_name)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._lazy_load(), attribute)

    def __setattr__(self, attribute: str, value: Any) -> None:  # e.g. a test's monkeypatch
        setattr(self._lazy_load(), attribute, value)

    def __delattr__(self, attribute: str) -> None:
        delattr(self._lazy_load(), attribute)

    def __dir__(self) -> list[str]:
        return dir(self._lazy_load())

    def __repr__(self) -> str:
        return f"<lazy module {self._lazy_name!r}>"


def lazy_module(name: str) -> LazyModule:
    """Module ``name`` (absolute, dotted), imported when first used (see the module docstring)."""
    return LazyModule(name)
