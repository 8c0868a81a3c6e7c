"""Modules of :mod:`audit` that moved: their old import paths keep working, with a ``DeprecationWarning``.

``audit.output``, ``audit.html`` and ``audit.plots`` became :mod:`audit.render`.  Rather than leave
stub files behind, :func:`install_moved_modules` (called by ``import audit``) installs a finder that
hands exactly those names to :class:`mechanisms.moved.MovedModuleFinder` (imported only when an old
path is imported, so ``import audit`` stays cheap): each old module is a stand-in
that warns once, at import, naming the new modules, and looks each attribute up in them
(``from audit.output import format_table`` returns :func:`audit.render.tables.format_table` itself).
Code inside dpaudit never uses the old paths.
"""

from __future__ import annotations

import importlib.abc
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Optional, Sequence

from .lazy import lazy_module

mechanisms_moved = lazy_module("mechanisms.moved")

__all__ = ["MOVED_MODULES", "install_moved_modules"]

#: Old module → the modules that now hold its names, searched in this order.
MOVED_MODULES: dict[str, tuple[str, ...]] = {
    "audit.output": ("audit.render.files", "audit.render.tables", "audit.render.markdown", "audit.render.text"),
    "audit.html": ("audit.render.html",),
    "audit.plots": ("audit.render.plots", "audit.render.text"),
}


class _MovedAuditModules(importlib.abc.MetaPathFinder):
    """Finds the names of :data:`MOVED_MODULES` and hands them to :class:`mechanisms.moved.MovedModuleFinder`."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[ModuleType] = None) -> Optional[ModuleSpec]:
        if fullname not in MOVED_MODULES:
            return None
        return mechanisms_moved.MovedModuleFinder(MOVED_MODULES).find_spec(fullname, path, target)


def install_moved_modules() -> None:
    """Answer imports of :data:`MOVED_MODULES` with forwarding stand-ins (once), at the front of
    ``sys.meta_path`` (as :func:`mechanisms.moved.install` does)."""
    if not any(isinstance(finder, _MovedAuditModules) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedAuditModules())
