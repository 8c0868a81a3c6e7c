"""Anytime-valid audits: draw in growing rounds, stop as soon as the evidence decides.

With ``anytime=True`` (or ``samples=None``) :func:`audit.run_audit` does not fix its sample size in
advance.  ``samples`` is a *maximum* per pair and side; the audit

1. learns its test statistic as the fixed design does (:mod:`audit.statistics`), first with the
   training a budget of :data:`LEARNING_BUDGET` would give, then again on :data:`RELEARN` times as
   many fresh draws each time it has bet :data:`RELEARN` times its last training (an *epoch*), up
   to the training of the fixed design at the whole budget (:func:`plan_anytime`); ``"auto"`` and
   ``"linear"`` on a 1-D output learn nothing (the output itself is the statistic);
2. draws a small pilot (:data:`PILOT` per side) for each statistic, which places its histogram and
   is the first evidence about its events;
3. draws in rounds whose cumulative size grows by :data:`GROWTH` (at least :data:`MIN_ROUND` draws).
   Before each round, for every headline quantity (ε at the claim's δ, δ at its ε, μ; μ alone for a
   μ-GDP claim) and every pair, it chooses from the counts of all earlier draws an event
   {T ≥ t} or {T < t}, and a bet λ (:func:`_choose`); the round's counts then multiply each
   quantity's e-process by the round's e-value (:mod:`audit.sequential`);
4. stops after the first round in which some quantity's time-uniform lower bound exceeds what the
   claim allows (VIOLATED), when the budget is spent, or when the futility rule says the remaining
   budget is unlikely to refute the claim (NOT_REFUTED).

**Validity.**  Everything chosen before a round (events, bets, tangent points, whether to go on) is a
function of earlier draws only, so each quantity's e-process is a test supermartingale under the
claim, whatever the choices (:mod:`audit.sequential`).  Its level is its share of the failure
budget γ = 1 − confidence: the claim's own quantity gets :data:`audit.selection.OWN_SLOT_SHARE`, the
others split the rest (μ alone takes all of it for a μ-GDP claim); by Ville's inequality and the
union bound, a claim that holds is reported VIOLATED with probability at most γ, and every reported
lower bound holds simultaneously with probability at least 1 − γ, at the stopping time whatever it
is.  The futility rule can only end an audit earlier without a violation: it never rejects, so it
cannot raise the false-alarm rate.  No black-box audit can certify that a claim holds, so
NOT_REFUTED stays "not refuted".

**What it is for.**  A clear violation is refuted with a few hundred draws (the fixed design must
choose ``samples`` in advance and spend it); a subtle one needs about as many as the fixed design,
which also certifies curves and trade-off points.  The fixed design stays the default.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Optional

import numpy as np
from scipy import special

from mechanisms.gdp import gdp_delta

from .allocation import training_draws
from .bounds import epsilon_lower_bound, mu_lower_bound
from .checkpoint import load_state, save_state
from .exact import PLOT_ALPHAS, exact_truth, ratio, versions
from .report import (AuditReport, EpsilonCurve, PairResult, SequentialViolation, TradeoffCurve, Verdict,
                     draw_counts)
from .sampling import (Binning, ChunkTask, Phase, chunk_plan, chunk_rng, chunk_size_for, draw_outputs, ordered,
                       placing_range, run_chunk, scores_of)
from .selection import DELTA_GRID, OWN_SLOT_SHARE, WINNERS_CURSE_SDS, PairCounts
from .selection import _candidates  # the candidate thresholds, shared with the fixed design's choice
from .sequential import Bet, Family, bet_size, growth, log_evalue, lower_confidence_bound, payoff
from .slots import Quantity, Slot, headline_slots
from .stages import BINS, ENGINE_VERSION, PROBE_DRAWS
from .statistics import TrainingData, fit_statistic, needs_training, statistic_label, training_plan
from .witness import anytime_witness_record

__all__ = ["AnytimePlan", "Epoch", "AnytimeOutcome", "plan_anytime", "run_anytime", "anytime_report",
           "DEFAULT_BUDGET", "PILOT", "GROWTH", "MIN_ROUND", "LEARNING_BUDGET", "RELEARN", "FUTILITY_START"]

#: The maximum draws per pair and side of ``samples=None``.
DEFAULT_BUDGET = 2_000_000
#: Pilot draws per side: they place the histogram and are the first round's evidence.
PILOT = 16
#: Each round brings the draws so far to this multiple (and at least :data:`MIN_ROUND` more).
GROWTH = 1.25
MIN_ROUND = 8
#: The budget the first statistic's training is sized for (:func:`audit.allocation.training_draws`) ...
LEARNING_BUDGET = 4096
#: ... and the factor by which each epoch's training, and its betting draws, grow.
RELEARN = 4
#: The futility rule is consulted from this many betting draws per side of a pair on ...
FUTILITY_START = 4096
#: ... with each event's estimated probabilities moved this many standard deviations in its favour.
FUTILITY_SDS = 0.5
#: Chunk keys of round r (and of epoch e's training and pilot) are r·2²⁰ + c: at most 2²⁰ chunks each.
_ROUND_KEY = 1 << 20


@dataclass(frozen=True)
class Epoch:
    """One statistic's part of an anytime audit: ``training`` draws per side learn it, ``pilot``
    draws place its histogram, and rounds of bets end at ``ends`` (cumulative betting draws)."""

    training: int
    pilot: int
    ends: tuple[int, ...]

    @property
    def draws(self) -> int:
        return self.training + self.pilot + self.ends[-1]

    def to_dict(self) -> dict:
        return {"training": self.training, "pilot": self.pilot, "rounds": len(self.ends), "round_ends": list(self.ends)}


@dataclass(frozen=True)
class AnytimePlan:
    """At most ``samples`` draws per pair and side, over ``epochs``: each learns its statistic on
    :data:`RELEARN` times the draws of the one before and bets until its betting draws reach
    :data:`RELEARN` times its training (the last one until the budget is spent)."""

    samples: int
    epochs: tuple[Epoch, ...]

    @property
    def rounds(self) -> int:
        return sum(len(epoch.ends) for epoch in self.epochs)

    def to_dict(self) -> dict:
        return {"samples": self.samples, "epochs": [epoch.to_dict() for epoch in self.epochs]}


def plan_anytime(samples: int, output_dim: int, statistic: Any) -> AnytimePlan:
    """The plan of an anytime audit with at most ``samples`` draws per pair and side.

    ``"auto"`` and ``"linear"`` on a 1-D output learn nothing (the output is the statistic): one
    epoch.  A learned statistic starts from the training the fixed design would give a budget of
    :data:`LEARNING_BUDGET` and grows it :data:`RELEARN`-fold per epoch, up to what the fixed design
    gives ``samples``: a rare event the first few thousand draws cannot reveal is learned later."""
    learns = not (output_dim == 1 and statistic in ("auto", "linear")) and needs_training(statistic, output_dim)
    training = training_draws(min(samples, LEARNING_BUDGET), output_dim, learns) if learns else 0
    if training and not needs_training(statistic, output_dim, training):
        training = 0
    largest = training_draws(samples, output_dim, learns) if training else 0
    needed = training + PILOT + MIN_ROUND
    if samples < needed:
        raise ValueError(f"`samples`={samples} is too small for an anytime audit: it needs at least {needed} "
                         f"draws per pair and side (training {training}, pilot {PILOT}, one round of {MIN_ROUND})")
    epochs, used = [], 0
    while True:
        betting = samples - used - training - PILOT
        following = min(largest, training * RELEARN)
        last = not training or training >= largest or \
            betting - RELEARN * training < following + PILOT + RELEARN * following
        if not last:
            betting = RELEARN * training
        epochs.append(Epoch(training, PILOT, _round_ends(betting)))
        used += epochs[-1].draws
        if last:
            return AnytimePlan(samples, tuple(epochs))
        training = following


def _round_ends(betting: int) -> tuple[int, ...]:
    """Cumulative betting draws after each round: the draws so far (pilot included) grow by
    :data:`GROWTH`, by at least :data:`MIN_ROUND`, up to ``betting``."""
    ends, seen = [], PILOT
    while not ends or ends[-1] < betting:
        seen = max(seen + MIN_ROUND, int(math.ceil(seen * GROWTH)))
        ends.append(min(seen - PILOT, betting))
    return tuple(ends)


# --- one headline quantity's e-processes --------------------------------------------------------

@dataclass
class _Quantity:
    """The e-processes of one headline slot, one per pair, and their level."""

    slot: Slot
    level: float
    allowed: Optional[float]  # what the claim allows (None: this slot cannot refute it)
    bets: list = field(default_factory=list)  # per pair, the list of its rounds' Bets
    wealth: list = field(default_factory=list)  # per pair, log K at `allowed`
    _bounds: dict = field(default_factory=dict)  # (pair, rounds) -> bound, computed once

    @property
    def family(self) -> Family:
        return {Quantity.EPSILON: Family.EPSILON, Quantity.DELTA: Family.DELTA, Quantity.MU: Family.MU}[
            self.slot.quantity]

    @property
    def at(self) -> float:
        return 0.0 if self.slot.at is None else float(self.slot.at)

    @property
    def testable(self) -> bool:
        return self.allowed is not None and math.isfinite(self.allowed)

    def log_wealth(self) -> float:
        """log of the mean over pairs of the e-processes at ``allowed``."""
        return float(special.logsumexp(self.wealth)) - math.log(len(self.wealth))

    def bound(self, pair: Optional[int] = None) -> float:
        """The lower confidence bound now, from the mean of the pairs' e-processes at ``level``, or
        from ``pair``'s alone at ``level``/pairs (implied by the mean's: no extra budget)."""
        key = (pair, len(self.bets[0]))
        if key not in self._bounds:
            bets = self.bets if pair is None else [self.bets[pair]]
            level = self.level / (len(self.bets) if pair is not None else 1)
            upper = 1.0 if self.family is Family.DELTA else math.inf
            self._bounds[key] = lower_confidence_bound(self.family, self.at, bets, level, upper=upper,
                                                       hint=self.allowed)
        return self._bounds[key]


def _quantities(claim, gamma: float, pairs: int) -> list[_Quantity]:
    slots = headline_slots(claim)
    shares = [1.0] if len(slots) == 1 else \
        [OWN_SLOT_SHARE] + [(1.0 - OWN_SLOT_SHARE) / (len(slots) - 1)] * (len(slots) - 1)
    return [_Quantity(slot, gamma * share, slot.allowed_by(claim), [[] for _ in range(pairs)], [0.0] * pairs)
            for slot, share in zip(slots, shares)]


# --- choosing an event and a bet ------------------------------------------------------------------

@dataclass(frozen=True)
class _Choice:
    orientation: int  # see _tails
    index: int  # j of the event {bin ≥ j} (orientations 0, 1) or {bin < j} (2, 3)
    bet: float
    tangent: float
    growth: float


#: Per orientation of :func:`_tails`: the side its event is more likely under.
_MORE_LIKELY = ("neighbour", "base", "base", "neighbour")


def _tails(counts: PairCounts) -> tuple[np.ndarray, np.ndarray]:
    """count_A[o, j−1] and count_B[o, j−1] of the events of the four orientations o, j = 1..bins+1:
    {bin ≥ j} more likely under the neighbour (0) or the base (1), {bin < j} more likely under the
    base (2) or the neighbour (3).  Both directions of both tails: a pair is tested as
    (ε, δ)-indistinguishable both ways, and the linear constraints of an event and of its
    complement differ (they are different tangents of the claimed curve)."""
    up_base = np.cumsum(counts.base[::-1])[::-1][1:]
    up_neighbour = np.cumsum(counts.neighbour[::-1])[::-1][1:]
    low_base, low_neighbour = counts.n - up_base, counts.n - up_neighbour
    return (np.stack([up_neighbour, up_base, low_base, low_neighbour]),
            np.stack([up_base, up_neighbour, low_neighbour, low_base]))


def _estimates(counts: PairCounts, sds: float):
    """Every candidate event's counts (thresholds where a count changes, both orientations) and its
    probabilities estimated from them: (c + ½)/(n + 1), moved ``sds`` standard deviations against the
    event (in its favour for a negative ``sds``)."""
    orientation, index, count_a, count_b = _candidates(*_tails(counts))
    n = counts.n
    a, b = (count_a + 0.5) / (n + 1), (count_b + 0.5) / (n + 1)
    a = np.clip(a - sds * np.sqrt(a * (1 - a) / (n + 1)), 0.0, 1.0)
    b = np.clip(b + sds * np.sqrt(b * (1 - b) / (n + 1)), 0.0, 1.0)
    return orientation, index, a, b


def _tuning_value(quantity: _Quantity, a, b) -> float:
    """The value of H(v) the bets are tuned for: what the claim allows, or for a quantity that cannot
    refute the claim, 0.8 of the best point estimate among the candidates."""
    if quantity.testable:
        return float(quantity.allowed)
    if quantity.family is Family.MU:
        estimate = float(np.max(mu_lower_bound(b, 1.0 - a), initial=0.0))
    elif quantity.family is Family.EPSILON:
        estimate = float(np.max(np.nan_to_num(epsilon_lower_bound(b, 1.0 - a, quantity.at)), initial=0.0))
    else:
        estimate = float(np.max(a - math.exp(quantity.at) * b, initial=0.0))
    return max(0.8 * estimate, 1e-3)


def _payoffs(quantity: _Quantity, value: float, b: np.ndarray):
    """The payoff values (4 × candidates) and tangent ε of each candidate under H(``value``); for μ
    the tangent of G_v at the candidate's estimated B, ε = v·Φ⁻¹(1 − B) − v²/2 (at least 0), where
    the constraint A ≤ e^ε B + δ_v(ε) touches the claimed curve."""
    if quantity.family is not Family.MU:
        w = payoff(quantity.family, quantity.at, value)
        return np.broadcast_to(w.reshape(4, 1), (4, b.size)), np.zeros(b.size)
    tangent = value * special.ndtri(1.0 - np.clip(b, 1e-300, 1.0)) - value * value / 2.0
    tangent = np.clip(np.nan_to_num(tangent, posinf=50.0), 0.0, 50.0)
    delta = np.asarray(gdp_delta(tangent, value), dtype=np.float64)
    s = np.exp(tangent) + delta
    return np.stack([(1.0 - delta) / s, 1.0 / s - 1.0, -np.ones_like(s), -delta / s]), tangent


def _choose(quantity: _Quantity, estimates) -> _Choice:
    """The event and bet with the largest expected log-growth under ``estimates`` (:func:`_estimates`
    of the counts so far; a bet of 0 when no event grows)."""
    orientation, index, a, b = estimates
    value = _tuning_value(quantity, a, b)
    w, tangent = _payoffs(quantity, value, b)
    bets = bet_size(a, b, w)
    rates = growth(a, b, w, bets)
    best = int(np.argmax(rates))
    if not rates[best] > 0:
        return _Choice(int(orientation[best]), int(index[best]) + 1, 0.0, float(tangent[best]), 0.0)
    return _Choice(int(orientation[best]), int(index[best]) + 1, float(bets[best]), float(tangent[best]),
                   float(rates[best]))


# --- the audit loop -----------------------------------------------------------------------------

@dataclass
class AnytimeOutcome:
    """What an anytime audit gathered, and why it stopped (``"violation"``, ``"futility"`` or
    ``"budget"``)."""

    quantities: list
    statistics: tuple  # the last epoch's
    notes: tuple
    rounds: int
    n: int  # betting draws per side of each pair, over all epochs (training and pilots excluded)
    stopped: str
    evidence: list
    total: int = 0  # draws per side of each pair, training and pilots included


def run_anytime(job, executor, bar, statistic, claim, plan: AnytimePlan, gamma: float,
                checkpoint=None, fingerprint=None) -> AnytimeOutcome:
    """Learn, pilot and bet in rounds, epoch by epoch, until a violation is certified, the budget is
    spent or the futility rule ends the audit (module docstring).  The quantities' e-processes run
    on across epochs: a new statistic only changes which events later rounds may choose."""
    pairs = len(job.datasets)
    quantities = _quantities(claim, gamma, pairs)
    state = {"epoch": 0, "counts": None, "rounds": 0, "evidence": [], "draws": 0}
    if checkpoint is not None:
        saved = load_state(checkpoint, fingerprint)
        if saved is not None:
            _restore(saved, state, quantities)
            bar.update(state["rounds"])
    first_round = sum(len(epoch.ends) for epoch in plan.epochs[:state["epoch"]])
    stopped, statistics, notes = "budget", (), ()
    for e in range(state["epoch"], len(plan.epochs)):
        epoch, final = plan.epochs[e], e == len(plan.epochs) - 1
        statistics, notes = _train(job, executor, statistic, claim, epoch.training, e)
        epoch_job = replace(job, statistics=statistics)
        binnings, counts = _pilot(epoch_job, executor, epoch.pilot, e)
        epoch_job = replace(epoch_job, binnings=binnings)
        if state["epoch"] != e or state["counts"] is None:  # a new epoch (not one resumed in its middle)
            state.update(epoch=e, counts=counts)
        stopped = _bet(epoch_job, executor, bar, quantities, state, epoch, first_round, final, pairs, checkpoint,
                       fingerprint)
        if stopped != "budget":
            break
        first_round += len(epoch.ends)
        state.update(epoch=e + 1, counts=None)
    epochs = _epochs_used(plan, state["rounds"])
    total = sum(e.training + e.pilot for e in epochs) + state["draws"]
    return AnytimeOutcome(quantities, statistics, notes, state["rounds"], state["draws"], stopped, state["evidence"],
                          total)


def _bet(job, executor, bar, quantities, state, epoch: Epoch, first_round: int, final: bool, pairs: int,
         checkpoint, fingerprint) -> str:
    """The rounds of one epoch; returns why they stopped."""
    while state["rounds"] - first_round < len(epoch.ends):
        local = state["rounds"] - first_round
        n_before = epoch.ends[local - 1] if local else 0
        m = epoch.ends[local] - n_before
        estimates = [_estimates(PairCounts(state["counts"][k, 0], state["counts"][k, 1], n_before + epoch.pilot),
                                WINNERS_CURSE_SDS) for k in range(pairs)]
        choices = [[_choose(quantity, estimates[k]) for k in range(pairs)] for quantity in quantities]
        round_number = state["rounds"] + 1
        drawn = _round(job, executor, round_number, m)
        tails = [_tails(PairCounts(drawn[k][0], drawn[k][1], m)) for k in range(pairs)]
        for quantity, per_pair in zip(quantities, choices):
            for k, choice in enumerate(per_pair):
                count_a, count_b = (int(t[choice.orientation, choice.index - 1]) for t in tails[k])
                bet = Bet(count_a, count_b, m, choice.bet, choice.tangent)
                quantity.bets[k].append(bet)
                if quantity.testable:
                    quantity.wealth[k] += log_evalue(quantity.family, quantity.at, [bet], quantity.allowed)
                state["evidence"].append(_evidence(quantity, job, k, round_number, choice, bet))
        state["counts"] = state["counts"] + np.stack([np.stack(pair) for pair in drawn])
        state["rounds"] = round_number
        state["draws"] += m
        bar.update(1)
        if checkpoint is not None:
            _save(checkpoint, fingerprint, state, quantities)
        if _violated(quantities):
            return "violation"
        if final and _futile(quantities, state, epoch, local + 1, pairs):
            return "futility"
    return "budget"


def _train(job, executor, statistic, claim, training: int, epoch: int):
    """Fit each pair's statistic on ``training`` fresh draws per side (none: fitted on nothing)."""
    pairs = len(job.datasets)
    data = [(None, None)] * pairs
    if training:
        chunk = chunk_size_for(job.output_dim)
        spec = training_plan(statistic, training, chunk, job.output_dim)
        sizes = chunk_plan(training, chunk)
        tasks = [ChunkTask(k, side, Phase.TRAINING, epoch * _ROUND_KEY + c, size) for k in range(pairs)
                 for side in (0, 1) for c, size in enumerate(sizes)]
        results = list(executor.map(run_chunk, [(replace(job, training=spec), task) for task in tasks]))
        per_side: dict = {}
        for task, result in zip(tasks, results):
            per_side.setdefault((task.pair, task.side), []).append(result)
        data = [tuple(TrainingData.fold(per_side[k, side], spec) for side in (0, 1)) for k in range(pairs)]
    fitted = [fit_statistic(statistic, base, neighbour, claim=claim, seed=job.entropy, label=label,
                            output_dim=job.output_dim)
              for (base, neighbour), label in zip(data, job.labels)]
    return tuple(f[0] for f in fitted), tuple(f[1] for f in fitted)


def _pilot_values(job, task: ChunkTask) -> np.ndarray:
    """A pilot chunk: the statistic's values themselves (few), which place the histogram and then
    count as the first evidence."""
    rng = chunk_rng(job.entropy, task.pair, task.side, task.phase, task.chunk)
    outputs = draw_outputs(job.mechanism, job.datasets[task.pair][task.side], task.size, rng, job.where(task),
                           job.name, job.output_dim)
    # Non-finite scores (a statistic of huge outputs) in the order of sampling.ordered, as the
    # rounds count them (sampling._reduce).
    return ordered(scores_of(job.statistics[task.pair], outputs))


def _pilot(job, executor, pilot: int, epoch: int):
    pairs = len(job.datasets)
    tasks = [ChunkTask(k, side, Phase.PILOT, epoch, pilot) for k in range(pairs) for side in (0, 1)]
    values = list(executor.map(_pilot_values, [(job, task) for task in tasks]))
    binnings, counts = [], np.zeros((pairs, 2, BINS + 2), dtype=np.int64)
    for k in range(pairs):
        both = np.concatenate([values[2 * k], values[2 * k + 1]])
        low, high = (float(both.min()), float(both.max())) if np.isfinite(both).all() else placing_range(both)
        binning = Binning.covering(low, high, BINS) if low <= high else Binning.covering(0.0, 0.0, BINS)
        binnings.append(binning)
        for side in (0, 1):
            counts[k, side] = binning.counts(values[2 * k + side])
    return tuple(binnings), counts


def _round(job, executor, round_number: int, m: int) -> list:
    """The histograms of one round: m draws per side of every pair, in chunks keyed by the round."""
    pairs, sizes = len(job.datasets), chunk_plan(m, chunk_size_for(job.output_dim))
    tasks = [ChunkTask(k, side, Phase.ANYTIME, round_number * _ROUND_KEY + c, size) for k in range(pairs)
             for side in (0, 1) for c, size in enumerate(sizes)]
    drawn = [[np.zeros(BINS + 2, dtype=np.int64), np.zeros(BINS + 2, dtype=np.int64)] for _ in range(pairs)]
    for task, result in zip(tasks, executor.map(run_chunk, [(job, task) for task in tasks])):
        drawn[task.pair][task.side] += result
    return drawn


def _evidence(quantity: _Quantity, job, pair: int, round_number: int, choice: _Choice, bet: Bet) -> dict:
    more_likely = _MORE_LIKELY[choice.orientation]
    threshold = job.binnings[pair].edge(choice.index)
    event = job.statistics[pair].describe(threshold)
    if choice.orientation >= 2:
        event = f"not ({event})"
    record = {"pair": job.labels[pair], "slot": quantity.slot.key, "family": "anytime", "round": round_number,
              "event": event, "more_likely_under": more_likely, "count_more_likely": bet.count_a,
              "count_other": bet.count_b, "n": bet.m, "bet": bet.bet, "level": quantity.level}
    if quantity.family is Family.MU:
        record["tangent_epsilon"] = bet.tangent
    return record


def _violated(quantities) -> bool:
    """Whether some quantity's e-process rejects what the claim allows, confirmed by its lower
    confidence bound exceeding it (the bound is what the report certifies)."""
    for quantity in quantities:
        if quantity.testable and quantity.log_wealth() >= math.log(1.0 / quantity.level):
            if quantity.bound() > quantity.allowed:
                return True
    return False


def _futile(quantities, state, epoch: Epoch, done: int, pairs: int) -> bool:
    """The futility rule, in the last epoch: from :data:`FUTILITY_START` betting draws of it on, stop
    when for every quantity that can refute the claim and every pair, log K plus the epoch's remaining
    draws times the best growth rate estimated with :data:`FUTILITY_SDS` standard deviations of
    optimism stays below the pair's threshold log(pairs/level).  It only ever stops without a
    violation, so it cannot raise the false-alarm rate."""
    n = epoch.ends[done - 1]
    if n < FUTILITY_START:
        return False
    remaining = epoch.ends[-1] - n
    for quantity in quantities:
        if not quantity.testable:
            continue
        for k in range(pairs):
            counts = PairCounts(state["counts"][k, 0], state["counts"][k, 1], n + epoch.pilot)
            rate = _choose(quantity, _estimates(counts, -FUTILITY_SDS)).growth
            if quantity.wealth[k] + rate * remaining >= math.log(pairs / quantity.level):
                return False
    return True


def _save(path, fingerprint, state, quantities) -> None:
    bets = [[[[b.count_a, b.count_b, b.m, b.bet, b.tangent] for b in per_pair] for per_pair in q.bets]
            for q in quantities]
    meta = dict(fingerprint.meta(), engine=ENGINE_VERSION, epoch=state["epoch"], rounds=state["rounds"],
                draws=state["draws"], bets=bets, evidence=state["evidence"])
    save_state(path, meta, {"anytime_counts": state["counts"]})


def _restore(saved, state, quantities) -> None:
    meta, arrays = saved
    state.update(epoch=int(meta["epoch"]), counts=arrays["anytime_counts"], rounds=int(meta["rounds"]),
                 draws=int(meta["draws"]), evidence=list(meta["evidence"]))
    for quantity, per_quantity in zip(quantities, meta["bets"]):
        quantity.bets = [[Bet(int(a), int(b), int(m), float(bet), float(t)) for a, b, m, bet, t in per_pair]
                         for per_pair in per_quantity]
        quantity.wealth = [log_evalue(quantity.family, quantity.at, bets, quantity.allowed)
                           if quantity.testable else 0.0 for bets in quantity.bets]


# --- the report -----------------------------------------------------------------------------------

def _epochs_used(plan: AnytimePlan, rounds: int) -> list:
    """The epochs an audit that stopped after ``rounds`` rounds began (at least the first)."""
    used, seen = [], 0
    for epoch in plan.epochs:
        if used and seen >= rounds:
            break
        used.append(epoch)
        seen += len(epoch.ends)
    return used


def anytime_report(mechanism, name, claim, scenario, pairs, covers, outcome: AnytimeOutcome, plan: AnytimePlan,
                   statistic, accuracy_report, entropy, confidence, started, runtime) -> AuditReport:
    """The report of an anytime audit: the quantities' lower confidence bounds at the stopping time,
    the verdict they imply, the bets as evidence and the draws; no ε(δ) curve or trade-off points
    are certified in this mode."""
    labels = [pair.label for pair in pairs]
    bounds = {q.slot.quantity: q.bound() for q in outcome.quantities}
    per_pair = [bounds] if len(pairs) == 1 else \
        [{q.slot.quantity: q.bound(pair=k) for q in outcome.quantities} for k in range(len(pairs))]
    violations = []
    for quantity in outcome.quantities:
        bound = bounds[quantity.slot.quantity]
        if quantity.testable and bound > quantity.allowed:
            leader = int(np.argmax(quantity.wealth))
            violations.append(SequentialViolation(labels[leader], quantity.slot, bound, float(quantity.allowed),
                                                  outcome.rounds, outcome.n))
    truth = exact_truth(mechanism, claim)
    claimed_curve = tuple(float(claim.tradeoff(PLOT_ALPHAS)[i]) for i in range(PLOT_ALPHAS.size))
    grid = tuple(float(a) for a in PLOT_ALPHAS)

    def empty_tradeoff(label):
        return TradeoffCurve(label, (), (), (), (), (), (), grid, claimed_curve, truth.tradeoff)

    results = tuple(PairResult(label, covers[k], per_pair[k].get(Quantity.EPSILON, 0.0),
                               per_pair[k].get(Quantity.DELTA, 0.0), per_pair[k].get(Quantity.MU, 0.0),
                               empty_tradeoff(label)) for k, label in enumerate(labels))
    key = (lambda r: r.mu_lower_bound) if claim.gaussian_mu is not None else \
        (lambda r: (r.epsilon_lower_bound, r.delta_lower_bound, r.mu_lower_bound))
    worst = max(range(len(results)), key=lambda i: key(results[i]))
    epsilon_lb, mu_lb = bounds.get(Quantity.EPSILON, 0.0), bounds.get(Quantity.MU, 0.0)
    epochs = _epochs_used(plan, outcome.rounds)
    training, pilot = sum(e.training for e in epochs), sum(e.pilot for e in epochs)
    statistic_info = {"option": statistic_label(statistic), "training_samples": epochs[-1].training,
                      "pairs": [dict(s.to_dict(), **note) for s, note in zip(outcome.statistics, outcome.notes)]}
    draws = draw_counts({"probe": PROBE_DRAWS, "training": training, "pilot": pilot, "rounds": outcome.n},
                        len(pairs),
                        looks={"look": outcome.rounds, "of": plan.rounds,
                               "stopped_early": outcome.stopped == "violation",
                               "anytime": {"stopped": outcome.stopped, "rounds": outcome.rounds,
                                           "epochs": len(epochs), "planned": plan.to_dict()}})
    return AuditReport(
        mechanism=name, claim=claim,
        scenario=scenario.to_dict() if hasattr(scenario, "to_dict") else {"checked": scenario.checked},
        verdict=Verdict.VIOLATED if violations else Verdict.NOT_REFUTED, violations=tuple(violations),
        reference_delta=float(claim.reference_delta), reference_epsilon=float(claim.epsilon),
        epsilon_lower_bound=epsilon_lb, delta_lower_bound=bounds.get(Quantity.DELTA, 0.0), mu_lower_bound=mu_lb,
        epsilon_curve=EpsilonCurve(tuple(float(d) for d in DELTA_GRID), tuple(0.0 for _ in DELTA_GRID),
                                   tuple(float(claim.epsilon_at(float(d))) for d in DELTA_GRID), truth.curve),
        tradeoff=results[worst].tradeoff, exact_epsilon=truth.epsilon, exact_delta=truth.delta,
        exact_mu=truth.mu, audit_tightness=ratio(epsilon_lb, truth.epsilon),
        claim_slack=ratio(truth.epsilon, claim.epsilon) if truth.epsilon is not None else None,
        mu_tightness=ratio(mu_lb, truth.mu), worst_pair=results[worst].label, pairs=results,
        evidence=tuple(outcome.evidence), accuracy=accuracy_report, seed=entropy, samples=plan.samples,
        confidence=confidence, statistic=statistic_info,
        witness=anytime_witness_record(outcome.quantities, outcome.evidence, labels, claim),
        runtime=dict(runtime, mode="anytime", wall_time_s=time.perf_counter() - started, versions=versions()),
        draws=draws)
