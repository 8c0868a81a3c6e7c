"""A search over neighbouring pairs: the specification, the proposals, the searched scenario.

:func:`search` returns a frozen :class:`SearchSpec` (domain, relation, budget, m, exploration
samples, seed policy) that ``audit.run_audit`` accepts in place of a scenario.  The audit layer
(:mod:`audit.search`) evaluates it; this module only *proposes* candidate pairs and builds the
final, checked :class:`SearchedScenario`.  It never samples a mechanism.

**Proposals** (all seeded by the generator they are given):

- structured patterns: for row domains the empty dataset plus a corner; all rows stacked at one
  corner plus another corner (a row alone in its bin, for finite domains) or the same corner (a
  duplicated row); random rows plus a corner; a duplicated random row; under replacement a stack
  at one corner with one row moved between two corners.  For query-answer vectors the patterns of
  StatDP (Ding et al., CCS 2018, §5): one above, one below, all above, all below, half-half, one
  above and the rest below, from bases at the box's middle and near its bounds, each scaled to
  the declared sensitivity;
- random pairs;
- mutations of the best candidates (an evolutionary refinement with a shrinking step).

References
----------
Z. Ding, Y. Wang, G. Wang, D. Zhang and D. Kifer, "Detecting violations of differential privacy",
CCS 2018.  B. Bichsel, S. Steffen, I. Bogunovic and M. Vechev, "DP-Sniper", S&P 2021.
"""

from __future__ import annotations

import hashlib
import numbers
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

from mechanisms.claims import Relation, as_relation

from .domains import AnswerVectors, Box, FiniteRows, GeneratedRows, categories, integers
from .scenario import Domain, NeighborPair, Scenario

__all__ = ["SearchSpec", "search", "Candidate", "structured_candidates", "random_candidates",
           "mutate", "SearchedScenario", "searched_scenario"]

#: Exploration draws per side are held in memory by one worker (both sides, k columns each).
MAX_EXPLORE_SAMPLES = 1_000_000

SearchDomain = Union[Box, FiniteRows, GeneratedRows, AnswerVectors]
_DOMAIN_TYPES = (Box, FiniteRows, GeneratedRows, AnswerVectors)


def _check_int(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class SearchSpec:
    """What to search and how much to spend; evaluated by ``run_audit`` (see :mod:`audit.search`).

    Attributes
    ----------
    domain : Box, FiniteRows, GeneratedRows or AnswerVectors
    relation : Relation
    budget : int
        Candidate pairs evaluated in total (structured, random and refined).
    m : int
        Pairs handed to the audit; fixed before the search.
    explore_samples : int
        Exploration draws per side per candidate (never reused by the audit), at most 10⁶: a
        worker holds both sides' outputs of one candidate in memory.
    rounds : int
        Refinement rounds after the first (structured + random) round.
    elite : int
        Candidates kept as parents between rounds.
    seed : int or None
        ``None``: the search is seeded by the audit's seed; an integer fixes it on its own.
    """

    domain: Any
    relation: Relation
    budget: int = 200
    m: int = 3
    explore_samples: int = 20_000
    rounds: int = 4
    elite: int = 4
    seed: Optional[int] = None

    def __post_init__(self) -> None:
        if not isinstance(self.domain, _DOMAIN_TYPES):
            raise TypeError(f"`domain` must be a Box, FiniteRows, GeneratedRows or AnswerVectors, "
                            f"got {self.domain!r}")
        object.__setattr__(self, "relation", as_relation(self.relation))
        if self.relation is Relation.REPLACE and not self.answers and max(self.domain.sizes) < 1:
            raise ValueError(f"`n` must allow datasets of at least 1 row under replacement, got "
                             f"sizes {self.domain.sizes}")
        m = _check_int("m", self.m, 1)
        object.__setattr__(self, "m", m)
        object.__setattr__(self, "budget", _check_int("budget", self.budget, m))
        explore = _check_int("explore_samples", self.explore_samples, 100)
        if explore > MAX_EXPLORE_SAMPLES:  # a worker holds one candidate's outputs in memory
            raise ValueError(f"`explore_samples` must be at most {MAX_EXPLORE_SAMPLES:,}, got {explore!r}")
        object.__setattr__(self, "explore_samples", explore)
        object.__setattr__(self, "rounds", _check_int("rounds", self.rounds, 0))
        object.__setattr__(self, "elite", _check_int("elite", self.elite, 1))
        if self.seed is not None:
            object.__setattr__(self, "seed", _check_int("seed", self.seed, 0))

    @property
    def answers(self) -> bool:
        return isinstance(self.domain, AnswerVectors)

    def round_sizes(self) -> list[int]:
        """Candidates per round: half the budget first, the rest split over the refinements."""
        if self.rounds == 0:
            return [self.budget]
        first = max(self.m, self.budget // 2)
        rest = self.budget - first
        share, extra = divmod(rest, self.rounds)
        return [first] + [share + (1 if r < extra else 0) for r in range(self.rounds)]

    def describe(self) -> str:
        return (f"search over {self.domain.describe()}, {self.relation.value}: budget "
                f"{self.budget} candidates x {self.explore_samples:,} exploration draws per side, "
                f"top {self.m} audited")

    def to_dict(self) -> dict:
        return {"domain": self.domain.to_dict(), "relation": self.relation.value, "budget": self.budget,
                "m": self.m, "explore_samples": self.explore_samples, "rounds": self.rounds,
                "elite": self.elite, "seed": self.seed}


def search(domain: Any, relation: Any = "add-remove", *, budget: int = 200, m: int = 3,
           explore_samples: int = 20_000, rounds: int = 4, elite: int = 4,
           seed: Optional[int] = None) -> SearchSpec:
    """A search scenario: ``run_audit(mechanism, scenarios.search(domain, ...))``.

    Parameters
    ----------
    domain : Box, FiniteRows, GeneratedRows or AnswerVectors
        Where pairs are searched (:mod:`scenarios.domains`).
    relation : {"add-remove", "replace"}
    budget, m, explore_samples, rounds, elite, seed
        See :class:`SearchSpec`.  The audit's confidence is split over the m pairs by its
        Bonferroni accounting; the search itself only uses exploration samples.
    """
    return SearchSpec(domain, relation, budget, m, explore_samples, rounds, elite, seed)


# -- candidates --------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class Candidate:
    """One proposed pair.  Row domains: D = rest (+ ``removed``), D' = rest + ``added``;
    answer domains: D = ``rest`` (a vector), D' = ``added``."""

    rest: np.ndarray
    added: np.ndarray
    removed: Optional[np.ndarray]
    kind: str
    answers: bool = False

    @property
    def base(self) -> np.ndarray:
        if self.answers:
            return self.rest
        if self.removed is None:
            return self.rest
        return np.vstack([self.rest, self.removed[None, :]])

    @property
    def neighbor(self) -> np.ndarray:
        if self.answers:
            return self.added
        return np.vstack([self.rest, self.added[None, :]])

    @property
    def key(self) -> str:
        """Identifies the unordered pair of multisets (a pair and its reverse are one)."""
        def digest(array):
            array = np.asarray(array, dtype=np.float64) + 0.0
            if not self.answers and array.ndim == 2 and array.shape[0]:
                array = array[np.lexsort(array.T[::-1])]
            return hashlib.sha256(str(array.shape).encode() + array.tobytes()).hexdigest()
        return "".join(sorted((digest(self.base), digest(self.neighbor))))


def _stack(row: np.ndarray, count: int) -> np.ndarray:
    return np.tile(row, (count, 1)) if count else np.zeros((0, row.size))


def _row_pair(rest, added, removed, kind) -> Candidate:
    return Candidate(np.asarray(rest, dtype=np.float64), np.asarray(added, dtype=np.float64),
                     None if removed is None else np.asarray(removed, dtype=np.float64), kind)


#: Corners combined pairwise (or in triples) by the structured patterns; more are subsampled.
_PATTERN_CORNERS = 12


def _structured_rows(domain, relation: Relation, rng) -> list[Candidate]:
    corners = domain.corners()
    if len(corners) > _PATTERN_CORNERS:
        corners = corners[np.sort(rng.choice(len(corners), _PATTERN_CORNERS, replace=False))]
    found: list[Candidate] = []
    for n in domain.sizes:
        if relation is Relation.ADD_REMOVE:
            if n == 0:
                found += [_row_pair(_stack(c, 0), c, None, "empty dataset + corner") for c in corners]
                found.append(_row_pair(_stack(corners[0], 0) if len(corners) else np.zeros((0, domain.width)),
                                       domain.random_rows(rng, 1)[0], None, "empty dataset + row"))
                continue
            for i, stacked in enumerate(corners):
                for j, other in enumerate(corners):
                    kind = "duplicated corner row" if i == j else "row alone at a corner"
                    found.append(_row_pair(_stack(stacked, n), other, None, kind))
            rest = domain.random_rows(rng, n)
            found += [_row_pair(rest, c, None, "random rows + corner") for c in corners]
            found.append(_row_pair(rest, rest[int(rng.integers(n))], None, "duplicated row"))
        else:
            if n == 0:
                continue
            for i, stacked in enumerate(corners):
                for j, first in enumerate(corners):
                    for k, second in enumerate(corners):
                        if j < k:
                            found.append(_row_pair(_stack(stacked, n - 1), second, first,
                                                   "corner stack, one row moved across corners"))
            rest = domain.random_rows(rng, n - 1)
            found += [_row_pair(rest, corners[-1 - j], c, "random rows, corner replaced")
                      for j, c in enumerate(corners[: len(corners) // 2 + 1])]
    return found


def _structured_answers(domain: AnswerVectors, rng) -> list[Candidate]:
    k, width = domain.k, domain.hi - domain.lo
    step = np.minimum(domain.sensitivity, width / 2.0)
    bases = {"middle": (domain.lo + domain.hi) / 2.0, "low": domain.lo + step, "high": domain.hi - step}
    half = np.where(np.arange(k) < (k + 1) // 2, 1.0, -1.0)
    one = np.eye(k)[0]
    patterns = {"one above": one, "one below": -one, "all above": np.ones(k), "all below": -np.ones(k),
                "half-half": half, "one above, rest below": 2 * one - 1.0,
                "one below, rest above": 1.0 - 2 * one}
    found = []
    for base_name, base in bases.items():
        for name, direction in patterns.items():
            neighbor = domain.fit(base, direction)
            if domain.distance(base, neighbor) > 0:
                found.append(Candidate(base, neighbor, None, f"StatDP {name} ({base_name} base)", True))
    return found


def structured_candidates(spec: SearchSpec, rng: np.random.Generator) -> list[Candidate]:
    """The structured patterns of the domain (see the module docstring)."""
    if spec.answers:
        return _structured_answers(spec.domain, rng)
    return _structured_rows(spec.domain, spec.relation, rng)


def random_candidates(spec: SearchSpec, rng: np.random.Generator, count: int) -> list[Candidate]:
    """``count`` random neighbouring pairs of the domain."""
    domain, found = spec.domain, []
    for _ in range(count):
        if spec.answers:
            base = domain.random_rows(rng, 1)[0]
            direction = rng.normal(size=domain.k)
            found.append(Candidate(base, domain.fit(base, direction), None, "random", True))
            continue
        sizes = [n for n in domain.sizes if spec.relation is Relation.ADD_REMOVE or n >= 1]
        n = int(rng.choice(sizes))
        if spec.relation is Relation.ADD_REMOVE:
            found.append(_row_pair(domain.random_rows(rng, n), domain.random_rows(rng, 1)[0], None, "random"))
        else:
            first, second = domain.random_rows(rng, 2)
            found.append(_row_pair(domain.random_rows(rng, n - 1), second, first, "random"))
    return found


def mutate(spec: SearchSpec, parent: Candidate, rng: np.random.Generator, spread: float) -> Candidate:
    """A random neighbour of ``parent`` in candidate space, with relative step ``spread``."""
    domain = spec.domain
    if spec.answers:
        base = np.clip(parent.rest + rng.normal(0.0, spread, domain.k) * (domain.hi - domain.lo),
                       domain.lo, domain.hi)
        direction = parent.added - parent.rest
        scale = float(np.max(np.abs(direction))) or 1.0
        direction = direction + rng.normal(0.0, 2.0 * spread * scale, domain.k)
        return Candidate(base, domain.fit(base, direction), None, "refined", True)
    rest = parent.rest
    move = rng.random()
    if move < 0.25 and rest.shape[0]:  # stack the rest on one of its rows
        rest = _stack(rest[int(rng.integers(rest.shape[0]))], rest.shape[0])
    elif move < 0.4:  # change the size within the domain
        sizes = [n for n in domain.sizes if spec.relation is Relation.ADD_REMOVE or n >= 1]
        offset = 0 if spec.relation is Relation.ADD_REMOVE else 1
        n = int(rng.choice(sizes)) - offset
        if n < rest.shape[0]:
            rest = rest[:n]
        elif n > rest.shape[0]:
            extra = rest[rng.integers(rest.shape[0], size=n - rest.shape[0])] if rest.shape[0] \
                else domain.random_rows(rng, n)
            rest = np.vstack([rest, extra])
    else:
        rest = domain.mutate_rows(rest, rng, spread)
    added = domain.mutate_rows(parent.added[None, :], rng, spread)[0] if rng.random() < 0.5 else parent.added
    removed = parent.removed
    if removed is not None and rng.random() < 0.5:
        removed = domain.mutate_rows(removed[None, :], rng, spread)[0]
    return _row_pair(rest, added, removed, "refined")


def is_valid(spec: SearchSpec, candidate: Candidate) -> bool:
    """Whether the candidate is a neighbour pair of the domain (e.g. a mutation may make the
    replaced row equal to the new one)."""
    return spec.domain.pair_problem(candidate.base, candidate.neighbor, spec.relation) is None


# -- the searched scenario ---------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class SearchedScenario(Scenario):
    """The top pairs of a search, checked against the search domain, with the search's record.

    ``record`` (plain JSON data: candidates tried, budget, each audited pair's exploration score,
    the best score not audited) appears in :meth:`to_dict` under ``"search"``, hence in reports.
    """

    space: Any = None
    record: Any = None

    def _check_pair(self, index: int, pair: NeighborPair) -> None:
        problem = self.space.pair_problem(pair.base, pair.neighbor, self.relation)
        if problem is not None:
            raise ValueError(f"pair {index} ({pair.label!r}) is not a neighbour pair of the search "
                             f"domain under {self.relation.value!r}: {problem}")

    @property
    def check_note(self) -> str:
        if self.domain is Domain.ANSWERS:
            return (f"every pair checked: {self.space.norm} distance <= {self.space.sensitivity:g} "
                    "inside the answer box")
        return f"every pair checked to be {self.relation.value} neighbours of the search domain"

    def describe(self) -> str:
        return (f"{len(self.pairs)} searched pair{'s' if len(self.pairs) != 1 else ''} over "
                f"{self.space.describe()}, {self.relation.value}")

    def to_dict(self) -> dict:
        data = super().to_dict()
        data["search"] = dict(self.record or {}, domain=self.space.to_dict())
        return data

    def _pair_dict(self, pair: NeighborPair) -> dict:
        if self.domain is not Domain.ANSWERS:
            return super()._pair_dict(pair)
        return {"label": pair.label, "base_shape": list(pair.base.shape),
                "neighbor_shape": list(pair.neighbor.shape), "base": pair.base.tolist(),
                "neighbor": pair.neighbor.tolist(),
                "distance": self.space.distance(pair.base, pair.neighbor)}


def searched_scenario(spec: SearchSpec, chosen: list[tuple[str, Candidate]], record: dict) -> SearchedScenario:
    """The checked scenario of the chosen ``(label, candidate)`` pairs."""
    pairs = tuple(NeighborPair(c.base, c.neighbor, label) for label, c in chosen)
    if spec.answers:
        return SearchedScenario(Domain.ANSWERS, spec.relation, pairs, checked=True, space=spec.domain,
                                record=record)
    return SearchedScenario(Domain.ROWS, spec.relation, pairs, d=spec.domain.width, checked=True,
                            space=spec.domain, record=record)


# -- scenario files ----------------------------------------------------------------------------
_FILE_KEYS = ("pairs", "relation", "n", "budget", "m", "explore_samples", "rounds", "elite", "seed",
              "domain")
_DOMAIN_KEYS = {"box": ("kind", "lo", "hi"), "integers": ("kind", "lo", "hi", "d"),
                "categories": ("kind", "count"), "finite": ("kind", "values"),
                "answers": ("kind", "k", "lo", "hi", "norm", "sensitivity")}


def from_table(table: dict) -> SearchSpec:
    """The :class:`SearchSpec` of a scenario file's ``[scenario]`` table with ``pairs = "search"``::

        [scenario]
        pairs = "search"
        relation = "add-remove"
        n = [0, 3]                 # or one size
        budget = 200               # optional: m, explore_samples, rounds, elite, seed
        [scenario.domain]
        kind = "integers"          # "box" (lo, hi) | "integers" (lo, hi, d) | "categories" (count)
        lo = 0                     # | "finite" (values = [[...], ...]) | "answers" (k, lo, hi,
        hi = 5                     #   norm, sensitivity)

    Raises ``TypeError``/``ValueError`` naming the key (row generators are Python-only).
    """
    for name in table:
        if name not in _FILE_KEYS:
            raise ValueError(f"`{name}` is not a key of a search scenario (known: {', '.join(_FILE_KEYS)})")
    domain_table = table.get("domain")
    if not isinstance(domain_table, dict):
        raise ValueError(f"`domain` must be a table [scenario.domain] with a `kind`, got {domain_table!r}")
    kind = domain_table.get("kind")
    if kind not in _DOMAIN_KEYS:
        raise ValueError(f"`domain` kind must be one of {', '.join(_DOMAIN_KEYS)}, got {kind!r}")
    for name in domain_table:
        if name not in _DOMAIN_KEYS[kind]:
            raise ValueError(f"`domain` key {name!r} is not known for kind {kind!r} (known: "
                             f"{', '.join(_DOMAIN_KEYS[kind])})")
    options = {k: v for k, v in domain_table.items() if k != "kind"}
    n = table.get("n", 10)
    n = tuple(n) if isinstance(n, list) else n
    if kind == "answers":
        if "n" in table:
            raise ValueError(f"`n` does not apply to a domain of query answers, got {table['n']!r}")
        domain = AnswerVectors(**options)
    elif kind == "box":
        domain = Box(n=n, **options)
    elif kind == "finite":
        domain = FiniteRows(n=n, **options)
    else:
        domain = integers(n=n, **options) if kind == "integers" else categories(n=n, **options)
    settings = {k: table[k] for k in ("budget", "m", "explore_samples", "rounds", "elite", "seed") if k in table}
    return search(domain, table.get("relation", "add-remove"), **settings)
