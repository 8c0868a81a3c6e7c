"""How a sweep is planned before anything is drawn: its rows, their budgets, seeds and confidence.

**Error control across the sweep.**  A sweep of m rows controls the probability that *any* claim
that holds is reported VIOLATED, as ``dpaudit run`` does over files: every row is audited at
confidence 1 − (1 − C)/m (Bonferroni), with m the number of rows planned, fixed before the first
draw.  A row that later fails to run still counts in m, which only makes the others stricter.

**Budgets.**  A row's ``samples`` (draws per pair and side, all phases) depends on what one
release costs (:data:`scenarios.libraries.COSTS`): a vectorized batch path, one library call, one
model fit, or one fit of a synthetic-data pipeline (seconds: 100 such fits a side are already about
11 minutes of CPU for dpmm's MST; such rows reach what a deterministic leak, a domain read from the
data, needs to be refuted, not a faint one).  :data:`BUDGETS` gives the draws of each cost for
``small`` (CI) and ``default``.
A row is also raised to :func:`refutable_samples`, the fewest draws with which a *perfectly*
separating event could refute the claim at the row's confidence, up to :data:`CAPS` times the
budget; a row still below it is flagged ``refutable = False`` (the claim is beyond what its budget
can refute, like ``violated (limit)`` in ``dpaudit run``).  A case's ``min_samples`` (a known
violation whose event is too rare for its cost's budget) raises its row to that many draws.
Samples only decide how strong the evidence can be, never its validity.  A gray-box row
(``Case.graybox``: a release too costly for a black-box row) draws exactly
:func:`refutable_samples` for an event of probability ``Case.event_rate`` on one side and 0 on the
other (1, a perfect event, unless the catalogue measured a lower rate).

**Seeds.**  Each row's seed is derived from the sweep's seed and the row's key (library, entry,
grid point), so a row's report does not depend on the order or the number of workers.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from mechanisms.validation import check_open_unit, check_probability
from scenarios.libraries import Case

from ..intervals import cp_lower, cp_upper

__all__ = ["BUDGETS", "CAPS", "PlannedRow", "plan_rows", "refutable_samples", "row_seed", "row_slug"]

#: Draws per pair and side by budget and cost of one release.
BUDGETS: Mapping[str, Mapping[str, int]] = {
    "small": {"batch": 20_000, "call": 2_000, "query": 500, "fit": 300, "pipeline": 40},
    "default": {"batch": 400_000, "call": 30_000, "query": 2_000, "fit": 1_500, "pipeline": 100},
}
#: A row may be raised to at most this many times its budget to make its claim refutable.
CAPS: Mapping[str, int] = {"batch": 8, "call": 4, "query": 2, "fit": 2, "pipeline": 2}
#: A conservative share of ``samples`` that certifies (training, pilot, selection and the quick
#: look take the rest; :mod:`audit.allocation`).
_CERTIFYING_SHARE = 0.45
#: A conservative share of the row's failure budget left to one headline bound (headline family
#: 0.8, the claim's slot 0.6, the last look 0.9, and half of it for each of the event's two
#: Clopper–Pearson bounds: the joint test does at least as well).
_HEADLINE_SHARE = 0.8 * 0.6 * 0.9 / 2


def row_slug(key: str) -> str:
    """A file-name-safe, unique, stable name for a row key."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in key)
    safe = "_".join(part for part in safe.split("_") if part)[:80]
    return f"{safe}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def row_seed(seed: int, library: str, key: str) -> int:
    """The row's audit seed: SHA-256 of the sweep's seed, the library and the row key (63 bits)."""
    digest = hashlib.sha256(f"{int(seed)}|{library}|{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def refutable_samples(claim: Any, confidence: float, rate: float = 1.0) -> int:
    """The fewest ``samples`` with which a separating event refutes ``claim``: one of probability
    ``rate`` on one side and 0 on the other (``rate`` = 1: a perfectly separating event).

    Counted on n certification draws per side, such an event shows ⌊rate·n⌋ and 0, which give
    β = cp_lower(⌊rate·n⌋, n, ℓ) and α = cp_upper(0, n, ℓ) = 1 − ℓ^{1/n}, and certify
    ε ≥ ln((β − δ)/α) (docs/ground-truth.md §3); the claim is refuted once that exceeds the
    claim's ε at its reference δ.  For ``rate`` = 1, β = ℓ^{1/n} = 1 − α.  ℓ is a conservative
    share of the failure budget (``_HEADLINE_SHARE``) and n a conservative share of ``samples``
    (``_CERTIFYING_SHARE``).  A count below its expectation (half the time) needs more draws, so a
    catalogue passes a conservative ``rate``.  For ``rate`` < 1 the count returned is the first from
    which ⌈1/rate⌉ + 1 consecutive certifying counts refute (a count that refutes can be followed by
    some that do not: see the code).
    """
    gamma = 1.0 - check_open_unit("confidence", confidence)
    rate = check_probability("rate", rate)
    level = gamma * _HEADLINE_SHARE
    delta = float(claim.reference_delta)
    target = float(claim.epsilon_at(delta))
    if not math.isfinite(target):
        return 1 << 62

    def refutes(n: int) -> bool:
        a = float(cp_upper(0, n, level))
        b = 1.0 - a if rate == 1.0 else float(cp_lower(math.floor(rate * n), n, level))
        return b - delta > a * math.exp(target)  # a > 0, so b − δ > 0 too

    n = 8
    while not refutes(n):
        n *= 2
    low, high = n // 2, n
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if not refutes(mid) else (low, mid)
    # refutes() is not monotone for rate < 1: while ⌊rate·n⌋ stays put, β falls with n, so a count
    # that refutes can be followed by a few that do not (128 refutes, 129-131 do not, at rate 0.25
    # and confidence 1 − 0.05/11).  Move on to a count from which a whole run of 1/rate + 1 counts
    # (the rest of its run of equal ⌊rate·n⌋ and the start of the next) refutes.
    window = math.ceil(1.0 / rate) + 1
    while not all(refutes(m) for m in range(high, high + window)):
        high += 1
    return math.ceil(high / _CERTIFYING_SHARE)


@dataclass(frozen=True, eq=False)
class PlannedRow:
    """A case with what the plan decided: its samples, seed, confidence and file name."""

    case: Case
    samples: int
    statistic: Any
    seed: int
    confidence: float
    refutable: bool
    slug: str


def plan_rows(cases: tuple[Case, ...], *, library: str, budget: str, confidence: float, seed: int,
              samples: Optional[int] = None, statistic: Any = None) -> tuple[PlannedRow, ...]:
    """Every row of a sweep at confidence 1 − (1 − ``confidence``)/m (m = ``len(cases)``).

    ``samples`` overrides the budget for every row (and is never raised); ``statistic`` overrides
    every case's statistic option (None keeps each case's own).
    """
    if budget not in BUDGETS:
        raise ValueError(f"`budget` must be one of {tuple(BUDGETS)}, got {budget!r}")
    confidence = check_open_unit("confidence", confidence)
    row_confidence = 1.0 - (1.0 - confidence) / max(len(cases), 1)
    rows, slugs = [], set()
    for case in cases:
        needed = refutable_samples(case.claim, row_confidence)
        if samples is not None:
            count = int(samples)
        elif case.graybox:  # a release too costly for the budget: what its separating event needs
            count = refutable_samples(case.claim, row_confidence, case.event_rate)
        else:
            base = BUDGETS[budget][case.cost]
            count = max(base, min(needed, base * CAPS[case.cost]), case.min_samples)
        slug = row_slug(case.key)
        if slug in slugs:
            raise ValueError(f"two rows share the key {case.key!r}")
        slugs.add(slug)
        rows.append(PlannedRow(case, count, case.statistic if statistic is None else statistic,
                               row_seed(seed, library, case.key), row_confidence, count >= needed, slug))
    return tuple(rows)
