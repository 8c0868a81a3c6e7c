"""Import guard for the optional ``thirdparty`` extra.

The adapters of :mod:`mechanisms.adapters.diffprivlib` and :mod:`mechanisms.adapters.opendp`
need libraries that ``dpaudit`` does not depend on.  They import them through
:func:`require`, so that a missing library fails at import time with one actionable message.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["INSTALL_HINT", "require"]

#: The command that installs every library the adapters need, with compatible pins.
INSTALL_HINT = 'pip install "dpaudit[thirdparty]"'


def require(module: str, *, library: str) -> ModuleType:
    """Import ``module`` or raise an ``ImportError`` telling how to install the extra.

    Parameters
    ----------
    module : str
        Dotted module name, e.g. ``"opendp.prelude"``.
    library : str
        The distribution's name for the message, e.g. ``"opendp"``.

    Raises
    ------
    ImportError
        If the import fails for any reason (not installed, or installed with an incompatible
        dependency: ``import diffprivlib`` fails with scikit-learn >= 1.7).  The original error
        is chained.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"the {library} adapters need the optional `thirdparty` extra: {INSTALL_HINT} "
            f"(importing {module!r} failed: {exc})"
        ) from exc
