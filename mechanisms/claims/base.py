"""What every privacy claim is, and the registry that turns a table or a dict into one.

A claim is a lower bound on the trade-off curve of every pair of neighbours (Dong, Roth & Su
2022, *Gaussian differential privacy*, JRSS-B): a claim with curve f says T(M(D), M(D')) ≥ f for
all neighbours D ~ D'.  Every claim therefore also implies a privacy profile
δ_claim(ε') = sup_α [1 − f(α) − e^{ε'} α] and an ε(δ) curve (docs/ground-truth.md §3).  The audit
engine compares certified bounds with these curves, so it never needs to know which notion of
privacy stated the claim.

**Registry.**  A subclass that sets ``kind`` registers itself (:meth:`Claim.__init_subclass__`):
that name is the ``type`` of its scenario-file table and of its :meth:`Claim.to_dict` form, and
:meth:`Claim.from_config` builds it from such a table.  Adding a claim type is one new class in
one file: the scenario files, the CLI, the reports and the audit engine find it through
:func:`claim_types`, :func:`claim_from_config` and :func:`claim_from_dict`.
"""

from __future__ import annotations

import abc
import numbers
from enum import Enum
from typing import Any, Callable, ClassVar, Mapping, Optional

import numpy as np

__all__ = ["Relation", "as_relation", "Claim", "claim_types", "claim_from_config", "claim_from_dict",
           "claim_label"]


class Relation(str, Enum):
    """Neighbour relations: add or remove one row, or replace one row (same size)."""

    ADD_REMOVE = "add-remove"
    REPLACE = "replace"

    def __str__(self) -> str:
        return self.value


def as_relation(value) -> Relation:
    """Parse a relation (exact names only), naming the parameter on failure."""
    if isinstance(value, Relation):
        return value
    if not isinstance(value, str):
        raise TypeError(f"`relation` must be 'add-remove' or 'replace', got {value!r}")
    try:
        return Relation(value)
    except ValueError:
        raise ValueError(f"`relation` must be 'add-remove' or 'replace', got {value!r}") from None


#: Claim classes by ``kind``, in registration order.
_REGISTRY: dict[str, type["Claim"]] = {}
#: Keys every claim table may hold besides its own ``config_keys``.
COMMON_KEYS = ("type", "relation")


class Claim(abc.ABC):
    """What the audit engine needs from a claim, whatever privacy notion states it.

    Every claim has ``relation`` (:class:`Relation`), ``epsilon`` and ``delta`` (the headline
    (ε, δ) point reports state: δ = ``reference_delta``, ε = ``epsilon_at(δ)``),
    ``reference_delta``, a ``label`` (the claim without its relation, e.g. ``(1, 1e-05)-DP``) and
    ``gaussian_mu`` (μ for a claim whose curve is G_μ, else None).  Methods: :meth:`tradeoff` (the
    claimed lower bound on every neighbour pair's trade-off curve, symmetric f = f⁻¹),
    :meth:`delta_at` (implied profile), :meth:`epsilon_at` (implied ε(δ)), :meth:`to_dict` and the
    registry's :meth:`from_config`.  A certified point strictly below ``tradeoff`` refutes it.

    Subclasses that set ``kind`` are registered; ``config_keys`` lists the keys of their table
    (``required_keys`` those that must be present), each passed to the constructor as a keyword
    argument by the default :meth:`from_config`.
    """

    relation: Relation
    #: The ``type`` of this claim's table and dict form (set by registered subclasses).
    kind: ClassVar[Optional[str]] = None
    #: The keys of its table besides ``type`` and ``relation``, and those of them that are required.
    config_keys: ClassVar[tuple[str, ...]] = ()
    required_keys: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        kind = cls.__dict__.get("kind")
        if kind is not None:
            if kind in _REGISTRY and _REGISTRY[kind].__qualname__ != cls.__qualname__:
                raise ValueError(f"claim kind {kind!r} is already registered by {_REGISTRY[kind].__qualname__}")
            _REGISTRY[kind] = cls

    @abc.abstractmethod
    def tradeoff(self, alpha) -> np.ndarray:
        """Claimed lower bound on every neighbour pair's trade-off curve."""

    @abc.abstractmethod
    def delta_at(self, epsilon) -> np.ndarray:
        """The largest δ the claim allows at ε' (its implied privacy profile)."""

    @abc.abstractmethod
    def epsilon_at(self, delta: float) -> float:
        """The largest ε the claim allows at δ'."""

    @property
    @abc.abstractmethod
    def label(self) -> str:
        """The claim in a few characters, without its relation, e.g. ``(1, 1e-05)-DP``."""

    @property
    def gaussian_mu(self) -> Optional[float]:
        """μ when the claimed curve is G_μ (a μ-GDP claim), else None: only then is μ itself a
        quantity the claim bounds (an (ε, δ) claim allows every μ at some α)."""
        return None

    def __str__(self) -> str:
        return f"{self.label} [{self.relation}]"

    def to_dict(self) -> dict:
        """JSON-able description; :func:`claim_from_dict` inverts it."""
        return {"type": self.kind, **{key: _plain(getattr(self, key)) for key in self.config_keys},
                "relation": self.relation.value}

    @classmethod
    def from_config(cls, table: Mapping[str, Any], relation: Any, *,
                    load_object: Optional[Callable[[str, str], Any]] = None) -> "Claim":
        """The claim a scenario-file table (or a dict) describes, under ``relation``.

        Unknown and missing keys are refused, and numbers are checked to be numbers, each with a
        message that names the key (``\\`mu\\` is missing (required by a gdp claim)``) so that the
        scenario-file loader can prefix the table's path.  ``load_object(key, "module:attribute")``
        imports an object a table names (only the profile claim uses it).
        """
        _check_keys(cls, table)
        values = {key: _number_or_numbers(key, table[key]) for key in cls.config_keys if key in table}
        return cls(**values, relation=relation)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Claim":
        """Inverse of :meth:`to_dict`."""
        return cls.from_config({k: v for k, v in data.items() if k not in COMMON_KEYS},
                               data.get("relation", Relation.ADD_REMOVE.value))


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _check_keys(cls: type[Claim], table: Mapping[str, Any]) -> None:
    article = "an" if cls.kind[0] in "aeiou" else "a"
    known = cls.config_keys
    for key in table:
        if key not in known and key not in COMMON_KEYS:
            raise ValueError(f"`{key}` is not a known key of {article} {cls.kind} claim (known: "
                             f"{', '.join(known)}), got {table[key]!r}")
    for key in cls.required_keys:
        if key not in table:
            raise ValueError(f"`{key}` is missing (required by {article} {cls.kind} claim)")


def _number_or_numbers(key: str, value: Any) -> Any:
    """A real number, or a non-empty list of them (TOML arrays); booleans are not numbers."""
    items = value if isinstance(value, (list, tuple)) else [value]
    if not items or any(isinstance(v, bool) or not isinstance(v, numbers.Real) for v in items):
        raise TypeError(f"`{key}` must be a number or a non-empty array of numbers, got {value!r}")
    return value


def claim_types() -> dict[str, type[Claim]]:
    """The registered claim classes by ``kind`` (a copy)."""
    return dict(_REGISTRY)


def _claim_class(kind: Any) -> type[Claim]:
    if kind not in _REGISTRY:
        raise ValueError(f"claim `type` must be one of {', '.join(map(repr, _REGISTRY))}, got {kind!r}")
    return _REGISTRY[kind]


def claim_from_config(table: Mapping[str, Any], relation: Any, *,
                      load_object: Optional[Callable[[str, str], Any]] = None) -> Claim:
    """The claim of a scenario file's ``[claim]`` table (its ``type`` picks the class)."""
    return _claim_class(table.get("type")).from_config(table, relation, load_object=load_object)


def claim_from_dict(data: Mapping[str, Any]) -> Claim:
    """Inverse of ``Claim.to_dict`` (a profile claim comes back as its tabulated step function)."""
    return _claim_class(data.get("type")).from_dict(data)


def claim_label(data: Mapping[str, Any]) -> str:
    """The label of a claim's dict form (``Claim.to_dict()``), e.g. ``(1, 1e-05)-DP``; the bare
    type for a kind this process does not know (a report written by another program)."""
    kind = data.get("type")
    if kind not in _REGISTRY:
        return str(kind)
    try:
        return claim_from_dict(data).label
    except (TypeError, ValueError, KeyError):
        return str(kind)
