"""Old module paths of the issue-25 layout, kept importable as aliases of the modules' new homes.

Thirteen flat modules moved into packages (:mod:`mechanisms.dpsgd`, :mod:`mechanisms.literature`,
:mod:`mechanisms.zoo`) or lost their underscore (:mod:`mechanisms.validation`).  Two old paths
are the new packages themselves (``mechanisms.dpsgd``, ``mechanisms.literature``, whose
``__init__`` re-exports every public name); the others are listed in :data:`MOVED`.  Importing
one of those, in code or through a scenario file's ``callable = "mechanisms.faulty:..."``, goes
through :class:`MovedModuleFinder` (installed on ``sys.meta_path`` by :mod:`mechanisms`): it
warns with a ``DeprecationWarning`` naming the new path, imports the new module and puts that
same module object under the old name in ``sys.modules``.

The same object, not a copy: ``isinstance`` checks hold whichever path a class was imported
from, and every class keeps its new ``__module__``, so objects pickle under the new path (what
joblib's workers unpickle), while pickles written before the move, which name the old path,
still load.  Nothing in this repository may import an old path: pytest turns the warning into an
error, and ``tests/project/test_moved_modules.py`` checks every name here.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Optional, Sequence

__all__ = ["MOVED", "MovedModuleFinder", "install"]

#: Old dotted module name → the module it now is.
MOVED: dict[str, str] = {
    "mechanisms._validation": "mechanisms.validation",
    "mechanisms.dpsgd_accounting": "mechanisms.dpsgd.accounting",
    "mechanisms.dpsgd_canary": "mechanisms.dpsgd.canary",
    "mechanisms.dpsgd_data": "mechanisms.dpsgd.data",
    "mechanisms.dpsgd_mlp": "mechanisms.dpsgd.mlp",
    "mechanisms.dpsgd_shuffle": "mechanisms.dpsgd.shuffle",
    "mechanisms.literature_base": "mechanisms.literature.base",
    "mechanisms.literature_svt": "mechanisms.literature.svt",
    "mechanisms.faulty": "mechanisms.zoo.faulty",
    "mechanisms.faulty_discrete": "mechanisms.zoo.faulty_discrete",
    "mechanisms.search_examples": "mechanisms.zoo.search_examples",
}


class MovedModuleFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old names of :data:`MOVED` and loads each as an alias of its new module."""

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[ModuleType] = None) -> Optional[ModuleSpec]:
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # a placeholder module, replaced by the new module in exec_module

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        new = MOVED[old]
        # stacklevel 2 skips importlib's own frames: the warning points at the importing line.
        warnings.warn(f"`{old}` has moved to `{new}`: import it from there (the old name is an "
                      f"alias and will be removed)", DeprecationWarning, stacklevel=2)
        # The import system reads the module back from sys.modules after exec_module, so the
        # old name ends up bound to the new module object, not to the placeholder.
        sys.modules[old] = importlib.import_module(new)


def install() -> None:
    """Put one :class:`MovedModuleFinder` at the front of ``sys.meta_path`` (idempotent).

    At the front, so that an old path always means its new module, even where a stale copy of
    the old file was left behind.
    """
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())
