"""Standalone reproduction scripts for the VIOLATED rows of a sweep.

A library's maintainer should be able to see a finding with nothing but the library: the script
written for a VIOLATED row imports the library and numpy only, defines the row's ``release``
function exactly as the catalogue audited it (its source, via :func:`inspect.getsource`), the two
neighbouring datasets of the witness pair, and one *readable* event on the released vector, then
releases N times on each dataset and prints how often the event happens on each, next to what the
claim allows (P[E | D′] ≤ e^ε·P[E | D] + δ).

**Which event.**  The audit certifies an event of its test statistic, which may be a learned score
that plain numpy cannot restate.  The script's event is chosen by :func:`readable_event` among
simple events of the released vector — one coordinate above or below a threshold, or equal to a
value — and, where the separation is in the bit patterns (a floating-point noise sampler that does
not reach every double alike, Mironov 2012), events of the statistic's bits view: the low
``LOW_BITS`` bits of one coordinate's IEEE-754 pattern falling in a set, which the script carries
with the function that reads them.  It is chosen on fresh draws of the witness pair (seeded apart
from the audit's), as the event that exceeds the claim's allowance by the most after a pessimistic
correction.  Those draws are split: the first part of each side's (:func:`_split`) proposes the
candidates (thresholds at quantiles of the pooled values, the values seen, the ranking of bit
patterns) and the rest alone scores them, so no candidate is scored on the draws that made it.  The
audit's own certified event competes too where numpy can restate it exactly
(:func:`certified_sets`): a set of low-bit patterns or of grains of one coordinate — the atoms its
categorical score ranks at or above the certified threshold, and every atom unseen in training when
that threshold is ≤ 0.  Simplifying such a set into one threshold can lose the event (a grain in the
middle of the range that only one dataset reaches), so the certified set is scored on the same
scoring part, whole (it was chosen on the audit's draws, not these), and the script carries it when
it exceeds the claim by more than the simplified events do.  The certified event {T ≥ t} of an
additive statistic competes the same way, the script then carrying the statistic's tables and the
numpy function that scores them (:mod:`audit.sweep.repro_additive`), and so does a certified
threshold of a Fisher discriminant (:func:`certified_projections`).  Every candidate is ranked by a
lower confidence bound of its excess (Clopper–Pearson on the scoring part, Bonferroni over the
candidates, :data:`CHOICE_MISS`), so an event of a handful of tail draws does not win, and the
candidates being fixed by the first part, the event carried as certain exceeds the claim with
probability at least 1 − CHOICE_MISS; when none is certain, the audit's own certified event is
carried, the one of the largest excess in standard deviations on the audit's certification counts
(:attr:`Event.strength`), and the script, the row's record and the sweep report say plainly that it
is uncertain (:attr:`Event.choice`, :data:`FALLBACK`).  The script's own draws are fresh again, so
what it prints is an honest estimate, not a certified bound; the certified numbers are the sweep
report's.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import textwrap
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from ..intervals import cp_lower, cp_upper
from ..render.witness import pair_statistic
from ..statistics.coordinates import LOW_BITS, grain
from .repro_additive import CarriedScore, additive_scores, certified_thresholds

__all__ = ["Event", "AtomSet", "CertifiedProjection", "certified_projections", "certified_sets", "readable_event",
           "script_definitions", "script_text", "low_bits", "REPRO_DRAWS", "SCRIPT_DRAWS", "CHOICE_MISS", "CERTAIN", "FALLBACK", "HOPE"]

#: Fresh draws per side for choosing the script's event, by cost of one release.
REPRO_DRAWS = {"batch": 20_000, "call": 4_000, "query": 1_000, "fit": 300, "pipeline": 40}
#: At most this many releases per side in a script, by cost (a script should run in seconds).
SCRIPT_DRAWS = {"batch": 200_000, "call": 20_000, "query": 5_000, "fit": 2_000, "pipeline": 50}
_MAX_THRESHOLDS = 64
#: The probability that the event the script carries as certain does not exceed the claim (its lower
#: confidence bound of the excess on the scoring part is positive but its excess is not), at most.
CHOICE_MISS = 0.05
#: An uncertain event is carried only if seen at least this many times on its likelier side.
HOPE_COUNT = 10
_MAX_ATOMS = 16
#: The share of each side's choosing draws that proposes the candidate events (the rest scores
#: them), but at least PROPOSING_LEAST draws or half of them (:func:`_split`).
PROPOSING_SHARE = 0.125
PROPOSING_LEAST = 200
#: :attr:`Event.choice` of an event whose excess is certain: its lower confidence bound on the
#: scoring part of the choosing draws is positive (:func:`readable_event`).
CERTAIN = (f"certain: on the sweep's choosing draws the lower confidence bound of its excess over the claim is "
           f"positive (at {1 - CHOICE_MISS:.0%}, Bonferroni over every candidate event)")
#: :attr:`Event.choice` when no candidate is certain and the audit's own certified event is carried.
FALLBACK = ("uncertain: no simple event's excess is certain on the choosing draws; carrying the audit's "
            "certified event")
#: :attr:`Event.choice` when no candidate is certain and no certified event of the audit's can be restated.
HOPE = ("uncertain: no simple event's excess is certain on the choosing draws and the audit's certified event "
        "is not one numpy can restate; carrying the simple event of the largest excess in standard deviations")


@dataclass(frozen=True)
class Event:
    """``output[index] <op> value`` with ``op`` in ``>=``, ``<=``, ``==``; more likely under
    ``more_likely`` (``"D"`` or ``"D'"``); ``p_base``/``p_neighbour`` are its frequencies on the
    scoring part of the choosing draws (:func:`readable_event`) and ``excess`` the estimated
    P[E | more likely] − e^ε·P[E | other] − δ."""

    index: int
    op: str
    value: Any
    more_likely: str
    p_base: float
    p_neighbour: float
    excess: float
    weights: tuple = ()
    #: "" for a simplified event; "certified" for the audit's certified atom set itself, and
    #: "complement" for its complement (the same test, read from the other side)
    certified: str = ""
    #: the additive statistic's tables as JSON (op "score >=" or "score <": its certified event
    #: {T ≥ value} or the complement), :mod:`audit.sweep.repro_additive`
    statistic: str = ""
    #: a certified event's excess in standard deviations of one draw a side,
    #: (P′ − e^ε·P − δ)/√(P′(1 − P′) + e^{2ε}·P(1 − P)), on the audit's certification counts when the
    #: report has them (else on the scoring part): how the fallback ranks the audit's own events
    strength: float = float("nan")
    #: how :func:`readable_event` chose it: :data:`CERTAIN`, :data:`FALLBACK` or :data:`HOPE`
    choice: str = ""

    def code(self) -> str:
        if self.op.startswith("score"):
            return f"float(additive_scores(output[None, :], TABLES)[0]) {self.op.split()[1]} {self.value!r}"
        if self.op.startswith("projection"):
            return f"float(np.dot(W, output)) {self.op.split()[1]} {self.value!r}"
        if self.op in ("bits in", "bits not in"):
            return f"low_bits(output[{self.index}]) {self.op[5:]} EVENT_BITS"
        if self.op in ("grain in", "grain not in"):
            member = f"grain(output[{self.index}]) in EVENT_GRAINS"
            if any(math.isnan(v) for v in self.value):  # nan (a non-finite value) is not found in a set
                member = f"({member} or not np.isfinite(output[{self.index}]))"
            return member if self.op == "grain in" else f"not {member}"
        if self.op.startswith("grain"):
            return f"grain(output[{self.index}]) {self.op.split()[1]} {self.value!r}"
        return f"output[{self.index}] {self.op} {self.value!r}"


def low_bits(column: np.ndarray) -> np.ndarray:
    """The low ``LOW_BITS`` bits of each value's IEEE-754 pattern (−0.0 read as +0.0), as integers."""
    words = (np.ascontiguousarray(column, dtype=np.float64) + 0.0).view(np.uint64)
    return (words & np.uint64((1 << LOW_BITS) - 1)).astype(np.int64)


@dataclass(frozen=True)
class AtomSet:
    """A certified event of a coordinates statistic's bits or grain view, restated: the view
    (``"bits"`` or ``"grain"``) of ``output[index]`` is one of ``atoms`` (``complement`` False) or
    is none of them (True: the event held every atom unseen in training, so it is written as the
    trained atoms it left out)."""

    index: int
    view: str
    atoms: tuple
    complement: bool

    def holds(self, outputs: np.ndarray) -> np.ndarray:
        """Whether the event holds on each row of ``outputs`` (n, k)."""
        column = outputs[:, self.index]
        values = low_bits(column).astype(np.float64) if self.view == "bits" else grain(column)
        atoms = np.asarray(self.atoms, dtype=np.float64)
        member = np.isin(values, atoms[~np.isnan(atoms)])
        if np.isnan(atoms).any():
            member |= np.isnan(values)
        return ~member if self.complement else member


def certified_sets(report: dict, label: str) -> list[AtomSet]:
    """Every certified event of pair ``label`` in a report dict that is a threshold of a
    coordinates statistic's bits or grain view, restated as an :class:`AtomSet`.

    The event {T ≥ t} of such a statistic (its lane's, :mod:`audit.statistics.lanes`) holds the
    atoms of ``atom_scores`` (:class:`audit.statistics.coordinates.CoordinateStatistic`) scoring
    ≥ t, and every atom unseen in training when t ≤ 0 (an unseen atom scores 0,
    :mod:`audit.statistics.categorical`).  Evidence without a recorded threshold is skipped.
    """
    entry = pair_statistic(report, label)
    if entry is None:
        return []
    lanes = [entry, *(entry.get("alternates") or [])]
    found: dict[AtomSet, None] = {}
    for item in report.get("evidence") or []:
        lane = int(item.get("lane") or 0)
        if item.get("pair") != label or item.get("threshold") is None or lane >= len(lanes):
            continue
        statistic = lanes[lane]
        if statistic.get("kind") != "coordinates" or not statistic.get("atom_scores"):
            continue
        threshold = float(item["threshold"])
        atoms = [(float(atom), float(score)) for atom, score in statistic["atom_scores"]]
        complement = threshold <= 0.0
        chosen = tuple(a for a, score in atoms if (score < threshold) == complement)
        found[AtomSet(int(statistic["coordinate"]), str(statistic["view"]), chosen, complement)] = None
    return list(found)


@dataclass(frozen=True)
class CertifiedProjection:
    """A certified event {w · output ≥ ``threshold``} of the audit's linear statistic (a Fisher
    discriminant), more likely under ``more_likely``, with the audit's certification counts
    (on that side, on the other, draws a side) or ()."""

    weights: tuple
    threshold: float
    more_likely: str = "D'"
    counts: tuple = ()


def certified_projections(report: dict, label: str) -> list[CertifiedProjection]:
    """Every certified event of pair ``label`` in a report dict that is a threshold of a linear
    statistic with weights (:class:`audit.statistics.linear.LinearStatistic`, any lane;
    :func:`~audit.sweep.repro_additive.certified_thresholds`)."""
    found = {CertifiedProjection(tuple(float(w) for w in statistic["weights"]), threshold, more, counts): None
             for statistic, threshold, more, counts
             in certified_thresholds(report, label, "fisher-discriminant", "weights")}
    return list(found)


def _projection_events(base: np.ndarray, neighbour: np.ndarray, certified: CertifiedProjection, ratio: float,
                       delta: float):
    """The certified projection event and its complement, each from both sides, on the draws given
    (as :func:`_score_events`)."""
    w = np.asarray(certified.weights, dtype=np.float64)
    if w.shape != (base.shape[1],):
        return
    above = (base @ w >= certified.threshold, neighbour @ w >= certified.threshold)
    yield from _threshold_events(above, "projection", certified, ratio, delta, weights=certified.weights)


def _set_events(base: np.ndarray, neighbour: np.ndarray, atom_set: AtomSet, ratio: float, delta: float):
    """The certified ``atom_set`` and its complement (a test and its complement are one test, the
    errors swapped), each as an event more likely under D′ or under D, on the draws given (whatever
    its excess on them: the audit chose and certified it on draws of its own)."""
    value = tuple(int(v) for v in atom_set.atoms) if atom_set.view == "bits" else atom_set.atoms
    for source, complement in (("certified", atom_set.complement), ("complement", not atom_set.complement)):
        event_set = dataclasses.replace(atom_set, complement=complement)
        a, b = event_set.holds(base), event_set.holds(neighbour)
        p0, p1 = float(a.mean()), float(b.mean())
        op = f"{atom_set.view} {'not in' if complement else 'in'}"
        for more, (hi, lo, n_hi, n_lo) in (("D'", (p1, p0, b.size, a.size)), ("D", (p0, p1, a.size, b.size))):
            raw = hi - ratio * lo - delta
            yield _score(hi, lo, n_hi, n_lo), Event(atom_set.index, op, value, more, p0, p1, raw,
                                                                  certified=source,
                                                                  strength=_strength(hi, lo, ratio, delta))


def _score(hi: float, lo: float, n_hi: int, n_lo: int) -> tuple:
    """A candidate's tally: the counts and sizes behind its frequencies ``hi`` (the side it is more
    likely under) and ``lo``, scored later by :func:`_lower_excess`."""
    return int(round(hi * n_hi)), int(n_hi), int(round(lo * n_lo)), int(n_lo)


def _lower_excess(tallies: Sequence[tuple], ratio: float, delta: float) -> np.ndarray:
    """Lower confidence bounds of each candidate's excess P[E | more likely] − e^ε·P[E | other] − δ:
    Clopper–Pearson bounds of both frequencies at ``CHOICE_MISS`` / (2m) each, m candidates
    (Bonferroni), so that every candidate's bound holds at once with probability ≥ 1 − CHOICE_MISS,
    whichever is chosen, for candidates fixed before the draws that score them:
    :func:`readable_event` reads them from the first part of the choosing draws (or the audit chose
    them) and scores them on the rest alone, so given the first part they are fixed, the union bound
    holds given it, and so it holds unconditionally.  m counts every candidate enumerated, not only
    those whose excess on the draws is positive: a count thinned on the scoring draws would not pay
    for the union.  The script's fresh draws decide what it prints; the certified numbers are the
    report's."""
    counts = np.asarray(tallies, dtype=np.int64).reshape(-1, 4)
    level = CHOICE_MISS / (2 * max(counts.shape[0], 1))
    return cp_lower(counts[:, 0], counts[:, 1], level) - ratio * cp_upper(counts[:, 2], counts[:, 3], level) - delta


def _grain_events(choosing: tuple, scoring: tuple, index: int, ratio: float, delta: float):
    """``grain(output[index]) <= g`` and ``>= g``: which grid of powers of two the value lies on
    (:func:`audit.statistics.coordinates.grain`; 0 reads as −inf, a non-finite value as nan), the
    values g read from the ``choosing`` draws (D's, D′'s) and each event scored on the ``scoring`` draws."""
    seen = np.concatenate([grain(choosing[0][:, index]), grain(choosing[1][:, index])])
    a, b = grain(scoring[0][:, index]), grain(scoring[1][:, index])
    values = np.unique(seen[np.isfinite(seen)])
    for value in values[:: max(1, values.size // _MAX_THRESHOLDS)]:
        for op, holds in (("grain <=", lambda x: x <= value), ("grain >=", lambda x: x >= value)):
            p0, p1 = float(holds(a).mean()), float(holds(b).mean())
            for more, (hi, lo, n_hi, n_lo) in (("D'", (p1, p0, b.size, a.size)), ("D", (p0, p1, a.size, b.size))):
                raw = hi - ratio * lo - delta
                yield _score(hi, lo, n_hi, n_lo), Event(index, op, float(value), more, p0, p1, raw)


def _bits_events(choosing: tuple, scoring: tuple, index: int, ratio: float, delta: float):
    """Sets of low-bit patterns of coordinate ``index``: ranked by likelihood ratio on the
    ``choosing`` draws (D's, D′'s), each prefix (1, 2, 4, ... patterns) scored on the ``scoring`` draws."""
    size = 1 << LOW_BITS
    c0 = np.bincount(low_bits(choosing[0][:, index]), minlength=size) + 0.5
    c1 = np.bincount(low_bits(choosing[1][:, index]), minlength=size) + 0.5
    a, b = low_bits(scoring[0][:, index]), low_bits(scoring[1][:, index])
    for more, order in (("D'", np.argsort(-(c1 / c0), kind="stable")), ("D", np.argsort(-(c0 / c1), kind="stable"))):
        k = 1
        while k <= size:
            chosen = order[:k]
            p0 = float(np.isin(a, chosen).mean())
            p1 = float(np.isin(b, chosen).mean())
            hi, lo, n_hi, n_lo = (p1, p0, b.size, a.size) if more == "D'" else (p0, p1, a.size, b.size)
            raw = hi - ratio * lo - delta
            yield _score(hi, lo, n_hi, n_lo), Event(
                index, "bits in", tuple(int(v) for v in sorted(chosen)), more, p0, p1, raw)
            k *= 2


def _split(draws: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One side's choosing draws split in two: the first rows, which propose the candidate events
    (:data:`PROPOSING_SHARE` of them, but at least :data:`PROPOSING_LEAST` or half), and the rest,
    which score them.  The candidates need few draws (a quantile's place, the grains and values seen,
    a ranking of bit patterns); the scoring needs many, as each candidate's Clopper–Pearson bound
    shrinks with the square root of its draws."""
    n = draws.shape[0]
    first = max(int(n * PROPOSING_SHARE), min(n // 2, PROPOSING_LEAST))
    return draws[:first], draws[first:]


def _candidates(column: np.ndarray) -> list[tuple[str, float]]:
    values, counts = np.unique(column, return_counts=True)
    found: list[tuple[str, float]] = []
    if values.size <= _MAX_ATOMS:
        found += [("==", float(v)) for v in values]
    if values.size > 1:
        qs = np.unique(np.quantile(column, np.linspace(0.0, 1.0, _MAX_THRESHOLDS + 1)))
        found += [(op, float(q)) for q in qs for op in (">=", "<=")]
    return found


def _holds(column: np.ndarray, op: str, value: float) -> np.ndarray:
    if op == "==":
        return column == value
    return column >= value if op == ">=" else column <= value


def _strength(hi: float, lo: float, ratio: float, delta: float) -> float:
    """``(hi − ratio·lo − δ) / √(hi(1 − hi) + ratio²·lo(1 − lo))`` (:attr:`Event.strength`)."""
    spread, excess = math.sqrt(hi * (1 - hi) + ratio ** 2 * lo * (1 - lo)), hi - ratio * lo - delta
    if spread > 0:
        return excess / spread
    # No spread: a certain excess is infinitely strong, none at all (an event that never or always
    # holds on both sides, excess exactly 0 when δ = 0) is no evidence, not +inf (copysign(inf, 0.0)).
    return math.copysign(math.inf, excess) if excess != 0 else 0.0


def _score_events(base: np.ndarray, neighbour: np.ndarray, carried: CarriedScore, ratio: float, delta: float):
    """The additive statistic's certified event {T ≥ t} and its complement, each as an event more
    likely under D′ or under D, on the draws given (whatever its excess on them, as :func:`_set_events`)."""
    above = (carried.holds(base), carried.holds(neighbour))
    yield from _threshold_events(above, "score", carried, ratio, delta, statistic=carried.tables)


def _threshold_events(above: tuple, kind: str, certified: Any, ratio: float, delta: float, **fields: Any):
    """A certified threshold event {statistic ≥ t} (``above``: where it holds on D's and on D′'s
    draws) and its complement, each as an event more likely under D′ or under D.  The certified
    event read from the side the audit certified it on carries its strength on the audit's
    certification counts (``certified.counts``) when the report has them."""
    for op, (a, b) in ((">=", above), ("<", (~above[0], ~above[1]))):
        p0, p1 = float(a.mean()), float(b.mean())
        for more, (hi, lo, n_hi, n_lo) in (("D'", (p1, p0, b.size, a.size)), ("D", (p0, p1, a.size, b.size))):
            strength = _strength(hi, lo, ratio, delta)
            if op == ">=" and certified.counts and more == certified.more_likely:
                c = certified.counts
                strength = _strength(c[0] / c[2], c[1] / c[2], ratio, delta)
            yield _score(hi, lo, n_hi, n_lo), Event(
                -1, f"{kind} {op}", certified.threshold, more, p0, p1, hi - ratio * lo - delta,
                certified="certified" if op == ">=" else "complement", strength=strength, **fields)


def readable_event(base: np.ndarray, neighbour: np.ndarray, epsilon: float, delta: float,
                   projections: Sequence[Sequence[float]] = (), certified: Sequence[AtomSet] = (),
                   scores: Sequence[CarriedScore] = (),
                   certified_lines: Sequence[CertifiedProjection] = ()) -> Optional[Event]:
    """The simple event of the module docstring on draws ``base`` (n, k) and ``neighbour`` (n, k).

    ``projections`` are weight vectors of length k the audit's statistic used (a Fisher
    discriminant): a threshold on ``w · output`` is a candidate too, and the script carries ``w``.
    ``certified`` are the audit's certified atom-set events (:func:`certified_sets`) and
    ``scores`` its certified events of an additive statistic
    (:func:`audit.sweep.repro_additive.certified_scores`) and ``certified_lines`` of a Fisher
    discriminant (:func:`certified_projections`), candidates as they stand.

    Each side's draws are split in two (:func:`_split`): the first part proposes the candidates
    (thresholds at pooled quantiles, values seen, bit patterns ranked by their likelihood ratio,
    grains seen) and the rest alone scores them, by a lower confidence bound of the excess over the
    claim (:func:`_lower_excess`: Clopper–Pearson, Bonferroni over all candidates), so an event
    resting on a handful of tail draws cannot win, and with probability at least 1 −
    :data:`CHOICE_MISS` the event returned as certain (:attr:`Event.choice` :data:`CERTAIN`) exceeds
    the claim.  The event's frequencies are those of the scoring part.  When no candidate's bound is
    positive, the audit's own certified event is returned (:data:`FALLBACK`: chosen and certified on
    the audit's draws, not these, which may be too few to see an event of δ's scale; it stands on
    the audit's evidence), the one of the largest :attr:`Event.strength`, which is what a script's
    fixed number of draws can show.  With none, a simple event that is not certain (:data:`HOPE`:
    too few draws, as for a model's fit; the script's fresh draws decide): seen at least
    :data:`HOPE_COUNT` times on its likelier side and exceeding the claim with one draw more on the
    other side than seen, the one of the largest such excess in standard deviations; with none,
    None.
    """
    (a_choose, a), (b_choose, b) = _split(base), _split(neighbour)
    choosing = np.concatenate([a_choose, b_choose])
    n0, n1 = a.shape[0], b.shape[0]
    ratio = math.exp(min(epsilon, 700.0))
    found: list[tuple[tuple, Event]] = []
    for weights in projections:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (base.shape[1],) or not np.all(np.isfinite(w)):
            continue
        for op, value in _candidates(choosing @ w):
            if op == "==":
                continue
            p0, p1 = float(_holds(a @ w, op, value).mean()), float(_holds(b @ w, op, value).mean())
            for more, (hi, lo, n_hi, n_lo) in (("D'", (p1, p0, n1, n0)), ("D", (p0, p1, n0, n1))):
                found.append((_score(hi, lo, n_hi, n_lo),
                              Event(-1, f"projection {op}", value, more, p0, p1, hi - ratio * lo - delta,
                                    tuple(float(x) for x in w))))
    for atom_set in certified:
        if 0 <= atom_set.index < base.shape[1]:
            found += _set_events(a, b, atom_set, ratio, delta)
    for carried in scores:
        found += _score_events(a, b, carried, ratio, delta)
    for line in certified_lines:
        found += _projection_events(a, b, line, ratio, delta)
    for index in range(base.shape[1]):
        column = choosing[:, index]
        if column.size == 0 or np.all(column == column[0]):
            continue
        for op, value in _candidates(column):
            p0 = float(_holds(a[:, index], op, value).mean())
            p1 = float(_holds(b[:, index], op, value).mean())
            for more, (hi, lo, n_hi, n_lo) in (("D'", (p1, p0, n1, n0)), ("D", (p0, p1, n0, n1))):
                raw = hi - ratio * lo - delta
                found.append((_score(hi, lo, n_hi, n_lo), Event(index, op, value, more, p0, p1, raw)))
        finite = column[np.isfinite(column)]
        # Bit patterns say something only about values that are not few and not small integers.
        if np.unique(finite).size > 16 and not np.all(finite == np.round(finite)):
            found += [*_bits_events((a_choose, b_choose), (a, b), index, ratio, delta),
                      *_grain_events((a_choose, b_choose), (a, b), index, ratio, delta)]
    if not found:
        return None
    lower = _lower_excess([tally for tally, _ in found], ratio, delta)
    best = int(np.argmax(lower))
    if lower[best] > 0:
        return dataclasses.replace(found[best][1], choice=CERTAIN)
    own = [event for _, event in found if event.certified]
    if own:
        return dataclasses.replace(max(own, key=lambda event: event.strength), choice=FALLBACK)
    # Last, an event that is not certain: seen at least HOPE_COUNT times on its likelier side, and
    # exceeding the claim with one more draw on the other side than seen (a tail of a few draws,
    # or of none on the other side, fails both), ranked by that excess in standard deviations.
    best, best_z = None, 0.0
    for (k_hi, n_hi, k_lo, n_lo), event in found:
        hi, lo = k_hi / n_hi, (k_lo + 1) / n_lo
        excess = hi - ratio * lo - delta
        if k_hi >= HOPE_COUNT and excess > 0:
            z = excess / math.sqrt(hi * (1 - hi) / n_hi + ratio ** 2 * lo * (1 - lo) / n_lo)
            if z > best_z:
                best, best_z = event, z
    return None if best is None else dataclasses.replace(best, choice=HOPE)


def script_draws(event: Event, cost: str, epsilon: float = 0.0) -> int:
    """Releases per side for the script: enough for the excess x to stand out, within
    :data:`SCRIPT_DRAWS` and at least 200: N ≥ 16/x², and, for a claim's ``epsilon``, the least N
    (in steps of a quarter) at which x is four of the standard errors the script prints, at the
    event's frequencies P (likelier side) and Q: √((P̃(1 − P̃) + e^{2ε}·Q̃(1 − Q̃))/N) with
    P̃ = (NP + ½)/(N + 1), Q̃ likewise.  At a large ε the other side's frequency weighs e^{2ε}: an
    event seen on none of 200 releases of it is still allowed e^ε/400 or so."""
    hi, lo = (event.p_neighbour, event.p_base) if event.more_likely == "D'" else (event.p_base, event.p_neighbour)
    excess, ratio2 = max(event.excess, 1e-9), math.exp(min(2.0 * epsilon, 1400.0))
    n = max(200, math.ceil(16.0 / excess ** 2))

    def error(n: int) -> float:
        p, q = (hi * n + 0.5) / (n + 1), (lo * n + 0.5) / (n + 1)
        return math.sqrt((p * (1 - p) + ratio2 * q * (1 - q)) / n)

    while n < SCRIPT_DRAWS[cost] and excess < 4.0 * error(n):
        n = math.ceil(n * 1.25)
    return int(min(SCRIPT_DRAWS[cost], n))


def _literal(array: np.ndarray) -> str:
    """``np.array([...])`` source that gives back ``array`` exactly (float reprs round-trip)."""
    text = repr(np.asarray(array, dtype=np.float64).tolist()).replace("nan", "np.nan").replace("inf", "np.inf")
    return f"np.array({text})"


def _set_comment(event: Event, noun: str) -> str:
    """What the atom set of a certified event's script lists: the atoms the certified event holds,
    or the trained atoms it leaves out (its complement, or an event that held every unseen atom)."""
    holds = event.op.endswith(" in") and not event.op.endswith("not in")
    if holds == (event.certified == "certified"):
        return f"the {noun} the audit's certified event holds"
    return f"the trained {noun} the audit's certified event leaves out"


def _bits_source(event: Event) -> str:
    """The bits view (a set of low-bit patterns), the grain or the projection a script carries when
    its event reads it."""
    if event.op.startswith("score"):
        return ("# The audit's additive statistic, one table per column of the released vector (JSON).\n"
                f"TABLES = json.loads({json.dumps(json.loads(event.statistic))!r})\n\n\n"
                + textwrap.dedent(inspect.getsource(additive_scores)) + "\n\n")
    if event.op.startswith("projection"):
        return f"W = np.array({list(event.weights)!r})  # the audit's Fisher discriminant\n\n\n"
    if event.op.startswith("grain"):
        grains = ""
        if event.op in ("grain in", "grain not in"):
            listed = ", ".join("float('-inf')" if v == -math.inf else str(int(v)) for v in event.value
                               if not math.isnan(v))
            zero = "; -inf is the grain of 0" if -math.inf in event.value else ""
            grains = f"EVENT_GRAINS = frozenset([{listed}])  # {_set_comment(event, 'grains')}{zero}\n\n\n"
        return grains + ("def grain(value):\n"
                "    \"\"\"The exponent g of the largest power of two dividing the double `value` (-inf for 0, nan\n"
                "    for inf or nan): value = m * 2**e with 0.5 <= |m| < 1, M = |m| * 2**53 its integer significand,\n"
                "    t the trailing zero bits of M, g = e - 53 + t.\"\"\"\n"
                "    value = float(value)\n"
                "    if value != value or value in (float('inf'), float('-inf')):\n"
                "        return float('nan')\n"
                "    if value == 0.0:\n"
                "        return float('-inf')\n"
                "    m, e = np.frexp(value)\n"
                "    significand = int(abs(m) * 2.0 ** 53)\n"
                "    return e - 53 + ((significand & -significand).bit_length() - 1)\n\n\n")
    if event.op not in ("bits in", "bits not in"):
        return ""
    what = _set_comment(event, "low-bit patterns") if event.certified else \
        f"low-bit patterns more likely under {event.more_likely}"
    return (f"LOW_BITS = {LOW_BITS}\n"
            f"EVENT_BITS = frozenset({list(event.value)!r})  # {what}\n\n\n"
            "def low_bits(value):\n"
            "    \"\"\"The low LOW_BITS bits of the IEEE-754 pattern of a double (-0.0 read as +0.0).\"\"\"\n"
            "    word = (np.array([value], dtype=np.float64) + 0.0).view(np.uint64)[0]\n"
            "    return int(word) & ((1 << LOW_BITS) - 1)\n"
            "\n\n")


def _describe(event: Event) -> str:
    certified = {"": "", "certified": " (the audit's certified event itself)",
                 "complement": " (the complement of the audit's certified event: the same test)"}[event.certified]
    if event.op in ("bits in", "bits not in"):
        return (f"the low {LOW_BITS} bits of the IEEE-754 pattern of output[{event.index}] are "
                f"{'one' if event.op == 'bits in' else 'none'} of {len(event.value)} patterns (EVENT_BITS below)"
                + certified)
    if event.op in ("grain in", "grain not in"):
        return (f"the grain of output[{event.index}] (the exponent of the largest power of two dividing it: which "
                f"grid of doubles the released value lies on) is {'one' if event.op == 'grain in' else 'none'} of "
                f"{len(event.value)} values (EVENT_GRAINS below){certified}")
    if event.op.startswith("score"):
        columns = len(json.loads(event.statistic))
        side = "at least" if event.op == "score >=" else "below"
        return (f"the audit's statistic T, a sum of {columns} per-column log-ratio estimates (TABLES and "
                f"additive_scores below, exactly as the audit computed it), is {side} {event.value!r}{certified}")
    if event.op.startswith("projection"):
        return (f"{event.code()}: a threshold on the weighted sum W of the released vector that the audit "
                f"chose{certified}")
    if event.op.startswith("grain"):
        return (f"{event.code()}, where grain(x) is the exponent of the largest power of two dividing x "
                "(which grid of doubles the released value lies on)")
    return event.code()


def _choice_line(event: Event) -> str:
    """The script docstring's line saying how the sweep chose the event (:attr:`Event.choice`), or
    nothing for an event made by hand."""
    if not event.choice:
        return ""
    return "\n".join(textwrap.wrap(f"How it was chosen: {event.choice}.", 96)) + "\n"


def script_definitions(header: str, helpers: Sequence[Any], release: Any) -> str:
    """What a script defines before it releases: the library's header (its imports and constants),
    then the source of each helper and of ``release``.  Executed alone, it must define ``release``
    with every name the release uses (a name missing from the header fails only when a release is
    drawn, where the script's ``draw`` would count the NameError as a refused input)."""
    sources = "\n\n".join(textwrap.dedent(inspect.getsource(fn)) for fn in (*helpers, release))
    return f"{header.rstrip()}\n\n\n{sources}\n"


def script_text(*, header: str, helpers: Sequence[Any], release: Any, params: dict, base: np.ndarray,
                neighbour: np.ndarray, pair_label: str, event: Event, draws: int, epsilon: float, delta: float,
                title: str, finding: str, seeded: bool, layout: str, width: int) -> str:
    """The reproduction script (see the module docstring); ``width`` is the length of the vector
    ``release`` returns (the sweep's output adds a last entry, 1.0 when the call raised)."""
    state = "np.random.RandomState(2026)" if seeded else "None  # the library draws from its own generator"
    doc = "\n".join(textwrap.wrap(finding, 96))
    hi, lo = ("D_PRIME", "D") if event.more_likely == "D'" else ("D", "D_PRIME")
    if event.statistic:
        header = "import json\n" + header
    definitions = script_definitions(header, helpers, release)
    return f'''"""{title}

{doc}

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.
{layout}
Event: {_describe(event)}  (chosen by the sweep on draws of its own; these draws are fresh).
{_choice_line(event)}"""
{definitions}

release = {release.__name__}
PARAMS = {params!r}
D = {_literal(base)}
D_PRIME = {_literal(neighbour)}  # {pair_label}
N = {draws}
EPSILON, DELTA = {epsilon!r}, {delta!r}  # the library's claim, at its reference delta


{_bits_source(event)}def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros({width}), 1.0)


def event(output):
    return bool({event.code()})


if __name__ == "__main__":
    random_state = {state}
    hits = {{name: sum(event(draw(data, random_state)) for _ in range(N)) for name, data in (("D", D), ("D_PRIME", D_PRIME))}}
    p, q = hits["{hi}"] / N, hits["{lo}"] / N
    print(f"P[event | {hi}] = {{p:.4f}}  ({{hits['{hi}']}} of {{N}} releases)")
    print(f"P[event | {lo}] = {{q:.4f}}  ({{hits['{lo}']}} of {{N}} releases)")
    allowed = min(1.0, float(np.exp(EPSILON)) * q + DELTA)
    print(f"the claim allows P[event | {hi}] <= e^eps * {{q:.4f}} + delta = {{allowed:.4f}}: "
          + ("exceeded" if p > allowed else "not exceeded on these draws"))
    print(f"excess over the claim: {{p - allowed:+.4f}}")
    # A point estimate on these draws: its standard error says how far from noise it is.  Each
    # frequency's variance is estimated with half a release added to its count, so that it is not 0
    # when every release or none is in the event.
    p_half, q_half = (hits["{hi}"] + 0.5) / (N + 1), (hits["{lo}"] + 0.5) / (N + 1)
    error = float(np.sqrt(p_half * (1 - p_half) / N + float(np.exp(2 * EPSILON)) * q_half * (1 - q_half) / N))
    print(f"its standard error: {{error:.4f}} ({{(p - allowed) / error:+.1f}} standard errors)")
'''
