"""Immutable parameter objects for mechanisms that are not dataclasses.

:class:`FrozenParameters` is the mixin every reference mechanism (and every mechanism of
:mod:`mechanisms.zoo` built the same way) uses: the object is frozen once its constructor has
run, and ``repr``, ``==`` and ``hash`` come from the constructor's arguments.  Mechanisms written
outside this package may use it too.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FrozenParameters"]


class FrozenParameters:
    """Mixin: immutable after construction; ``repr``, ``==`` and ``hash`` from the parameters.

    The reference mechanisms derive attributes (σ, the default sensitivity, the claim) from
    their parameters, so they are not dataclasses: ``dataclasses.replace`` would carry a
    derived σ over to new parameters and silently under-noise.  Subclasses call
    :meth:`_freeze` with their constructor arguments at the end of ``__init__``.
    """

    _params: tuple[tuple[str, Any], ...]

    def _freeze(self, **params: Any) -> None:
        object.__setattr__(self, "_params", tuple(params.items()))

    def __setattr__(self, name: str, value: Any) -> None:
        if "_params" in self.__dict__:
            raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._params == other._params  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self).__qualname__, self._params))

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self._params)
        return f"{type(self).__name__}({args})"
