"""Running an audit's stages: the phases of each, and the looks at the evidence.

An audit is one or two *stages* (:func:`plan_stages`).  Each is a complete run of the four phases
(training, pilot, selection, certification; :mod:`audit.engine`) on draws of its own.  With early
stopping the first stage is the *quick look*, on the first 1/16 of ``samples`` from a seed derived
from the audit's, at the first look's share of the failure budget; the second, the main audit,
spends the rest and looks after 1/4 and all of its selection and certification draws
(:mod:`audit.selection`, "Looks").  A stage stops at the first look that certifies a violation, and
the audit with it.  Only the main audit is checkpointed; a resumed run repeats the quick look on
the same draws.

**Training on the quick look's draws** (:data:`QUICK_LOOK_TRAINS_MAIN`).  When the quick look does not
stop the audit its draws are otherwise discarded.  With the constant on, the main audit's learned
statistic is trained on them instead of on draws of its own: the main audit keeps the training
size it would have had (:func:`~audit.allocation.training_draws` of its own ``samples``), takes up
to :attr:`Stage.borrowed` of it from the quick look's draws, re-drawn deterministically from the
quick look's seed and chunk generators (:func:`~audit.sampling.chunk_rng` keys of its training,
pilot, selection and certification chunks, in that order, as planned), and draws only the rest
(none for a 1-D output); the draws it no longer spends on training go to its other phases.  Why
the guarantee (docs/method.md, "The guarantee") still holds:

* the quick look is unchanged: it chooses and certifies on its own draws at its own share γ₁ of
  the failure budget, so it reports a false violation with probability at most γ₁;
* the main audit's statistic is a function of the quick look's draws (and of its own training
  draws, if any) only.  Its selection and certification draws come from the audit's seed, a
  SeedSequence stream independent of the quick look's (:func:`quick_entropy`), so *given* every
  quick-look draw the statistic is fixed and the main audit's selection and certification draws
  keep their distribution: its events are chosen on selection draws and certified on others at
  shares summing to γ − γ₁, so, conditionally on the quick look's draws (whatever they are, and
  in particular on the quick look not having stopped), it certifies a false bound with probability
  at most γ − γ₁; unconditionally too;
* a reported false bound or verdict is a false violation of the quick look or a false bound of the
  main audit, so the union bound gives at most γ₁ + (γ − γ₁) = γ, as before.

The quick look's draws do certify (the quick look's own events), so "learned on draws that certify
nothing" holds stage by stage: nothing the main audit certifies rests on draws its statistic was
learned from.  The re-drawn rows are the quick look's own: each chunk is drawn whole, from the
same key and with the same size, and then cut where fewer of its draws are needed (a mechanism
drawing only from the generator it is given returns the same rows, which the reproducibility of
every report already assumes; were it not so, the rows would be other draws of the quick look's
stream, still independent of the main audit's).  Memory stays one chunk per worker, and the raw rows kept stay within the training plan's cap
(:meth:`~audit.statistics.registry.NamedStatistic.training_plan`).  For several pairs the planned
quick-look chunks are re-drawn even where a silent pair's certification draws moved to another
pair (:func:`~audit.allocation.reallocate`): those draws are still independent of the main audit's.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from .allocation import MIN_LOOKED, Allocation, allocate, lanes_look_silent, reallocate, training_draws
from .bounds import below_curve, epsilon_lower_bound
from .checkpoint import load_state, save_state
from .intervals import cp_lower, cp_upper
from .report import draw_counts
from . import sampling
from .sampling import AuditJob, Binning, ChunkTask, Phase, chunk_plan, chunk_rng, run_chunk, single_threaded_blas
from .selection import LOOK_FRACTIONS, LOOK_SHARES, Budget, PairCounts, certify, predicted_to_refute, select_events
from .slots import Slot, headline_slots
from .statistics import TrainingChunk, TrainingData, fit_statistic, needs_training, training_plan

__all__ = ["Stage", "Outcome", "plan_stages", "run_stage", "stage_draws", "quick_entropy", "hopeless",
           "ENGINE_VERSION", "PROBE_DRAWS", "BINS", "QUICK_LOOK_TRAINS_MAIN", "TrainingSource",
           "run_training_source"]

#: Part of every checkpoint's fingerprint: a checkpoint of another engine version is refused, never
#: resumed.  "3": headline joint tests and certification draws moved from silent pairs (per-pair
#: certification plans), so a version-2 checkpoint's chunk layout no longer applies.  "4": the quick
#: look takes the first 1/16 of the budget, so the main audit's chunk layout changed again.  "5": a
#: main audit with a single look draws its selection in two segments (choosing early,
#: :mod:`audit.allocation`).  "6": training chunks keep their raw rows out of the other summaries
#: and may keep per-column counts (:mod:`audit.statistics.training`).
#: "7": a pair may count several statistics' events (lanes, :mod:`audit.statistics.lanes`), so the
#: pilot and histogram arrays hold one row per lane.  "8": with lanes, a headline slot certifies
#: every lane's event that the selection draws cannot rank below the best (:func:`audit.selection._contenders`),
#: each at a share of the slot's level, so a resumed version-7 audit would choose other events.
#: "9": the main audit may train on the quick look's draws (:data:`QUICK_LOOK_TRAINS_MAIN`), so its
#: training chunks and the split of its own draws changed; and a pair with several lanes is silent
#: when its primary lane is (:func:`audit.allocation.lanes_look_silent`), so draws move more often.
ENGINE_VERSION = "9"
#: Whether the main audit's learned statistic is trained on the quick look's draws (module docstring)
#: rather than on 1/16 of its own.
QUICK_LOOK_TRAINS_MAIN = True
#: The spawn key that derives the quick look's seed from the audit's (:func:`quick_entropy`).
_QUICK_STREAM = 0x5155
#: Draws per dataset of the probe that checks the mechanism's output shape.
PROBE_DRAWS = 2
#: Histogram bins of the test statistic.
BINS = 1 << 15


# --- stages -------------------------------------------------------------------------

@dataclass(frozen=True)
class Stage:
    """One self-contained run of the four phases: ``samples`` draws per pair and side, split by
    ``allocation``, certified at the failure-budget shares of ``budget.looks`` (one per look)."""

    samples: int
    allocation: Allocation
    budget: Budget
    final: bool = True  # whether its last look is the audit's (else only a violation is reported)
    #: Training draws per pair and side re-drawn from ``lender``'s (the quick look's), on top of
    #: ``allocation.training`` of its own (module docstring).
    borrowed: int = 0
    lender: Optional["Stage"] = None

    @property
    def training(self) -> int:
        """Training draws per pair and side: its own and those re-drawn from the quick look."""
        return self.allocation.training + self.borrowed

    def training_sources(self, chunk: int, pairs: int) -> list["TrainingSource"]:
        """The chunks its statistic is trained on when it borrows: the first :attr:`borrowed` of
        the quick look's planned draws (training, pilot, selection, certification chunks in that
        order; the last cut short), then its own training chunks."""
        sources, left = [], self.borrowed
        lent = self.lender.plans(chunk, pairs)[0]
        for phase in (Phase.TRAINING, Phase.PILOT, Phase.SELECTION, Phase.CERTIFICATION):
            for index, size in enumerate(lent.get(phase, [[]])[0]):
                if left <= 0:
                    break
                sources.append(TrainingSource(True, phase, index, size, min(size, left)))
                left -= sources[-1].keep
        sources += [TrainingSource(False, Phase.TRAINING, index, size, size)
                    for index, size in enumerate(chunk_plan(self.allocation.training, chunk))]
        return sources

    @property
    def looks(self) -> int:
        return self.allocation.looks

    def plans(self, chunk: int, pairs: int) -> tuple[dict, dict]:
        """Chunk plans per phase and pair (all pairs alike until certification is reallocated), and
        the chunk ranges of the selection and certification segments."""
        allocation, plans, segments = self.allocation, {}, {}
        if self.borrowed:
            plans[Phase.TRAINING] = [[source.keep for source in self.training_sources(chunk, pairs)]] * pairs
        elif allocation.training:
            plans[Phase.TRAINING] = [chunk_plan(allocation.training, chunk)] * pairs
        plans[Phase.PILOT] = [chunk_plan(allocation.pilot, chunk)] * pairs
        for phase, ends in ((Phase.SELECTION, allocation.selection_segments()),
                            (Phase.CERTIFICATION, allocation.certification_ends)):
            plan, ranges = _segment_plan(allocation.segments(ends), chunk)
            plans[phase], segments[phase] = [plan] * pairs, [ranges] * pairs
        return plans, segments

    def chunks(self, chunk: int, pairs: int) -> int:
        return _chunk_count(self.plans(chunk, pairs)[0])


def plan_stages(samples: int, output_dim: int, statistic, claim, pairs: int, gamma: float,
                early_stopping: bool) -> tuple[Optional[Stage], Stage]:
    """The quick look (None without early stopping, or where it would be too small) and the main
    audit, which spends the rest of ``samples`` and, with early stopping, looks at
    :data:`LOOK_FRACTIONS[1:] <audit.selection.LOOK_FRACTIONS>` of its selection and certification
    draws (once when they are too few)."""
    quick = _quick_stage(samples, output_dim, statistic, claim, pairs, gamma) if early_stopping else None
    if quick:
        looks = LOOK_FRACTIONS[1:], LOOK_SHARES[1:]
    elif early_stopping:  # too small for a quick look: its share goes to the main audit's first look
        looks = LOOK_FRACTIONS[1:], (LOOK_SHARES[0] + LOOK_SHARES[1],) + LOOK_SHARES[2:]
    else:
        looks = (1.0,), (1.0,)
    rest = samples - (quick.samples if quick else 0)
    main = _stage(rest, output_dim, statistic, claim, pairs, gamma, *looks, early_choice=early_stopping)
    if quick and QUICK_LOOK_TRAINS_MAIN and main.allocation.training:
        main = _borrowing_stage(rest, quick, main.allocation.training, output_dim, claim, pairs, gamma, *looks,
                                early_choice=early_stopping)
    return quick, main


def _borrowing_stage(samples, quick, training, output_dim, claim, pairs, gamma, fractions, shares,
                     early_choice: bool) -> Stage:
    """The main audit trained on ``training`` draws per side as before, of which up to all the quick
    look's are re-drawn from it (module docstring); the draws it saves go to its other phases."""
    borrowed = min(training, quick.samples)
    allocation = allocate(samples, training - borrowed, fractions, early_choice)
    if allocation.looks < len(shares):
        shares = (float(sum(shares)),)
    return Stage(samples, allocation, Budget(gamma, headline_slots(claim), pairs, tuple(shares)),
                 borrowed=borrowed, lender=quick)


def _stage(samples, output_dim, statistic, claim, pairs, gamma, fractions, shares,
           early_choice: bool = False) -> Stage:
    """A stage's allocation and budget: looks at ``fractions`` of its selection and certification
    draws with ``shares`` of the failure budget γ (one look with their sum when too few draws);
    a single look chooses early if ``early_choice`` (:mod:`audit.allocation`; the main audit only)."""
    training = training_draws(samples, output_dim, needs_training(statistic, output_dim))
    if training and not needs_training(statistic, output_dim, training):
        training = 0  # too few to learn from: they go to the other phases
    allocation = allocate(samples, training, fractions, early_choice)
    if allocation.looks < len(shares):
        shares = (float(sum(shares)),)
    return Stage(samples, allocation, Budget(gamma, headline_slots(claim), pairs, tuple(shares)))


def _quick_stage(samples, output_dim, statistic, claim, pairs, gamma) -> Optional[Stage]:
    """The quick look: a complete audit on the first :data:`LOOK_FRACTIONS[0] <audit.selection.LOOK_FRACTIONS>`
    of the budget, with its own training, at the first look's share of the failure budget; None where
    that is too small to look at (then the audit has a single look)."""
    quick = int(samples * LOOK_FRACTIONS[0])
    try:
        stage = _stage(quick, output_dim, statistic, claim, pairs, gamma, (1.0,), LOOK_SHARES[:1])
    except ValueError:
        return None
    if min(stage.allocation.selection, stage.allocation.certification) < MIN_LOOKED or \
            hopeless(stage.allocation.certification, stage.budget.headline_level, claim):
        return None
    return replace(stage, final=False)


def quick_entropy(entropy: int) -> int:
    """The quick look's seed: derived from the audit's, its draws independent of the other looks'."""
    state = np.random.SeedSequence(entropy, spawn_key=(_QUICK_STREAM,)).generate_state(4, dtype=np.uint32)
    return int.from_bytes(state.tobytes(), "little")


def _chunk_count(plans: dict) -> int:
    return sum(len(plan) for phase_plans in plans.values() for plan in phase_plans) * 2


@dataclass(frozen=True)
class Outcome:
    """What one stage certified, and the draws it used."""

    stage: Stage
    certified: list
    statistics: tuple
    notes: tuple
    look: int  # 0-based, within the stage
    certification: list  # certification draws per pair and side, up to the stopping look
    violated: bool
    selection: int  # selection draws per pair and side the stopping look chose its events on
    favoured: Optional[Slot] = None  # the slot the budget favoured after choosing early, if it did


def run_stage(stage: Stage, job: AuditJob, executor, bar, checkpoint, fingerprint,
              statistic, claim, chunk) -> Outcome:
    """Run one stage's phases and looks; stop at the first look that certifies a violation."""
    pairs, labels, allocation, budget = len(job.datasets), job.labels, stage.allocation, stage.budget
    plans, segments = stage.plans(chunk, pairs)
    if stage.training:
        job = replace(job, training=training_plan(statistic, stage.training, chunk, job.output_dim))
    run = _PhaseRunner(job, executor, plans, bar, checkpoint, fingerprint, job.entropy)
    if stage.borrowed:
        training = run.borrowed_training(_sized_sources(stage, job, chunk, pairs))
    else:
        training = run.training() if allocation.training else [(None, None)] * pairs
    fitted = [fit_statistic(statistic, base, neighbour, claim=claim, seed=job.entropy, label=label,
                            output_dim=job.output_dim, samples=stage.samples - allocation.training)
              for (base, neighbour), label in zip(training, labels)]
    statistics = tuple(f[0] for f in fitted)
    lanes = _Lanes.of(statistics)
    job = run.job = replace(job, statistics=statistics, lanes=lanes.index if lanes.several else ())
    binnings = run.pilot()
    job = run.job = replace(job, binnings=binnings)
    for look in range(stage.looks):
        selection = run.histograms(Phase.SELECTION, segments[Phase.SELECTION], look)
        certification_ends = allocation.certification_ends
        if look == 0 and allocation.early_choice:  # decided on selection draws, before any certification
            selection, certification_ends, budget = _choose_early(run, segments[Phase.SELECTION], selection,
                                                                  allocation, budget, claim, bar, lanes.alternates)
        if look == 0 and (pairs > 1 or certification_ends != allocation.certification_ends):
            before = _chunk_count(plans)
            silent = [lanes_look_silent([selection[v] for v in lanes.index[p]], claim) for p in range(pairs)]
            per_pair = reallocate(certification_ends, silent)
            for index, ends in enumerate(per_pair):
                plan, ranges = _segment_plan(allocation.segments(ends), chunk)
                plans[Phase.CERTIFICATION][index], segments[Phase.CERTIFICATION][index] = plan, ranges
            bar.total += _chunk_count(plans) - before
        certification = run.histograms(Phase.CERTIFICATION, segments[Phase.CERTIFICATION], look)
        n_certify = [counts.n for counts in certification]
        last = look == stage.looks - 1 and stage.final  # the quick look is not the audit's last
        events = select_events(selection, claim, budget, n_certify, look, curves=last, curve_pairs=lanes.primary,
                               alternates=lanes.alternates)
        joint_tests: dict = {}  # this look's joint tests, reused when it stops the audit
        certified = certify(events, certification, binnings, claim, bounds=last, joint_tests=joint_tests)
        violated = _violates(certified, claim)
        if violated:
            if not last:  # the stopping look also reports its bounds and curves (budgeted at every look)
                curves = select_events(selection, claim, budget, n_certify, look, headline=False,
                                       curve_pairs=lanes.primary)
                certified = certify(events + curves, certification, binnings, claim, joint_tests=joint_tests)
            break
    return Outcome(stage, lanes.to_pairs(certified), statistics, tuple(notes for _, notes in fitted), look,
                   [n_certify[v] for v in lanes.primary], violated, selection[0].n, budget.favoured)


@dataclass(frozen=True)
class TrainingSource:
    """One training chunk of a main audit that borrows (:meth:`Stage.training_sources`): ``lent``
    (a quick-look chunk, else its own), the chunk's phase, index and planned ``size``, the first
    ``keep`` of its draws trained on, ``rows`` of them kept raw (set by :func:`_sized_sources`)
    and the seed it is drawn from (set there too)."""

    lent: bool
    phase: Phase
    chunk: int
    size: int
    keep: int
    rows: int = 0
    entropy: int = 0


def _sized_sources(stage: Stage, job: AuditJob, chunk: int, pairs: int) -> list[TrainingSource]:
    """The stage's training sources with their seeds and raw rows: the plan's raw-row cap for
    ``stage.training`` draws, shared over the sources in proportion to their draws (source i keeps
    ⌊cap·K_i/n⌋ − ⌊cap·K_{i−1}/n⌋ raw rows, K_i the draws of the first i sources, so the rows sum
    to the cap exactly and none keeps more than its draws; rounding each share up instead overran
    the cap by up to one row per source)."""
    plan = job.training
    cap = min(stage.training, plan.rows_per_chunk * len(chunk_plan(stage.training, chunk)))
    lender = quick_entropy(job.entropy)
    sources, sized, before = stage.training_sources(chunk, pairs), [], 0
    for source in sources:
        rows = cap * (before + source.keep) // stage.training - cap * before // stage.training
        sized.append(replace(source, rows=rows, entropy=lender if source.lent else job.entropy))
        before += source.keep
    return sized


def run_training_source(job: AuditJob, task: ChunkTask, source: TrainingSource):
    """Draw one training source's chunk from its own seed and key (a quick-look chunk exactly as the
    quick look drew it) and reduce its first ``keep`` draws to training summaries."""
    with single_threaded_blas():
        rng = chunk_rng(source.entropy, task.pair, task.side, source.phase, source.chunk)
        where = job.where(ChunkTask(task.pair, task.side, source.phase, source.chunk, source.size))
        outputs = sampling.draw_outputs(job.mechanism, job.datasets[task.pair][task.side], source.size, rng,
                               where + (" (the quick look's, re-drawn for training)" if source.lent else ""),
                               job.name, job.output_dim)
        return replace(job.training, rows_per_chunk=source.rows).reduce(outputs[:source.keep])


@dataclass(frozen=True)
class _Lanes:
    """The lanes of every pair (:class:`~audit.statistics.lanes.Lanes`) laid out one after another:
    ``index[pair]`` are its lanes' positions in the selection and certification counts, the first
    its primary statistic's; ``owner``/``lane`` map a position back."""

    index: tuple[tuple[int, ...], ...]
    owner: tuple[int, ...]
    lane: tuple[int, ...]

    @classmethod
    def of(cls, statistics) -> "_Lanes":
        index, owner, lane = [], [], []
        for pair, statistic in enumerate(statistics):
            count = len(statistic.lanes())
            index.append(tuple(range(len(owner), len(owner) + count)))
            owner += [pair] * count
            lane += list(range(count))
        return cls(tuple(index), tuple(owner), tuple(lane))

    @property
    def several(self) -> bool:
        return len(self.owner) > len(self.index)

    @property
    def alternates(self) -> set[int]:
        return {positions for pair in self.index for positions in pair[1:]}

    @property
    def primary(self) -> list[int]:
        return [positions[0] for positions in self.index]

    def to_pairs(self, certified: list) -> list:
        """Certified events with their pair and lane instead of a position."""
        if not self.several:
            return certified
        return [replace(c, event=replace(c.event, pair=self.owner[c.event.pair], lane=self.lane[c.event.pair]))
                for c in certified]


def _choose_early(run, segments, first, allocation, budget, claim, bar, alternates=None) -> tuple[list, tuple, Budget]:
    """Choosing early (:mod:`audit.allocation`) after the first selection segment ``first``: if its
    events predict a refutation, the rest of the selection draws certify instead, at a budget
    favouring the refuting slot; otherwise the rest is drawn.  ``alternates``: the entries of
    alternate lanes, whose contenders are predicted as in the final choice.  Returns the selection counts, the
    certification ends and the budget."""
    slot = predicted_to_refute(first, claim, budget, allocation.early_certification, alternates)
    if slot is None:
        return run.histograms(Phase.SELECTION, segments, 1), allocation.certification_ends, budget
    bar.total -= 2 * len(segments) * len(segments[0][1])  # the rest of the selection is never drawn
    return first, (allocation.early_certification,), budget.favouring(slot)


def stage_draws(outcomes: list, quick: Optional[Stage], main: Stage, pairs: int) -> dict:
    """The report's draw counts: what the stage that decided (the last of ``outcomes``) used, plus
    each pair's draws in a quick look that did not stop the audit (its certification draws may
    have moved between pairs too)."""
    outcome = outcomes[-1]
    stage, look = outcome.stage, outcome.look
    passed = quick is not None and stage is main
    phases = {"probe": PROBE_DRAWS, "training": stage.allocation.training, "pilot": stage.allocation.pilot,
              "selection": outcome.selection}
    quick_look = None
    if passed:
        first = outcomes[0]
        spent = first.stage.allocation.training + first.stage.allocation.pilot + first.selection
        quick_look = [spent + certification for certification in first.certification]
    planned = main.allocation.to_dict()
    if quick is not None:
        planned["quick_look"] = quick.allocation.to_dict()
    looks = {"look": look + 1 + (1 if passed else 0), "of": main.looks + (1 if quick is not None else 0),
             "planned": planned}
    looks["stopped_early"] = looks["look"] < looks["of"]
    if outcome.favoured is not None:  # chose early (audit.allocation)
        looks["chose_early"] = {"selection": outcome.selection, "planned": stage.allocation.selection,
                                "favoured": outcome.favoured.key}
    looks["quick_look"] = "passed" if passed else ("stopped" if quick is not None else "none")
    if passed and stage.borrowed:  # trained on the quick look's draws (counted there), re-drawn
        looks["training_from_quick_look"] = stage.borrowed
    return draw_counts(phases, pairs, certification=outcome.certification, looks=looks, quick_look=quick_look)


def _violates(certified, claim) -> bool:
    """Whether a headline test refutes the claim or a certified point lies below the claimed
    trade-off curve (the verdict)."""
    points = [c for c in certified if not c.joint]
    alpha_hi = np.array([c.alpha_hi for c in points])
    beta_hi = np.array([c.beta_hi for c in points])
    return any(c.refutes for c in certified) or bool(below_curve(alpha_hi, beta_hi, claim.tradeoff).any())


def hopeless(n: int, level: float, claim) -> bool:
    """Whether n certification draws per side certify no ε even from perfectly separated outputs."""
    return float(epsilon_lower_bound(float(cp_upper(0, n, level)), 1.0 - float(cp_lower(n, n, level)),
                                     claim.reference_delta)) <= 0.0


# --- running the phases ---------------------------------------------------------------------

class _PhaseRunner:
    """Runs each phase's chunks (skipping those a checkpoint already holds) and folds results."""

    def __init__(self, job, executor, plans, bar, checkpoint, fingerprint, entropy):
        self.job, self.executor, self.plans, self.bar = job, executor, plans, bar
        self.path, self.fingerprint, self.entropy = checkpoint, fingerprint, entropy
        self.arrays: dict[str, np.ndarray] = {}
        if checkpoint is not None:
            state = load_state(checkpoint, fingerprint)
            if state is not None:
                self.arrays = dict(state[1])

    def _save(self):
        if self.path is not None:
            save_state(self.path, dict(self.fingerprint.meta(), entropy=str(self.entropy), engine=ENGINE_VERSION),
                       self.arrays)

    def _run(self, phase: Phase, fold, chunks: Optional[list[range]] = None, sources=None) -> None:
        """Run ``chunks`` (per pair: a range of chunk indices; default all) of the phase's plans
        (``sources``: training chunk ``c`` is :func:`run_training_source` of ``sources[c]``)."""
        plans = self.plans[phase]
        pairs = len(self.job.datasets)
        chunks = [range(len(plan)) for plan in plans] if chunks is None else chunks
        done_key = f"{phase.name.lower()}_done"
        done = self.arrays.setdefault(done_key, np.zeros((pairs, 2, max(map(len, plans))), dtype=bool))
        self.bar.update(int(sum(done[p, :, r.start:r.stop].sum() for p, r in enumerate(chunks))))
        tasks = [ChunkTask(p, s, phase, c, plans[p][c]) for p in range(pairs) for s in (0, 1)
                 for c in chunks[p] if not done[p, s, c]]
        # One ordered stream per phase (no barrier between batches, so workers never wait for a
        # batch's slowest chunk); the checkpoint is rewritten every `batch_size` results.
        if sources is None:
            results = self.executor.map(run_chunk, [(self.job, task) for task in tasks])
        else:
            results = self.executor.map(run_training_source, [(self.job, task, sources[task.chunk]) for task in tasks])
        for count, (task, result) in enumerate(zip(tasks, results), start=1):
            fold(task, result)
            done[task.pair, task.side, task.chunk] = True
            self.bar.update(1)
            if count % self.executor.batch_size == 0:
                self._save()
        self._save()

    def training(self) -> list[tuple[TrainingData, TrainingData]]:
        """Run the training chunks and fold each side's summaries (kept in the checkpoint)."""
        pairs, plan = len(self.job.datasets), self.plans[Phase.TRAINING][0]

        def fold(task, result):
            self.arrays.update(result.to_arrays(_training_key(task.pair, task.side, task.chunk)))

        self._run(Phase.TRAINING, fold)
        return [tuple(TrainingData.fold([TrainingChunk.from_arrays(self.arrays, _training_key(p, s, c))
                                         for c in range(len(plan))], self.job.training)
                      for s in (0, 1))
                for p in range(pairs)]

    def borrowed_training(self, sources: list[TrainingSource]) -> list[tuple[TrainingData, TrainingData]]:
        """:meth:`training` on ``sources`` (a main audit that borrows the quick look's draws)."""
        pairs = len(self.job.datasets)

        def fold(task, result):
            self.arrays.update(result.to_arrays(_training_key(task.pair, task.side, task.chunk)))

        self._run(Phase.TRAINING, fold, sources=sources)
        return [tuple(TrainingData.fold([TrainingChunk.from_arrays(self.arrays, _training_key(p, s, c))
                                         for c in range(len(sources))], self.job.training)
                      for s in (0, 1))
                for p in range(pairs)]

    def _positions(self, pair: int) -> tuple[int, ...]:
        """Where a pair's lanes are kept (``AuditJob.lanes``; one per pair without lanes)."""
        return self.job.lanes[pair] if self.job.lanes else (pair,)

    @property
    def _width(self) -> int:
        return sum(len(positions) for positions in self.job.lanes) if self.job.lanes else len(self.job.datasets)

    def pilot(self) -> tuple[Binning, ...]:
        shape = (self._width, 2, len(self.plans[Phase.PILOT][0]))
        low = self.arrays.setdefault("pilot_min", np.full(shape, np.inf))
        high = self.arrays.setdefault("pilot_max", np.full(shape, -np.inf))

        def fold(task, result):
            for position, (lowest, highest) in zip(self._positions(task.pair), np.reshape(result, (-1, 2))):
                low[position, task.side, task.chunk], high[position, task.side, task.chunk] = lowest, highest

        self._run(Phase.PILOT, fold)
        # A lane with no finite pilot score (sampling._reduce, sampling._reduce_alternate) has the
        # empty range (inf, -inf): bins at 0, which its ±inf scores fall outside of, in order.
        return tuple(Binning.covering(float(low[p].min()), float(high[p].max()), BINS)
                     if low[p].min() <= high[p].max() else Binning.covering(0.0, 0.0, BINS)
                     for p in range(shape[0]))

    def histograms(self, phase: Phase, segments: list[list[range]], look: int) -> list[PairCounts]:
        """Run segment ``look`` of the phase (``segments``: per pair, its segments' chunk ranges)
        and return the counts of segments 0..look.

        Each segment keeps its own counts (in the checkpoint too), so a resumed run folds exactly
        the same samples into each look as an uninterrupted one.
        """
        pairs = len(self.job.datasets)
        key = f"{phase.name.lower()}_counts_{look}"
        counts = self.arrays.setdefault(key, np.zeros((self._width, 2, BINS + 2), dtype=np.int64))

        def fold(task, result):
            counts[list(self._positions(task.pair)), task.side] += np.reshape(result, (-1, BINS + 2))

        self._run(phase, fold, [pair_segments[look] for pair_segments in segments])
        total = sum(self.arrays[f"{phase.name.lower()}_counts_{i}"] for i in range(look + 1))
        n = [sum(plan[c] for i in range(look + 1) for c in pair_segments[i])
             for plan, pair_segments in zip(self.plans[phase], segments)]
        return [PairCounts(total[v, 0].copy(), total[v, 1].copy(), n[p])
                for p in range(pairs) for v in self._positions(p)]


def _segment_plan(sizes: list[int], chunk: int) -> tuple[list[int], list[range]]:
    """The chunk plan of consecutive segments of ``sizes`` draws, and each segment's chunk range."""
    parts = [chunk_plan(size, chunk) for size in sizes]
    bounds = np.cumsum([0] + [len(part) for part in parts])
    return [size for part in parts for size in part], [range(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:])]


def _training_key(pair: int, side: int, chunk: int) -> str:
    return f"training_{pair}_{side}_{chunk}"
