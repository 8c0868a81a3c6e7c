"""Scenario builders for the three data domains of the reference mechanisms.

Every builder returns a checked :class:`~scenarios.scenario.Scenario` whose pairs, by default,
are the **worst-case pairs**: the ones whose query difference f(D) − f(D') reaches the corners
of the sensitivity space of the sum query f(X) = Σ rows, each together with its exact reverse
(D', D), since differential privacy is asymmetric in the order of the pair.

Worst-case pairs (n = dataset size, 1 = all-ones row, 0 = all-zeros row):

- ``counting`` / ``bounded``, add-remove: D = base(n); ("add all-ones row", D, D + 1),
  ("remove all-ones row", D + 1, D), and the same two with the all-zeros row.  The all-ones
  row gives ‖f(D) − f(D')‖₂ = √d, the l2 sensitivity; the all-zeros row changes only n, which
  is what the correlated Gaussian mechanism's size estimate sees (Lebeda, Algorithm 1).
- ``counting`` / ``bounded``, replace: C = base(n − 1); ("replace all-ones row by all-zeros
  row", C + 1, C + 0) and its reverse: ‖f(D) − f(D')‖₂ = √d at the same size.
- ``grouped`` (rows in [0,1]^{groups·d}, group j = columns j·d:(j+1)·d, at most one non-zero
  group per row; an all-zeros row counts in no group, following Lebeda's Algorithm 2 line 8):
  add-remove: add/remove the all-ones row of group 0 and the all-zeros row; replace: for
  d ≥ 2 the row (1,…,1,0) of group 0 replaced by its complement (0,…,0,1) inside the group, the
  all-ones row of group 0 replaced by the all-zeros row, and (groups ≥ 2) the all-ones row moved
  from group 0 to group 1; each with its reverse.

Deterministic base datasets (row i = 0, …, n − 1, column j):

- counting: x_ij = (i + j) mod 2 (a checkerboard of 0/1, column sums ≈ n/2);
- bounded: x_ij = ((i + j) mod 3)/2 ∈ {0, ½, 1};
- grouped: row i is non-zero only in group i mod groups, where its k-th entry is
  1 − ((i + k) mod 2)/2 ∈ {1, ½}.

``pairs="random"`` adds ``count`` random pairs to the worst-case ones, drawn with
``numpy.random.default_rng(seed)``: each from a fresh random base dataset of size n with rows
uniform on the domain (grouped: a uniformly chosen group, or none, with a uniform block), and a
random neighbour (add or remove a uniform row under add-remove, the direction chosen by a fair
coin; replace a uniformly chosen row by a different random row under replace).

References
----------
C. Lebeda, "Better Gaussian Mechanism using Correlated Noise", Algorithms 1 and 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Optional

import numpy as np

from mechanisms.claims import Relation, as_relation
from mechanisms.validation import check_choice, check_int

from .scenario import Domain, NeighborPair, Scenario

__all__ = ["PAIR_MODES", "counting", "bounded", "grouped"]

#: How a builder chooses its pairs.
PAIR_MODES = ("worst-case", "random")
PairsMode = Literal["worst-case", "random"]


# -- row spaces: one small class per domain, no branching on the domain elsewhere --------------
@dataclass(frozen=True)
class _RowSpace:
    """Rows of ``width`` columns; subclasses define the base dataset and random rows."""

    width: int

    domain = Domain.BOUNDED
    groups: Optional[int] = None

    def base(self, n: int) -> np.ndarray:
        i, j = np.ogrid[:n, : self.width]
        return np.broadcast_to(((i + j) % 3) / 2.0, (n, self.width)).astype(np.float64)

    def random_rows(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.random((size, self.width))

    def extreme_pairs(self, n: int, relation: Relation) -> list[NeighborPair]:
        ones, zeros = np.ones(self.width), np.zeros(self.width)
        if relation is Relation.ADD_REMOVE:
            base = self.base(n)
            return (_add_remove(base, ones, "all-ones row")
                    + _add_remove(base, zeros, "all-zeros row"))
        rest = self.base(n - 1)
        return _replace(rest, ones, "all-ones row", zeros, "all-zeros row")


@dataclass(frozen=True)
class _CountingRows(_RowSpace):
    domain = Domain.COUNTING

    def base(self, n: int) -> np.ndarray:
        i, j = np.ogrid[:n, : self.width]
        return np.broadcast_to((i + j) % 2, (n, self.width)).astype(np.float64)

    def random_rows(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.integers(0, 2, size=(size, self.width)).astype(np.float64)


@dataclass(frozen=True)
class _GroupedRows(_RowSpace):
    domain = Domain.GROUPED

    @property
    def group_width(self) -> int:
        return self.width // self.groups

    def _in_group(self, group: int, block: np.ndarray) -> np.ndarray:
        row = np.zeros(self.width)
        row[group * self.group_width:(group + 1) * self.group_width] = block
        return row

    def base(self, n: int) -> np.ndarray:
        d = self.group_width
        i = np.arange(n)[:, None]
        blocks = 1.0 - ((i + np.arange(d)[None, :]) % 2) / 2.0          # (n, d), values {1, 1/2}
        data = np.zeros((n, self.groups, d))
        data[np.arange(n), np.arange(n) % self.groups] = blocks
        return data.reshape(n, self.width)

    def random_rows(self, rng: np.random.Generator, size: int) -> np.ndarray:
        d = self.group_width
        group = rng.integers(0, self.groups + 1, size=size)  # == groups: the all-zeros row
        blocks = rng.random((size, d))
        data = np.zeros((size, self.groups + 1, d))
        data[np.arange(size), group] = blocks
        return data[:, : self.groups].reshape(size, self.width)

    def extreme_pairs(self, n: int, relation: Relation) -> list[NeighborPair]:
        d = self.group_width
        ones0 = self._in_group(0, np.ones(d))
        zeros = np.zeros(self.width)
        if relation is Relation.ADD_REMOVE:
            base = self.base(n)
            return (_add_remove(base, ones0, "all-ones row in group 0")
                    + _add_remove(base, zeros, "all-zeros row"))
        rest = self.base(n - 1)
        pairs: list[NeighborPair] = []
        if d >= 2:
            head = self._in_group(0, np.r_[np.ones(d - 1), 0.0])
            tail = self._in_group(0, np.r_[np.zeros(d - 1), 1.0])
            pairs += _replace(rest, head, "(1,…,1,0) in group 0", tail, "its complement (0,…,0,1)",
                              reverse_names=("(0,…,0,1) in group 0", "its complement (1,…,1,0)"))
        pairs += _replace(rest, ones0, "all-ones row in group 0", zeros, "all-zeros row")
        if self.groups >= 2:
            ones1 = self._in_group(1, np.ones(d))
            pairs += [
                NeighborPair(np.vstack([rest, ones0]), np.vstack([rest, ones1]),
                             "move all-ones row from group 0 to group 1"),
                NeighborPair(np.vstack([rest, ones1]), np.vstack([rest, ones0]),
                             "move all-ones row from group 1 to group 0"),
            ]
        return pairs


def _add_remove(base: np.ndarray, row: np.ndarray, name: str) -> list[NeighborPair]:
    """("add <name>", D, D + row) and its exact reverse ("remove <name>", D + row, D)."""
    bigger = np.vstack([base, row[None, :]])
    return [NeighborPair(base, bigger, f"add {name}"), NeighborPair(bigger, base, f"remove {name}")]


def _replace(rest: np.ndarray, row: np.ndarray, name: str, other: np.ndarray, other_name: str,
             reverse_names: Optional[tuple[str, str]] = None) -> list[NeighborPair]:
    """(rest + row, rest + other) and its exact reverse."""
    first = np.vstack([rest, row[None, :]])
    second = np.vstack([rest, other[None, :]])
    back_name, back_other = reverse_names or (other_name, name)
    return [NeighborPair(first, second, f"replace {name} by {other_name}"),
            NeighborPair(second, first, f"replace {back_name} by {back_other}")]


def _random_pairs(space: _RowSpace, n: int, relation: Relation, count: int,
                  rng: np.random.Generator) -> list[NeighborPair]:
    pairs = []
    for number in range(1, count + 1):  # a handful of pairs: the loop is not a hot path
        base = space.random_rows(rng, n)
        if relation is Relation.REPLACE:
            index = int(rng.integers(n))
            new_row = space.random_rows(rng, 1)[0]
            while np.array_equal(new_row, base[index]):  # probability < 1 each time
                new_row = space.random_rows(rng, 1)[0]
            neighbor = base.copy()
            neighbor[index] = new_row
            kind = "replace"
        elif n == 0 or rng.random() < 0.5:
            neighbor = np.vstack([base, space.random_rows(rng, 1)])
            kind = "add"
        else:
            neighbor = np.delete(base, int(rng.integers(n)), axis=0)
            kind = "remove"
        pairs.append(NeighborPair(base, neighbor, f"random #{number} ({kind})"))
    return pairs


def _build(space: _RowSpace, n: Any, relation: Any, pairs: Any, count: Any, seed: Any) -> Scenario:
    relation = as_relation(relation)
    n = check_int("n", n, minimum=0)
    if relation is Relation.REPLACE and n < 1:
        raise ValueError(
            f"`n` must be an integer >= 1 under the 'replace' relation (a row must exist to be "
            f"replaced), got {n!r}"
        )
    mode = check_choice("pairs", pairs, PAIR_MODES)
    if mode == "random":
        if count is None:
            raise ValueError("`count` must be given with pairs='random', got None")
        count = check_int("count", count, minimum=1)
        if seed is not None:
            seed = check_int("seed", seed, minimum=0)
    else:
        for name, value in (("count", count), ("seed", seed)):
            if value is not None:
                raise ValueError(f"`{name}` is only used with pairs='random', got {value!r}")
    built = space.extreme_pairs(n, relation)
    if mode == "random":
        built += _random_pairs(space, n, relation, count, np.random.default_rng(seed))
    return Scenario(space.domain, relation, tuple(built), n=n, d=space.width,
                    groups=space.groups, checked=True)


def counting(d: int, n: int = 10, relation: Any = "add-remove", *, pairs: PairsMode = "worst-case",
             count: Optional[int] = None, seed: Optional[int] = None) -> Scenario:
    """Datasets of counting rows in {0,1}^d (d counting queries, one bit per individual).

    Parameters
    ----------
    d : int
        Row width (number of counting queries), ≥ 1.
    n : int
        Size of the base datasets: ≥ 0 under add-remove, ≥ 1 under replace.
    relation : {"add-remove", "replace"}
    pairs : {"worst-case", "random"}
        ``"random"`` adds ``count`` random pairs to the worst-case ones.
    count : int, optional
        Number of random pairs (required with ``pairs="random"``, else must be omitted).
    seed : int, optional
        Seed of ``numpy.random.default_rng`` for the random pairs.

    Returns
    -------
    Scenario
        Domain ``"counting"``; the worst-case pairs reach ‖f(D) − f(D')‖₂ = √d in both
        directions (module docstring).
    """
    return _build(_CountingRows(check_int("d", d, minimum=1)), n, relation, pairs, count, seed)


def bounded(d: int, n: int = 10, relation: Any = "add-remove", *, pairs: PairsMode = "worst-case",
            count: Optional[int] = None, seed: Optional[int] = None) -> Scenario:
    """Datasets of bounded rows in [0,1]^d (d bounded queries, e.g. clipped values).

    Parameters
    ----------
    d : int
        Row width, ≥ 1.
    n : int
        Size of the base datasets: ≥ 0 under add-remove, ≥ 1 under replace.
    relation : {"add-remove", "replace"}
    pairs : {"worst-case", "random"}
        ``"random"`` adds ``count`` random pairs (rows uniform on [0,1]^d) to the worst-case ones.
    count : int, optional
        Number of random pairs (required with ``pairs="random"``, else must be omitted).
    seed : int, optional
        Seed of ``numpy.random.default_rng`` for the random pairs.

    Returns
    -------
    Scenario
        Domain ``"bounded"``.  The worst-case pairs are those of :func:`counting` (the
        corners of [0,1]^d reach the l2 sensitivity √d); the base datasets hold fractional
        values too (module docstring).
    """
    return _build(_RowSpace(check_int("d", d, minimum=1)), n, relation, pairs, count, seed)


def grouped(groups: int, d: int, n: int = 10, relation: Any = "add-remove", *,
            pairs: PairsMode = "worst-case", count: Optional[int] = None,
            seed: Optional[int] = None) -> Scenario:
    """Datasets for Lebeda's Algorithm 2: rows in [0,1]^{groups·d} with at most one non-zero group.

    Parameters
    ----------
    groups : int
        Number of disjoint groups of queries, ≥ 1.
    d : int
        Queries per group, ≥ 1.  Group j is columns ``j*d:(j+1)*d``; the scenario's row width
        ``Scenario.d`` is ``groups * d``.
    n : int
        Size of the base datasets: ≥ 0 under add-remove, ≥ 1 under replace.
    relation : {"add-remove", "replace"}
    pairs : {"worst-case", "random"}
        ``"random"`` adds ``count`` random pairs to the worst-case ones.
    count : int, optional
        Number of random pairs (required with ``pairs="random"``, else must be omitted).
    seed : int, optional
        Seed of ``numpy.random.default_rng`` for the random pairs.

    Returns
    -------
    Scenario
        Domain ``"grouped"`` with ``Scenario.groups = groups`` and ``Scenario.d = groups * d``.
    """
    groups = check_int("groups", groups, minimum=1)
    d = check_int("d", d, minimum=1)
    return _build(_GroupedRows(groups * d, groups), n, relation, pairs, count, seed)
