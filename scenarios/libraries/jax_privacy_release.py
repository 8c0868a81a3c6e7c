"""What the JAX Privacy catalogue releases: the library's clipping, batch selection and noise, per call
and vectorized (``jax.vmap`` over PRNG keys).

Rows of a dataset are per-example gradients: the loss L(w; X) = Σ_i ⟨w, x_i⟩ has gradient x_i for
example i, so ``clipped_grad`` of :func:`loss` clips and sums the rows themselves.  Each entry has a
per-call release (``step``, ``stream``, ``train``, ``plan``: what a reproduction script runs, the
library's own pipeline end to end) and a vectorized path with the same law (``*_batch``): the
library's clipped sums are computed once per dataset (or once per subset of its rows, which batch
selection then indexes), and the privatizer's ``update`` runs under ``jax.jit(jax.vmap(...))`` over
fresh PRNG keys (a streaming privatizer's state starts with its key; the dense one closes over its
key and is built per key inside the vmapped function).  Batch selection is drawn in numpy with the
law each ``batch_iterator`` documents: independent inclusion with probability q in the steps of
the example's group (groups uniform and independent, ``PartitionType.INDEPENDENT``), a uniform
truncation to ``truncated_batch_size``, or a uniform subset of fixed size.

References
----------
The JAX Privacy 2.0 docstrings (clipping.clipped_grad, noise_addition, batch_selection,
experimental.execution_plan); Choquette-Choo et al. (2023), "(Amplified) banded matrix
factorization: a unified approach to private training", NeurIPS.
"""

from __future__ import annotations

import functools
import importlib

import numpy as np

from .catalogue import require_library

jax = require_library("jax", catalogue="jax-privacy", install="pip install jax-privacy")
jnp = require_library("jax.numpy", catalogue="jax-privacy", install="pip install jax-privacy")
jax_privacy = require_library("jax_privacy", catalogue="jax-privacy", install="pip install jax-privacy")

__all__ = ["loss", "step", "stream", "train", "plan", "step_batch", "stream_batch", "train_batch", "plan_batch",
           "strategy", "stream_sensitivity", "MAX_ROWS"]

#: At most 2^MAX_ROWS subsets of rows: the table of library clipped sums a vectorized draw indexes.
MAX_ROWS = 6


# -- release functions (their source goes into reproduction scripts: names np, jax, jnp, jax_privacy) --
def loss(w, x):
    """L(w; X) = Σ_i ⟨w, x_i⟩: the per-example gradient of row x_i is x_i itself."""
    return jnp.sum(x.reshape(x.shape[0], -1) @ w)


def _relation(name):
    import dp_accounting

    return {"add-remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
            "replace": dp_accounting.NeighboringRelation.REPLACE_ONE,
            "zero-out": dp_accounting.NeighboringRelation.REPLACE_SPECIAL}[name]


def _grad_fn(d, users=0, **clip_options):
    """``jax_privacy.clipped_grad`` of :func:`loss`; ``users`` > 0 groups that many examples per row."""
    if users:
        return jax_privacy.clipped_grad(lambda w, x: jnp.sum(x.reshape(-1, d) @ w), keep_batch_dim=False,
                                        **clip_options)
    return jax_privacy.clipped_grad(loss, **clip_options)


def _clipped_sum(grad_fn, w, rows):
    """The library's clipped sum over ``rows``; an empty batch is one padding example (the library
    raises on a batch of size 0 and documents ``is_padding_example`` for padded batches)."""
    if rows.shape[0] == 0:
        return grad_fn(w, np.zeros((1,) + rows.shape[1:], np.float32), is_padding_example=jnp.array([True]))
    return grad_fn(w, rows.astype(np.float32))


def step(data, random_state, *, noise_multiplier, l2_clip_norm, relation="add-remove", users=0, **clip_options):
    """One DP-SGD step: ``clipped_grad`` of :func:`loss` at w = 0 over the rows of ``data`` (each row
    one example's gradient, or ``users`` examples of one user), then ``gaussian_privatizer`` with
    stddev = σ · ``sensitivity(relation)`` of the clipped-gradient callable."""
    d = data.shape[1] // max(users, 1)
    grad_fn = _grad_fn(d, users, l2_clip_norm=l2_clip_norm, **clip_options)
    rows = data.reshape(data.shape[0], users, d) if users else data
    total = _clipped_sum(grad_fn, jnp.zeros(d), rows)
    stddev = noise_multiplier * float(grad_fn.sensitivity(_relation(relation)))
    privatizer = jax_privacy.noise_addition.gaussian_privatizer(stddev=stddev,
                                                                  prng_key=int(random_state.randint(2**31)))
    noisy, _ = privatizer.update(total, privatizer.init(total))
    return np.asarray(noisy, dtype=np.float64)


@functools.lru_cache(maxsize=16)
def strategy(kind, steps, bands=2):
    """The strategy matrix C (numpy) and the noising matrix C⁻¹ the privatizer takes, from the library:
    "toeplitz" (``toeplitz.optimal_max_error_strategy_coefs``, streamed), "banded"
    (``banded.ColumnNormalizedBanded.default``, streamed) or "dense" (the Toeplitz C, inverted densely)."""
    mf = jax_privacy.matrix_factorization
    if kind == "banded":
        banded = mf.banded.ColumnNormalizedBanded.default(steps, bands)
        return np.asarray(banded.materialize(), dtype=np.float64), banded.inverse_as_streaming_matrix(), banded
    coef = mf.toeplitz.optimal_max_error_strategy_coefs(steps)
    c = mf.toeplitz.materialize_lower_triangular(coef, steps)
    noising = mf.toeplitz.inverse_as_streaming_matrix(coef) if kind == "toeplitz" else jnp.linalg.inv(c)
    return np.asarray(c, dtype=np.float64), noising, coef


@functools.lru_cache(maxsize=64)
def stream_sensitivity(kind, steps, min_sep, max_participations, bands=2, method="minsep"):
    """The library's L2 sensitivity of C for participations ``min_sep`` apart, at most
    ``max_participations`` of them (single participation: max_participations = 1).  ``method``
    "single", "fixed_epoch" or "banded" asks ``sensitivity.single_participation_sensitivity``,
    ``fixed_epoch_sensitivity`` (epochs = max_participations, min_sep = steps/epochs) or
    ``get_sensitivity_banded`` of the materialized C instead."""
    mf = jax_privacy.matrix_factorization
    c, _, spec = strategy(kind, steps, bands)
    if method == "single":
        return float(mf.sensitivity.single_participation_sensitivity(jnp.asarray(c)))
    if method == "fixed_epoch":
        return float(mf.sensitivity.fixed_epoch_sensitivity(jnp.asarray(c), max_participations))
    if method == "banded":
        return float(mf.sensitivity.get_sensitivity_banded(jnp.asarray(c), min_sep, max_participations))
    if kind == "toeplitz":
        return float(np.sqrt(mf.toeplitz.minsep_sensitivity_squared(spec, min_sep, max_participations, steps)))
    if kind == "banded":
        return float(np.sqrt(mf.banded.minsep_sensitivity_squared(spec, min_sep, max_participations, steps)))
    return float(mf.sensitivity.get_min_sep_sensitivity_upper_bound(jnp.asarray(c), min_sep, max_participations))


def _participates(data, steps, min_sep, max_participations):
    """(steps, n) 0/1: row i = (first step s_i, gradient) takes part in steps s_i, s_i + min_sep, ...
    (at most ``max_participations`` of them)."""
    first = data[:, 0].astype(int)
    t = np.arange(steps)[:, None]
    k = (t - first[None, :]) / min_sep
    return ((k >= 0) & (k == np.floor(k)) & (k < max_participations)).astype(np.float64)


@functools.lru_cache(maxsize=64)
def _stream_sums(data_bytes, shape, l2_clip_norm, updates, min_sep, max_participations):
    """The library's clipped sums of each step's batch, (updates, 1), for the rows (first step,
    gradient) in ``data_bytes``: fixed by the data, so computed once per dataset."""
    data = np.frombuffer(data_bytes, dtype=np.float64).reshape(shape)
    grad_fn = _grad_fn(1, l2_clip_norm=l2_clip_norm)
    mask = _participates(data, updates, min_sep, max_participations)
    return np.stack([np.asarray(_clipped_sum(grad_fn, jnp.zeros(1), data[mask[t] > 0, 1:])) for t in range(updates)])


def stream(data, random_state, *, kind, steps, noise_multiplier, l2_clip_norm, min_sep, max_participations, bands=2,
           method="minsep", extra_steps=0):
    """T steps of DP-MF: step t's batch holds the rows that take part in t; the sum of their clipped
    gradients goes through ``matrix_factorization_privatizer`` with noising matrix C⁻¹ and stddev
    = σ · sensitivity(C) · C_clip.  The release is the noisy sums of T + ``extra_steps`` updates
    (updates past the T rows of a dense C⁻¹ are accepted by the privatizer).  The privatizer's updates
    run under ``jax.jit``, as a training loop runs them (:func:`_runner`, compiled once)."""
    data = np.ascontiguousarray(data, dtype=np.float64)
    stddev = noise_multiplier * stream_sensitivity(kind, steps, min_sep, max_participations, bands, method) * l2_clip_norm
    sums = _stream_sums(data.tobytes(), data.shape, l2_clip_norm, steps + extra_steps, min_sep, max_participations)
    seeds = np.array([random_state.randint(2**31)], dtype=np.uint32)
    noisy = _runner(kind, steps, bands, float(stddev), steps + extra_steps)(seeds, sums[None].astype(np.float32))
    return np.asarray(noisy, dtype=np.float64).ravel()


def _sampler(sampling, steps, sampling_prob, batch_size, truncated_batch_size, cycle_length):
    selection = jax_privacy.batch_selection
    if sampling == "fixed":
        return selection.FixedBatchSampling(batch_size=batch_size, iterations=steps)
    return selection.CyclicPoissonSampling(sampling_prob=sampling_prob, iterations=steps,
                                           truncated_batch_size=truncated_batch_size, cycle_length=cycle_length,
                                           partition_type=selection.PartitionType.INDEPENDENT)


def train(data, random_state, *, noise_multiplier, l2_clip_norm, steps, sampling="poisson", sampling_prob=1.0,
          batch_size=1, truncated_batch_size=None, cycle_length=1, **_claim_options):
    """T steps of DP-SGD with the library's pieces: the batch selection strategy's ``batch_iterator``
    (Poisson with cycles and truncation, or fixed size), ``clipped_grad`` of :func:`loss` and
    ``gaussian_privatizer`` with stddev σ·C.  The release is the T noisy sums (rows are scalar gradients)."""
    rng = np.random.default_rng(int(random_state.randint(2**31)))
    sampler = _sampler(sampling, steps, sampling_prob, batch_size, truncated_batch_size, cycle_length)
    grad_fn = _grad_fn(1, l2_clip_norm=l2_clip_norm)
    privatizer = jax_privacy.noise_addition.gaussian_privatizer(stddev=noise_multiplier * l2_clip_norm,
                                                                  prng_key=int(rng.integers(2**31)))
    state = privatizer.init(jnp.zeros(1))
    out = []
    for indices in sampler.batch_iterator(data.shape[0], rng):
        noisy, state = privatizer.update(_clipped_sum(grad_fn, jnp.zeros(1), data[np.asarray(indices, int)]), state)
        out.append(float(noisy[0]))
    return np.asarray(out)


# -- vectorized paths: the library's clipped sums and privatizer, vmapped over PRNG keys ---------------
_SUMS: dict = {}  # (what, data bytes, options) -> library clipped sums: a chunk of draws reuses them


def _cached(key, compute):
    if key not in _SUMS:
        if len(_SUMS) > 64:
            _SUMS.clear()
        _SUMS[key] = compute()
    return _SUMS[key]


def _subset_table(grad_fn, rows, d):
    """Library clipped sums of every subset of ``rows`` (subset code = bit mask over rows): (2^n, d)."""
    n = rows.shape[0]
    if n > MAX_ROWS:
        raise ValueError(f"a dataset of {n} rows has too many subsets to tabulate (at most {MAX_ROWS} rows)")
    table = np.zeros((1 << n, d), dtype=np.float32)
    for code in range(1 << n):
        chosen = [i for i in range(n) if code >> i & 1]
        table[code] = np.asarray(_clipped_sum(grad_fn, jnp.zeros(d), rows[chosen]))
    return table


@functools.lru_cache(maxsize=32)
def _runner(kind, steps, bands, stddev, updates=0):
    """``f(seeds, sums) -> (size, T, d)``: the privatizer's T updates under jit(vmap) over PRNG keys made
    from the integer ``seeds`` inside the compiled function (so one call costs one dispatch).
    ``kind`` "gaussian" is ``gaussian_privatizer``; "toeplitz" and "banded" stream C⁻¹ (the key is the
    first part of a streaming privatizer's state); "dense" takes C⁻¹ as an array and closes over its
    key, so one privatizer is built per key inside the vmapped function.  ``updates`` (default T)
    is the number of ``update`` calls."""
    noise = jax_privacy.noise_addition
    updates = updates or steps
    if kind == "dense":
        noising = strategy(kind, steps, bands)[1]

        def run(seed, inputs):
            privatizer = noise.matrix_factorization_privatizer(noising, stddev=stddev, prng_key=jax.random.key(seed))
            state, out = privatizer.init(inputs[0]), []
            for t in range(updates):
                noisy, state = privatizer.update(inputs[t], state)
                out.append(noisy)
            return jnp.stack(out)
        return jax.jit(jax.vmap(run))
    privatizer = (noise.gaussian_privatizer(stddev=stddev, prng_key=0) if kind == "gaussian" else
                  noise.matrix_factorization_privatizer(strategy(kind, steps, bands)[1], stddev=stddev, prng_key=0))

    def run(seed, inputs):
        state = (jax.random.key(seed), privatizer.init(inputs[0])[1])
        out = []
        for t in range(updates):
            noisy, state = privatizer.update(inputs[t], state)
            out.append(noisy)
        return jnp.stack(out)
    return jax.jit(jax.vmap(run))


def _noisy(kind, steps, bands, stddev, sums, rng):
    """Releases of the privatizer on ``sums`` (size, updates, d) with fresh keys drawn from ``rng``."""
    size = sums.shape[0]
    seeds = rng.integers(2**31, size=size).astype(np.uint32)
    out = _runner(kind, steps, bands, float(stddev), sums.shape[1])(seeds, np.asarray(sums, dtype=np.float32))
    return np.asarray(out, dtype=np.float64).reshape(size, -1)


def step_batch(data, size, rng, *, noise_multiplier, l2_clip_norm, relation="add-remove", users=0, **clip_options):
    """:func:`step` ``size`` times: the library's clipped sum once, its privatizer's noise under vmap."""
    d = data.shape[1] // max(users, 1)
    grad_fn = _grad_fn(d, users, l2_clip_norm=l2_clip_norm, **clip_options)
    options = (l2_clip_norm, relation, users, tuple(sorted(clip_options.items())))
    total = _cached(("step", data.tobytes(), data.shape, options), lambda: np.asarray(
        _clipped_sum(grad_fn, jnp.zeros(d), data.reshape(data.shape[0], users, d) if users else data)))
    stddev = noise_multiplier * float(grad_fn.sensitivity(_relation(relation)))
    return _noisy("gaussian", 1, 0, stddev, np.broadcast_to(total, (size, 1, d)), rng)


def stream_batch(data, size, rng, *, kind, steps, noise_multiplier, l2_clip_norm, min_sep, max_participations,
                 bands=2, method="minsep", extra_steps=0):
    """:func:`stream` ``size`` times (participation is fixed by the data, so the sums are too)."""
    data = np.ascontiguousarray(data, dtype=np.float64)
    stddev = noise_multiplier * stream_sensitivity(kind, steps, min_sep, max_participations, bands, method) * l2_clip_norm
    updates = steps + extra_steps
    sums = _stream_sums(data.tobytes(), data.shape, l2_clip_norm, updates, min_sep, max_participations)
    return _noisy(kind, steps, bands, stddev, np.broadcast_to(sums, (size, updates, 1)), rng)


def _selection_codes(n, size, steps, rng, *, sampling, sampling_prob, batch_size, truncated_batch_size,
                     cycle_length):
    """(size, steps) subset codes with the law of the library's batch iterators (module docstring):
    Poisson inclusion with probability q in the steps of the row's group (groups uniform and
    independent: ``PartitionType.INDEPENDENT``), truncated to a uniform subset of the allowed size;
    or a uniform subset of fixed size."""
    weights = 1 << np.arange(n)
    group = rng.integers(cycle_length, size=(size, n))
    codes = np.zeros((size, steps), dtype=np.int64)
    for t in range(steps):
        priority = rng.random((size, n))
        if sampling == "fixed":
            included = np.argsort(np.argsort(priority, axis=1), axis=1) < batch_size
        else:
            included = (rng.random((size, n)) < sampling_prob) & (group == t % cycle_length)
            if truncated_batch_size is not None:
                ranks = np.argsort(np.argsort(np.where(included, priority, 2.0), axis=1), axis=1)
                included &= ranks < truncated_batch_size
        codes[:, t] = included @ weights
    return codes


def train_batch(data, size, rng, *, noise_multiplier, l2_clip_norm, steps, sampling="poisson", sampling_prob=1.0,
                batch_size=1, truncated_batch_size=None, cycle_length=1, **_claim_options):
    """:func:`train` ``size`` times: batch selection drawn with the iterators' law, the library's clipped
    sums of the chosen subsets, the library's privatizer under vmap."""
    grad_fn = _grad_fn(1, l2_clip_norm=l2_clip_norm)
    table = _cached(("train", data.tobytes(), data.shape, l2_clip_norm), lambda: _subset_table(grad_fn, data, 1))
    codes = _selection_codes(data.shape[0], size, steps, rng, sampling=sampling, sampling_prob=sampling_prob,
                             batch_size=batch_size, truncated_batch_size=truncated_batch_size,
                             cycle_length=cycle_length)
    return _noisy("gaussian", steps, 0, noise_multiplier * l2_clip_norm, table[codes], rng)


# -- the execution plan: BandMFExecutionPlanConfig's own clipped_grad, batch law and privatizer -------------
@functools.lru_cache(maxsize=8)
def _plan(num_bands, iterations, epsilon, delta, sampling_prob, l2_clip_norm, relation):
    """``BandMFExecutionPlanConfig(...).plan``: ``relation`` "zero-out" keeps the default accountant
    (PLD, REPLACE_SPECIAL, equal-split groups); "add-remove" passes a PLD accountant under add/remove
    with independent groups, as the config's docstring requires."""
    import dp_accounting

    plan_module = importlib.import_module("jax_privacy.experimental.execution_plan")
    selection = jax_privacy.batch_selection
    options = {}
    if relation == "add-remove":
        options = {"accountant": dp_accounting.pld.PLDAccountant(_relation("add-remove")),
                   "partition_type": selection.PartitionType.INDEPENDENT}
    strategy_coefs = [1.0] if num_bands == 1 else None
    common = dict(iterations=iterations, epsilon=epsilon, delta=delta, sampling_prob=sampling_prob,
                  l2_clip_norm=l2_clip_norm, **options)
    config = (plan_module.BandMFExecutionPlanConfig(strategy=np.asarray(strategy_coefs), **common)
              if strategy_coefs else plan_module.BandMFExecutionPlanConfig.default(num_bands=num_bands, **common))
    return config.plan


def plan(data, random_state, *, num_bands, iterations, epsilon, delta, sampling_prob, l2_clip_norm,
         relation="zero-out"):
    """T = ``iterations`` steps of ``BandMFExecutionPlanConfig(...).plan`` as its docstring's pseudo-code
    runs it: ``batch_selection_strategy.batch_iterator``, ``clipped_grad(loss)``, then
    ``noise_addition_transform.update``.  The release is the T noisy sums."""
    dp_plan = _plan(num_bands, iterations, epsilon, delta, sampling_prob, l2_clip_norm, relation)
    rng = np.random.default_rng(int(random_state.randint(2**31)))
    grad_fn = dp_plan.clipped_grad(loss)
    privatizer = dp_plan.noise_addition_transform
    state = privatizer.init(jnp.zeros(1))
    state = (jax.random.key(int(rng.integers(2**31))),) + tuple(state[1:])  # a fresh noise key per release
    out = []
    for indices in dp_plan.batch_selection_strategy.batch_iterator(data.shape[0], rng):
        noisy, state = privatizer.update(_clipped_sum(grad_fn, jnp.zeros(1), data[np.asarray(indices, int)]), state)
        out.append(float(noisy[0]))
    return np.asarray(out)


def plan_batch(data, size, rng, *, num_bands, iterations, epsilon, delta, sampling_prob, l2_clip_norm,
               relation="zero-out"):
    """:func:`plan` ``size`` times: the plan's groups and Poisson inclusions drawn with the law its
    ``CyclicPoissonSampling`` documents, the plan's clipped sums of each subset, the plan's privatizer
    under vmap over keys."""
    dp_plan = _plan(num_bands, iterations, epsilon, delta, sampling_prob, l2_clip_norm, relation)
    table = _cached(("plan", data.tobytes(), data.shape, num_bands, iterations, epsilon, sampling_prob, l2_clip_norm,
                     relation), lambda: _subset_table(dp_plan.clipped_grad(loss), data, 1))
    codes = _selection_codes(data.shape[0], size, iterations, rng, sampling="poisson", sampling_prob=sampling_prob,
                             batch_size=1, truncated_batch_size=None, cycle_length=num_bands)
    privatizer = dp_plan.noise_addition_transform

    def run(key, inputs):
        state = (key,) + tuple(privatizer.init(inputs[0])[1:])
        out = []
        for t in range(iterations):
            noisy, state = privatizer.update(inputs[t], state)
            out.append(noisy)
        return jnp.stack(out)

    keys = jax.random.split(jax.random.key(int(rng.integers(2**31))), size)
    return np.asarray(jax.jit(jax.vmap(run))(keys, jnp.asarray(table[codes])), dtype=np.float64).reshape(size, -1)
