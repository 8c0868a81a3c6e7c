"""Old module paths kept importable, as aliases of (or stand-ins for) the modules' new homes.

Thirteen flat modules moved into packages (:mod:`mechanisms.dpsgd`, :mod:`mechanisms.literature`,
:mod:`mechanisms.zoo`) or lost their underscore (:mod:`mechanisms.validation`).  Two old paths
are the new packages themselves (``mechanisms.dpsgd``, ``mechanisms.literature``, whose
``__init__`` re-exports every public name); the others are listed in :data:`MOVED`.  Importing
one of those, in code or through a scenario file's ``callable = "mechanisms.faulty:..."``, goes
through :class:`MovedModuleFinder` (installed on ``sys.meta_path`` by :mod:`mechanisms`): it
warns with a ``DeprecationWarning`` naming the new path, imports the new module and puts that
same module object under the old name in ``sys.modules``.  :mod:`audit` installs one for its own
moved modules (:mod:`audit.moved`).

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
from typing import Any, Mapping, Optional, Sequence, Union

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
    """Finds the old names of a mapping ``old → new`` and loads each one.

    A single new module (a ``str``) is an *alias*: the old name is bound to the new module object
    itself.  Several (a ``tuple``, for a module whose names were spread over several new ones) give
    a *stand-in* that looks each attribute up in them, in order, and raises ``AttributeError``
    naming where the module went for a name none defines.  Either way the import warns once, with a
    ``DeprecationWarning`` naming the new path(s) at the importing line.
    """

    def __init__(self, moved: Mapping[str, Union[str, tuple[str, ...]]]):
        self.moved = dict(moved)

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[ModuleType] = None) -> Optional[ModuleSpec]:
        if fullname not in self.moved:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # a placeholder module, replaced or filled in by exec_module

    def exec_module(self, module: ModuleType) -> None:
        old = module.__name__
        new = self.moved[old]
        homes = (new,) if isinstance(new, str) else tuple(new)
        # stacklevel 2 skips importlib's own frames: the warning points at the importing line.
        warnings.warn(f"`{old}` has moved to {', '.join(f'`{home}`' for home in homes)}: import it from "
                      f"there (the old name is an alias and will be removed)", DeprecationWarning, stacklevel=2)
        if isinstance(new, str):
            # The import system reads the module back from sys.modules after exec_module, so the
            # old name ends up bound to the new module object, not to the placeholder.
            sys.modules[old] = importlib.import_module(new)
            return
        module.__doc__ = f"Moved to {', '.join(homes)}; this stand-in forwards to them."
        module.__getattr__ = _forwarding_getattr(old, homes)


def _forwarding_getattr(name: str, homes: Sequence[str]):
    def __getattr__(attribute: str) -> Any:
        for home in homes:
            module = importlib.import_module(home)
            if hasattr(module, attribute):
                return getattr(module, attribute)
        raise AttributeError(f"module {name!r} has moved to {', '.join(homes)}, none of which defines "
                             f"{attribute!r}")

    return __getattr__


def install(moved: Mapping[str, Union[str, tuple[str, ...]]] = MOVED) -> None:
    """Put a :class:`MovedModuleFinder` for ``moved`` at the front of ``sys.meta_path`` (once per
    mapping): at the front, so that an old path always means its new module, even where a stale
    copy of the old file was left behind."""
    if not any(isinstance(finder, MovedModuleFinder) and finder.moved == dict(moved) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder(moved))
