"""The JAX Privacy catalogue (Google DeepMind ``jax-privacy``, on CPU): clipped gradients, Gaussian and
matrix-factorization noise, the DP-SGD accountants and their calibration, and the execution plans.

JAX Privacy states its privacy in two layers.  ``clipped_grad`` returns a
``BoundedSensitivityCallable`` whose ``sensitivity(relation)`` is the L2 sensitivity of the sum of
clipped per-example gradients ("under add/remove or zero-out ... ``l2_clip_norm``; under replace-one
... doubled", its docstring); a privatizer adds N(0, stddev²) noise (``gaussian_privatizer``) or the
correlated noise stddev·C⁻¹Z of a matrix factorization (``matrix_factorization_privatizer``,
Choquette-Choo et al. 2023/2025), and a release with stddev = σ·Δ is then the Gaussian mechanism
with μ = 1/σ (GaussianDpEvent(σ), which ``SingleReleaseTrainingAccountant`` composes once).
The accountants (``DpsgdTrainingAccountant``: Poisson, fixed-size, cyclic and truncated sampling, RDP
or PLD) and ``calibrate_noise_multiplier`` state the (ε, δ) of T steps of sampling, clipping and
noise, and ``BandMFExecutionPlanConfig`` bundles all three for a target (ε, δ).

Rows release what a user receives: the noisy sum of clipped gradients of a linear loss
L(w; X) = Σ_i ⟨w, x_i⟩, whose per-example gradient is the row x_i itself, so a dataset's rows *are*
its gradients (a canary opposed to the others, one at the clip norm or far above it, NaN and ±inf
entries).  Every draw runs the library's own code: ``clipped_grad`` computes the sum of clipped
gradients of each subset of the rows once, and the privatizer's ``update`` draws the noise under
``jax.vmap`` over PRNG keys (its state carries the key), so a row's 400,000 releases take seconds.
Batch *selection* (which rows are in step t's batch) is drawn in numpy with the law the library's
``batch_iterator`` documents (independent inclusion with probability q, a uniform subset of fixed
size, a uniform truncation, a uniform group of a cyclic partition); a reproduction script calls
the library's iterator itself.  Releases are float32, as JAX computes by default: the
coordinates statistic reads their bit patterns as well as their values.

References
----------
Abadi et al. (2016), "Deep learning with differential privacy", CCS; Choquette-Choo, McMahan, Rush
& Thakurta (2023), "Multi-epoch matrix factorization mechanisms for private machine learning",
ICML; Choquette-Choo et al. (2023), "(Amplified) banded matrix factorization", NeurIPS;
Mironov (2012), "On significance of the least significant bits for differential privacy", CCS;
the JAX Privacy 2.0 docstrings (clipping, noise_addition, accounting, experimental.execution_plan).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import logging
from typing import Any

import numpy as np

from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import ApproxDP, GaussianDP, Relation

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, NotInRelease, point_label
from .jax_privacy_release import (_clipped_sum, _grad_fn, _participates, _plan, _relation, _runner, _sampler,
                                  _stream_sums, jax_privacy,
                                  loss, plan, plan_batch, step, step_batch, stream, stream_batch, stream_sensitivity,
                                  strategy, train, train_batch)
from .registry import register_library

# dp-accounting's RDP logs each order it leaves out (leaving one out only raises the reported ε).
logging.getLogger("absl").setLevel(logging.ERROR)

__all__ = ["LIBRARY", "entries", "public_api", "accountant_epsilon", "calibrated_sigma", "calibrated", "STEP_GRID",
           "STREAM_GRID", "ACCOUNTANT_GRID", "PLAN_GRID", "JAX_PRIVACY_338"]

ADD_REMOVE, REPLACE = Relation.ADD_REMOVE, Relation.REPLACE
#: The reference δ of the (ε, δ) claims.
DELTA = 1e-5


# -- claims ----------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def accountant_epsilon(accountant, steps, noise_multiplier, num_samples, batch_size, sampling="poisson",
                       truncated_batch_size=None, cycle_length=1):
    """ε at :data:`DELTA` that ``DpsgdTrainingAccountant(RdpAccountantConfig() or PldAccountantConfig())``
    reports for T steps (``compute_epsilon``), with the library's ``DpParams``."""
    acc = jax_privacy.accounting
    config = acc.RdpAccountantConfig() if accountant == "rdp" else acc.PldAccountantConfig()
    method = acc.SamplingMethod.FIXED_BATCH_SIZE if sampling == "fixed" else acc.SamplingMethod.POISSON
    params = acc.DpParams(noise_multipliers=noise_multiplier, num_samples=num_samples, delta=DELTA,
                          batch_size=batch_size, sampling_method=method, truncated_batch_size=truncated_batch_size,
                          cycle_length=cycle_length)
    return float(acc.DpsgdTrainingAccountant(config).compute_epsilon(steps, params))


@functools.lru_cache(maxsize=None)
def calibrated_sigma(target_epsilon, steps, num_samples, batch_size):
    """σ from ``calibrate_noise_multiplier`` with the PLD ``DpsgdTrainingAccountant`` (Poisson)."""
    acc = jax_privacy.accounting
    return float(acc.calibrate_noise_multiplier(
        target_epsilon=target_epsilon, accountant=acc.DpsgdTrainingAccountant(acc.PldAccountantConfig()),
        batch_sizes=batch_size, num_updates=steps, num_samples=num_samples, target_delta=DELTA))


@functools.lru_cache(maxsize=None)
def calibrated(what, target_epsilon, noise_multiplier, num_samples, other):
    """``calibrate_num_updates`` (``other`` = batch size) or ``calibrate_batch_size`` (``other`` = T)
    with the PLD ``DpsgdTrainingAccountant``: the T or the batch size the library picks for the target."""
    acc = jax_privacy.accounting
    common = dict(target_epsilon=target_epsilon, accountant=acc.DpsgdTrainingAccountant(acc.PldAccountantConfig()),
                  noise_multipliers=noise_multiplier, num_samples=num_samples, target_delta=DELTA)
    if what == "num_updates":
        return int(acc.calibrate_num_updates(batch_sizes=other, **common))
    return int(acc.calibrate_batch_size(num_updates=other, **common))


# -- entries -----------------------------------------------------------------------------------------------
_STEP_TEXT = ("jax_privacy.clipped_grad docstring, 'Formal Guarantees': 'The L2 sensitivity of the returned "
              "function ... under add/remove or zero-out ... is guaranteed to be 1.0 if rescale_to_unit_norm is True. "
              "Otherwise, the sensitivity is l2_clip_norm. Under replace-one DP, the sensitivity is doubled'; with "
              "nan_safe=True 'the formal guarantees ... still hold in the presence of NaNs and infs'; "
              "noise_addition.gaussian_privatizer adds N(0, stddev²). Claim: stddev = σ·sensitivity(relation) gives "
              "the Gaussian mechanism, 1/σ-GDP (GaussianDpEvent(σ))")

#: One DP-SGD step, σ = 1 (μ = 1): clip norms below, at and above 1, the rescaled and normalized sums,
#: replace-one, microbatches and user-level clipping (two examples per row).
STEP_GRID = (
    {"noise_multiplier": 1.0, "l2_clip_norm": 1.0},
    {"noise_multiplier": 1.0, "l2_clip_norm": 0.2},
    {"noise_multiplier": 1.0, "l2_clip_norm": 5.0, "rescale_to_unit_norm": True},
    {"noise_multiplier": 1.0, "l2_clip_norm": 1.0, "normalize_by": 4.0},
    {"noise_multiplier": 1.0, "l2_clip_norm": 1.0, "relation": "replace"},
    {"noise_multiplier": 1.0, "l2_clip_norm": 1.0, "microbatch_size": 1},
    {"noise_multiplier": 1.0, "l2_clip_norm": 1.0, "users": 2},
)


def _step_pairs(clip: float, relation: Relation, users: int) -> list[tuple]:
    """Neighbouring batches of 2-d gradients: three examples along +e₁, and the example that differs:
    a canary opposed to them far above the clip norm, one at the clip norm, one with a NaN, one with
    +inf, and one alone against the empty batch (add/remove)."""
    base = np.array([[0.5 * clip, 0.0]] * 3)
    extra = [([-100.0 * clip, 0.0], "a canary opposed to the others, 100× the clip norm"),
             ([0.0, -clip], "an example at the clip norm, orthogonal"),
             ([np.nan, -clip], "an example with a NaN gradient entry"),
             ([np.inf, 0.0], "an example with an infinite gradient entry")]
    if users:  # a row is a user with two examples: the user's second example repeats the first
        base = np.hstack([base, base])
        extra = [(row + row, f"{label} (a user with two such examples)") for row, label in extra]
    pairs = []
    for row, label in extra:
        row = np.asarray(row, dtype=np.float64).reshape(1, -1)
        if relation is ADD_REMOVE:
            pairs.append((base, np.vstack([base, row]), f"add {label}"))
        else:
            pairs.append((base, np.vstack([base[:-1], row]), f"replace one example by {label}"))
    if relation is ADD_REMOVE:
        pairs.append((np.zeros((0, base.shape[1])), np.asarray(extra[0][0], dtype=np.float64).reshape(1, -1),
                      "the empty batch against the canary alone"))
    return pairs


def _step_build(point):
    _need("clipped_grad", "clipping.clipped_grad", "noise_addition.gaussian_privatizer")
    params = dict(point)
    relation = REPLACE if params.get("relation") == "replace" else ADD_REMOVE
    users = params.get("users", 0)
    _check_options(jax_privacy.clipping.clipped_grad, params, ("noise_multiplier", "relation", "users"))
    claim = GaussianDP(1.0 / params["noise_multiplier"], relation)
    # NaN and ±inf rows cannot be compared as row values: the pairs are built as neighbours above (one
    # example added, or the last replaced) and vouched for.
    scenario = _scenario.custom(_step_pairs(params["l2_clip_norm"], relation, users), relation)
    width = 2
    mechanism = LibraryRelease(step, params, f"jax_privacy.clipped_grad + gaussian_privatizer({point_label(point)})", claim,
                               width + 1, batch=functools.partial(step_batch, **params))
    return Case("clipped_grad+gaussian_privatizer", point_label(point), dict(point), mechanism, claim, scenario, step,
                params, "batch", statistic="coordinates", layout=(("noisy gradient[0]", None),
                                                                  ("noisy gradient[1]", None)))


def _need(*names: str) -> None:
    """:class:`NotInRelease` unless every dotted name exists under ``jax_privacy`` in the installed
    release (1.0.0 has another API: ``dp_sgd``, ``experimental.clipping``, a ``noise_addition`` package)."""
    for name in names:
        target: Any = jax_privacy
        for part in name.split("."):
            target = getattr(target, part, None)
            if target is None:
                try:
                    target = importlib.import_module(f"jax_privacy.{name.rsplit('.', 1)[0]}")
                    target = getattr(target, name.rsplit(".", 1)[1], None)
                except ImportError:
                    target = None
                if target is None:
                    raise NotInRelease(f"jax_privacy.{name} (the catalogue follows jax-privacy 2.0's API)")
                break


def _check_options(function, params, own):
    """:class:`NotInRelease` for an option of ``function`` that the installed release lacks."""
    accepted = inspect.signature(function).parameters
    missing = [k for k in params if k not in own and k not in accepted]
    if missing:
        raise NotInRelease(f"{function.__qualname__} has no option {', '.join(missing)} in this release")


_STREAM_TEXT = ("noise_addition.matrix_factorization_privatizer docstring: 'adds samples from Gaussian correlated by "
                "noising_matrix (covariance noising_matrix.T @ noising_matrix)' (Section 4.4 of arXiv:2506.08201); the "
                "released noisy sums x + stddev·C⁻¹Z are C⁻¹(Cx + stddev·Z), the Gaussian mechanism on Cx. With "
                "stddev = σ·sens(C)·l2_clip_norm and sens(C) the library's sensitivity for the participation "
                "pattern (matrix_factorization.toeplitz/banded.minsep_sensitivity_squared, "
                "sensitivity.get_min_sep_sensitivity_upper_bound), the claim is 1/σ-GDP "
                "(SingleReleaseTrainingAccountant: one GaussianDpEvent(σ)); add/remove of one example")

#: T = 4 or 6 steps; single participation (max_participations = 1) and participations min_sep apart.
STREAM_GRID = (
    {"kind": "toeplitz", "steps": 4, "min_sep": 4, "max_participations": 1},
    {"kind": "toeplitz", "steps": 4, "min_sep": 2, "max_participations": 2},
    {"kind": "banded", "steps": 4, "min_sep": 2, "max_participations": 2, "bands": 2},
    {"kind": "dense", "steps": 6, "min_sep": 3, "max_participations": 2},
    {"kind": "dense", "steps": 4, "min_sep": 4, "max_participations": 1, "method": "single"},
    {"kind": "dense", "steps": 6, "min_sep": 3, "max_participations": 2, "method": "fixed_epoch"},
    {"kind": "banded", "steps": 4, "min_sep": 2, "max_participations": 2, "bands": 2, "method": "banded"},
    # A dense C⁻¹ of 4 rows updated 5 times, the canary in the 5th step only: before
    # google-deepmind/jax_privacy#338 the privatizer reads row min(t, 3) (JAX clamps the index), so
    # steps 4 and 5 carry the same noise and their difference is the data's, noise-free.
    {"kind": "dense", "steps": 4, "min_sep": 5, "max_participations": 1, "method": "single", "extra_steps": 1},
)

#: google-deepmind/jax_privacy#338 (merged 2026-07-28, in no release on PyPI yet): the dense
#: privatizer raises IndexError once its noising matrix's rows are exhausted.
JAX_PRIVACY_338 = ("google-deepmind/jax_privacy#338 (dense matrix_factorization_privatizer reuses its last row's "
                   "noise past the matrix's rows; raises IndexError after the fix, not yet released)")


def _stream_build(point):
    _need("noise_addition.matrix_factorization_privatizer", "matrix_factorization.toeplitz.minsep_sensitivity_squared",
          "matrix_factorization.banded.ColumnNormalizedBanded", "matrix_factorization.sensitivity.get_sensitivity_banded")
    params = {"noise_multiplier": 1.0, "l2_clip_norm": 0.5, **point}
    steps, sep, most = point["steps"], point["min_sep"], point["max_participations"]
    updates = steps + point.get("extra_steps", 0)
    clip = params["l2_clip_norm"]
    c = strategy(point["kind"], steps, point.get("bands", 2))[0]
    base = np.array([[s, 0.25 * clip] for s in range(min(sep, updates))])  # one example starting at each step
    starts = ([updates - 1] if updates > steps else
              sorted({0, 1, steps - 1} & set(range(min(sep, steps))) | {steps - 1}))
    pairs = [(base, np.vstack([base, [s, -10.0 * clip]]), f"add a canary first taking part in step {s + 1}, "
              f"opposed to the others, clipped") for s in starts]
    sens = stream_sensitivity(point["kind"], steps, sep, most, point.get("bands", 2), point.get("method", "minsep"))
    # The exact μ of these pairs: the release is C⁻¹(Cx + stddev·Z), so μ = ‖C u‖·C_clip/stddev for the
    # canary's participation u (within the T rows of C; beyond them it depends on the privatizer).
    patterns = [_participates(np.array([[s, 0.0]]), steps, sep, most)[:, 0] for s in starts if s < steps]
    exact = (max(float(np.linalg.norm(c @ u)) for u in patterns) / (params["noise_multiplier"] * sens)
             if patterns else None)
    claim = GaussianDP(1.0 / params["noise_multiplier"], ADD_REMOVE)
    mechanism = LibraryRelease(stream, params, f"jax_privacy.matrix_factorization_privatizer({point_label(point)})", claim,
                               updates + 1, batch=functools.partial(stream_batch, **params))
    return Case("matrix_factorization_privatizer", point_label(point),
                {**point, "library_sensitivity": sens, "exact_mu_of_these_pairs": exact}, mechanism, claim,
                _scenario.from_pairs(pairs, ADD_REMOVE), stream, params, "batch", statistic="coordinates",
                layout=tuple((f"noisy sum of step {t + 1}", None) for t in range(updates)),
                known=JAX_PRIVACY_338 if updates > steps else "")


_ACCOUNTANT_TEXT = ("accounting.DpsgdTrainingAccountant.compute_epsilon(num_updates, DpParams(...)): the ε at δ of T "
                    "steps of Poisson-sampled (or fixed-size, cyclic, truncated) DP-SGD with noise multiplier σ "
                    "(RdpAccountantConfig or PldAccountantConfig; 'For accounting we follow the reduction in "
                    "arXiv:2306.08153'); SamplingMethod docstring: POISSON for add-or-remove, FIXED_BATCH_SIZE for "
                    "replace adjacency. Claim: (ε, 1e-5)-DP; calibrate_noise_multiplier: (target ε, 1e-5)-DP")

#: (accountant, sampling, n, batch, T, σ, ...): n rows of which ``batch`` are expected in a batch.
ACCOUNTANT_GRID = (
    {"accountant": "rdp", "noise_multiplier": 1.0, "num_samples": 4, "batch_size": 1, "steps": 4},
    {"accountant": "pld", "noise_multiplier": 1.0, "num_samples": 4, "batch_size": 1, "steps": 4},
    {"accountant": "pld", "noise_multiplier": 0.5, "num_samples": 4, "batch_size": 1, "steps": 1},
    {"accountant": "pld", "noise_multiplier": 2.0, "num_samples": 4, "batch_size": 1, "steps": 2, "sampling": "fixed"},
    {"accountant": "pld", "noise_multiplier": 2.0, "num_samples": 4, "batch_size": 2, "steps": 2,
     "truncated_batch_size": 1},
    {"accountant": "pld", "noise_multiplier": 1.0, "num_samples": 4, "batch_size": 1, "steps": 4, "cycle_length": 2},
    {"accountant": "calibrate", "target_epsilon": 2.0, "num_samples": 4, "batch_size": 1, "steps": 4},
    {"accountant": "calibrate_num_updates", "target_epsilon": 2.0, "noise_multiplier": 1.5, "num_samples": 4,
     "batch_size": 1},
    {"accountant": "calibrate_batch_size", "target_epsilon": 1.0, "noise_multiplier": 1.5, "num_samples": 16,
     "steps": 2},
)


def _accountant_build(point):
    _need("clipped_grad", "noise_addition.gaussian_privatizer", "accounting.DpsgdTrainingAccountant",
          "accounting.calibrate_noise_multiplier", "batch_selection.CyclicPoissonSampling")
    n, sampling, cycle = point["num_samples"], point.get("sampling", "poisson"), point.get("cycle_length", 1)
    truncated = point.get("truncated_batch_size")
    batch, steps = point.get("batch_size"), point.get("steps")
    if point["accountant"] == "calibrate_num_updates":
        steps = calibrated("num_updates", point["target_epsilon"], point["noise_multiplier"], n, batch)
    elif point["accountant"] == "calibrate_batch_size":
        batch = calibrated("batch_size", point["target_epsilon"], point["noise_multiplier"], n, steps)
    if point["accountant"].startswith("calibrate_"):
        sigma, epsilon = point["noise_multiplier"], float(point["target_epsilon"])
    elif point["accountant"] == "calibrate":
        sigma = calibrated_sigma(point["target_epsilon"], steps, n, batch)
        epsilon = float(point["target_epsilon"])
    else:
        sigma = point["noise_multiplier"]
        epsilon = accountant_epsilon(point["accountant"], steps, sigma, n, batch, sampling, truncated, cycle)
    relation = REPLACE if sampling == "fixed" else ADD_REMOVE
    claim = ApproxDP(epsilon, DELTA, relation)
    clip = 1.0
    params = {"noise_multiplier": sigma, "l2_clip_norm": clip, "steps": steps, "sampling": sampling,
              "sampling_prob": batch / (n // cycle), "batch_size": batch, "truncated_batch_size": truncated,
              "cycle_length": cycle}
    # Under Poisson sampling the other rows' number does not change the canary's law (their gradients
    # are 0): at most 4 rows are drawn.  Fixed-size and truncated batches depend on n: all n rows.
    rows = n if truncated is not None or sampling == "fixed" else min(n, 4)
    others = np.full((rows - 1, 1), 0.0) if truncated is None else np.full((rows - 1, 1), clip)
    if relation is ADD_REMOVE:
        base = np.vstack([others, [[0.0]]])
        pairs = [(base, np.vstack([base, [[-10.0 * clip]]]), "add a canary with gradient −10·C (clipped to −C)"),
                 (base[:1], np.vstack([base[:1], [[-clip]]]), "one example against two, the second at −C")]
    else:
        base = np.vstack([others, [[clip]]])
        pairs = [(base, np.vstack([others, [[-10.0 * clip]]]), "replace +C by a canary at −10·C (clipped)")]
    name = ("calibrate_noise_multiplier" if point["accountant"] == "calibrate" else point["accountant"]
            if point["accountant"].startswith("calibrate_") else
            f"DpsgdTrainingAccountant({'RdpAccountantConfig' if point['accountant'] == 'rdp' else 'PldAccountantConfig'})")
    mechanism = LibraryRelease(train, params, f"jax_privacy.accounting.{name}({point_label(point)})", claim, steps + 1,
                               batch=functools.partial(train_batch, **params))
    return Case(f"accounting.{name.split('(')[0]}", point_label(point), {**point, "noise_multiplier": sigma, "steps": steps,
                                                                     "batch_size": batch,
                                                                     "library_epsilon": epsilon, "delta": DELTA},
                mechanism, claim, _scenario.from_pairs(pairs, relation), train, params, "batch",
                statistic="coordinates" if steps > 1 else "auto",
                layout=tuple((f"noisy sum of step {t + 1}", None) for t in range(steps)))


_PLAN_TEXT = ("experimental.execution_plan.BandMFExecutionPlanConfig: 'A DP execution plan consists of a collection of "
              "components which when used together in the expected manner determine the DP guarantee, along with a "
              "DpEvent which precisely quantifies it ... the dp_event can be trusted as having been formally verified "
              "by the JAX Privacy authors'; configured by (epsilon, delta). Claim: (epsilon, delta)-DP under the "
              "accountant's relation (default REPLACE_SPECIAL, zero-out: pairs replace one example by a zero one)")
PLAN_GRID = (
    {"num_bands": 1, "iterations": 4, "epsilon": 2.0, "delta": DELTA, "sampling_prob": 0.5, "l2_clip_norm": 1.0},
    {"num_bands": 2, "iterations": 4, "epsilon": 2.0, "delta": DELTA, "sampling_prob": 0.5, "l2_clip_norm": 1.0,
     "relation": "add-remove"},
)


def _plan_build(point):
    _need("clipped_grad", "experimental.execution_plan.BandMFExecutionPlanConfig")
    params = dict(point)
    steps = point["iterations"]
    relation = ADD_REMOVE if point.get("relation") == "add-remove" else REPLACE
    claim = ApproxDP(point["epsilon"], point["delta"], relation)
    base = np.array([[0.25], [0.25], [0.0]])
    if relation is ADD_REMOVE:
        pairs = [(base, np.vstack([base, [[-10.0]]]), "add a canary at −10 (clipped to −C), opposed to the others")]
    else:
        pairs = [(np.vstack([base, [[-10.0]]]), np.vstack([base, [[0.0]]]), "zero out a canary at −10 (clipped)")]
    mechanism = LibraryRelease(plan, params, f"BandMFExecutionPlanConfig({point_label(point)})", claim, steps + 1,
                               batch=functools.partial(plan_batch, **params))
    return Case("experimental.BandMFExecutionPlanConfig", point_label(point), dict(point), mechanism, claim,
                _scenario.from_pairs(pairs, relation), plan, params, "batch", statistic="coordinates",
                layout=tuple((f"noisy sum of step {t + 1}", None) for t in range(steps)))


def entries() -> tuple[Entry, ...]:
    """The whole catalogue."""
    return (
        Entry("clipped_grad+gaussian_privatizer",
              ("jax_privacy.clipped_grad", "jax_privacy.clipping.clipped_grad", "jax_privacy.clipping.clip_pytree",
               "jax_privacy.clipping.clipped_fun", "jax_privacy.clipping.BoundedSensitivityCallable",
               "jax_privacy.noise_addition.gaussian_privatizer"),
              "mechanism", _STEP_TEXT, ADD_REMOVE, STEP_GRID, _step_build),
        Entry("matrix_factorization_privatizer",
              ("jax_privacy.noise_addition.matrix_factorization_privatizer",
               "jax_privacy.matrix_factorization.toeplitz.minsep_sensitivity_squared",
               "jax_privacy.matrix_factorization.toeplitz.inverse_as_streaming_matrix",
               "jax_privacy.matrix_factorization.banded.ColumnNormalizedBanded",
               "jax_privacy.matrix_factorization.banded.minsep_sensitivity_squared",
               "jax_privacy.matrix_factorization.sensitivity.get_min_sep_sensitivity_upper_bound",
               "jax_privacy.matrix_factorization.sensitivity.get_min_sep_sensitivity_upper_bound_for_X",
               "jax_privacy.matrix_factorization.sensitivity.single_participation_sensitivity",
               "jax_privacy.matrix_factorization.sensitivity.fixed_epoch_sensitivity",
               "jax_privacy.matrix_factorization.sensitivity.fixed_epoch_sensitivity_for_X",
               "jax_privacy.matrix_factorization.sensitivity.get_sensitivity_banded",
               "jax_privacy.matrix_factorization.sensitivity.get_sensitivity_banded_for_X",
               "jax_privacy.matrix_factorization.StreamingMatrix",
               "jax_privacy.matrix_factorization.streaming_matrix.StreamingMatrix"),
              "mechanism", _STREAM_TEXT, ADD_REMOVE, STREAM_GRID, _stream_build),
        Entry("accounting.DpsgdTrainingAccountant",
              ("jax_privacy.accounting.DpsgdTrainingAccountant", "jax_privacy.accounting.RdpAccountantConfig",
               "jax_privacy.accounting.PldAccountantConfig", "jax_privacy.accounting.DpParams",
               "jax_privacy.accounting.SamplingMethod", "jax_privacy.accounting.calibrate_noise_multiplier",
               "jax_privacy.accounting.calibrate_num_updates", "jax_privacy.accounting.calibrate_batch_size",
               "jax_privacy.batch_selection.CyclicPoissonSampling", "jax_privacy.batch_selection.FixedBatchSampling",
               "jax_privacy.batch_selection.PartitionType"),
              "accountant", _ACCOUNTANT_TEXT, ADD_REMOVE, ACCOUNTANT_GRID, _accountant_build),
        Entry("experimental.BandMFExecutionPlanConfig",
              ("jax_privacy.experimental.execution_plan.BandMFExecutionPlanConfig",
               "jax_privacy.experimental.execution_plan.DPExecutionPlan",
               "jax_privacy.experimental.accounting.amplified_bandmf_event",
               "jax_privacy.matrix_factorization.toeplitz.optimize_banded_toeplitz"),
              "model", _PLAN_TEXT, REPLACE, PLAN_GRID, _plan_build),
    )


# -- the public API and what is left out -------------------------------------------------------------------
#: Modules whose public classes and functions (defined there, not imported) are the API.
_MODULES = ("clipping", "noise_addition", "batch_selection", "accounting", "auditing", "sharding_utils",
            "matrix_factorization.banded", "matrix_factorization.buffered_toeplitz", "matrix_factorization.checks",
            "matrix_factorization.dense", "matrix_factorization.optimization", "matrix_factorization.sensitivity",
            "matrix_factorization.streaming_matrix", "matrix_factorization.toeplitz", "experimental.accounting",
            "experimental.execution_plan", "experimental.compilation_utils")


def public_api() -> tuple[str, ...]:
    """The installed release's public names: ``jax_privacy.clipped_grad``, the names of
    ``jax_privacy.accounting`` and ``matrix_factorization`` (``__init__``), and the public classes and
    functions each module of :data:`_MODULES` defines; ``keras_api`` (which needs Keras) as one name."""
    names = ["jax_privacy.clipped_grad", "jax_privacy.keras_api"]
    for module_name in _MODULES:
        try:
            module = importlib.import_module(f"jax_privacy.{module_name}")
        except ImportError:  # a module this release lacks
            continue
        names += [f"jax_privacy.{module_name}.{n}" for n in dir(module)
                  if not n.startswith("_") and callable(getattr(module, n))
                  and getattr(getattr(module, n), "__module__", None) == module.__name__]
    accounting = importlib.import_module("jax_privacy.accounting")
    names = [n.replace("jax_privacy.accounting.accountants.", "jax_privacy.accounting.")
              .replace("jax_privacy.accounting.analysis.", "jax_privacy.accounting.")
              .replace("jax_privacy.accounting.calibrate.", "jax_privacy.accounting.") for n in names]
    names += [f"jax_privacy.accounting.{n}" for n in dir(accounting) if not n.startswith("_")
              and callable(getattr(accounting, n))]
    names += ["jax_privacy.matrix_factorization.StreamingMatrix"]
    return tuple(sorted(set(names)))


_OPTIMIZE = ("not DP: chooses or evaluates the strategy matrix C, a public matrix (its error, loss or optimisation); "
             "the noise is added by noise_addition.matrix_factorization_privatizer")
_AUDIT = "not DP: JAX Privacy's own auditing tools (they estimate ε from canary scores; no release of private data)"
_SHARD = "not DP: multi-device sharding helpers (reshape and add; no randomness of their own)"
_EXCLUDED: dict[str, str] = {
    "jax_privacy.keras_api": "not yet written: needs Keras 3 with the JAX backend, which this environment does not "
                             "install (make_private wraps a keras.Model's fit with the same clipped_grad, batch "
                             "selection and privatizer as the entries here)",
    "jax_privacy.noise_addition.SupportedStrategies": "covered through another entry: matrix_factorization_privatizer "
                                                      "(DEFAULT; ZERO needs a sharded multi-device mesh)",
    "jax_privacy.batch_selection.BallsInBinsSampling": "not yet written: balls-in-bins sampling (arXiv:2410.06266); "
                                                       "the library's accountants do not account for it",
    "jax_privacy.batch_selection.BMinSepSampling": "not yet written: b-min-sep sampling for BandMF",
    "jax_privacy.batch_selection.UserSelectionStrategy": "not yet written: user-level batch selection",
    "jax_privacy.batch_selection.BatchSelectionStrategy": "not DP: an abstract base class",
    "jax_privacy.batch_selection.split_and_pad_global_batch": "not DP: splits a batch of indices into padded "
                                                              "minibatches (padding examples are zeroed by clipped_grad)",
    "jax_privacy.batch_selection.pad_to_multiple_of": "not DP: pads a batch of indices with −1",
    "jax_privacy.accounting.DpsgdTrainingUserLevelAccountant": "not yet written: user-level DP-SGD accounting "
                                                               "(arXiv:2401.10294)",
    "jax_privacy.accounting.SingleReleaseTrainingAccountant": "covered through another entry: "
        "matrix_factorization_privatizer (its claim is this accountant's single GaussianDpEvent(σ))",
    "jax_privacy.accounting.DpTrainingAccountant": "not DP: an abstract base class",
    "jax_privacy.accounting.DpAccountantConfig": "not DP: an abstract base class",
    "jax_privacy.accounting.CachedExperimentAccountant": "covered through another entry: "
        "accounting.DpsgdTrainingAccountant (a cache in front of a DpTrainingAccountant)",
    "jax_privacy.accounting.BatchingScaleSchedule": "not DP: a type alias of a batch-size schedule",
    "jax_privacy.experimental.accounting.dpsgd_event": "covered through another entry: accounting.DpsgdTrainingAccountant "
                                                       "(the same PoissonSampledDpEvent of a GaussianDpEvent)",
    "jax_privacy.experimental.accounting.fixed_dpsgd_event": "not yet written: sampled-without-replacement events",
    "jax_privacy.experimental.accounting.truncated_dpsgd_event": "covered through another entry: "
        "accounting.DpsgdTrainingAccountant (truncated_batch_size: the same TruncatedSubsampledGaussianDpEvent)",
    "jax_privacy.experimental.accounting.truncated_amplified_bandmf_event": "not yet written: truncated BandMF plans",
    "jax_privacy.experimental.compilation_utils.optimal_physical_batch_sizes": "not DP: chooses compiled batch shapes",
    "jax_privacy.matrix_factorization.toeplitz.sensitivity_squared": "covered through another entry: "
        "matrix_factorization_privatizer (minsep_sensitivity_squared with max_participations = 1 is the same)",
    "jax_privacy.matrix_factorization.buffered_toeplitz.sensitivity_squared": "not yet written: BLT strategies "
        "need jax_enable_x64, a process-wide switch that would turn every other row's float32 release into float64",
    "jax_privacy.matrix_factorization.buffered_toeplitz.BufferedToeplitz": "not yet written: as "
                                                                            "buffered_toeplitz.sensitivity_squared",
    "jax_privacy.clipping.AuxiliaryOutput": "not DP: the namedtuple of per-example outputs, for which the library "
                                            "states no guarantee",
    "jax_privacy.sharding_utils.parallel_sample_pytree": "not yet written: draws noise across a multi-device mesh "
                                                         "(the ZERO strategy)",
    "jax_privacy.experimental.execution_plan.DPExecutionPlan": "covered through another entry: "
                                                               "experimental.BandMFExecutionPlanConfig (its .plan)",
}


def _excluded() -> dict[str, str]:
    """:data:`_EXCLUDED`, and every other public name of the strategy-optimisation modules, the auditing
    and sharding modules, and the streaming-matrix constructors, with its reason."""
    out = dict(_EXCLUDED)
    covered = {name for entry_api in _COVERED for name in entry_api}
    for name in public_api():
        if name in out or name in covered:
            continue
        if ".auditing." in name:
            out[name] = _AUDIT
        elif ".sharding_utils." in name:
            out[name] = _SHARD
        elif ".matrix_factorization." in name:
            out[name] = _OPTIMIZE
    return out


#: The names the entries cover (kept here so that exclusions never shadow them).
_COVERED = tuple(entry.api for entry in entries())

LIBRARY = register_library(Library(
    name="jax-privacy", distribution="jax-privacy", entries=entries, public_api=public_api, excluded=_excluded(),
    script_header=("import importlib\nimport functools\n\nimport numpy as np\nimport jax\nimport jax.numpy as jnp\n"
                   "import jax_privacy\n"),
    helpers=(loss, _relation, _grad_fn, _clipped_sum, strategy, stream_sensitivity, _participates, _stream_sums,
             _runner, _sampler, _plan),
    seeded=True))
