"""Modules of :mod:`audit` that moved: their old import paths keep working, with a ``DeprecationWarning``.

``audit.output``, ``audit.html`` and ``audit.plots`` became :mod:`audit.render`.  Rather than leave
stub files behind, :func:`install_moved_modules` (called by ``import audit``) installs
:class:`mechanisms.moved.MovedModuleFinder` for exactly those names: each old module is a stand-in
that warns once, at import, naming the new modules, and looks each attribute up in them
(``from audit.output import format_table`` returns :func:`audit.render.tables.format_table` itself).
Code inside dpaudit never uses the old paths.
"""

from __future__ import annotations

from mechanisms.moved import install

__all__ = ["MOVED_MODULES", "install_moved_modules"]

#: Old module → the modules that now hold its names, searched in this order.
MOVED_MODULES: dict[str, tuple[str, ...]] = {
    "audit.output": ("audit.render.files", "audit.render.tables", "audit.render.markdown", "audit.render.text"),
    "audit.html": ("audit.render.html",),
    "audit.plots": ("audit.render.plots", "audit.render.text"),
}


def install_moved_modules() -> None:
    """Answer imports of :data:`MOVED_MODULES` with forwarding stand-ins (once)."""
    install(MOVED_MODULES)
