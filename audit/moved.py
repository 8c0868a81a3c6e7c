"""Modules that moved: their old import paths keep working, with a ``DeprecationWarning``.

``audit.output``, ``audit.html`` and ``audit.plots`` became :mod:`audit.render`.  Rather than
leave stub files behind, a meta-path finder answers imports of exactly those names
(:data:`MOVED_MODULES`) with a stand-in module that warns once, at import, naming the new modules,
and looks each attribute up in them (``from audit.output import format_table`` returns
:func:`audit.render.tables.format_table` itself).  A name the new modules do not define raises
``AttributeError`` naming where the module went.  The finder is installed by ``import audit``
(:func:`install_moved_modules`); code inside dpaudit never uses the old paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from types import ModuleType
from typing import Any, Optional, Sequence

__all__ = ["MOVED_MODULES", "install_moved_modules"]

#: Old module → the modules that now hold its names, searched in this order.
MOVED_MODULES: dict[str, tuple[str, ...]] = {
    "audit.output": ("audit.render.files", "audit.render.tables", "audit.render.markdown", "audit.render.text"),
    "audit.html": ("audit.render.html",),
    "audit.plots": ("audit.render.plots", "audit.render.text"),
}


def _forwarding_getattr(name: str, homes: Sequence[str]):
    def __getattr__(attribute: str) -> Any:
        for home in homes:
            module = importlib.import_module(home)
            if hasattr(module, attribute):
                return getattr(module, attribute)
        raise AttributeError(f"module {name!r} has moved to {', '.join(homes)}, none of which defines "
                             f"{attribute!r}")

    return __getattr__


class MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the modules of :data:`MOVED_MODULES` and loads their forwarding stand-ins."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[ModuleType] = None) -> Optional[importlib.machinery.ModuleSpec]:
        return importlib.util.spec_from_loader(fullname, self) if fullname in MOVED_MODULES else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # a plain module object

    def exec_module(self, module: ModuleType) -> None:
        homes = MOVED_MODULES[module.__name__]
        warnings.warn(f"{module.__name__} has moved: import from {', '.join(homes)} instead",
                      DeprecationWarning, stacklevel=2)  # warnings skips importlib's own frames
        module.__doc__ = f"Moved to {', '.join(homes)}; this stand-in forwards to them."
        module.__getattr__ = _forwarding_getattr(module.__name__, homes)


def install_moved_modules() -> None:
    """Put the finder first on ``sys.meta_path`` (once), ahead of any copy of an old file."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
