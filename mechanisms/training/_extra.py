"""Import guard for the optional ``torch`` extra: a missing torch or opacus fails when a training
mechanism is built, with one message that names the extra, not at its first training with a bare
``No module named 'opacus'``."""

from __future__ import annotations

import importlib

__all__ = ["TORCH_HINT", "require_torch"]

#: The command that installs what the training audits need (torch, opacus, scikit-learn,
#: dp-accounting, matplotlib), with compatible pins.
TORCH_HINT = 'pip install "dpaudit[torch]" (in a clone: pip install -e ".[torch]")'


def require_torch(what: str) -> None:
    """Import torch and opacus, or raise an ``ImportError`` naming ``what`` and the extra."""
    for module in ("torch", "opacus"):
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ImportError(f"{what} needs the optional `torch` extra ({module} is missing): {TORCH_HINT}") from exc
