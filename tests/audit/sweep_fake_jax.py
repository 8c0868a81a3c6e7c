"""A small numpy fake of JAX and of the JAX Privacy API the jax-privacy catalogue calls, so that CI,
which installs neither, tests the catalogue's plumbing: every case builds and releases with its
declared width on both paths (per call and vectorized), and coverage leaves no name unaccounted.

``jax`` is reduced to what the catalogue uses: ``jax.numpy`` is numpy itself, ``jit`` is the identity,
``vmap`` maps over the leading axis in Python, and a PRNG key is an integer seed (``split`` draws
fresh seeds from it).  The JAX Privacy fake follows the library's documented semantics on the
catalogue's linear loss (the gradient of example i is its row): ``clipped_grad`` replaces NaN and
±inf by 0, clips each example's gradient to ``l2_clip_norm``, rescales and normalizes as asked and
zeroes padding examples; its ``sensitivity`` is ``l2_clip_norm / normalize_by`` (doubled under
replace-one); the privatizers add ``stddev · C⁻¹Z`` with Z standard normal; the dense privatizer
reads row min(t, n − 1) of its matrix, as JAX's clamped indexing does in jax-privacy 2.0.0
(google-deepmind/jax_privacy#338); sensitivities of C are computed by brute force over
participation patterns; the accountants compose Gaussian steps without amplification (an upper bound).

Two switches plant documented bug classes for the statistical tests: ``FLAGS["clip"] = False``
sums the raw gradients, and ``FLAGS["raise_past_rows"] = True`` is the fixed dense privatizer.
"""

from __future__ import annotations

import enum
import importlib.machinery
import inspect
import itertools
import math
import sys
import types

import numpy as np
from fake_modules import forget

FLAGS = {"clip": True, "raise_past_rows": False}


def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None)
    module.__dict__.update(attrs)
    return module


def install(monkeypatch) -> None:
    """Put fake ``jax`` and ``jax_privacy`` modules into ``sys.modules`` (undone by ``monkeypatch``) and
    drop the catalogue's modules and registration so that the next import builds them on the fakes."""
    from scenarios.libraries import registry

    FLAGS.update(clip=True, raise_past_rows=False)
    for name, module in {**_jax(), **_jax_privacy()}.items():
        monkeypatch.setitem(sys.modules, name, module)
    for name in ("scenarios.libraries.jax_privacy", "scenarios.libraries.jax_privacy_release"):
        forget(monkeypatch, sys.modules, name)
    forget(monkeypatch, registry._REGISTRY, "jax-privacy")


# -- jax ------------------------------------------------------------------------------------------------------
def _jax() -> dict:
    def key(seed):
        return np.int64(seed)

    def split(seed, num=2):
        return np.random.default_rng(int(seed)).integers(2**31, size=num)

    def vmap(function):
        def mapped(*args):
            return np.stack([function(*(a[i] for a in args)) for i in range(len(args[0]))])
        return mapped

    random = _module("jax.random", key=key, split=split)
    # scipy's array-API helpers look up jax.Array whenever a module named jax is imported.
    jax = _module("jax", random=random, numpy=np, jit=lambda f: f, vmap=vmap, Array=type("Array", (), {}))
    return {"jax": jax, "jax.random": random, "jax.numpy": np}


# -- jax_privacy ----------------------------------------------------------------------------------------------
class _Relation(enum.Enum):
    ADD_OR_REMOVE_ONE = 1
    REPLACE_ONE = 2
    REPLACE_SPECIAL = 3


class _Clipped:
    """What ``clipped_grad`` returns: a callable with ``sensitivity(relation)``."""

    def __init__(self, l2_clip_norm, rescale_to_unit_norm, normalize_by, keep_batch_dim):
        self.l2_norm_bound = (1.0 if rescale_to_unit_norm else l2_clip_norm) / normalize_by
        self.options = (l2_clip_norm, rescale_to_unit_norm, normalize_by)

    def __call__(self, w, x, is_padding_example=None):
        clip, rescale, normalize = self.options
        d = np.asarray(w).shape[0]
        grads = np.nan_to_num(np.asarray(x, dtype=np.float32).reshape(len(x), -1, d).sum(axis=1), nan=0.0,
                              posinf=0.0, neginf=0.0)
        norms = np.linalg.norm(grads, axis=1, keepdims=True)
        if FLAGS["clip"]:
            grads = grads * np.minimum(1.0, clip / np.where(norms > 0, norms, 1.0))
        if rescale:
            grads = grads / clip
        if is_padding_example is not None:
            grads = grads * ~np.asarray(is_padding_example)[:, None]
        return (grads.sum(axis=0) / normalize).astype(np.float32)

    def sensitivity(self, neighboring_relation=_Relation.REPLACE_SPECIAL):
        return self.l2_norm_bound * (2 if neighboring_relation.name == "REPLACE_ONE" else 1)


def clipped_grad(fun, argnums=0, has_aux=False, *, l2_clip_norm, rescale_to_unit_norm=False, normalize_by=1.0,
                 batch_argnums=1, keep_batch_dim=True, microbatch_size=None, nan_safe=True, dtype=None):
    return _Clipped(l2_clip_norm, rescale_to_unit_norm, normalize_by, keep_batch_dim)


class StreamingMatrix:
    """C⁻¹ as a lower-triangular matrix applied one row at a time to fresh normals."""

    def __init__(self, inverse):
        self.inverse = np.asarray(inverse, dtype=np.float64)


def _normal(seed, shape):
    return np.random.default_rng(int(seed)).standard_normal(shape).astype(np.float32)


class _Privatizer:
    def __init__(self, noising, stddev, prng_key):
        self.noising, self.stddev = noising, stddev
        self.key = np.int64(0 if prng_key is None else prng_key)

    def init(self, model):
        return (self.key, ()) if isinstance(self.noising, StreamingMatrix) else 0

    def update(self, grads, state, params=None):
        grads = np.asarray(grads, dtype=np.float32)
        if isinstance(self.noising, StreamingMatrix):  # fresh normals each step, combined by the row of C⁻¹
            key, past = state
            new_key, sub = np.random.default_rng(int(key)).integers(2**31, size=2)
            past = past + (_normal(sub, grads.shape),)
            row = self.noising.inverse[len(past) - 1, :len(past)]
            noise = sum(c * z for c, z in zip(row, past))
            return (grads + self.stddev * noise).astype(np.float32), (np.int64(new_key), past)
        rows = self.noising.shape[0]
        if state >= rows and FLAGS["raise_past_rows"]:
            raise IndexError(f"the noising matrix has {rows} rows")
        row = self.noising[min(state, rows - 1)]  # JAX clamps an out-of-bounds index
        noise = sum(c * _normal(int(self.key) * 1000 + j, grads.shape) for j, c in enumerate(row))
        return (grads + self.stddev * noise).astype(np.float32), state + 1


def _coefs(n):
    """Toeplitz coefficients of (1 − x)^(−1/2): 1, 1/2, 3/8, 5/16, ..."""
    out = [1.0]
    for k in range(1, n):
        out.append(out[-1] * (2 * k - 1) / (2 * k))
    return np.array(out)


def _toeplitz(coef, n):
    coef = np.concatenate([np.asarray(coef, dtype=np.float64), np.zeros(max(0, n - len(coef)))])
    return np.array([[coef[i - j] if i >= j else 0.0 for j in range(n)] for i in range(n)])


def _minsep_sq(c, min_sep, max_participations=None):
    """max ‖C u‖² over 0/1 patterns u with participations ≥ min_sep apart, at most max_participations."""
    n = c.shape[1]
    most = max_participations or n
    best = 0.0
    for size in range(1, min(most, n) + 1):
        for steps in itertools.combinations(range(n), size):
            if all(b - a >= min_sep for a, b in zip(steps, steps[1:])):
                u = np.zeros(n)
                u[list(steps)] = 1.0
                best = max(best, float(np.sum((c @ u) ** 2)))
    return best


class _Banded:
    def __init__(self, n, bands):
        c = _toeplitz(_coefs(bands), n)
        self.c = c / np.linalg.norm(c, axis=0)

    @classmethod
    def default(cls, n, bands):
        return cls(n, bands)

    def materialize(self):
        return self.c

    def inverse_as_streaming_matrix(self):
        return StreamingMatrix(np.linalg.inv(self.c))


class _Params:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)


class _Config:
    pass


class _Accountant:
    """A DpsgdTrainingAccountant that ignores amplification by sampling: T' = ⌈T/cycle⌉ Gaussian steps of
    noise multiplier σ (σ/2 for fixed-size batches under replace-one) are √T'/σ-GDP, whose exact ε(δ)
    (Dong, Roth & Su 2022, Cor. 2.13) bounds the subsampled mechanism's from above: a valid claim,
    and cheap enough for CI."""

    def __init__(self, config):
        self.config = config

    def compute_epsilon(self, num_updates, params):
        from mechanisms.gdp import gdp_epsilon

        cycle = params.cycle_length or 1
        nm = params.noise_multipliers / (2.0 if params.sampling_method.name == "FIXED_BATCH_SIZE" else 1.0)
        return float(gdp_epsilon(params.delta, math.sqrt(math.ceil(num_updates / cycle)) / nm))


def _epsilon(accountant, nm, bs, steps, n, delta):
    return accountant.compute_epsilon(steps, _Params(noise_multipliers=nm, batch_size=bs, num_samples=n, delta=delta,
                                                     cycle_length=1, sampling_method=_Sampling.POISSON))


class _Sampling(enum.Enum):
    POISSON = 1
    FIXED_BATCH_SIZE = 2


def calibrate_noise_multiplier(*, target_epsilon, accountant, batch_sizes, num_updates, num_samples, target_delta):
    low, high = 0.1, 20.0
    for _ in range(30):
        mid = (low + high) / 2
        low, high = (low, mid) if _epsilon(accountant, mid, batch_sizes, num_updates, num_samples,
                                           target_delta) <= target_epsilon else (mid, high)
    return high


def calibrate_num_updates(*, target_epsilon, accountant, noise_multipliers, batch_sizes, num_samples, target_delta):
    steps = 1
    while _epsilon(accountant, noise_multipliers, batch_sizes, steps + 1, num_samples, target_delta) <= target_epsilon:
        steps += 1
    return steps


def calibrate_batch_size(*, target_epsilon, accountant, noise_multipliers, num_updates, num_samples, target_delta):
    size = 1
    while size < num_samples and _epsilon(accountant, noise_multipliers, size + 1, num_updates, num_samples,
                                          target_delta) <= target_epsilon:
        size += 1
    return size


class _Partition(enum.Enum):
    EQUAL_SPLIT = 1
    INDEPENDENT = 2


class CyclicPoissonSampling:
    def __init__(self, sampling_prob, iterations, truncated_batch_size=None, cycle_length=1, partition_type=None):
        self.q, self.iterations, self.truncated, self.cycle = sampling_prob, iterations, truncated_batch_size, cycle_length

    def batch_iterator(self, num_examples, rng=None):
        rng = np.random.default_rng(rng)
        group = rng.integers(self.cycle, size=num_examples)
        for t in range(self.iterations):
            chosen = np.flatnonzero((rng.random(num_examples) < self.q) & (group == t % self.cycle))
            if self.truncated is not None and chosen.size > self.truncated:
                chosen = rng.choice(chosen, size=self.truncated, replace=False)
            yield chosen


class FixedBatchSampling:
    def __init__(self, batch_size, iterations, replace=False):
        self.batch_size, self.iterations = batch_size, iterations

    def batch_iterator(self, num_examples, rng=None):
        rng = np.random.default_rng(rng)
        for _ in range(self.iterations):
            yield rng.choice(num_examples, size=self.batch_size, replace=False)


class BandMFExecutionPlanConfig:
    """The plan: clipped_grad (rescaled to unit norm), cyclic Poisson sampling, BandMF noise with the
    noise multiplier the fake accountant calibrates for (epsilon, delta)."""

    def __init__(self, *, iterations, strategy, epsilon, delta, sampling_prob, l2_clip_norm, accountant=None,
                 partition_type=None):
        self.iterations, self.strategy = iterations, np.asarray(strategy, dtype=np.float64)
        self.epsilon, self.delta, self.q, self.clip = epsilon, delta, sampling_prob, l2_clip_norm

    @classmethod
    def default(cls, num_bands, **kwargs):
        return cls(strategy=_coefs(num_bands), **kwargs)

    @property
    def plan(self):
        bands = len(self.strategy)
        accountant = _Accountant(None)
        nm = calibrate_noise_multiplier(target_epsilon=self.epsilon, accountant=accountant, batch_sizes=1,
                                        num_updates=-(-self.iterations // bands), num_samples=round(1 / self.q),
                                        target_delta=self.delta)
        c = _toeplitz(self.strategy, self.iterations)
        return types.SimpleNamespace(
            clipped_grad=lambda fun: clipped_grad(fun, l2_clip_norm=self.clip, rescale_to_unit_norm=True),
            batch_selection_strategy=CyclicPoissonSampling(self.q, self.iterations, cycle_length=bands),
            noise_addition_transform=_Privatizer(StreamingMatrix(np.linalg.inv(c)),
                                                 nm * float(np.linalg.norm(self.strategy)), 0))


def _jax_privacy() -> dict:
    clipping = _module("jax_privacy.clipping", clipped_grad=clipped_grad, clip_pytree=lambda *a, **k: None)
    noise = _module("jax_privacy.noise_addition",
                    gaussian_privatizer=lambda stddev, prng_key=None: _Privatizer(StreamingMatrix(np.eye(64)), stddev,
                                                                                  prng_key),
                    matrix_factorization_privatizer=lambda noising, *, stddev, prng_key=None: _Privatizer(
                        noising, stddev, prng_key))
    toeplitz = _module(
        "jax_privacy.matrix_factorization.toeplitz", optimal_max_error_strategy_coefs=_coefs,
        materialize_lower_triangular=lambda coef, n=None: _toeplitz(coef, n or len(coef)),
        inverse_as_streaming_matrix=lambda coef: StreamingMatrix(np.linalg.inv(_toeplitz(coef, 64))),
        minsep_sensitivity_squared=lambda coef, min_sep, max_participations=None, n=None: _minsep_sq(
            _toeplitz(coef, n or len(coef)), min_sep, max_participations))
    banded = _module("jax_privacy.matrix_factorization.banded", ColumnNormalizedBanded=_Banded,
                     minsep_sensitivity_squared=lambda strategy, min_sep, max_participations=None, n=None:
                     _minsep_sq(strategy.c, min_sep, max_participations))
    sensitivity = _module(
        "jax_privacy.matrix_factorization.sensitivity",
        single_participation_sensitivity=lambda c: float(np.linalg.norm(c, axis=0).max()),
        get_min_sep_sensitivity_upper_bound=lambda c, min_sep=1, max_participations=None: math.sqrt(
            _minsep_sq(np.asarray(c), min_sep, max_participations)),
        get_sensitivity_banded=lambda c, min_sep=1, max_participations=None: math.sqrt(
            _minsep_sq(np.asarray(c), min_sep, max_participations)),
        fixed_epoch_sensitivity=lambda c, epochs: math.sqrt(_minsep_sq(np.asarray(c), c.shape[0] // epochs, epochs)))
    mf = _module("jax_privacy.matrix_factorization", toeplitz=toeplitz, banded=banded, sensitivity=sensitivity,
                 StreamingMatrix=StreamingMatrix)
    accounting = _module("jax_privacy.accounting", RdpAccountantConfig=_Config, PldAccountantConfig=_Config,
                         DpParams=_Params, SamplingMethod=_Sampling, DpsgdTrainingAccountant=_Accountant,
                         calibrate_noise_multiplier=calibrate_noise_multiplier,
                         calibrate_num_updates=calibrate_num_updates, calibrate_batch_size=calibrate_batch_size)
    selection = _module("jax_privacy.batch_selection", CyclicPoissonSampling=CyclicPoissonSampling,
                        FixedBatchSampling=FixedBatchSampling, PartitionType=_Partition)
    plan = _module("jax_privacy.experimental.execution_plan", BandMFExecutionPlanConfig=BandMFExecutionPlanConfig)
    experimental = _module("jax_privacy.experimental", execution_plan=plan)
    root = _module("jax_privacy", clipped_grad=clipped_grad, clipping=clipping, noise_addition=noise,
                   matrix_factorization=mf, accounting=accounting, batch_selection=selection,
                   experimental=experimental, __version__="2.0.0")
    for module in (clipping, noise, toeplitz, banded, sensitivity, accounting, selection, plan):
        for value in vars(module).values():  # names defined "in" their fake module, as public_api reads them
            if inspect.isclass(value) or inspect.isfunction(value):
                try:
                    value.__module__ = module.__name__
                except (AttributeError, TypeError):
                    pass
    return {"jax_privacy": root, "jax_privacy.clipping": clipping, "jax_privacy.noise_addition": noise,
            "jax_privacy.matrix_factorization": mf, "jax_privacy.matrix_factorization.toeplitz": toeplitz,
            "jax_privacy.matrix_factorization.banded": banded,
            "jax_privacy.matrix_factorization.sensitivity": sensitivity, "jax_privacy.accounting": accounting,
            "jax_privacy.batch_selection": selection, "jax_privacy.experimental": experimental,
            "jax_privacy.experimental.execution_plan": plan}
