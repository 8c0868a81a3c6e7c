"""The one-run audit: guesses from the scores, candidate guess counts, the result.

The auditor guesses "in" for the k₊ highest scores and "out" for the k₋ lowest and abstains on the
rest; ties are broken by a random order drawn from ``seed``, independent of which canaries are in
(an order by index could leak a layout in which the included canaries come first).  Every
candidate (k₊, k₋) is fixed before the scores are seen and tested at level γ/n (Bonferroni over
the n candidates, γ = 1 − confidence); the best candidate's bound is reported, and with it the
*ceiling*: the best bound the same candidates could give if every guess were correct, the most
these canaries could ever certify at this level.

Methods (the maths is in each module):

- ``"steinke"`` (:mod:`.steinke`): the binary-guess (ε, δ) bound; family ``"approx"`` only.
- ``"fdp"`` (:mod:`.fdp`): the f-DP bound, any mechanism; families ``"gdp"`` (default) and
  ``"approx"``.
- ``"order-statistics"`` (:mod:`.order_statistics`): the exact law of the top-k guesses when the
  canaries' scores do not interfere; families ``"gdp"`` (default) and ``"approx"``.  Its validity
  rests on that assumption, which the result lists.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, Optional, Sequence

import numpy as np

from mechanisms.validation import check_choice, check_int, check_open_unit, check_seed

from .families import FAMILIES, Family, family_epsilon
from .fdp import fdp_bound
from .order_statistics import independent_bound
from .steinke import check_delta, one_run_epsilon

__all__ = ["OneRunResult", "GuessCount", "one_run_audit", "default_guesses", "METHODS", "ASSUMPTIONS"]

Method = Literal["steinke", "fdp", "order-statistics"]
#: The methods, the first being the default.
METHODS: tuple[str, ...] = ("steinke", "fdp", "order-statistics")
_DEFAULT_FAMILY = {"steinke": "approx", "fdp": "gdp", "order-statistics": "gdp"}

#: What each bound rests on, as the result lists it.
ASSUMPTIONS = {
    "coins": "each canary entered the run independently with probability 1/2",
    "fixed": "the candidate guess counts were fixed before the scores were seen",
    "gaussian-epsilon": ("epsilon is that of the Gaussian curve G_mu at mu_lb: a lower bound on the "
                         "mechanism's epsilon(delta) only if its trade-off curve is Gaussian-shaped "
                         "(mu_lb itself needs no such assumption)"),
    "independent": ("the canaries do not interfere: given the inclusion bits, the scores are "
                    "independent and each depends on its own canary's bit only"),
}

#: Fractions of m guessed (k₊ = k₋ = fraction·m/2) by default, per (method, family).  Steinke
#: keeps the fractions of the DP-SGD benchmark; the others span the best fixed fractions of the
#: idealised Gaussian audit at μ ∈ [0.5, 4] and m ∈ [10³, 10⁵] (docs/one-run.md): the exact
#: Gaussian law gains from every guess, the other bounds from the most confident few.
_DEFAULT_FRACTIONS = {("steinke", "approx"): (0.02, 0.1, 0.2, 0.5),
                      ("fdp", "gdp"): (0.005, 0.02, 0.1, 0.4),
                      ("fdp", "approx"): (0.005, 0.02, 0.1, 0.4),
                      ("order-statistics", "gdp"): (0.1, 0.4, 1.0),
                      ("order-statistics", "approx"): (0.005, 0.02, 0.1, 0.4)}


@dataclass(frozen=True)
class GuessCount:
    """One candidate: its guesses, how many were right, and what it certified."""

    k_plus: int
    k_minus: int
    correct: int
    bound: float  # the family parameter certified (μ or ε) at the candidate's level
    epsilon: float  # the ε at the audit's δ that ``bound`` gives
    ceiling: float  # the parameter certified had all k₊ + k₋ guesses been right

    @property
    def guesses(self) -> int:
        return self.k_plus + self.k_minus


@dataclass(frozen=True)
class OneRunResult:
    """The one-run audit: the certified bound, its ceiling and the guesses it rests on.

    Attributes
    ----------
    epsilon_lower_bound : ε_lb at ``delta``, holding with probability ≥ ``confidence`` (under the
        listed ``assumptions``).
    delta, confidence : the δ of the bound and its confidence.
    canaries : m.
    k_plus, k_minus : "in" and "out" guesses of the reported candidate; ``guesses`` = k₊ + k₋.
    correct : correct guesses of the reported candidate.
    candidates : how many (k₊, k₋) pairs were tried (Bonferroni: each at ``level``).
    seconds : wall time of the bound's computation.
    method, family : how the bound was computed (see :mod:`audit.one_run.game`).
    level : the level each candidate was tested at, (1 − confidence)/candidates.
    mu_lower_bound : μ_lb (family ``"gdp"``), else None.
    epsilon_ceiling, mu_ceiling : the largest bound these candidates could give (every guess right).
    assumptions : what the bound's validity rests on.
    tried : every candidate with its counts and bounds.
    """

    epsilon_lower_bound: float
    delta: float
    confidence: float
    canaries: int
    k_plus: int
    k_minus: int
    correct: int
    candidates: int
    seconds: float
    method: str = "steinke"
    family: str = "approx"
    level: float = math.nan
    mu_lower_bound: Optional[float] = None
    epsilon_ceiling: float = math.nan
    mu_ceiling: Optional[float] = None
    assumptions: tuple[str, ...] = ()
    tried: tuple[GuessCount, ...] = field(default=(), repr=False)

    @property
    def guesses(self) -> int:
        return self.k_plus + self.k_minus

    @property
    def accuracy(self) -> float:
        return self.correct / self.guesses if self.guesses else float("nan")

    def to_dict(self) -> dict:
        data = {name: getattr(self, name) for name in self.__dataclass_fields__ if name != "tried"}
        data["assumptions"] = list(self.assumptions)
        data["tried"] = [dict(vars(item), guesses=item.guesses) for item in self.tried]
        return dict(data, guesses=self.guesses)

    def summary(self) -> str:
        mu = "" if self.mu_lower_bound is None else f"μ ≥ {self.mu_lower_bound:.4g}, "
        cap = "" if self.mu_ceiling is None else f"μ ≤ {self.mu_ceiling:.4g}, "
        lines = [f"one-run audit ({self.method}, {self.family}): {mu}ε ≥ {self.epsilon_lower_bound:.4g} "
                 f"at δ = {self.delta:g} (confidence {self.confidence:g}); {self.canaries} canaries, "
                 f"{self.guesses} guesses ({self.k_plus} in, {self.k_minus} out), {self.correct} correct",
                 f"  the most these canaries could certify (every guess right): {cap}"
                 f"ε ≤ {self.epsilon_ceiling:.4g}"]
        lines += [f"  assumes: {text}" for text in self.assumptions]
        return "\n".join(lines)


def default_guesses(m: int, method: Method = "steinke", family: Optional[Family] = None) -> list[tuple[int, int]]:
    """The default candidates for ``m`` canaries: k₊ = k₋ = max(1, ⌊f·m/2⌋) for the fractions f of
    m guessed of ``method`` and ``family`` (the method's default family if None), duplicates
    removed."""
    m = check_int("m", m, minimum=2)
    method = check_choice("method", method, METHODS)
    family = _DEFAULT_FAMILY[method] if family is None else check_choice("family", family, FAMILIES)
    if (method, family) not in _DEFAULT_FRACTIONS:
        raise ValueError(f"`family` must be 'approx' for method {method!r}, got {family!r}")
    sides = dict.fromkeys(max(1, int(f * m) // 2) for f in _DEFAULT_FRACTIONS[method, family])
    return [(k, k) for k in sides]


def one_run_audit(scores, included, *, delta: float, method: Method = "steinke",
                  guesses: Optional[Sequence[tuple[int, int]]] = None, confidence: float = 0.95,
                  family: Optional[Family] = None, seed: int = 0) -> OneRunResult:
    """Certify a privacy bound from one run's canary ``scores`` (higher = more likely "in").

    Parameters
    ----------
    scores : array (m,)
        The auditor's score of each canary.
    included : bool array (m,)
        Whether each canary was in the run (independent fair coins, drawn before the run).
    delta : the δ of the (ε, δ) bound (for family ``"gdp"``, the δ at which μ_lb is turned into ε).
    method : ``"steinke"`` (default), ``"fdp"`` or ``"order-statistics"`` (module docstring).
    guesses : sequence of (k₊, k₋), optional
        Candidate numbers of "in" and "out" guesses, fixed before seeing the scores; each is tested
        at level (1 − confidence)/len(guesses) and the largest bound is reported.  Default:
        :func:`default_guesses` for ``m``, ``method`` and ``family``.
    confidence : probability with which the bound holds.
    family : ``"gdp"`` or ``"approx"``; default ``"gdp"`` for the f-DP methods, ``"approx"`` (the
        only one) for Steinke's.
    seed : seeds the random order that breaks ties between equal scores.

    Returns
    -------
    OneRunResult
    """
    started = time.perf_counter()
    scores = np.asarray(scores, dtype=np.float64).reshape(-1)
    included = np.asarray(included).reshape(-1)
    if included.dtype != bool:
        raise TypeError(f"`included` must be a boolean array, got dtype {included.dtype}")
    if scores.shape != included.shape or scores.size == 0:
        raise ValueError(f"`scores` and `included` must have the same non-zero length, got "
                         f"{scores.shape} and {included.shape}")
    if not np.isfinite(scores).all():
        raise ValueError("`scores` contains NaN or inf")
    method = check_choice("method", method, METHODS)
    family = _DEFAULT_FAMILY[method] if family is None else check_choice("family", family, FAMILIES)
    if method == "steinke" and family != "approx":
        raise ValueError(f"`family` must be 'approx' for method 'steinke', got {family!r}")
    confidence = check_open_unit("confidence", confidence)
    delta = check_delta(delta)
    if family == "gdp" and delta == 0.0:
        raise ValueError("`delta` must be in (0, 1) for family 'gdp' (ε of G_μ at δ = 0 is infinite), got 0.0")
    seed = check_seed(seed)
    m = scores.size
    if guesses is None:
        if m < 2:
            raise ValueError(f"default `guesses` need at least 2 canaries, got {m}")
        guesses = default_guesses(m, method, family)
    candidates = [(check_int("k_plus", kp, minimum=0), check_int("k_minus", km, minimum=0))
                  for kp, km in guesses]
    if not candidates:
        raise ValueError("`guesses` must contain at least one (k_plus, k_minus) pair")
    for kp, km in candidates:
        if kp + km > m or kp + km == 0:
            raise ValueError(f"`guesses` pair ({kp}, {km}) must make between 1 and m = {m} guesses")
    level = (1.0 - confidence) / len(candidates)
    order = _order(scores, seed)
    tried = []
    for kp, km in candidates:
        v = int(included[order[m - kp:]].sum() if kp else 0) + int((~included[order[:km]]).sum())
        bound = _bound(method, family, m, kp + km, v, level, delta)
        ceiling = _bound(method, family, m, kp + km, kp + km, level, delta)
        tried.append(GuessCount(kp, km, v, bound, family_epsilon(family, bound, delta), ceiling))
    best = max(tried, key=lambda item: item.bound)  # first of equal bounds
    top = max(item.ceiling for item in tried)
    assumptions = [ASSUMPTIONS["coins"], ASSUMPTIONS["fixed"]]
    if method == "order-statistics":
        assumptions.append(ASSUMPTIONS["independent"])
    if family == "gdp":
        assumptions.append(ASSUMPTIONS["gaussian-epsilon"])
    gdp = family == "gdp"
    return OneRunResult(float(best.epsilon), delta, confidence, m, best.k_plus, best.k_minus, best.correct,
                        len(candidates), time.perf_counter() - started, method=method, family=family,
                        level=level, mu_lower_bound=float(best.bound) if gdp else None,
                        epsilon_ceiling=float(family_epsilon(family, top, delta)),
                        mu_ceiling=float(top) if gdp else None, assumptions=tuple(assumptions),
                        tried=tuple(tried))


def _order(scores: np.ndarray, seed: Optional[int]) -> np.ndarray:
    """Indices by ascending score, ties in a random order drawn from ``seed``."""
    tiebreak = np.random.default_rng(seed).permutation(scores.size)
    return np.lexsort((tiebreak, scores))


@lru_cache(maxsize=4096)
def _bound(method: str, family: str, m: int, k: int, v: int, level: float, delta: float) -> float:
    """The parameter certified by v correct guesses out of k (cached: ceilings repeat)."""
    if method == "steinke":
        return one_run_epsilon(m, k, v, delta, level)
    if method == "fdp":
        return fdp_bound(m, k, v, level, family, delta)
    return independent_bound(m, k, v, level, family, delta)

