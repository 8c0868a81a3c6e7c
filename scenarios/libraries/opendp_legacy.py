"""The OpenDP catalogue for releases before ``opendp.prelude`` (0.3 to 0.7): the same library name,
swept through the API those releases have.

Releases 0.3–0.7 build measurements from ``opendp.meas`` (``opendp.measurements`` in 0.7) with a
carrier domain string (``D="AllDomain<f64>"``) instead of domain objects, behind
``enable_features("contrib", "floating-point")``.  A case's claim is the release's own statement,
never a formula of ours: from 0.5 the privacy map ``map(d_in)`` read by its output measure (ε,
ρ for the zCDP Gaussian of 0.5–0.7, an ε(δ) curve at δ₀ = 1e-6); in 0.3 and 0.4, which have no map, the
smallest ε (at δ₀ for a smoothed measure) that ``check(d_in, d_out)`` accepts, by bisection to
1e-9 relative, rounded up (:func:`claimed_epsilon`).

Every row uses the ``coordinates`` statistic, whose bits and grain views read the released double's
pattern: 0.4 releases v + noise rounded in floating point, so the grid of doubles an output lies
on depends on v (Mironov 2012), which no threshold of the value shows.

References
----------
OpenDP 0.4–0.7 documentation (``opendp.meas``, ``Measurement.check``); I. Mironov (2012), "On
significance of the least significant bits for differential privacy", CCS.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import inspect
from functools import partial
from typing import Any, Mapping

import numpy as np

from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import ZCDP, ApproxDP, PureDP, Relation

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, NotInRelease, point_label
from .families import row_pairs, value_pairs
from .registry import register_library

__all__ = ["LIBRARY", "release", "release_counts", "claimed_epsilon", "entries", "public_api"]

REPLACE, ADD_REMOVE = Relation.REPLACE, Relation.ADD_REMOVE
#: δ at which a smoothed (ε(δ), δ) measure is stated as one (ε, δ) claim.
PROFILE_DELTA = 1e-6
#: The smallest ε a claim is read at: a check that accepts it (a stability of 0) claims at least that.
EPSILON_FLOOR = 1e-6


def _module(*names: str):
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    raise ImportError(f"none of {names} imports: OpenDP is older than 0.3, which this catalogue does not know")


if importlib.util.find_spec("opendp") is not None and importlib.util.find_spec("opendp.prelude") is not None:
    # The installed release has the prelude: scenarios.libraries.opendp is its catalogue, and this
    # module's API (opendp.meas, carrier-type strings) is not there.
    raise ModuleNotFoundError("scenarios.libraries.opendp_legacy is the catalogue of OpenDP releases before "
                              "opendp.prelude; the installed release has it (use scenarios.libraries.opendp)",
                              name="opendp.meas")
mod = _module("opendp.mod")
meas = _module("opendp.measurements", "opendp.meas")
trans = _module("opendp.transformations", "opendp.trans")
mod.enable_features("contrib", "floating-point")
_CACHE: dict = {}
#: 0.4 draws float noise in floating point (microseconds a draw); from 0.5 the exact sampler over
#: multiples of 2^-1074 takes about a millisecond, the cost of a call, not of a vectorized batch.
_FAST_FLOATS = not hasattr(mod.Measurement, "map")
# Free the measurements while the interpreter can: 0.4's Measurement.__del__ fails at shutdown.
atexit.register(_CACHE.clear)


# -- builders and one release (their source goes into reproduction scripts: names np, meas, trans) --
def measurement(name, **params):
    """The measurement ``meas.<name>(**params)`` or a chain ``trans.<kind> >> meas.<name>``, built
    once per process."""
    key = (name, repr(sorted(params.items())))
    if key not in _CACHE:
        chain = params.pop("chain", None)
        bounds = params.pop("bounds_in", None)
        size = params.pop("size", None)
        constant = params.pop("constant", None)
        built = getattr(meas, name)(**(dict(params, size=size) if chain == "count_by" else params))
        if chain == "count_by":
            built = trans.make_count_by(size=size, MO=params["MI"], TIA=params["TIK"], TOA=params["TIC"]) >> built
        elif chain == "bounded_sum":
            built = trans.make_bounded_sum(bounds=bounds) >> built
        elif chain == "sized_bounded_mean":
            built = trans.make_sized_bounded_mean(size=size, bounds=bounds) >> built
        elif chain == "sized_bounded_sum":
            built = trans.make_sized_bounded_sum(size=size, bounds=bounds, T="i32") >> built
        elif chain == "lipschitz_float_mul":
            built = trans.make_lipschitz_float_mul(constant, bounds) >> built
        _CACHE[key] = built
    return _CACHE[key]


def release(data, random_state, *, name, input, **params):
    """One release of the OpenDP measurement on ``data`` (OpenDP draws from its own generator:
    ``random_state`` is unused)."""
    values = np.ravel(data)
    arg = {"float": lambda: float(values[0]), "int": lambda: int(values[0]), "bool": lambda: bool(values[0]),
           "floats": lambda: [float(v) for v in values], "ints": lambda: [int(v) for v in values]}[input]()
    return [float(measurement(name, **params)(arg))]


def release_counts(data, random_state, *, keys, **params):
    """One release of a count-by chain on the records ``keys[data[i]]``: each key's released count,
    0 where the key is not released (a released count is above a positive threshold)."""
    out = measurement(**params)([keys[int(v)] for v in np.ravel(data)])
    return [float(out.get(key, 0.0)) for key in keys]


def _batch(params, data, size, rng):
    """``size`` i.i.d. scalar releases at once: the same noise on a vector of ``size`` copies."""
    vector = dict(params, D=params["D"].replace("AllDomain", "VectorDomain<AllDomain") + ">")
    built = measurement(**{k: v for k, v in vector.items() if k != "input"})
    value = float(np.ravel(data)[0])
    out = np.empty(size)
    for start in range(0, size, 1 << 16):
        stop = min(size, start + (1 << 16))
        out[start:stop] = built([value] * (stop - start))
    return out.reshape(size, 1)


# -- claims --------------------------------------------------------------------------------------------
def claimed_epsilon(built, d_in, delta=None) -> float:
    """The smallest ε with ``built.check(d_in, ε)`` (or ``(ε, delta)``) true, by bisection to 1e-9
    relative, rounded up: the release's own claim; :data:`EPSILON_FLOOR` when the release accepts
    that (it then claims at least that much).  Raises ValueError if no ε up to 1e6 passes."""
    def accepts(epsilon: float) -> bool:
        try:
            return bool(built.check(d_in, epsilon if delta is None else (epsilon, delta)))
        except Exception:  # noqa: BLE001 - a release that refuses the distance accepts nothing
            return False
    if accepts(EPSILON_FLOOR):
        return EPSILON_FLOOR
    high = 1.0
    while not accepts(high):
        high *= 2.0
        if high > 1e6:
            raise ValueError(f"the release accepts no ε ≤ 1e6 at d_in = {d_in!r}")
    low = 0.0
    while high - low > 1e-9 * high:
        middle = 0.5 * (low + high)
        low, high = (low, middle) if accepts(middle) else (middle, high)
    return high


def _measure(built, name: str, params: Mapping[str, Any]) -> str:
    """The output measure: the measurement's own (0.7), else the constructor's ``MO`` argument or its
    default (0.5 and 0.6 do not expose it on the measurement)."""
    own = getattr(built, "output_measure", None)
    if own is not None:
        return str(own)
    if "MO" in params:
        return str(params["MO"])
    parameter = inspect.signature(getattr(meas, name)).parameters.get("MO")
    return "" if parameter is None else str(parameter.default)


def _claim(built, d_in, relation: Relation, smoothed: bool, measure: str = ""):
    """The release's claim at ``d_in``: its map read by its output measure, else bisection on ``check``."""
    if not hasattr(built, "map"):
        epsilon = claimed_epsilon(built, d_in, PROFILE_DELTA if smoothed else None)
        return ApproxDP(epsilon, PROFILE_DELTA, relation) if smoothed else PureDP(epsilon, relation)
    value = built.map(d_in)
    if "ZeroConcentrated" in measure:
        return ZCDP(float(value), relation)
    if hasattr(value, "epsilon"):  # an ε(δ) curve (SmoothedMaxDivergence)
        return ApproxDP(float(value.epsilon(PROFILE_DELTA)), PROFILE_DELTA, relation)
    if isinstance(value, (tuple, list)):
        epsilon, delta = (float(v) for v in value)
        return PureDP(epsilon, relation) if delta == 0 else ApproxDP(epsilon, delta, relation)
    return PureDP(float(value), relation)


#: Documented issues these releases have, fixed in 0.5.0 (its changelog).
PRECISION = ("OpenDP 0.5.0 changelog, Security: float Laplace and Gaussian replaced to address precision-based "
             "attacks (Haney et al. 2022); fixed in 0.5.0")
STABILITY = ("OpenDP 0.4.0 changelog, Security: make_base_stability underestimated the sensitivity of queries "
             "(its check divides d_in by n); removed in 0.4.0 for make_base_ptr")
SIZED_SUM = ("OpenDP 0.4.0 changelog, Security: fixed integer truncation issue in the sized bounded sum "
             "privacy relation (its stability (upper - lower)/2 rounds down, to 0 on [0, 1])")
FLOAT_MUL = ("OpenDP 0.6.0 changelog, Fixed: clamping in make_lipschitz_float_mul (#582: 0.5 clamped the constant "
             "to the bounds instead of the value, so with bounds away from zero it released v · clamp(c) unclamped "
             "while its map claims |c|·d_in)")
OPENDP_480 = "opendp/opendp#480 (randomized response on booleans lies with probability (1 - p)/2; fixed by #481 in 0.5.0)"


def _case(entry: str, point: Mapping[str, Any], params: dict, d_in, pairs, *, rows: bool, relation: Relation,
          smoothed: bool = False, batch: bool = False, known: str = "", cost: str | None = None) -> Case:
    build = {k: v for k, v in params.items() if k != "input"}
    try:
        built = measurement(**build)
    except (AttributeError, TypeError) as exc:  # a constructor or argument this release lacks
        raise NotInRelease(f"{params['name']}({', '.join(f'{k}=' for k in build if k != 'name')}): {exc}") from None
    claim = _claim(built, d_in, relation, smoothed, _measure(built, params["name"], build))
    scenario = _scenario.from_pairs(pairs, relation) if rows else _scenario.custom(pairs, relation)
    label = point_label(point)
    mechanism = LibraryRelease(release, params, f"opendp.{entry}({label})", claim, 2,
                               batch=partial(_batch, params) if batch else None, deterministic=False)
    return Case(entry, label, dict(point, d_in=d_in), mechanism, claim, scenario, release, params,
                cost or ("batch" if batch else "query"), statistic="coordinates",
                layout=(("value", None),), known=known)


def _noise(name: str, T: str, smoothed: bool = False):
    carrier = {"float": "f64", "int": "i32"}[T]

    def build(point):
        params = {"name": name, "input": T, "scale": point["scale"], "D": f"AllDomain<{carrier}>"}
        d_in = 1.0 if T == "float" else 1
        values = [(0.0, 1.0, "v vs v + d_in")] + ([(1e15, 1e15 + 1.0, "huge v vs v + d_in")] if T == "float" else [])
        return _case(f"measurements.{name}" + ("" if T == "float" else "[int]"), point, params, d_in,
                     value_pairs(values, 1.0), rows=False, relation=REPLACE, smoothed=smoothed,
                     batch=T == "float", known=PRECISION if T == "float" else "",
                     cost=None if T != "float" or _FAST_FLOATS else "call")
    return build


def _rr_bool(point):
    params = {"name": "make_randomized_response_bool", "input": "bool", "prob": point["prob"]}
    pairs = [(np.array([0.0]), np.array([1.0]), "false vs true")]
    return _case("measurements.make_randomized_response_bool", point, params, 1, pairs, rows=False,
                 relation=REPLACE, known=OPENDP_480)


def _chain(point):
    kind, upper = point["kind"], 1.0
    params = {"name": "make_base_laplace", "input": "floats", "scale": point["scale"], "chain": kind,
              "bounds_in": (0.0, upper)}
    if kind == "sized_bounded_sum":  # integers: 0.3 truncated its stability (upper - lower)/2 to 0 on [0, 1]
        params = {"name": "make_base_geometric", "input": "ints", "scale": point["scale"], "D": "AllDomain<i32>",
                  "chain": kind, "bounds_in": (0, 1), "size": 4}
        pairs = row_pairs([0.0, 0.0, 0.0, 0.0], [([1.0], "last record 0 → 1")], REPLACE)
        return _case("chains.sized", point, params, 2, pairs, rows=True, relation=REPLACE, known=SIZED_SUM)
    if kind == "sized_bounded_mean":
        params["size"] = 4
        pairs = row_pairs([0.0, 0.0, 0.0, 0.0], [([upper], "last record 0 → upper")], REPLACE)
        return _case("chains.sized", point, params, 2, pairs, rows=True, relation=REPLACE)
    pairs = row_pairs([0.2, 0.5, upper], [([upper], "add the upper bound"), ([0.0], "add 0")], ADD_REMOVE) + \
        [(np.zeros((0, 1)), np.array([[upper]]), "empty vs one record")]
    return _case("chains", point, params, 1, pairs, rows=True, relation=ADD_REMOVE)


def _float_mul(point):
    """``make_lipschitz_float_mul(c, (L, U)) >> make_base_laplace``: the value, clamped to [L, U], times c,
    plus Laplace noise; its map claims ``|c|·d_in/scale`` (plus one ulp of ``max(|L|, U)·|c|``).
    Neighbours are values ``d_in = 1`` apart at each bound and across the upper one (clamping must
    absorb a value outside).  0.5 clamped ``c`` instead: with ``0 < c < L`` it released ``L·v``
    unclamped, so at ``c = 1/4`` on ``[1, 4]`` a shift of 1 moves the output by 1, ε = 4 where it claims 1."""
    lower, upper = point["bounds"]
    params = {"name": "make_base_laplace", "input": "float", "scale": point["scale"], "D": "AllDomain<f64>",
              "chain": "lipschitz_float_mul", "constant": point["constant"], "bounds_in": (lower, upper)}
    values = [(lower, lower + 1.0, "lower bound vs + d_in"), (upper - 1.0, upper, "upper bound - d_in vs upper bound"),
              (upper, upper + 1.0, "upper bound vs beyond it")]
    return _case("transformations.make_lipschitz_float_mul", point, params, 1.0, value_pairs(values, 1.0),
                 rows=False, relation=REPLACE, known=FLOAT_MUL, cost="call")


def _stability(point):
    """0.3's stability histogram after ``make_count_by`` on n records (one replaced: symmetric
    distance 2).  Its check accepts ``scale ≥ d_in/(ε n)``, a noise n times too small for counts
    that move by 1: at n = 10, scale 0.2, the two counts that change give ε = 10 where it claims 1."""
    n = point["n"]
    params = {"name": "make_base_stability", "chain": "count_by", "size": n, "scale": point["scale"],
              "threshold": point["threshold"], "MI": "L1Distance<f64>", "TIK": "String", "TIC": "u32"}
    try:
        built = measurement(**params)
    except (AttributeError, TypeError) as exc:
        raise NotInRelease(f"make_base_stability: {exc}") from None
    claim = _claim(built, 2, REPLACE, smoothed=True)
    base = [1.0] * (n // 2 - 1) + [0.0] * (n - n // 2 + 1)
    pairs = row_pairs(base, [([1.0], "last a → b (counts 6/4 → 5/5)")], REPLACE)
    label = point_label(point)
    params = dict(params, keys=("a", "b"))
    mechanism = LibraryRelease(release_counts, params, f"opendp.measurements.make_base_stability({label})", claim, 3,
                               deterministic=False)
    return Case("measurements.make_base_stability", label, dict(point, d_in=2), mechanism, claim,
                _scenario.from_pairs(pairs, REPLACE), release_counts, params, "query", statistic="coordinates",
                layout=(("count of a", None), ("count of b", None)), known=STABILITY)


def entries() -> tuple[Entry, ...]:
    m, t = meas.__name__ + ".", trans.__name__ + "."
    text = "{}: the smallest ε that Measurement.check accepts at d_in, in the installed release"
    return (
        Entry("measurements.make_base_laplace", (m + "make_base_laplace",), "measurement",
              text.format(m + "make_base_laplace"), REPLACE, ({"scale": 1.0}, {"scale": 0.25}),
              _noise("make_base_laplace", "float")),
        Entry("measurements.make_base_gaussian", (m + "make_base_gaussian",), "measurement",
              text.format(m + "make_base_gaussian") + " (at δ = 1e-6; the classical bound these releases use "
              "holds for ε < 1 only, so σ = 6)", REPLACE, ({"scale": 6.0},),
              _noise("make_base_gaussian", "float", smoothed=True)),
        Entry("measurements.make_base_analytic_gaussian", (m + "make_base_analytic_gaussian",), "measurement",
              text.format(m + "make_base_analytic_gaussian") + " (at δ = 1e-6)", REPLACE, ({"scale": 1.0},),
              _noise("make_base_analytic_gaussian", "float", smoothed=True)),
        Entry("measurements.make_base_geometric[int]", (m + "make_base_geometric",), "measurement",
              text.format(m + "make_base_geometric"), REPLACE, ({"scale": 1.0},), _noise("make_base_geometric", "int")),
        Entry("measurements.make_randomized_response_bool", (m + "make_randomized_response_bool",), "measurement",
              text.format(m + "make_randomized_response_bool"), REPLACE, ({"prob": 0.75},), _rr_bool),
        Entry("measurements.make_base_stability", (m + "make_base_stability",), "measurement",
              text.format(t + "make_count_by >> " + m + "make_base_stability") + " (at δ = 1e-6; symmetric "
              "distance 2, one record replaced)", REPLACE, ({"n": 10, "scale": 0.2, "threshold": 3.0},), _stability),
        Entry("chains", (t + "make_bounded_sum",), "combinator",
              text.format(t + "make_bounded_sum >> " + m + "make_base_laplace") + " (symmetric distance 1)",
              ADD_REMOVE, ({"kind": "bounded_sum", "scale": 1.0},), _chain),
        Entry("chains.sized", (t + "make_sized_bounded_mean",), "combinator",
              text.format(t + "make_sized_bounded_mean >> " + m + "make_base_laplace") + " (d_in = 2, one record "
              "replaced)", REPLACE, ({"kind": "sized_bounded_mean", "scale": 0.5},
                                     {"kind": "sized_bounded_sum", "scale": 1.0}), _chain),
        Entry("transformations.make_lipschitz_float_mul", (t + "make_lipschitz_float_mul",), "combinator",
              text.format(t + "make_lipschitz_float_mul >> " + m + "make_base_laplace") + " (|v - v'| = 1; the "
              "constant rescales data bounded at zero and away from it)", REPLACE,
              ({"constant": 0.25, "bounds": (0.0, 4.0), "scale": 0.25},
               {"constant": 0.25, "bounds": (1.0, 4.0), "scale": 0.25}), _float_mul),
    )


def public_api() -> tuple[str, ...]:
    """The measurement constructors of the installed release."""
    return tuple(sorted(f"{meas.__name__}.{n}" for n in dir(meas) if n.startswith("make_")))


_EXCLUDED = {
    f"{meas.__name__}.make_base_ptr": "not yet written: a thresholded map under these releases' API",
    f"{meas.__name__}.make_randomized_response": "not yet written: categorical under these releases' API",
    f"{meas.__name__}.make_base_discrete_laplace": "not yet written",
    f"{meas.__name__}.make_base_discrete_gaussian": "not yet written",
}

LIBRARY = register_library(Library(
    name="opendp", distribution="opendp", entries=entries, public_api=public_api, excluded=_EXCLUDED,
    script_header=("import atexit\n\nimport numpy as np\nimport opendp.mod as mod\n"
                   f"import {meas.__name__} as meas\nimport {trans.__name__} as trans\n\n"
                   'mod.enable_features("contrib", "floating-point")\n_CACHE = {}\n'
                   "atexit.register(_CACHE.clear)  # free the measurements before the interpreter shuts down\n"),
    helpers=(measurement,), seeded=False))
