"""Reproduce: opendp measurements.threshold [name=make_laplace_threshold, scale=1.0, threshold=5, T=int]

The sweep of opendp 0.16.0 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for
measurements.threshold [name=make_laplace_threshold, scale=1.0, threshold=5, T=int], which
claims (1, 0.00492583)-DP under replace: certified epsilon >= 2.756 at delta = 0.00492583, at
confidence 0.99875 (the sweep's Bonferroni share). Witness pair: new key c with count 1.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: a present, a value, b present, b value, c present, c value; each block of capacity c is [size, leading dimension, non-finite count, c values].
The event reads a weighted sum of the whole vector (W).

Event: float(np.dot(W, output)) >= 0.5595527206347732: a threshold on the weighted sum W of the released vector that the audit chose (the audit's certified event itself)  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: uncertain: no simple event's excess is certain on the choosing draws;
carrying the audit's certified event.
"""
import numpy as np
import opendp.prelude as dp

try:
    import polars as pl  # the Polars entry's release needs it
except ImportError:
    pl = None

dp.enable_features("contrib")
_CACHE = {}


def encode(value, capacity):
    """One released value as ``3 + capacity`` floats: size, leading dimension, number of
    non-finite entries, then the entries (non-finite ones as 0) padded with 0 to ``capacity``.

    ``None`` encodes as size −1.  Entries beyond ``capacity`` are left out; the size records them.
    """
    if value is None:
        return np.concatenate([[-1.0, 0.0, 0.0], np.zeros(capacity)])
    array = np.asarray(value, dtype=np.float64)
    flat = array.ravel()
    finite = np.isfinite(flat)
    body = np.zeros(capacity)
    kept = np.where(finite, flat, 0.0)[:capacity]
    body[:kept.size] = kept
    leading = array.shape[0] if array.ndim else 1
    return np.concatenate([[flat.size, leading, flat.size - np.count_nonzero(finite)], body])


def released(*blocks):
    """Concatenate ``(value, capacity)`` blocks encoded by :func:`encode` into one vector."""
    return np.concatenate([encode(value, capacity) for value, capacity in blocks])


def atom(nan=None, **kwargs):
    """dp.atom_domain(**kwargs), excluding NaN where the release can say so (``nan=`` came in 0.12)."""
    code = dp.atom_domain.__code__
    if nan is not None and "nan" in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]:
        kwargs["nan"] = nan
    return dp.atom_domain(**kwargs)


def scalar_noise(name, scale, T="float", output_measure=None, **extra):
    """dp.m.<name> on one value: atom_domain(T) with absolute_distance(T)."""
    domain = atom(T=T, nan=False) if T == "float" else dp.atom_domain(T=T)
    args = (domain, dp.absolute_distance(T=T)) + ((getattr(dp, output_measure)(),) if output_measure else ())
    return getattr(dp.m, name)(*args, scale=scale, **extra)


def vector_noise(name, scale, metric, T="float", **extra):
    """dp.m.<name> on a vector of values with an l1 / l2 metric."""
    domain = dp.vector_domain(atom(T=T, nan=False) if T == "float" else dp.atom_domain(T=T))
    return getattr(dp.m, name)(domain, getattr(dp, metric)(T=T), scale=scale, **extra)


def canonical(d_in, epsilon, delta):
    """dp.m.make_canonical_noise on one value, calibrated to (epsilon, delta) at d_in."""
    return dp.m.make_canonical_noise(atom(T=float, nan=False), dp.absolute_distance(T=float),
                                     d_in=d_in, d_out=(epsilon, delta))


def threshold(name, scale, limit, measure=None, T="float"):
    """dp.m.<name> (a thresholded noisy histogram) on a map from keys to counts of type ``T``."""
    values = atom(T=float, nan=False) if T == "float" else dp.atom_domain(T=T)
    domain = dp.map_domain(dp.atom_domain(T=str), values)
    inner = dp.l02inf_distance if name == "make_gaussian_threshold" else dp.l01inf_distance
    args = (domain, inner(dp.absolute_distance(T=T))) + ((dp.approximate(getattr(dp, measure)()),) if measure else ())
    return getattr(dp.m, name)(*args, scale=scale, threshold=limit if T == "float" else int(limit))


def selection(name, scale, measure="max_divergence", **extra):
    """dp.m.<name> (noisy max, top-k, Gumbel) on a vector of integer scores with the l∞ metric."""
    domain, metric = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
    if name == "make_report_noisy_max_gumbel":
        return dp.m.make_report_noisy_max_gumbel(domain, metric, scale=scale)
    return getattr(dp.m, name)(domain, metric, getattr(dp, measure)(), scale=scale, **extra)


def quantile(candidates, alpha, scale, upper):
    """dp.m.make_private_quantile on a dataset of values in [0, upper] (add-remove)."""
    domain = dp.vector_domain(atom(bounds=(0.0, upper), nan=False))
    return dp.m.make_private_quantile(domain, dp.symmetric_distance(), dp.max_divergence(), candidates=candidates,
                                      alpha=alpha, scale=scale)


def randomized_response(kind, prob, categories=None, f=None):
    """dp.m.make_randomized_response (categories), _bool, or _bitvec (bits, flip parameter f)."""
    if kind == "categories":
        return dp.m.make_randomized_response(categories, prob=prob)
    if kind == "bool":
        return dp.m.make_randomized_response_bool(prob=prob)
    return dp.m.make_randomized_response_bitvec(dp.bitvector_domain(max_weight=2), dp.discrete_distance(), f=f)


def alp(scale, total_limit, value_limit):
    """dp.m.make_alp_queryable on a map from keys to integer counts (its queryable is asked every key)."""
    domain = dp.map_domain(dp.atom_domain(T=str), dp.atom_domain(T=int))
    return dp.m.make_alp_queryable(domain, dp.l01inf_distance(dp.absolute_distance(T=int)), scale=scale,
                                   total_limit=total_limit, value_limit=value_limit)


def chain(kind, scale, upper=1.0, size=None, noise="laplace"):
    """A transformation on a dataset of values in [0, upper], then noise (dp.t.* >> dp.m.then_*)."""
    sized = {"size": size} if size else {}
    domain = dp.vector_domain(atom(bounds=(0.0, upper), nan=False), **sized)
    then = getattr(dp.m, f"then_{noise}")(scale)
    if kind == "sum":
        return dp.t.make_sum(domain, dp.symmetric_distance()) >> then
    if kind == "mean":
        return dp.t.make_mean(domain, dp.symmetric_distance()) >> then
    if kind == "variance":
        return dp.t.make_variance(domain, dp.symmetric_distance()) >> then
    if kind == "clamp-sum":
        free = dp.vector_domain(atom(T=float, nan=False))
        return dp.t.make_clamp(free, dp.symmetric_distance(), bounds=(0.0, upper)) >> dp.t.then_sum() >> then
    if kind == "count":
        return dp.t.make_count(dp.vector_domain(atom(T=float, nan=False)), dp.symmetric_distance()) >> \
            dp.m.then_laplace(scale)
    if kind == "count-by-categories":
        return dp.t.make_count_by_categories(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance(),
                                             categories=[0, 1, 2]) >> getattr(dp.m, f"then_{noise}")(scale)
    raise ValueError(f"unknown chain {kind!r}")


def combined(kind, scale, delta=1e-6):
    """A combinator around dp.m.make_laplace / make_gaussian on one value (dp.c.*)."""
    lap, gauss = scalar_noise("make_laplace", scale), scalar_noise("make_gaussian", scale)
    if kind == "zCDP_to_approxDP":
        return dp.c.make_zCDP_to_approxDP(gauss)
    if kind == "fix_delta":
        return dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), delta)
    if kind == "fixed_approxDP_to_approxDP":
        return dp.c.make_fixed_approxDP_to_approxDP(dp.c.make_fix_delta(dp.c.make_zCDP_to_approxDP(gauss), delta))
    if kind == "pureDP_to_zCDP":
        return dp.c.make_pureDP_to_zCDP(lap)
    if kind == "approximate":
        return dp.c.make_approximate(lap)
    if kind == "composition":
        return dp.c.make_composition([lap, lap])
    if kind == "basic_composition":
        return dp.c.make_basic_composition([lap, scalar_noise("make_laplace", 2 * scale)])
    raise ValueError(f"unknown combinator {kind!r}")


def measurement(builder, **params):
    """The measurement ``builder(**params)``, built once per process (building is slow)."""
    key = (builder, repr(sorted(params.items())))
    if key not in _CACHE:
        _CACHE[key] = globals()[builder](**params)
    return _CACHE[key]


def convert(data, kind, categories=None):
    """The measurement's input from the row vector ``data``."""
    values = np.ravel(data)
    if kind == "value":
        return float(values[0])
    if kind == "int":
        return int(values[0])
    if kind == "floats":
        return [float(v) for v in values]
    if kind == "ints":
        return [int(v) for v in values]
    if kind == "category":
        return categories[int(values[0])]
    if kind == "bool":
        return bool(values[0])
    if kind == "bits":
        return np.packbits(values.astype(bool))
    if kind == "map":  # count of key i, or absent when negative
        return {key: float(v) for key, v in zip(("a", "b", "c"), values) if v >= 0}
    if kind == "int-map":
        return {key: int(v) for key, v in zip(("a", "b", "c"), values) if v >= 0}
    raise ValueError(f"unknown input kind {kind!r}")


def flatten(out, kind, categories=None):
    """The release as a vector: a value, a list (its size and values), a map over the keys a, b, c
    (present?, value), a category's number, or the bits of a bit vector."""
    if kind == "value":
        return [float(out)]
    if kind == "list":
        return released((out, 4))
    if kind == "map":
        return [x for key in ("a", "b", "c") for x in ((1.0, float(out[key])) if key in out else (0.0, 0.0))]
    if kind == "queryable":
        return [float(out(key)) for key in ("a", "b", "c")]
    if kind == "category":
        return [float(categories.index(out))]
    if kind == "bits":
        return np.unpackbits(np.frombuffer(bytes(out), dtype=np.uint8))[:8].astype(float)
    raise ValueError(f"unknown output kind {kind!r}")


def group_by_sum(keys, scale, max_length):
    """``make_private_lazyframe`` of ``group_by(A).agg(dp.sum(B in [0, 1]))`` right-joined on the key
    set ``0..keys-1``, with Laplace noise of ``scale`` and at most ``max_length`` records a key.
    Builds the margin with whichever API the release has: ``Margin(max_length=)`` (0.15 on),
    ``Margin(max_partition_length=)`` (0.13, 0.14), ``with_margin(by=, ...)`` (0.11, 0.12)."""
    domain = dp.lazyframe_domain([dp.series_domain("A", dp.atom_domain(T=dp.u32)),
                                  dp.series_domain("B", dp.atom_domain(T=float))])
    if "by" in dp.with_margin.__code__.co_varnames:
        domain = dp.with_margin(domain, by=["A"], max_partition_length=max_length)
    else:
        try:
            domain = dp.with_margin(domain, dp.polars.Margin(by=["A"], max_length=max_length))
        except TypeError:
            domain = dp.with_margin(domain, dp.polars.Margin(by=["A"], max_partition_length=max_length))
    frame = pl.LazyFrame({"A": pl.Series([], dtype=pl.UInt32), "B": pl.Series([], dtype=pl.Float64)})
    public = pl.LazyFrame({"A": pl.Series(range(keys), dtype=pl.UInt32)})
    plan = (frame.group_by("A").agg(pl.col("B").fill_nan(0.0).fill_null(0.0).dp.sum((0.0, 1.0)))
            .join(public, on="A", how="right"))
    return dp.m.make_private_lazyframe(domain, dp.symmetric_distance(), dp.max_divergence(), plan,
                                       global_scale=scale)


def release(data, random_state, *, builder, input, output, categories=None, **params):
    """One release of the OpenDP measurement ``builder(**params)`` on ``data`` (OpenDP draws from
    its own generator: ``random_state`` is unused)."""
    meas = measurement(builder, **({"categories": categories} if builder == "randomized_response" else {}), **params)
    return flatten(meas(convert(data, input, categories)), output, categories)



release = release
PARAMS = {'builder': 'threshold', 'input': 'int-map', 'output': 'map', 'name': 'make_laplace_threshold', 'scale': 1.0, 'limit': 5, 'T': 'int'}
D = np.array([20.0, 3.0, -1.0])
D_PRIME = np.array([20.0, 3.0, 1.0])  # new key c with count 1
N = 20000
EPSILON, DELTA = 1.0, 0.004925833956035741  # the library's claim, at its reference delta


W = np.array([0.0, -0.008459294356186229, 1.3627737442092214, -0.13534928154135564, 12.915580006710163, -0.0070692825580662005, 0.0])  # the audit's Fisher discriminant


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(6), 1.0)


def event(output):
    return bool(float(np.dot(W, output)) >= 0.5595527206347732)


if __name__ == "__main__":
    random_state = None  # the library draws from its own generator
    hits = {name: sum(event(draw(data, random_state)) for _ in range(N)) for name, data in (("D", D), ("D_PRIME", D_PRIME))}
    p, q = hits["D_PRIME"] / N, hits["D"] / N
    print(f"P[event | D_PRIME] = {p:.4f}  ({hits['D_PRIME']} of {N} releases)")
    print(f"P[event | D] = {q:.4f}  ({hits['D']} of {N} releases)")
    allowed = min(1.0, float(np.exp(EPSILON)) * q + DELTA)
    print(f"the claim allows P[event | D_PRIME] <= e^eps * {q:.4f} + delta = {allowed:.4f}: "
          + ("exceeded" if p > allowed else "not exceeded on these draws"))
    print(f"excess over the claim: {p - allowed:+.4f}")
    # A point estimate on these draws: its standard error says how far from noise it is.  Each
    # frequency's variance is estimated with half a release added to its count, so that it is not 0
    # when every release or none is in the event.
    p_half, q_half = (hits["D_PRIME"] + 0.5) / (N + 1), (hits["D"] + 0.5) / (N + 1)
    error = float(np.sqrt(p_half * (1 - p_half) / N + float(np.exp(2 * EPSILON)) * q_half * (1 - q_half) / N))
    print(f"its standard error: {error:.4f} ({(p - allowed) / error:+.1f} standard errors)")
