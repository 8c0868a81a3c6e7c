"""Reproduce: jax-privacy matrix_factorization_privatizer [kind=dense, steps=6, min_sep=3, max_participations=2, method=fixed_epoch]

The sweep of jax-privacy 2.0.0 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for
matrix_factorization_privatizer [kind=dense, steps=6, min_sep=3, max_participations=2,
method=fixed_epoch], which claims 1-GDP under add-remove: certified epsilon >= 5.601 at delta =
1e-05, at confidence 0.998077 (the sweep's Bonferroni share). Witness pair: add a canary first
taking part in step 6, opposed to the others, clipped.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: noisy sum of step 1, noisy sum of step 2, noisy sum of step 3, noisy sum of step 4, noisy sum of step 5, noisy sum of step 6; each block of capacity c is [size, leading dimension, non-finite count, c values].
output[5] is noisy sum of step 6.

Event: the grain of output[5] (the exponent of the largest power of two dividing it: which grid of doubles the released value lies on) is one of 1 values (EVENT_GRAINS below) (the complement of the audit's certified event: the same test)  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: uncertain: no simple event's excess is certain on the choosing draws;
carrying the audit's certified event.
"""
import importlib
import functools

import numpy as np
import jax
import jax.numpy as jnp
import jax_privacy


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


def _sampler(sampling, steps, sampling_prob, batch_size, truncated_batch_size, cycle_length):
    selection = jax_privacy.batch_selection
    if sampling == "fixed":
        return selection.FixedBatchSampling(batch_size=batch_size, iterations=steps)
    return selection.CyclicPoissonSampling(sampling_prob=sampling_prob, iterations=steps,
                                           truncated_batch_size=truncated_batch_size, cycle_length=cycle_length,
                                           partition_type=selection.PartitionType.INDEPENDENT)


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



release = stream
PARAMS = {'noise_multiplier': 1.0, 'l2_clip_norm': 0.5, 'kind': 'dense', 'steps': 6, 'min_sep': 3, 'max_participations': 2, 'method': 'fixed_epoch'}
D = np.array([[0.0, 0.125], [1.0, 0.125], [2.0, 0.125]])
D_PRIME = np.array([[0.0, 0.125], [1.0, 0.125], [2.0, 0.125], [5.0, -5.0]])  # add a canary first taking part in step 6, opposed to the others, clipped
N = 44772
EPSILON, DELTA = 4.377178095681228, 1e-05  # the library's claim, at its reference delta


EVENT_GRAINS = frozenset([-27])  # the trained grains the audit's certified event leaves out


def grain(value):
    """The exponent g of the largest power of two dividing the double `value` (-inf for 0, nan
    for inf or nan): value = m * 2**e with 0.5 <= |m| < 1, M = |m| * 2**53 its integer significand,
    t the trailing zero bits of M, g = e - 53 + t."""
    value = float(value)
    if value != value or value in (float('inf'), float('-inf')):
        return float('nan')
    if value == 0.0:
        return float('-inf')
    m, e = np.frexp(value)
    significand = int(abs(m) * 2.0 ** 53)
    return e - 53 + ((significand & -significand).bit_length() - 1)


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(6), 1.0)


def event(output):
    return bool(grain(output[5]) in EVENT_GRAINS)


if __name__ == "__main__":
    random_state = np.random.RandomState(2026)
    hits = {name: sum(event(draw(data, random_state)) for _ in range(N)) for name, data in (("D", D), ("D_PRIME", D_PRIME))}
    p, q = hits["D"] / N, hits["D_PRIME"] / N
    print(f"P[event | D] = {p:.4f}  ({hits['D']} of {N} releases)")
    print(f"P[event | D_PRIME] = {q:.4f}  ({hits['D_PRIME']} of {N} releases)")
    allowed = min(1.0, float(np.exp(EPSILON)) * q + DELTA)
    print(f"the claim allows P[event | D] <= e^eps * {q:.4f} + delta = {allowed:.4f}: "
          + ("exceeded" if p > allowed else "not exceeded on these draws"))
    print(f"excess over the claim: {p - allowed:+.4f}")
    # A point estimate on these draws: its standard error says how far from noise it is.  Each
    # frequency's variance is estimated with half a release added to its count, so that it is not 0
    # when every release or none is in the event.
    p_half, q_half = (hits["D"] + 0.5) / (N + 1), (hits["D_PRIME"] + 0.5) / (N + 1)
    error = float(np.sqrt(p_half * (1 - p_half) / N + float(np.exp(2 * EPSILON)) * q_half * (1 - q_half) / N))
    print(f"its standard error: {error:.4f} ({(p - allowed) / error:+.1f} standard errors)")
