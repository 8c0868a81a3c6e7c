"""Scenarios: the pairs of neighbouring inputs an audit tries.

A :class:`Scenario` is a frozen specification: the data domain, the neighbour relation, and a
tuple of :class:`NeighborPair` ``(base, neighbor, label)``.  The audit engine samples the
mechanism on both inputs of every pair, in the order given (differential privacy is asymmetric in
the pair order, so builders add each pair together with its reverse).

An audit is only valid if its pairs really are neighbours, so a scenario built from datasets of
rows checks every pair with :func:`scenarios.relations.is_neighbor` when it is constructed.  The
one exception is :func:`custom`: inputs that are not datasets of rows (say two vectors of query
answers at distance ≤ Δ, the way other auditors specify inputs for report-noisy-max or sparse
vector) cannot be checked; the user vouches for them and reports say so.
"""

from __future__ import annotations

import numbers
from collections import Counter
from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterator, Optional, Sequence, Union

import numpy as np

from mechanisms.claims import Relation, as_relation

from .relations import as_rows, multiset_difference, neighbor_mismatch

__all__ = ["Domain", "NeighborPair", "Scenario", "from_pairs", "custom", "VOUCHED_NOTE"]

#: What reports print for a scenario whose pairs were not checked.
VOUCHED_NOTE = "pairs vouched for by the user, not checked"

#: Datasets with at most this many values in total are written out in full by ``to_dict``.
_SMALL_DATASET_VALUES = 256


class Domain(str, Enum):
    """The data domain of a scenario's inputs."""

    COUNTING = "counting"      # rows in {0,1}^d
    BOUNDED = "bounded"        # rows in [0,1]^d
    GROUPED = "grouped"        # rows in [0,1]^{groups·d}, at most one non-zero group of d
    ROWS = "custom-rows"       # user datasets of rows (checked neighbours, any values)
    CUSTOM = "custom"          # user inputs that are not datasets of rows (not checked)
    ANSWERS = "query-answers"  # query-answer vectors within a declared sensitivity (checked)

    def __str__(self) -> str:
        return self.value


_DOMAIN_TEXT = {
    Domain.COUNTING: "counting rows in {{0,1}}^{d}",
    Domain.BOUNDED: "bounded rows in [0,1]^{d}",
    Domain.GROUPED: "grouped rows in [0,1]^({groups}x{width}), at most one non-zero group",
    Domain.ROWS: "user datasets of rows ({d} columns)",
    Domain.CUSTOM: "user inputs",
    Domain.ANSWERS: "query-answer vectors",
}


def _as_domain(value: Any) -> Domain:
    if isinstance(value, Domain):
        return value
    names = tuple(member.value for member in Domain)
    if not isinstance(value, str):
        raise TypeError(f"`domain` must be one of {names}, got {value!r}")
    try:
        return Domain(value)
    except ValueError:
        raise ValueError(f"`domain` must be one of {names}, got {value!r}") from None


def _optional_int(name: str, value: Any, minimum: int) -> Optional[int]:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer or None, got {value!r}")
    if value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _frozen_array(value: Any, name: str) -> np.ndarray:
    try:
        array = np.array(value, dtype=np.float64)  # always a private copy
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be a numeric array, got {type(value).__name__}") from exc
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class NeighborPair:
    """One ordered pair of inputs (``base`` = D, ``neighbor`` = D') with a readable label.

    The arrays are private read-only float64 copies.  For datasets of rows they have shape
    ``(n, d)``; for :func:`custom` inputs any shape the mechanism accepts.
    """

    base: np.ndarray
    neighbor: np.ndarray
    label: str

    def __post_init__(self) -> None:
        if not isinstance(self.label, str) or not self.label.strip():
            raise ValueError(f"`label` must be a non-empty string, got {self.label!r}")
        object.__setattr__(self, "base", _frozen_array(self.base, "base"))
        object.__setattr__(self, "neighbor", _frozen_array(self.neighbor, "neighbor"))

    def reversed(self, label: str) -> "NeighborPair":
        """The same two inputs in the other order (D', D).

        Parameters
        ----------
        label : str
            The label of the reversed pair.
        """
        return NeighborPair(self.neighbor, self.base, label)

    def __repr__(self) -> str:
        return (f"NeighborPair(label={self.label!r}, base shape {self.base.shape}, "
                f"neighbor shape {self.neighbor.shape})")


@dataclass(frozen=True, eq=False)
class Scenario:
    """The neighbouring inputs of one audit.

    Parameters
    ----------
    domain : {"counting", "bounded", "grouped", "custom-rows", "custom"}
        Where the inputs live (see :class:`Domain`).
    relation : {"add-remove", "replace"}
        The neighbour relation the pairs satisfy (and the claim is stated under).
    pairs : sequence of NeighborPair
        At least one pair; labels must be distinct.
    n : int, optional
        The nominal dataset size the builder started from.
    d : int, optional
        The row width (number of columns); for ``grouped`` this is ``groups × group width``.
    groups : int, optional
        Number of groups (``grouped`` only).
    checked : bool
        If true (the default) every pair is checked with :func:`~scenarios.relations.is_neighbor`
        and, for the builder domains, that its rows lie in the domain; a failure raises
        ``ValueError`` naming the pair's index and label.  ``custom`` scenarios cannot be
        checked and must pass ``checked=False``: their pairs are *vouched for* by the user.
    """

    domain: Domain
    relation: Relation
    pairs: tuple[NeighborPair, ...]
    n: Optional[int] = None
    d: Optional[int] = None
    groups: Optional[int] = None
    checked: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "domain", _as_domain(self.domain))
        object.__setattr__(self, "relation", as_relation(self.relation))
        object.__setattr__(self, "n", _optional_int("n", self.n, 0))
        object.__setattr__(self, "d", _optional_int("d", self.d, 1))
        object.__setattr__(self, "groups", _optional_int("groups", self.groups, 1))
        if not isinstance(self.checked, bool):
            raise TypeError(f"`checked` must be True or False, got {self.checked!r}")
        if isinstance(self.pairs, (str, bytes)) or not isinstance(self.pairs, Sequence):
            raise TypeError(f"`pairs` must be a sequence of NeighborPair, got {self.pairs!r}")
        pairs = tuple(self.pairs)
        if not pairs:
            raise ValueError("`pairs` must hold at least one pair, got an empty sequence")
        for index, pair in enumerate(pairs):
            if not isinstance(pair, NeighborPair):
                raise TypeError(f"`pairs[{index}]` must be a NeighborPair, got {pair!r}")
        duplicates = sorted(label for label, times in Counter(p.label for p in pairs).items()
                            if times > 1)
        if duplicates:
            raise ValueError(f"pair labels must be distinct, got repeated {duplicates}")
        object.__setattr__(self, "pairs", pairs)
        if self.domain is Domain.GROUPED:
            if self.groups is None or self.d is None or self.d % self.groups:
                raise ValueError(
                    f"a grouped scenario needs `groups` dividing the row width `d`, got "
                    f"groups={self.groups!r}, d={self.d!r}"
                )
        elif self.groups is not None:
            raise ValueError(f"`groups` is only meaningful for domain 'grouped', got {self.groups!r}")
        if self.domain is Domain.CUSTOM and self.checked:
            raise ValueError(
                "a 'custom' scenario holds inputs that are not datasets of rows and cannot be "
                "checked: pass checked=False (the user vouches for the pairs)"
            )
        if self.checked:
            for index, pair in enumerate(pairs):
                self._check_pair(index, pair)

    # -- validation -------------------------------------------------------------------------
    def _check_pair(self, index: int, pair: NeighborPair) -> None:
        where = f"pair {index} ({pair.label!r})"
        try:
            base = as_rows(pair.base, name="base")
            neighbor = as_rows(pair.neighbor, name="neighbor")
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where} is not a pair of datasets of rows: {exc}") from None
        for name, rows in (("base", base), ("neighbor", neighbor)):
            problem = self._domain_problem(rows)
            if problem:
                raise ValueError(f"{where}: the {name} dataset {problem}")
        reason = neighbor_mismatch(base, neighbor, self.relation)
        if reason is not None:
            hint = ("; if D and D' are not datasets of rows but other inputs (e.g. query-answer "
                    "vectors), pass scenarios.custom([(D, D')]) instead: you vouch that they come from "
                    "neighbouring datasets and the report says so") if self.domain is Domain.ROWS else ""
            raise ValueError(f"{where} is not a neighbour pair under {self.relation.value!r}: {reason}{hint}")

    def _domain_problem(self, rows: np.ndarray) -> Optional[str]:
        if self.d is not None and rows.shape[1] != self.d:
            return f"has rows of width {rows.shape[1]}, but the scenario has d = {self.d}"
        if self.domain is Domain.ROWS or rows.shape[0] == 0:
            return None
        if self.domain is Domain.COUNTING and not np.isin(rows, (0.0, 1.0)).all():
            return "has values outside {0, 1} (counting rows)"
        if rows.min() < 0.0 or rows.max() > 1.0:
            return f"has values outside [0, 1], in [{rows.min()!r}, {rows.max()!r}]"
        if self.domain is Domain.GROUPED:
            nonzero_groups = (rows.reshape(rows.shape[0], self.groups, -1) != 0).any(axis=2).sum(1)
            if (nonzero_groups > 1).any():
                row = int(np.argmax(nonzero_groups > 1))
                return f"row {row} is non-zero in {int(nonzero_groups[row])} groups (at most 1 allowed)"
        return None

    # -- access ------------------------------------------------------------------------------
    @property
    def vouched(self) -> bool:
        """True if the pairs were not checked: the user vouches that they are neighbours."""
        return not self.checked

    @property
    def group_width(self) -> Optional[int]:
        """Columns per group (``grouped`` only)."""
        return None if self.groups is None or self.d is None else self.d // self.groups

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(pair.label for pair in self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)

    def __iter__(self) -> Iterator[NeighborPair]:
        return iter(self.pairs)

    # -- presentation ------------------------------------------------------------------------
    @property
    def check_note(self) -> str:
        """How the pairs were validated, for reports."""
        if self.vouched:
            return VOUCHED_NOTE
        return f"every pair checked to be {self.relation.value} neighbours"

    def describe(self) -> str:
        """One line for reports, e.g. ``counting rows in {0,1}^3, n = 10, add-remove, 4 pairs``."""
        text = _DOMAIN_TEXT[self.domain].format(d=self.d, groups=self.groups, width=self.group_width)
        parts = [text]
        if self.n is not None:
            parts.append(f"n = {self.n}")
        parts.append(self.relation.value)
        parts.append(f"{len(self.pairs)} pair{'s' if len(self.pairs) != 1 else ''}")
        if self.vouched:
            parts.append(VOUCHED_NOTE)
        return ", ".join(parts)

    def to_dict(self) -> dict:
        """A JSON-ready summary: settings, and per pair its label, shapes and differing rows.

        Small datasets (at most 256 values each) are included in full; for datasets of rows
        the rows only in D (``removed``) and only in D' (``added``) are always included.
        """
        return {
            "domain": self.domain.value,
            "relation": self.relation.value,
            "n": self.n,
            "d": self.d,
            "groups": self.groups,
            "checked": self.checked,
            "vouched": self.vouched,
            "description": self.describe(),
            "check": self.check_note,
            "pairs": [self._pair_dict(pair) for pair in self.pairs],
        }

    def _pair_dict(self, pair: NeighborPair) -> dict:
        entry: dict[str, Any] = {
            "label": pair.label,
            "base_shape": list(pair.base.shape),
            "neighbor_shape": list(pair.neighbor.shape),
        }
        if self.domain is not Domain.CUSTOM:
            try:
                removed, added = multiset_difference(pair.base, pair.neighbor)
            except (TypeError, ValueError):  # an unchecked pair of mismatched shapes
                pass
            else:
                entry["removed"] = removed.tolist()
                entry["added"] = added.tolist()
        for name, array in (("base", pair.base), ("neighbor", pair.neighbor)):
            if array.size <= _SMALL_DATASET_VALUES:
                entry[name] = array.tolist()
        return entry

    def __repr__(self) -> str:
        return f"Scenario({self.describe()})"


PairLike = Union[NeighborPair, tuple]


def _coerce_pairs(pairs: Any, *, rows: bool) -> tuple[NeighborPair, ...]:
    if isinstance(pairs, NeighborPair):
        pairs = [pairs]
    if isinstance(pairs, (str, bytes, np.ndarray)) or not isinstance(pairs, Sequence):
        raise TypeError(
            f"`pairs` must be a sequence of NeighborPair or (D, D') tuples, got {type(pairs).__name__}"
        )
    if len(pairs) == 0:
        raise ValueError("`pairs` must hold at least one pair, got an empty sequence")
    result = []
    for index, item in enumerate(pairs):
        if isinstance(item, NeighborPair):
            base, neighbor, label = item.base, item.neighbor, item.label
        elif isinstance(item, tuple) and len(item) in (2, 3):
            base, neighbor = item[0], item[1]
            label = item[2] if len(item) == 3 else f"pair #{index}"
        else:
            raise TypeError(
                f"`pairs[{index}]` must be a NeighborPair or a (D, D') / (D, D', label) tuple, "
                f"got {type(item).__name__}"
            )
        if rows:
            try:
                base = as_rows(base, name=f"pairs[{index}] D")
                neighbor = as_rows(neighbor, name=f"pairs[{index}] D'")
            except (TypeError, ValueError) as exc:
                raise type(exc)(f"pair {index}: {exc}") from None
        result.append(NeighborPair(base, neighbor, label))
    return tuple(result)


def from_pairs(pairs: Sequence[PairLike], relation: Any = "add-remove") -> Scenario:
    """A checked ``"custom-rows"`` scenario from the user's own pairs of datasets.

    Parameters
    ----------
    pairs : sequence of NeighborPair, (D, D') or (D, D', label)
        Datasets of rows (``(n, d)`` arrays, 1-D arrays read as one column).  Unlabelled pairs
        are called ``"pair #i"``.
    relation : {"add-remove", "replace"}

    Raises
    ------
    ValueError
        If a pair is not a neighbour pair under ``relation`` (the message names its index and
        label and says why), or if the pairs' row widths differ.
    """
    relation = as_relation(relation)
    coerced = _coerce_pairs(pairs, rows=True)
    widths = sorted({array.shape[1] for pair in coerced for array in (pair.base, pair.neighbor)})
    if len(widths) != 1:
        raise ValueError(f"all datasets in `pairs` must have the same number of columns, got {widths}")
    return Scenario(Domain.ROWS, relation, coerced, d=widths[0], checked=True)


def custom(pairs: Sequence[PairLike], relation: Any = "add-remove") -> Scenario:
    """An unchecked scenario of inputs that are not datasets of rows, vouched for by the user.

    Use it when the mechanism takes, say, a vector of query answers: the user asserts that each
    pair (e.g. two answer vectors at distance ≤ Δ) comes from neighbouring datasets under
    ``relation``.  Nothing is checked, and :attr:`Scenario.vouched` is true so reports print
    "pairs vouched for by the user, not checked".  The arrays are passed to the mechanism as
    given (as float64).
    """
    relation = as_relation(relation)
    return Scenario(Domain.CUSTOM, relation, _coerce_pairs(pairs, rows=False), checked=False)
