"""``run_audit``: Monte Carlo evidence about a mechanism's privacy claim.

For every distinct neighbour pair (D, D') of the scenario (a pair and its exact reverse are one
pair: both directions are always audited) the engine runs four phases, each on fresh samples, with
``samples`` draws per pair and side in total split between them by :mod:`audit.allocation`:

1. *training*: the test statistic T is learned (:mod:`audit.statistics`): Fisher's discriminant
   w = Σ⁻¹(m' − m) of vector outputs (T = M(·) in 1-D, with no training), or a categorical, binned
   or classifier score, or ``"auto"``'s choice among them;
2. *pilot*: the range of T on a few draws places a fine histogram (under/overflow bins keep
   everything outside it);
3. *selection*: histograms of T choose which threshold events to certify, one per reported
   quantity (:mod:`audit.selection`);
4. *certification*: histograms on fresh draws count the chosen events.  Each headline quantity
   (ε at the claim's δ, δ at its ε, μ) is certified by an exact joint test of its event's two
   counts (:mod:`audit.joint_bounds`); the curve events' Clopper–Pearson bounds give certified
   (α_hi, β_hi) points, and these the ε(δ) curve and the trade-off band.  Both feed the verdict.

With ``early_stopping`` (the default) the audit looks three times, each look with its own share of
the failure budget (:data:`audit.selection.LOOK_SHARES`), and stops at the first look that
certifies a violation (:mod:`audit.stages`; the accounting is in :mod:`audit.selection`,
"Looks").  The first, the *quick look*, is a whole audit (training, pilot, selection,
certification) on the first 1/16 of ``samples``, drawn from a seed derived from the audit's, so a
clear violation costs 1/16 of the draws *and* of the fixed costs of a full audit.  The main audit
spends the other 15/16, its selection and certification arriving in segments that end at 1/4 and
all of their draws.

Events are chosen on samples independent of those that certify them, and the Bonferroni
accounting of :mod:`audit.selection` makes every printed bound hold simultaneously with
probability ≥ ``confidence``.  The verdict is VIOLATED exactly when a headline test certifies
its quantity above the claim's value or some certified point lies below the claimed trade-off
curve, so a mechanism that satisfies its claim is reported VIOLATED with
probability at most 1 − ``confidence``.  Nothing caps the ε or the event probability the audit can
see: events of any probability are counted exactly, and an event never observed under one side
(an "impossible" region) bounds δ directly.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
import warnings
from dataclasses import replace
from typing import Any, Optional, Sequence

import numpy as np
from tqdm.auto import tqdm

import scenarios
from mechanisms.base import mechanism_name
from mechanisms.claims import Claim, claim_types

from .accuracy import run_accuracy_audit
from .anytime import anytime_report, plan_anytime, run_anytime
from .bounds import below_curve, delta_lower_bound, epsilon_lower_bound, mu_lower_bound
from .checkpoint import CheckpointKey, load_state
from .errors import CheckpointWarning, ReproducibilityWarning
from .fingerprint import value_digest
from .exact import PLOT_ALPHAS, exact_truth, ratio, versions
from .graybox.front import graybox_then_audit
from .executor import make_executor
from .feasibility import SampleSizeWarning, duration_message, unrefutable_message
from .report import AuditReport, EpsilonCurve, JointViolation, PairResult, TradeoffCurve, Verdict, Violation
from .sampling import AuditJob, Phase, chunk_rng, chunk_size_for, draw_outputs, single_threaded_blas
from .search import is_search, resolve_search
from .selection import DELTA_GRID
from .slots import MU, Slot
from .stages import (BINS, ENGINE_VERSION, PROBE_DRAWS, hopeless, plan_stages, quick_entropy, run_stage,
                     stage_draws)
from .settings import AuditSettings
from .statistics import statistic_label
from .version import __version__
from .witness import event_text, statistic_option_text, witness_record

__all__ = ["run_audit", "checkpoint_key", "ENGINE_VERSION", "ANYTIME_ACCURACY_SAMPLES"]

#: An anytime audit's accuracy audit draws as many outputs as its privacy audit did, and at least this.
ANYTIME_ACCURACY_SAMPLES = 10_000



def run_audit(mechanism: Any, scenario: Any, *, claim: Any = None,
              settings: Optional[AuditSettings] = None, **options: Any) -> AuditReport:
    """Audit ``mechanism`` against ``claim`` on the neighbouring pairs of ``scenario``.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, size, rng) -> (size, k) float64`` (see :mod:`mechanisms.base`).
    scenario : Scenario or sequence of pairs
        A :class:`scenarios.Scenario`, or a sequence of ``NeighborPair``/``(D, D')`` that is checked
        to consist of neighbours under the claim's relation.
    claim : Claim, optional
        Any :class:`mechanisms.claims.Claim` (ApproxDP, PureDP, GaussianDP, ZCDP, RenyiDP,
        ProfileClaim or a registered type).  Defaults to ``mechanism.claim``.  Its relation must be
        the scenario's.
    settings : AuditSettings, optional
        How to audit (:class:`audit.settings.AuditSettings`, whose docstring lists every option and
        its default).
    **options
        Any field of :class:`~audit.settings.AuditSettings`, overriding ``settings``:

        - ``samples`` (2·10⁶): draws per pair and per side in total, over all phases
          (:mod:`audit.allocation`: training of a learned statistic, pilot, 25% of the rest to
          selection, 75% to certification);
        - ``confidence`` (0.95): every bound in the report holds simultaneously with at least this
          probability;
        - ``seed`` (None): the same seed gives the same report for any ``n_jobs``/``backend``;
          ``None`` draws fresh entropy, recorded in the report (an existing ``checkpoint``'s seed
          is adopted, with a ``CheckpointWarning``);
        - ``statistic`` ("auto"): the test statistic whose threshold events are certified
          (:mod:`audit.statistics`): ``"auto"`` (chosen per pair on training samples; the linear
          statistic, with no training draws, for a 1-D output under 2,048 ``samples``), another
          registered name, ``audit.statistics.Classifier(estimator, features)``, or a callable
          ``outputs (n, k) -> scores (n,)``;
        - ``early_stopping`` (True): look at the evidence three times and stop at the first look
          that certifies a violation (the failure budget is split over the looks): the quick look,
          an audit of its own on 1/16 of ``samples``, then after 1/4 and all of the main audit's
          selection and certification draws.  Under about 5,000 ``samples`` there is no quick look
          (its share of the failure budget goes to the next look), and under a few hundred a single
          look, which *chooses early*: if the events chosen on the first 40% of its selection draws
          already predict a refutation, the rest of those draws go to certification and the
          failure budget to the refuting quantity (:mod:`audit.allocation`);
        - ``accuracy`` (True): also audit the accuracy claims of mechanisms that declare them;
        - ``n_jobs`` (1), ``backend`` ("loky"): any joblib backend, or ``"dask"`` with its options
          ``scheduler``, ``window``, ``share_arguments``, ``dashboard_address``;
        - ``checkpoint`` (None): save accumulated counts atomically after each batch; rerunning
          the same call resumes (the quick look is not saved: a resumed run repeats it, on the
          same draws).  Only the same audit resumes: a checkpoint written with another seed,
          other settings, or a mechanism or callable statistic whose code, closure, defaults,
          globals or parameters differ is refused (:mod:`audit.fingerprint`);
          ``assume_unchanged`` (False) resumes one whose mechanism cannot be fingerprinted in full;
        - ``progress`` (True): show a progress bar over chunks;
        - ``graybox`` (False): first record every random call on D and replay it on D′
          (:mod:`audit.graybox`); a finding names its call site and the audit is aimed at its pair
          and columns, and the report's ``graybox`` holds the findings (docs/graybox.md).

    Returns
    -------
    AuditReport
    """
    started = time.perf_counter()
    settings = AuditSettings.from_options(options, base=settings)
    if not callable(mechanism):
        raise TypeError(f"`mechanism` must be callable (dataset, size, rng) -> array, got {mechanism!r}")
    name = mechanism_name(mechanism)
    claim = _resolve_claim(mechanism, claim, name)
    scenario = _resolve_scenario(scenario, claim)
    if settings.graybox:  # record/replay first, then the audit aimed at what it found (audit.graybox.front)
        return graybox_then_audit(run_audit, mechanism, scenario, claim, settings)
    with single_threaded_blas():  # the same numbers in this process as in any worker (audit.sampling)
        return _audit(mechanism, name, claim, scenario, settings, started)


def _audit(mechanism, name, claim, scenario, settings, started) -> AuditReport:
    samples, confidence, statistic = settings.samples, settings.confidence, settings.statistic
    n_jobs, backend, checkpoint, progress = settings.n_jobs, settings.backend, settings.checkpoint, settings.progress
    backend_options = dict(settings.backend_options)
    entropy = _resolve_seed(settings.seed, checkpoint)
    # A pair search (issue 13) runs on exploration samples only; see audit/search.py.
    scenario = resolve_search(mechanism, name, scenario, claim, entropy=entropy, n_jobs=n_jobs,
                              backend=backend, progress=progress, **backend_options)
    pairs, covers = _distinct_pairs(scenario.pairs)

    labels = tuple(pair.label for pair in pairs)
    datasets = tuple((pair.base, pair.neighbor) for pair in pairs)
    output_dim = _probe(mechanism, name, datasets, labels, entropy)
    if settings.sequential:
        return _audit_anytime(mechanism, name, claim, scenario, pairs, covers, output_dim, entropy, settings,
                              started)
    quick, main = plan_stages(samples, output_dim, statistic, claim, len(pairs), 1.0 - confidence,
                              settings.early_stopping)
    _check_enough_samples(samples, main.allocation.certification, main.budget, claim, confidence)
    _warn_sample_size(mechanism, name, datasets[0][0], output_dim, settings, claim, len(pairs), main, entropy)
    job = AuditJob(mechanism, name, datasets, labels, entropy, output_dim)
    chunk = chunk_size_for(output_dim)
    fingerprint = None if checkpoint is None else checkpoint_key(
        mechanism, name, claim, datasets, samples, confidence, entropy, statistic,
        {"chunk": chunk, "k": output_dim, "bins": BINS, "allocation": main.allocation.to_dict()},
        assume_unchanged=settings.assume_unchanged)
    stages = ((quick, quick_entropy(entropy), None), (main, entropy, checkpoint)) if quick else \
        ((main, entropy, checkpoint),)
    total = sum(stage.chunks(chunk, len(pairs)) for stage, _, _ in stages)

    executor = make_executor(backend, n_jobs, **backend_options)
    with tqdm(total=total, disable=not progress, desc=f"auditing {name}", unit="chunk") as bar, executor:
        outcomes = []
        for stage, stage_entropy, stage_checkpoint in stages:
            outcome = run_stage(stage, replace(job, entropy=stage_entropy), executor, bar,
                                stage_checkpoint, fingerprint, statistic, claim, chunk)
            outcomes.append(outcome)
            if outcome.violated:  # the bar ends full where the audit stopped
                bar.total = bar.n
                bar.refresh()
                break
        accuracy_report = _accuracy(mechanism, scenario, pairs, settings, min(samples, 1_000_000), entropy, executor)

    statistic_info = {"option": statistic_label(statistic), "option_text": statistic_option_text(statistic),
                      "training_samples": outcome.stage.training,
                      "pairs": [dict(s.to_dict(), **notes) for s, notes in zip(outcome.statistics, outcome.notes)]}
    report = _assemble(mechanism, name, claim, scenario, pairs, covers, outcome.certified, outcome.statistics,
                       statistic_info, accuracy_report, entropy, samples, confidence, started,
                       {"n_jobs": n_jobs, "backend": backend, "chunk_size": chunk, "output_dim": output_dim})
    return replace(report, draws=stage_draws(outcomes, quick, main, len(pairs)))


def _audit_anytime(mechanism, name, claim, scenario, pairs, covers, output_dim, entropy, settings,
                   started) -> AuditReport:
    """An anytime audit (:mod:`audit.anytime`): rounds until the evidence decides."""
    plan = plan_anytime(settings.budget, output_dim, settings.statistic)
    labels = tuple(pair.label for pair in pairs)
    datasets = tuple((pair.base, pair.neighbor) for pair in pairs)
    job = AuditJob(mechanism, name, datasets, labels, entropy, output_dim)
    chunk = chunk_size_for(output_dim)
    checkpoint = settings.checkpoint
    fingerprint = None if checkpoint is None else checkpoint_key(
        mechanism, name, claim, datasets, plan.samples, settings.confidence, entropy, settings.statistic,
        {"chunk": chunk, "k": output_dim, "bins": BINS, "anytime": plan.to_dict()}, "anytime",
        assume_unchanged=settings.assume_unchanged)
    executor = make_executor(settings.backend, settings.n_jobs, **dict(settings.backend_options))
    with tqdm(total=plan.rounds, disable=not settings.progress, desc=f"anytime audit of {name}",
              unit="round") as bar, executor:
        outcome = run_anytime(job, executor, bar, settings.statistic, claim, plan, 1.0 - settings.confidence,
                              checkpoint, fingerprint)
        accuracy_report = _accuracy(mechanism, scenario, pairs, settings,
                                    min(plan.samples, 1_000_000, max(outcome.total, ANYTIME_ACCURACY_SAMPLES)),
                                    entropy, executor)
    return anytime_report(mechanism, name, claim, scenario, pairs, covers, outcome, plan, settings.statistic,
                          accuracy_report, entropy, settings.confidence, started,
                          {"n_jobs": settings.n_jobs, "backend": settings.backend, "chunk_size": chunk,
                           "output_dim": output_dim})


def _accuracy(mechanism, scenario, pairs, settings, samples, entropy, executor):
    """The accuracy audit of a mechanism that declares accuracy claims (None otherwise), on the first
    pair's base dataset, with draws of its own (:mod:`audit.accuracy`)."""
    if not (settings.accuracy and scenario.checked and _declares_accuracy(mechanism)):
        return None
    options = dict(settings.backend_options)
    if settings.backend == "dask" and "scheduler" not in options:
        options["scheduler"] = executor.client  # reuse the cluster this run started
    return run_accuracy_audit(mechanism, pairs[0].base, samples=samples, confidence=settings.confidence,
                              seed=entropy, n_jobs=settings.n_jobs, backend=settings.backend, progress=False,
                              **options)


# --- validation at the door ------------------------------------------------------------------

def _resolve_claim(mechanism, claim, name):
    if claim is None:
        claim = getattr(mechanism, "claim", None)
        if claim is None:
            raise ValueError(f"mechanism {name!r} has no `claim` attribute; pass claim=ApproxDP(...), "
                             "PureDP(...), GaussianDP(...) or another mechanisms.claims.Claim")
    if not isinstance(claim, Claim):
        kinds = ", ".join(cls.__name__ for cls in claim_types().values())
        raise TypeError(f"`claim` must be a mechanisms.claims.Claim ({kinds}), got {claim!r}")
    return claim


def _resolve_scenario(scenario, claim):
    if is_search(scenario):  # searched later, once the seed is known
        return scenario
    if not isinstance(scenario, scenarios.Scenario):
        if isinstance(scenario, (str, bytes)) or not isinstance(scenario, Sequence):
            raise TypeError(f"`scenario` must be a Scenario or a sequence of neighbouring pairs, got {scenario!r}")
        scenario = scenarios.from_pairs(scenario, claim.relation)
    if not scenario.pairs:
        raise ValueError("`scenario` has no neighbouring pairs")
    if scenario.relation != claim.relation:
        raise ValueError(f"the claim is stated under the {claim.relation.value!r} relation but the "
                         f"scenario's pairs are {scenario.relation.value!r} neighbours")
    return scenario


def _resolve_seed(seed, checkpoint) -> int:
    """``seed``, or fresh entropy when it is None.  A checkpoint's seed is adopted only with a
    :class:`CheckpointWarning` that says so: a caller who asks for fresh randomness and finds an
    old checkpoint in place must not silently get the old audit back."""
    if seed is not None:
        return seed
    if checkpoint is not None:
        state = load_state(checkpoint)
        if state is not None and "entropy" in state[0]:
            adopted = int(state[0]["entropy"])
            warnings.warn(f"seed=None: resuming checkpoint {str(checkpoint)!r} with its seed {adopted} (pass "
                          f"seed={adopted} to resume it without this warning, or delete the file for fresh draws)",
                          CheckpointWarning, stacklevel=4)
            return adopted
    return int(np.random.SeedSequence().entropy)


def _check_enough_samples(samples, certification, budget, claim, confidence):
    """Refuse a run that could not certify anything even from perfectly separated outputs."""
    level = budget.headline_level
    if hopeless(certification, level, claim):
        needed = certification
        while hopeless(needed, level, claim):
            needed *= 2
        raise ValueError(f"`samples`={samples} is too small to certify anything at confidence "
                         f"{confidence}: its {certification} certification draws per side would give "
                         f"no bound even from perfectly separated outputs; use at least "
                         f"{math.ceil(samples * needed / max(certification, 1))}")


def _warn_sample_size(mechanism, name, dataset, output_dim, settings, claim, pairs, main, entropy) -> None:
    """:class:`audit.feasibility.SampleSizeWarning` for a ``samples`` that cannot refute the claim
    whatever is drawn, or whose draws will take long (:mod:`audit.feasibility`)."""
    def plan(size):
        return plan_stages(size, output_dim, settings.statistic, claim, pairs, 1.0 - settings.confidence,
                           settings.early_stopping)[1]

    for message in (unrefutable_message(settings.samples, main, claim, settings.confidence, plan),
                    duration_message(mechanism, name, dataset, output_dim, settings.samples, pairs,
                                     settings.n_jobs, entropy)):
        if message:
            warnings.warn(SampleSizeWarning(message), stacklevel=3)


def _distinct_pairs(pairs):
    """Merge each pair with its exact reverse (and duplicates): both directions are audited anyway."""
    kept, covers = [], []
    for pair in pairs:
        for index, other in enumerate(kept):
            if (_same(pair.base, other.base) and _same(pair.neighbor, other.neighbor)) or \
                    (_same(pair.base, other.neighbor) and _same(pair.neighbor, other.base)):
                covers[index].append(pair.label)
                break
        else:
            kept.append(pair)
            covers.append([])
    return kept, [tuple(c) for c in covers]


def _same(a, b) -> bool:
    try:
        a, b = np.asarray(a), np.asarray(b)
        return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b))
    except Exception:
        return a is b


def _digest(value) -> str:
    try:
        array = np.ascontiguousarray(value)
        if array.dtype != object:
            return hashlib.sha256(str(array.shape).encode() + array.dtype.str.encode() + array.tobytes()).hexdigest()
    except Exception:
        pass
    return hashlib.sha256(repr(value).encode()).hexdigest()


def checkpoint_key(mechanism, name, claim, datasets, samples, confidence, entropy, statistic, plan,
                   mode: str = "fixed", *, assume_unchanged: bool = False) -> CheckpointKey:
    """The key a checkpoint of this audit is written and resumed under (:mod:`audit.checkpoint`):
    what determines its draws, the mechanism's and a callable statistic's code and state included
    (:mod:`audit.fingerprint`)."""
    mechanism_digest = value_digest(mechanism)
    unverified = mechanism_digest.unverified
    if isinstance(statistic, str):
        statistic_part = statistic
    else:
        statistic_digest = value_digest(statistic)
        statistic_part = f"{statistic_label(statistic)} {statistic_digest.hexdigest}"
        unverified += tuple(f"statistic: {item}" for item in statistic_digest.unverified)
    parts = {"engine": ENGINE_VERSION, "numpy": np.__version__,
             "mechanism": f"{name} {mechanism_digest.hexdigest}", "statistic": statistic_part,
             "claim": json.dumps(claim.to_dict(), sort_keys=True),
             "pairs": json.dumps([[_digest(a), _digest(b)] for a, b in datasets]),
             "samples": str(samples), "confidence": repr(float(confidence)), "seed": str(entropy),
             "plan": json.dumps(plan, sort_keys=True), "mode": mode}
    return CheckpointKey(parts, tuple(f"mechanism: {item}" for item in unverified), assume_unchanged)


def _probe(mechanism, name, datasets, labels, entropy) -> int:
    """Draw two outputs per dataset to learn k and fail fast on protocol violations; then draw the
    first dataset's again from an equal generator and warn if they differ (:func:`_check_seeded`)."""
    output_dim, first = None, None
    for pair, (base, neighbour) in enumerate(datasets):
        for side, data in enumerate((base, neighbour)):
            where = f"pair {labels[pair]!r}, {'base' if side == 0 else 'neighbour'} dataset, probe"
            out = draw_outputs(mechanism, data, PROBE_DRAWS, chunk_rng(entropy, pair, side, Phase.PROBE, 0),
                               where, name, output_dim)
            output_dim = out.shape[1]
            first = out if first is None else first
    if output_dim < 1:
        raise ValueError(f"mechanism {name!r} returned outputs with 0 columns")
    _check_seeded(mechanism, name, datasets[0][0], labels[0], entropy, first)
    return output_dim


def _check_seeded(mechanism, name, dataset, label, entropy, first) -> None:
    """Warn (:class:`audit.errors.ReproducibilityWarning`) when two calls with equal generators give
    different outputs: the mechanism draws from somewhere other than its ``rng`` (``np.random``,
    ``random``, a generator of its own), so the same seed will not give the same report.  A
    mechanism that declares ``deterministic = False`` (it cannot be seeded, e.g. OpenDP's
    generator) has said so already."""
    if getattr(mechanism, "deterministic", True) is False:
        return
    again = draw_outputs(mechanism, dataset, PROBE_DRAWS, chunk_rng(entropy, 0, 0, Phase.PROBE, 0),
                         f"pair {label!r}, base dataset, probe", name, first.shape[1])
    if not np.array_equal(first, again):
        warnings.warn(ReproducibilityWarning(
            f"mechanism {name!r} gave different outputs for two generators `rng` seeded alike: it draws "
            "randomness from somewhere other than the `rng` it is given (np.random, random, a generator "
            "of its own), so the same seed will not give the same report; draw every random number "
            "from `rng`"), stacklevel=3)


def _declares_accuracy(mechanism) -> bool:
    return all(callable(getattr(mechanism, attr, None)) for attr in ("error_bound", "true_answer"))


# --- assembling the report --------------------------------------------------------------------

def _tradeoff_curve(label, band, claim, exact_curve) -> TradeoffCurve:
    band = sorted(band, key=lambda c: (c.alpha, c.beta))
    column = lambda attr: tuple(float(getattr(c, attr)) for c in band)  # noqa: E731
    return TradeoffCurve(label, column("alpha"), column("beta"), column("alpha_lo"), column("alpha_hi"),
                         column("beta_lo"), column("beta_hi"), tuple(float(a) for a in PLOT_ALPHAS),
                         tuple(float(b) for b in claim.tradeoff(PLOT_ALPHAS)), exact_curve)


def _assemble(mechanism, name, claim, scenario, pairs, covers, certified, statistics, statistic_info,
              accuracy_report, entropy, samples, confidence, started, runtime) -> AuditReport:
    ref_delta, ref_epsilon = claim.reference_delta, claim.epsilon
    joint = np.array([c.joint for c in certified])
    alpha_hi = np.array([c.alpha_hi for c in certified])
    beta_hi = np.array([c.beta_hi for c in certified])
    owner = np.array([c.event.pair for c in certified])

    def quantity(points, slot):  # per event: its certified value of the quantity of ``slot``
        tested = np.array([c.bound if c.event.slot == slot else 0.0 for c in certified])
        return np.where(joint, np.nan_to_num(tested, nan=0.0), np.nan_to_num(points, nan=0.0))

    # A GDP claim has no ε or δ headline event: its ε and δ come from the curve events alone.
    eps_ref = quantity(epsilon_lower_bound(alpha_hi, beta_hi, ref_delta), Slot.epsilon_at(ref_delta))
    delta_ref = quantity(delta_lower_bound(alpha_hi, beta_hi, ref_epsilon), Slot.delta_at(ref_epsilon))
    mus = quantity(mu_lower_bound(alpha_hi, beta_hi), MU)
    curve = epsilon_lower_bound(alpha_hi[None, ~joint], beta_hi[None, ~joint], DELTA_GRID[:, None]).max(axis=1)

    truth = exact_truth(mechanism, claim)
    exact_tradeoff = truth.tradeoff
    pair_results = []
    for index, pair in enumerate(pairs):
        mine = owner == index
        band = [c for c in certified if c.event.pair == index and c.event.band]
        pair_results.append(PairResult(
            pair.label, covers[index], float(eps_ref[mine].max()), float(delta_ref[mine].max()),
            float(mus[mine].max()), _tradeoff_curve(pair.label, band, claim, exact_tradeoff)))
    key = (lambda r: r.mu_lower_bound) if claim.gaussian_mu is not None else \
        (lambda r: (r.epsilon_lower_bound, r.delta_lower_bound, r.mu_lower_bound))
    worst = max(range(len(pair_results)), key=lambda i: key(pair_results[i]))

    violated = below_curve(alpha_hi, beta_hi, claim.tradeoff) & ~joint
    claimed_beta = claim.tradeoff(alpha_hi)
    witness = witness_record({"epsilon": eps_ref, "delta": delta_ref, "mu": mus}, [c.refutes for c in certified],
                             violated, np.where(violated, beta_hi - claimed_beta, np.inf), claim)
    tested = tuple(JointViolation(pairs[c.event.pair].label, c.event.slot, c.bound,
                                  c.event.slot.allowed_by(claim), c.count_a, c.count_b, c.n)
                   for c in certified if c.refutes)
    violations = tested + tuple(sorted(
        (Violation(pairs[c.event.pair].label, c.event.slot, c.alpha_hi, c.beta_hi, float(claimed_beta[i]))
         for i, c in enumerate(certified) if violated[i]),
        key=lambda v: v.beta_hi - v.claimed_beta))

    exact_epsilon, exact_delta, exact_mu, exact_curve = truth.epsilon, truth.delta, truth.mu, truth.curve
    epsilon_lb = float(eps_ref.max())
    mu_lb = float(mus.max())

    return AuditReport(
        mechanism=name, claim=claim,
        scenario=scenario.to_dict() if hasattr(scenario, "to_dict") else {"checked": scenario.checked},
        verdict=Verdict.VIOLATED if violations else Verdict.NOT_REFUTED, violations=violations,
        reference_delta=float(ref_delta), reference_epsilon=float(ref_epsilon),
        epsilon_lower_bound=epsilon_lb, delta_lower_bound=float(delta_ref.max()), mu_lower_bound=mu_lb,
        epsilon_curve=EpsilonCurve(tuple(float(d) for d in DELTA_GRID), tuple(float(v) for v in curve),
                                   tuple(float(claim.epsilon_at(float(d))) for d in DELTA_GRID), exact_curve),
        tradeoff=pair_results[worst].tradeoff,
        exact_epsilon=exact_epsilon, exact_delta=exact_delta, exact_mu=exact_mu,
        audit_tightness=ratio(epsilon_lb, exact_epsilon),
        claim_slack=ratio(exact_epsilon, ref_epsilon) if exact_epsilon is not None else None,
        mu_tightness=ratio(mu_lb, exact_mu),
        worst_pair=pair_results[worst].label, pairs=tuple(pair_results),
        evidence=tuple(dict(c.to_dict([p.label for p in pairs]),
                            event=event_text(statistics[c.event.pair].lanes()[c.event.lane], c.threshold)) for c in certified),
        accuracy=accuracy_report, seed=entropy, samples=samples, confidence=confidence,
        statistic=statistic_info, witness=witness,
        runtime=dict(runtime, wall_time_s=time.perf_counter() - started, versions=versions()),
    )
