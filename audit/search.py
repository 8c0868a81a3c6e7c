"""Evaluating a pair search on exploration samples, then handing the best pairs to the audit.

``run_audit(mechanism, scenarios.search(domain, ...))`` calls :func:`resolve_search` first.  It
proposes candidate pairs (:mod:`scenarios.search`), scores each on ``explore_samples`` fresh draws
per side, refines the best by mutation, and returns a checked scenario of the top ``m`` pairs,
which the engine's phases then audit on *their own* samples.

**Why every printed bound still holds (the accounting).**  The search's draws come from
generators keyed ``SeedSequence(seed, spawn_key=(EXPLORATION_KEY, 1, candidate, side, 0))``, a
key no audit phase uses (those are ``(pair, side, phase, chunk)``), so they are independent of the
selection and certification samples.  The chosen scenario S is a function of the exploration
draws only.  Conditionally on S, the engine's guarantee holds as for any fixed scenario: its
events are chosen on selection samples and certified on fresh ones, the headline family takes
the single best event over all pairs of S (one event per slot, whatever m is) and the curve
family splits its share over the m pairs (:mod:`audit.selection`).  So with probability ≥
confidence, conditionally on every possible S and hence unconditionally, all printed bounds
hold.  The search pays for itself with exploration samples, not with confidence; only the
curves pay for m, which is why m is fixed before the search.  The scores the search prints are
estimates on exploration samples and are never presented as certified.

**Reproducibility.**  Each candidate is one task (both sides) of the same executor the engine
uses, with its own keyed generator, and results are consumed in task order; proposals are drawn
from ``SeedSequence(seed, spawn_key=(EXPLORATION_KEY, 0, round))``.  The search, hence the report,
is identical for any ``n_jobs`` or backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
from tqdm.auto import tqdm

from scenarios.search import (SearchSpec, is_valid, mutate, random_candidates, searched_scenario,
                              structured_candidates)

from .executor import make_executor
from .sampling import (BIT_GENERATOR, chunk_plan, chunk_size_for, draw_outputs, lda_statistic, ordered,
                       scores_of, single_threaded_blas)
from .scoring import ClaimUsage, Spacing, claim_usage, threshold_events
from .slots import headline_slots
from .statistics.linear import chunk_moments

__all__ = ["EXPLORATION_KEY", "SCORE_LEVEL", "CandidateScore", "score_candidate",
           "fisher_projection", "run_search", "resolve_search", "is_search"]

#: First spawn-key word of every exploration stream; audit phases never use a 5-word key.
EXPLORATION_KEY = 0x5EA2C4
#: One-sided Clopper–Pearson level of the pessimistic estimates that rank candidates.  A ranking
#: device only: the certified bounds come from the audit's own samples and levels.
SCORE_LEVEL = 0.05
#: Thresholds tried per candidate when the statistic has more distinct values.
MAX_THRESHOLDS = 2048
#: Relative mutation step of the first refinement round (halved every round).
FIRST_SPREAD = 0.3


#: A candidate pair's score: how much of the claim its best events appear to use on exploration
#: samples (:class:`audit.scoring.ClaimUsage`; not certified).  A value above 1 suggests a violation.
CandidateScore = ClaimUsage


def fisher_projection(base: np.ndarray, neighbour: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 1-D statistic: the output itself (k = 1), else Fisher's discriminant of both samples."""
    if base.shape[1] == 1:
        return base[:, 0], neighbour[:, 0]
    # The moments as the training chunks take them: scaled by powers of two if huge outputs overflow.
    statistic = lda_statistic(chunk_moments(base), chunk_moments(neighbour))
    return ordered(scores_of(statistic, base)), ordered(scores_of(statistic, neighbour))


def score_candidate(base_outputs: np.ndarray, neighbour_outputs: np.ndarray, claim: Any, *,
                    statistic: Callable = fisher_projection, level: float = SCORE_LEVEL) -> CandidateScore:
    """How much of ``claim`` one pair appears to use, from exploration outputs of both datasets.

    The outputs are reduced to a 1-D statistic T (``statistic``, swappable: a learned statistic
    can replace Fisher's discriminant), and every threshold event {T ≥ t} (at most
    :data:`MAX_THRESHOLDS` thresholds, :attr:`audit.scoring.Spacing.RANKS`) is scored in both
    orientations exactly as the audit will certify it: with exact one-sided Clopper–Pearson bounds
    at ``level`` giving (α_hi, β_hi), the headline quantities are ε ≥ ln((1 − δ − β_hi)/α_hi) at
    the claim's δ, δ ≥ 1 − β_hi − e^ε α_hi at its ε, μ ≥ Φ⁻¹(1 − α_hi) − Φ⁻¹(β_hi)
    (docs/ground-truth.md §3), each maximised over events, and the score is the largest fraction
    of the claim they reach (:func:`audit.scoring.claim_usage`).

    Parameters
    ----------
    base_outputs, neighbour_outputs : ndarray, shape (n, k)
        Draws of M(D) and M(D'), the same n on both sides.
    claim : ApproxDP, PureDP or GaussianDP
    """
    t0, t1 = statistic(base_outputs, neighbour_outputs)
    events = threshold_events(t0, t1, limit=MAX_THRESHOLDS, spacing=Spacing.RANKS)
    return claim_usage(claim, events.points(level, exact=True))


@dataclass(frozen=True)
class _ExploreJob:
    """Everything a worker needs to score any candidate (small and picklable)."""

    mechanism: Any
    name: str
    seed: int
    samples: int
    claim: Any
    statistic: Callable


def _exploration_rng(seed: int, candidate: int, side: int) -> np.random.Generator:
    sequence = np.random.SeedSequence(seed, spawn_key=(EXPLORATION_KEY, 1, candidate, side, 0))
    return np.random.Generator(BIT_GENERATOR(sequence))


def _explore(job: _ExploreJob, index: int, label: str, base, neighbour) -> CandidateScore:
    with single_threaded_blas():  # bit-identical wherever it runs (see audit.sampling)
        return _explore_pinned(job, index, label, base, neighbour)


def _explore_pinned(job: _ExploreJob, index: int, label: str, base, neighbour) -> CandidateScore:
    outputs = []
    for side, data in enumerate((base, neighbour)):
        rng = _exploration_rng(job.seed, index, side)
        where = f"search candidate {label!r}, {'base' if side == 0 else 'neighbour'} dataset, exploration"
        first = draw_outputs(job.mechanism, data, min(job.samples, 256), rng, where, job.name)
        parts = [first]
        rest = job.samples - first.shape[0]
        for size in chunk_plan(rest, chunk_size_for(first.shape[1])) if rest else []:
            parts.append(draw_outputs(job.mechanism, data, size, rng, where, job.name, first.shape[1]))
        outputs.append(np.concatenate(parts))
    if outputs[0].shape[1] != outputs[1].shape[1]:
        raise ValueError(f"mechanism {job.name!r} returned {outputs[0].shape[1]} and "
                         f"{outputs[1].shape[1]} columns on the two datasets of {label!r}")
    return score_candidate(outputs[0], outputs[1], job.claim, statistic=job.statistic)


def _proposal_rng(seed: int, round_index: int) -> np.random.Generator:
    return np.random.Generator(BIT_GENERATOR(np.random.SeedSequence(
        seed, spawn_key=(EXPLORATION_KEY, 0, round_index, 0, 0))))


def _propose(spec, round_index: int, size: int, ranked: list, seen: set) -> list:
    """``size`` new, valid, distinct candidates for this round (fewer if the domain runs out)."""
    rng = _proposal_rng(spec.seed_value, round_index)
    if round_index == 0:
        structured = structured_candidates(spec.spec, rng)
        order = rng.permutation(len(structured))
        pool = [structured[i] for i in order]
        make = lambda: random_candidates(spec.spec, rng, 1)[0]  # noqa: E731
    else:
        parents = [c for _, c, _ in ranked[: spec.spec.elite]]
        spread = FIRST_SPREAD * 0.5 ** (round_index - 1)
        pool, counter = [], iter(range(1 << 30))
        make = lambda: mutate(spec.spec, parents[next(counter) % len(parents)], rng, spread)  # noqa: E731
    found, attempts = [], 0
    while len(found) < size and attempts < 50 * size + len(pool):
        candidate = pool[attempts] if attempts < len(pool) else make()
        attempts += 1
        if candidate.key in seen or not is_valid(spec.spec, candidate):
            continue
        seen.add(candidate.key)
        found.append(candidate)
    return found


@dataclass(frozen=True)
class _Plan:
    spec: Any
    seed_value: int


def _rank_key(score: CandidateScore, slot: Optional[int]):
    return (score.estimates[slot], score.value) if slot is not None else (score.value,)


def _choose(ranked: list, m: int, slots: int) -> list:
    """Top m: in turn the best unchosen candidate for each headline slot (the engine certifies
    the best event over all pairs per slot, so each slot gets its best pair)."""
    chosen: list = []
    for turn in range(min(m, len(ranked))):
        slot = turn % slots
        best = max((entry for entry in ranked if entry not in chosen),
                   key=lambda entry: (_rank_key(entry[2], slot), -entry[0]))
        chosen.append(best)
    return chosen


def run_search(mechanism: Any, name: str, spec: Any, claim: Any, *, entropy: int, n_jobs: int = 1,
               backend: str = "loky", progress: bool = True, statistic: Callable = fisher_projection,
               **backend_options):
    """Run the search described by ``spec`` and return the checked scenario of its top m pairs.

    Returns
    -------
    scenarios.search.SearchedScenario
        Its ``record`` holds the candidates tried, the budget, each audited pair's exploration
        score and the best exploration score among candidates not audited.
    """
    if spec.relation != claim.relation:
        raise ValueError(f"the claim is stated under the {claim.relation.value!r} relation but the "
                         f"search is over {spec.relation.value!r} neighbours")
    plan = _Plan(spec, entropy if spec.seed is None else spec.seed)
    job = _ExploreJob(mechanism, name, plan.seed_value, spec.explore_samples, claim, statistic)
    ranked: list = []  # (index, candidate, score), best first
    seen: set = set()
    index = 0
    with tqdm(total=spec.budget, disable=not progress, desc=f"searching pairs for {name}",
              unit="pair") as bar, make_executor(backend, n_jobs, **backend_options) as executor:
        for round_index, size in enumerate(spec.round_sizes()):
            proposals = _propose(plan, round_index, size, ranked, seen)
            labels = [f"search #{index + i}: {c.kind}" for i, c in enumerate(proposals)]
            tasks = [(job, index + i, labels[i], c.base, c.neighbor) for i, c in enumerate(proposals)]
            for i, score in enumerate(executor.map(_explore, tasks)):
                ranked.append((index + i, proposals[i], score))
                bar.update(1)
            index += len(proposals)
            ranked.sort(key=lambda entry: (-entry[2].value, entry[0]))
    if not ranked:
        raise ValueError(f"the search domain has no neighbouring pairs: {spec.domain.describe()}")
    slots = headline_slots(claim)
    chosen = _choose(ranked, spec.m, len(slots))
    rest = [entry for entry in ranked if entry not in chosen]
    record = {
        "budget": spec.budget, "candidates_tried": len(ranked), "explore_samples": spec.explore_samples,
        "rounds": spec.rounds, "m": spec.m, "seed": plan.seed_value, "score_level": SCORE_LEVEL,
        "score": "largest fraction of the claim reached on exploration samples (not certified)",
        "slots": [slot.key for slot in slots],
        "audited": [{"label": _label(rank, entry), "candidate": entry[0], "kind": entry[1].kind,
                     "exploration_score": entry[2].value, "slot_estimates": list(entry[2].estimates)}
                    for rank, entry in enumerate(chosen)],
        "best_unaudited_score": rest[0][2].value if rest else None,
        "best_unaudited_candidate": rest[0][0] if rest else None,
    }
    return searched_scenario(spec, [(_label(rank, entry), entry[1]) for rank, entry in enumerate(chosen)],
                             record)


def _label(rank: int, entry) -> str:
    return f"searched #{rank + 1}: {entry[1].kind} (candidate {entry[0]})"


def resolve_search(mechanism: Any, name: str, scenario: Any, claim: Any, *, entropy: int,
                   n_jobs: int, backend: str, progress: bool, **backend_options) -> Any:
    """``scenario`` itself, or, for a :class:`scenarios.search.SearchSpec`, the searched scenario."""
    if not isinstance(scenario, SearchSpec):
        return scenario
    return run_search(mechanism, name, scenario, claim, entropy=entropy, n_jobs=n_jobs,
                      backend=backend, progress=progress, **backend_options)


def is_search(scenario: Any) -> bool:
    """Whether ``scenario`` is a search specification rather than a scenario."""
    return isinstance(scenario, SearchSpec)

