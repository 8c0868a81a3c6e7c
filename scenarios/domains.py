"""Input domains a pair search explores: datasets of rows, and vectors of query answers.

A *row domain* says which rows a dataset may hold and which sizes n it may have; neighbouring
pairs are then built and checked under the add-remove or replace relation
(:mod:`scenarios.relations`).  Three kinds of rows:

- :class:`Box`: real rows in [lo, hi]^d;
- :class:`FiniteRows`: every column takes values in its own finite set (integer ranges and
  categories are the usual cases, see :func:`integers`, :func:`categories`);
- :class:`GeneratedRows`: rows drawn by a user generator ``generator(rng, size) -> (size, d)``
  (no corners, no membership check beyond the row width).

An :class:`AnswerVectors` domain holds query-answer vectors a ∈ [lo, hi]^k; a pair (a, a') is a
neighbour pair when ‖a − a'‖ ≤ Δ in the declared norm (l1, l2 or per-coordinate, i.e. l∞), the
input model of the DP-testing literature (Ding et al., "Detecting violations of differential
privacy", CCS 2018).  Such pairs are *checked* against the declared sensitivity, not vouched for.

Every domain answers :meth:`pair_problem` (``None`` for a valid pair, else the reason), and
describes itself for reports.  Domains are frozen; they hold no random state.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from mechanisms.claims import Relation

from .relations import as_rows, neighbor_mismatch

__all__ = ["Box", "FiniteRows", "GeneratedRows", "AnswerVectors", "integers", "categories",
           "NORMS", "check_sizes"]

#: Norms in which a query-answer sensitivity can be declared.
NORMS = ("l1", "l2", "per-coordinate")


def check_sizes(n: Any, *, minimum: int = 0) -> tuple[int, ...]:
    """``n`` given (an int) or searched over a small range ``(n_min, n_max)`` inclusive."""
    if isinstance(n, numbers.Integral) and not isinstance(n, bool):
        low = high = int(n)
    elif isinstance(n, Sequence) and len(n) == 2 and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in n):
        low, high = int(n[0]), int(n[1])
    else:
        raise TypeError(f"`n` must be an integer or a pair (n_min, n_max) of integers, got {n!r}")
    if low < minimum or high < low or high - low > 64:
        raise ValueError(f"`n` must satisfy {minimum} <= n_min <= n_max <= n_min + 64, got {n!r}")
    return tuple(range(low, high + 1))


def _vector(name: str, value: Any, width: Optional[int] = None) -> np.ndarray:
    try:
        array = np.array(value, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be a vector of numbers, got {value!r}") from exc
    if width is not None and array.size == 1:
        array = np.full(width, array[0])
    if array.size == 0 or not np.all(np.isfinite(array)):
        raise ValueError(f"`{name}` must be a non-empty vector of finite numbers, got {value!r}")
    array.setflags(write=False)
    return array


class _RowDomain:
    """Shared behaviour of row domains: sizes, neighbour checks, presentation."""

    width: int
    sizes: tuple[int, ...]

    def random_rows(self, rng: np.random.Generator, size: int) -> np.ndarray:
        raise NotImplementedError

    def corners(self) -> np.ndarray:
        """Extreme rows worth trying (an empty (0, d) array when there are none)."""
        return np.zeros((0, self.width))

    def mutate_rows(self, rows: np.ndarray, rng: np.random.Generator, spread: float) -> np.ndarray:
        """Rows nearby (same shape): a random move of relative size ``spread``."""
        return self.random_rows(rng, rows.shape[0]) if rows.shape[0] else rows

    def row_problem(self, rows: np.ndarray) -> Optional[str]:
        return None

    def pair_problem(self, base: Any, neighbor: Any, relation: Relation) -> Optional[str]:
        """``None`` if (base, neighbor) are neighbours of this domain under ``relation``."""
        try:
            a, b = as_rows(base, name="base"), as_rows(neighbor, name="neighbor")
        except (TypeError, ValueError) as exc:
            return f"is not a pair of datasets of rows: {exc}"
        for name, rows in (("base", a), ("neighbor", b)):
            if rows.shape[1] != self.width:
                return f"the {name} dataset has rows of width {rows.shape[1]}, not {self.width}"
            problem = self.row_problem(rows) if rows.shape[0] else None
            if problem:
                return f"the {name} dataset {problem}"
        smaller = min(a.shape[0], b.shape[0])
        if smaller not in self.sizes:
            return f"the smaller dataset has {smaller} rows, outside the domain's sizes {self.sizes}"
        return neighbor_mismatch(a, b, relation)

    def example(self) -> np.ndarray:
        """A dataset of the domain (for checking that a mechanism accepts its inputs)."""
        return self.random_rows(np.random.default_rng(0), max(self.sizes[0], 1))

    def _size_text(self) -> str:
        if len(self.sizes) == 1:
            return f"n = {self.sizes[0]}"
        return f"n in {self.sizes[0]}..{self.sizes[-1]}"


@dataclass(frozen=True, eq=False)
class Box(_RowDomain):
    """Real rows in the box [lo, hi]^d (a scalar bound applies to every column)."""

    lo: Any
    hi: Any
    n: Any = 10
    d: Optional[int] = None

    def __post_init__(self) -> None:
        width = None if self.d is None else int(self.d)
        lo, hi = _vector("lo", self.lo, width), _vector("hi", self.hi, width)
        if lo.size == 1 and hi.size > 1:
            lo = _vector("lo", np.full(hi.size, lo[0]))
        if hi.size == 1 and lo.size > 1:
            hi = _vector("hi", np.full(lo.size, hi[0]))
        if lo.shape != hi.shape or not np.all(lo < hi):
            raise ValueError(f"`lo` and `hi` must have one length and lo < hi, got lo={self.lo!r}, "
                             f"hi={self.hi!r}")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        object.__setattr__(self, "d", lo.size)
        object.__setattr__(self, "sizes", check_sizes(self.n))

    @property
    def width(self) -> int:
        return int(self.d)

    def random_rows(self, rng, size):
        return self.lo + (self.hi - self.lo) * rng.random((size, self.width))

    def corners(self) -> np.ndarray:
        """All 2^d corners (at most 256: for d > 8, the two all-lo / all-hi corners and the d
        corners with one coordinate flipped from each)."""
        if self.width <= 8:
            bits = (np.arange(1 << self.width)[:, None] >> np.arange(self.width)) & 1
        else:
            eye = np.eye(self.width, dtype=np.int64)
            bits = np.vstack([np.zeros((1, self.width), np.int64), np.ones((1, self.width), np.int64),
                              eye, 1 - eye])
        return np.where(bits == 1, self.hi, self.lo)

    def mutate_rows(self, rows, rng, spread):
        moved = rows + rng.normal(0.0, spread, rows.shape) * (self.hi - self.lo)
        snap = rng.random(rows.shape) < 0.2  # extremes matter: sometimes jump to a bound
        moved = np.where(snap, np.where(moved > (self.lo + self.hi) / 2, self.hi, self.lo), moved)
        return np.clip(moved, self.lo, self.hi)

    def row_problem(self, rows):
        if np.any(rows < self.lo) or np.any(rows > self.hi):
            return f"has values outside the box [{self.lo.tolist()}, {self.hi.tolist()}]"
        return None

    def describe(self) -> str:
        return f"rows in the box [{self.lo.tolist()}, {self.hi.tolist()}], {self._size_text()}"

    def to_dict(self) -> dict:
        return {"kind": "box", "lo": self.lo.tolist(), "hi": self.hi.tolist(), "sizes": list(self.sizes)}


@dataclass(frozen=True, eq=False)
class FiniteRows(_RowDomain):
    """Rows whose column j takes values in the finite set ``values[j]``."""

    values: Any
    n: Any = 10

    def __post_init__(self) -> None:
        if isinstance(self.values, (str, bytes)) or not isinstance(self.values, Sequence) \
                or not self.values:
            raise TypeError(f"`values` must be a non-empty sequence of value sets, one per column, "
                            f"got {self.values!r}")
        columns = []
        for j, column in enumerate(self.values):
            unique = np.unique(_vector(f"values[{j}]", column))
            unique.setflags(write=False)
            columns.append(unique)
        object.__setattr__(self, "values", tuple(columns))
        object.__setattr__(self, "sizes", check_sizes(self.n))

    @property
    def width(self) -> int:
        return len(self.values)

    def random_rows(self, rng, size):
        return np.stack([rng.choice(column, size) for column in self.values], axis=1) \
            if size else np.zeros((0, self.width))

    def corners(self) -> np.ndarray:
        """Every combination of each column's extremes, or every row if there are ≤ 64 rows."""
        if np.prod([float(c.size) for c in self.values]) <= 64:
            grids = np.meshgrid(*self.values, indexing="ij")
        else:
            grids = np.meshgrid(*[np.unique([c[0], c[-1]]) for c in self.values], indexing="ij")
        return np.stack([g.reshape(-1) for g in grids], axis=1)[:256]

    def mutate_rows(self, rows, rng, spread):
        moved = rows.copy()
        for j, column in enumerate(self.values):
            change = rng.random(rows.shape[0]) < max(spread, 1.0 / self.width)
            if change.any():
                moved[change, j] = rng.choice(column, int(change.sum()))
        return moved

    def row_problem(self, rows):
        for j, column in enumerate(self.values):
            if not np.isin(rows[:, j], column).all():
                return f"has values in column {j} outside its set {column.tolist()}"
        return None

    def describe(self) -> str:
        sets = "; ".join(f"{c.tolist()}" if c.size <= 8 else f"{c.size} values in [{c[0]:g}, {c[-1]:g}]"
                         for c in self.values)
        return f"rows with columns in finite sets ({sets}), {self._size_text()}"

    def to_dict(self) -> dict:
        return {"kind": "finite", "values": [c.tolist() for c in self.values], "sizes": list(self.sizes)}


def integers(lo: int, hi: int, d: int = 1, n: Any = 10) -> FiniteRows:
    """Integer rows: every column in {lo, …, hi}."""
    for name, value in (("lo", lo), ("hi", hi), ("d", d)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"`{name}` must be an integer, got {value!r}")
    if hi < lo or hi - lo > 10_000 or d < 1:
        raise ValueError(f"`lo`, `hi`, `d` must satisfy lo <= hi <= lo + 10000 and d >= 1, got "
                         f"lo={lo!r}, hi={hi!r}, d={d!r}")
    return FiniteRows([list(range(lo, hi + 1))] * d, n)


def categories(count: int, n: Any = 10) -> FiniteRows:
    """One categorical column with categories coded 0, …, count − 1."""
    return integers(0, count - 1, 1, n)


@dataclass(frozen=True, eq=False)
class GeneratedRows(_RowDomain):
    """Rows drawn by ``generator(rng, size) -> (size, d)`` array (the user's row distribution).

    No corners are known and membership is not checked beyond the width; pairs are still
    checked to be neighbours.
    """

    generator: Callable[[np.random.Generator, int], Any]
    d: int
    n: Any = 10

    def __post_init__(self) -> None:
        if not callable(self.generator):
            raise TypeError(f"`generator` must be callable (rng, size) -> (size, d), got {self.generator!r}")
        if isinstance(self.d, bool) or not isinstance(self.d, numbers.Integral) or self.d < 1:
            raise ValueError(f"`d` must be an integer >= 1, got {self.d!r}")
        object.__setattr__(self, "sizes", check_sizes(self.n))

    @property
    def width(self) -> int:
        return int(self.d)

    def random_rows(self, rng, size):
        rows = np.asarray(self.generator(rng, size), dtype=np.float64)
        if rows.ndim == 1 and self.width == 1:
            rows = rows.reshape(-1, 1)
        if rows.shape != (size, self.width) or not np.all(np.isfinite(rows)):
            raise ValueError(f"row generator {getattr(self.generator, '__name__', self.generator)!r} "
                             f"must return a finite ({size}, {self.width}) array, got shape {rows.shape}")
        return rows

    def mutate_rows(self, rows, rng, spread):
        moved = rows.copy()
        change = rng.random(rows.shape[0]) < max(spread, 0.25)
        if change.any():
            moved[change] = self.random_rows(rng, int(change.sum()))
        return moved

    def describe(self) -> str:
        name = getattr(self.generator, "__name__", type(self.generator).__name__)
        return f"rows of width {self.width} from generator {name!r}, {self._size_text()}"

    def to_dict(self) -> dict:
        return {"kind": "generated", "generator": getattr(self.generator, "__name__", repr(self.generator)),
                "d": self.width, "sizes": list(self.sizes)}


@dataclass(frozen=True, eq=False)
class AnswerVectors:
    """Query-answer vectors a ∈ [lo, hi]^k; (a, a') are neighbours iff 0 < ‖a − a'‖ ≤ Δ.

    Parameters
    ----------
    k : int
        Number of queries.
    lo, hi : float or sequence
        The box the answers live in.
    norm : {"l1", "l2", "per-coordinate"}
        The norm of the declared sensitivity ("per-coordinate" is |a_i − a'_i| ≤ Δ for every i).
    sensitivity : float
        Δ > 0.
    """

    k: int
    lo: Any = 0.0
    hi: Any = 10.0
    norm: str = "l1"
    sensitivity: float = 1.0
    sizes: tuple = field(default=(), init=False)

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, numbers.Integral) or self.k < 1:
            raise ValueError(f"`k` must be an integer >= 1, got {self.k!r}")
        lo, hi = _vector("lo", self.lo, int(self.k)), _vector("hi", self.hi, int(self.k))
        if lo.shape != (self.k,) or hi.shape != (self.k,) or not np.all(lo < hi):
            raise ValueError(f"`lo` and `hi` must be scalars or length-k vectors with lo < hi, got "
                             f"lo={self.lo!r}, hi={self.hi!r}")
        if self.norm not in NORMS:
            raise ValueError(f"`norm` must be one of {NORMS}, got {self.norm!r}")
        if isinstance(self.sensitivity, bool) or not isinstance(self.sensitivity, numbers.Real) \
                or not 0 < float(self.sensitivity) < np.inf:
            raise ValueError(f"`sensitivity` must be a finite number > 0, got {self.sensitivity!r}")
        object.__setattr__(self, "lo", lo)
        object.__setattr__(self, "hi", hi)
        object.__setattr__(self, "sensitivity", float(self.sensitivity))

    @property
    def width(self) -> int:
        return int(self.k)

    def distance(self, a: np.ndarray, b: np.ndarray) -> float:
        diff = np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))
        if self.norm == "l1":
            return float(diff.sum())
        if self.norm == "l2":
            return float(np.sqrt(np.sum(diff * diff)))
        return float(diff.max())

    def fit(self, base: np.ndarray, direction: np.ndarray) -> np.ndarray:
        """base + t·direction with the largest t ≤ 1 keeping ‖t·direction‖ ≤ Δ and the box.

        Rounding can push the computed distance a hair above Δ; the step is shrunk by one ulp at
        a time until the *checked* distance is ≤ Δ, so every pair built here passes the check.
        """
        direction = np.asarray(direction, dtype=np.float64)
        size = self.distance(direction, np.zeros_like(direction))
        if size == 0:
            return base.copy()
        step = self.sensitivity / size
        neighbor = np.clip(base + step * direction, self.lo, self.hi)
        while self.distance(base, neighbor) > self.sensitivity:
            step = np.nextafter(step, 0.0)
            neighbor = np.clip(base + step * direction, self.lo, self.hi)
        return neighbor

    def random_rows(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.lo + (self.hi - self.lo) * rng.random((size, self.width))

    def pair_problem(self, base: Any, neighbor: Any, relation: Relation) -> Optional[str]:
        a = np.asarray(base, dtype=np.float64)
        b = np.asarray(neighbor, dtype=np.float64)
        if a.shape != (self.k,) or b.shape != (self.k,):
            return f"answer vectors must have shape ({self.k},), got {a.shape} and {b.shape}"
        for name, vector in (("base", a), ("neighbor", b)):
            if not np.all(np.isfinite(vector)) or np.any(vector < self.lo) or np.any(vector > self.hi):
                return f"the {name} vector leaves the box [{self.lo.tolist()}, {self.hi.tolist()}]"
        distance = self.distance(a, b)
        if distance == 0:
            return "the two answer vectors are identical"
        if distance > self.sensitivity:
            return f"{self.norm} distance {distance!r} exceeds the declared sensitivity {self.sensitivity!r}"
        return None

    def example(self) -> np.ndarray:
        return (self.lo + self.hi) / 2.0

    def describe(self) -> str:
        return (f"{self.k} query answers in [{self.lo.min():g}, {self.hi.max():g}], "
                f"{self.norm} sensitivity {self.sensitivity:g}")

    def to_dict(self) -> dict:
        return {"kind": "answers", "k": self.k, "lo": self.lo.tolist(), "hi": self.hi.tolist(),
                "norm": self.norm, "sensitivity": self.sensitivity}
