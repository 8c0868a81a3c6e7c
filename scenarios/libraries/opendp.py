"""The OpenDP catalogue: every measurement constructor usable from Python on float or integer
inputs, the chains that feed them from a dataset, and the combinators.

OpenDP attaches its claim to the measurement: the privacy map evaluated at the input distance
``d_in`` that the input metric assigns to neighbours.  Each case's claim is that map's value, read
from the installed release (``measurement.map(d_in)``):

===============================  ==============================================================
output measure                   claim audited
===============================  ==============================================================
``max_divergence``               ε-DP, ε = map(d_in)
``zero_concentrated_divergence`` ρ-zCDP, ρ = map(d_in)
``approximate(max_divergence)``  (ε, δ)-DP, (ε, δ) = map(d_in)
``smoothed_max_divergence``      (ε(δ₀), δ₀)-DP at δ₀ = 1e-6, a point of the profile map(d_in)
``approximate(zCDP)``            (ρ, δ) stated as (ρ + 2√(ρ ln(1/δ₀)), δ + δ₀)-DP (Bun & Steinke
                                 2016, Prop. 1.3): weaker than the claim, so never a false refutation
===============================  ==============================================================

The neighbour relation is the input metric's: ``symmetric_distance`` with d_in = 1 is add-remove,
d_in = 2 on sized data is replace; an ``absolute_distance``, ``l1``/``l2``/``linf`` or
``discrete_distance`` input is a pair of values within d_in, vouched for by this catalogue.

OpenDP draws from its own cryptographically secure generator, which cannot be seeded: these rows
are reproducible in distribution only.  The plain noise measurements get a vectorized path (the
same measurement on a vector of copies of the value, whose coordinates are i.i.d. draws of the
scalar release), and the thresholded histograms one on disjoint copies of the map, whose keys are
noised and thresholded independently; every other release is one OpenDP call.  The integer
thresholded histogram's claim leaves out the atom at the threshold (opendp/opendp#2922).

References
----------
The OpenDP Library, docs.opendp.org (the constructors' docstrings and proof documents of the
installed release); Bun & Steinke (2016), "Concentrated differential privacy", Prop. 1.3.
"""

from __future__ import annotations

import importlib.metadata
import math
import warnings
from fractions import Fraction
from functools import partial
from typing import Any, Mapping

import numpy as np

from mechanisms.adapters._extra import require
from mechanisms.adapters.released import LibraryRelease, encode, released
from mechanisms.claims import ApproxDP, PureDP, Relation, ZCDP

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, NotInRelease, release_numbers
from .families import HUGE, row_pairs, value_pairs
from .opendp_polars import group_by_sum, lazyframe_entry
from .registry import register_library

dp = require("opendp.prelude", library="opendp")
dp.enable_features("contrib")

__all__ = ["LIBRARY", "release", "measurement", "convert", "flatten"]

REPLACE, ADD_REMOVE = Relation.REPLACE, Relation.ADD_REMOVE
#: The release line whose API this catalogue is written against.
CATALOGUE_RELEASE = "0.16."


def _installed_release() -> str:
    try:
        return importlib.metadata.version("opendp")
    except importlib.metadata.PackageNotFoundError:
        return ""
#: δ at which a profile (smoothed max divergence) is stated as one (ε, δ) claim.
PROFILE_DELTA = 1e-6
_CACHE: dict = {}
_KEYS = ("a", "b", "c")


# -- builders: each returns an OpenDP measurement (their source goes into reproduction scripts) -----
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


# -- one release (its source goes into reproduction scripts: names np and dp only) -----------------
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


def release(data, random_state, *, builder, input, output, categories=None, **params):
    """One release of the OpenDP measurement ``builder(**params)`` on ``data`` (OpenDP draws from
    its own generator: ``random_state`` is unused)."""
    meas = measurement(builder, **({"categories": categories} if builder == "randomized_response" else {}), **params)
    return flatten(meas(convert(data, input, categories)), output, categories)


def _batch(builder, params, data, size, rng):
    """``size`` i.i.d. scalar releases at once: the vector form of the same noise on ``size`` copies."""
    meas = measurement(builder, **params)
    value = (int if params.get("T") == "int" else float)(np.ravel(data)[0])
    out = np.empty(size)
    for start in range(0, size, 1 << 16):
        stop = min(size, start + (1 << 16))
        out[start:stop] = meas([value] * (stop - start))
    return out.reshape(size, 1)


def _threshold_batch(params, data, size, rng):
    """``size`` thresholded releases at once: one call on ``size`` disjoint copies of the map (keys
    a0, b0, c0, a1, ...).  OpenDP noises and thresholds every key on its own, so copy i's keys are
    distributed as one release of the map (``random_state`` is unused, as in :func:`release`)."""
    meas = measurement(**{k: v for k, v in params.items() if k not in ("input", "output")})
    cast = int if params.get("T") == "int" else float
    values = [(key, cast(v)) for key, v in zip(_KEYS, np.ravel(data)) if v >= 0]
    out = np.zeros((size, 2 * len(_KEYS)))
    for start in range(0, size, 1 << 14):
        stop = min(size, start + (1 << 14))
        noisy = meas({f"{key}{i}": v for i in range(start, stop) for key, v in values})
        for i in range(start, stop):
            for j, key in enumerate(_KEYS):
                value = noisy.get(f"{key}{i}")
                if value is not None:
                    out[i, 2 * j:2 * j + 2] = (1.0, float(value))
    return out


#: Batched releases, and their cost class: a thresholded map costs about 0.1 ms a key in OpenDP itself.
_BATCHES = {"threshold": (_threshold_batch, "call")}


# -- claims and cases ------------------------------------------------------------------------------
def _claim(meas, d_in, relation: Relation):
    """The claim of ``meas`` at ``d_in``: its privacy map, read by its output measure (module table)."""
    measure = str(meas.output_measure)
    value = meas.map(d_in)
    if measure.startswith("MaxDivergence"):
        return PureDP(float(value), relation)
    if measure.startswith("ZeroConcentratedDivergence"):
        return ZCDP(float(value), relation)
    if measure.startswith("Approximate(MaxDivergence") or measure.startswith("FixedSmoothedMaxDivergence"):
        epsilon, delta = (float(v) for v in value)
        return PureDP(epsilon, relation) if delta == 0 else ApproxDP(epsilon, delta, relation)
    if measure.startswith("SmoothedMaxDivergence"):
        return ApproxDP(float(value.epsilon(PROFILE_DELTA)), PROFILE_DELTA, relation)
    if measure.startswith("Approximate(ZeroConcentratedDivergence"):
        rho, delta = (float(v) for v in value)
        epsilon = rho + 2 * math.sqrt(rho * math.log(1 / PROFILE_DELTA))
        return ApproxDP(epsilon, min(delta + PROFILE_DELTA, 0.5), relation)
    raise ValueError(f"no claim type for OpenDP measure {measure!r}")


def _case(entry: str, point: Mapping[str, Any], params: Mapping[str, Any], d_in, pairs, *, width: int,
          rows: bool, relation: Relation, batch=None, layout=(), known: str = "", cost=None) -> Case:
    try:
        with warnings.catch_warnings():  # a deprecated constructor (the Gumbel noisy max) is still audited
            warnings.simplefilter("ignore", DeprecationWarning)
            meas = measurement(**{k: v for k, v in params.items() if k not in ("input", "output")})
        claim = _claim(meas, d_in, relation)
    except (TypeError, AttributeError, dp.OpenDPException) as exc:
        # Another release than the one this catalogue follows: a constructor, argument or domain it
        # lacks is not in this release.  On that release itself, it is our error and is raised.
        if _installed_release().startswith(CATALOGUE_RELEASE):
            raise
        text = str(exc).strip().splitlines()
        raise NotInRelease(f"{params.get('builder')}({params.get('name', '')}): {type(exc).__name__}: "
                           f"{text[0] if text else ''}") from None
    scenario = _scenario.from_pairs(pairs, relation) if rows else _scenario.custom(pairs, relation)
    label = ", ".join(f"{k}={v!r}".replace("'", "") for k, v in point.items())
    mechanism = LibraryRelease(release, params, f"opendp.{entry}({label})", claim, width + 1, batch=batch,
                               deterministic=False)
    return Case(entry, label, dict(point, d_in=d_in), mechanism, claim, scenario, release, params,
                cost or ("batch" if batch else "query"), statistic="coordinates", layout=layout,
                known=known)


def _noise_entry(name: str, grid, *, T="float", measure=None, vector=None, known=lambda point: "") -> Entry:
    """The noise ``name`` on one value; with ``vector`` (the vector form's metric), a row draws its
    releases as one call on a vector of copies (``batch`` cost), integer noise included."""
    entry = f"measurements.{name}" + ("" if T == "float" else "[int]")

    def build(point):
        scale = point["scale"]
        params = {"builder": "scalar_noise", "input": "value" if T == "float" else "int", "output": "value",
                  "name": name, "scale": scale, **({"T": T} if T != "float" else {}),
                  **({"output_measure": measure} if measure else {}),
                  **({"bounds": point["bounds"]} if "bounds" in point else {})}
        d_in = 1.0 if T == "float" else 1
        lo = point.get("bounds", (0, 0))[0]
        pairs = value_pairs([(lo, lo + d_in, "v vs v + d_in"), (1e15, 1e15 + d_in, "huge v vs v + d_in")]
                            if T == "float" and "bounds" not in point else [(lo, lo + d_in, "v vs v + d_in")], d_in)
        batch = None
        if vector:
            batch = partial(_batch, "vector_noise", {"name": name, "scale": scale, "metric": vector,
                                                     **({"T": T} if T != "float" else {})})
            pairs = value_pairs([(0.0, 1.0, "v vs v + d_in")], 1.0) if T == "float" else pairs
        return _case(entry, point, params, d_in, pairs, width=1, rows=False, relation=REPLACE, batch=batch,
                     layout=(("value", None),), known=known(point))
    text = (f"opendp.measurements.{name}: the privacy map of the measurement at d_in (absolute distance of the "
            "input value), as the installed release computes it")
    return Entry(entry, (f"opendp.measurements.{name}",), "measurement", text, REPLACE, tuple(grid), build)


def _params_entry(entry: str, api: str, grid, make, text: str, relation: Relation = REPLACE, kind="measurement",
                  known=lambda point: "") -> Entry:
    """An entry whose cases ``make(point) -> (params, d_in, pairs, width, rows, layout)`` describes;
    ``known(point)`` names a documented issue the point exercises."""
    def build(point):
        params, d_in, pairs, width, rows, layout = make(point)
        batch, cost = _BATCHES.get(params["builder"], (None, None))
        return _case(entry, point, params, d_in, pairs, width=width, rows=rows, relation=relation, layout=layout,
                     known=known(point), batch=batch and partial(batch, params), cost=cost)
    return Entry(entry, (api,) if isinstance(api, str) else tuple(api), kind, text, relation, tuple(grid), build)


def _threshold(point):
    integer = point.get("T") == "int"
    params = {"builder": "threshold", "input": "int-map" if integer else "map", "output": "map", "name": point["name"],
              "scale": point["scale"], "limit": point["threshold"],
              **({"measure": point["measure"]} if "measure" in point else {}), **({"T": "int"} if integer else {})}
    base = np.array([20.0, 3.0, -1.0])
    pairs = [(base, np.array([20.0, 3.0, 1.0]), "new key c with count 1"),
             (base, np.array([20.0, 4.0, -1.0]), "count of b + 1"),
             (np.array([-1.0, -1.0, -1.0]), np.array([-1.0, -1.0, 1.0]), "empty map vs one key")]
    return params, (1, 1, 1) if integer else (1, 1.0, 1.0), pairs, 6, False, \
        tuple((f"{k} {what}", None) for k in _KEYS for what in ("present", "value"))


#: opendp/opendp#2922 (open, 2026-09-18): the thresholded mechanisms release a count equal to the
#: threshold, but their δ counts only the noise's tail beyond it.  On integer counts that atom has
#: probability of the order of δ itself.
OPENDP_2922 = "opendp/opendp#2922"


#: opendp/opendp#2707 (fixed by #2708, released in 0.15.0): the bit-vector randomized response
#: sampled one flip bit too few, so the last bit was released as it is.
OPENDP_2707 = "opendp/opendp#2707 (bit-vector randomized response leaves the last bit unprotected; fixed in 0.15.0)"


#: opendp/opendp#2638 (fixed by #2639 in 0.14.2): the Bernoulli(exp(−x)) sampler under the discrete
#: noise formed x/k, x = a/b, with dashu's RBig / UBig, which gave (a/g)/(⌊b/g⌋·k), g = gcd(a, k)
#: (cmpute/dashu#57); at scale 3, P(Y = 2)/P(Y = 3) = e^0.504 against e^(1/3) (fixed-violations.md).
OPENDP_2638 = "opendp/opendp#2638 (biased Bernoulli(exp(−x)) sampler under the discrete noise; fixed in 0.14.2)"


def _before(fixed: str, mark: str) -> str:
    """``mark`` on the installed release when it is older than ``fixed``, else "": a known issue is
    named only on the releases that have it.  Releases compare by their numeric release segment,
    padded with zeros ("0.15" is "0.15.0"), so a post, local, pre- or development release counts as
    the release it is numbered for ("0.14.2.post1", "0.15.0rc1", "0.14.2.dev0" are 0.14.2 and
    0.15.0, :func:`~scenarios.libraries.catalogue.release_numbers`); an unreadable installed release
    keeps the mark."""
    installed, target = release_numbers(_installed_release()), release_numbers(fixed)
    if not installed:
        return mark
    width = max(len(installed), len(target))
    return mark if installed + (0,) * (width - len(installed)) < target + (0,) * (width - len(target)) else ""


def _biased_by_2638(point) -> str:
    """The integer Laplace points whose scale, as a reduced fraction s/t, has s ≥ 3: the sampler
    then meets x = (s − 1)/s, in lowest terms, whose numerator s − 1 ≥ 2 shares a factor g > 1 with
    some k ≤ s − 1, where ⌊s/g⌋ < s/g (a scale of 1 or 2 only meets x ∈ {0, 1/2, 1}: no bias)."""
    return OPENDP_2638 if Fraction(point["scale"]).numerator >= 3 else ""


def _selection(point):
    params = {"builder": "selection", "input": "ints", "output": "value" if point["name"] != "make_noisy_top_k"
              else "list", **{k: v for k, v in point.items()}}
    scores = [np.array([0.0, 1.0, 2.0]), np.array([1.0, 0.0, 2.0]), np.array([0.0, 1.0, 1.0])]
    pairs = [(scores[0], scores[1], "top two swap"), (scores[0], scores[2], "top score − 1")]
    width = 1 if params["output"] == "value" else 7
    return params, 1, pairs, width, False, (("index", None),) if width == 1 else (("indices", 4),)


def _quantile(point):
    params = {"builder": "quantile", "input": "floats", "output": "value", "candidates": [0.0, 2.5, 5.0, 7.5, 10.0],
              "alpha": point["alpha"], "scale": point["scale"], "upper": 10.0}
    base = [1.0, 2.0, 6.0, 9.0]
    pairs = row_pairs(base, [([10.0], "add the upper bound"), ([0.0], "add 0")], ADD_REMOVE) + \
        [(np.zeros((0, 1)), np.array([[5.0]]), "empty vs one record")]
    return params, 1, pairs, 1, True, (("quantile", None),)


def _rr(point):
    kind = point["kind"]
    params = {"builder": "randomized_response", "kind": kind, "prob": point.get("prob"), "f": point.get("f"),
              "input": {"categories": "category", "bool": "bool", "bitvec": "bits"}[kind],
              "output": {"categories": "category", "bool": "value", "bitvec": "bits"}[kind],
              **({"categories": ["a", "b", "c"]} if kind == "categories" else {})}
    if kind == "bitvec":
        pairs = [(np.array([1.0, 0, 0, 0, 0, 0, 0, 0]), np.array([0.0, 1, 0, 0, 0, 0, 0, 0]), "bit 0 vs bit 1"),
                 (np.zeros(8), np.array([1.0, 1, 0, 0, 0, 0, 0, 0]), "no bit vs two bits")]
        return params, 1, pairs, 8, False, tuple((f"bit {i}", None) for i in range(8))
    pairs = [(np.array([0.0]), np.array([1.0]), "first vs second value")]
    if kind == "categories":
        pairs.append((np.array([0.0]), np.array([2.0]), "first vs third category"))
    return params, 1, pairs, 1, False, (("output", None),)


def _alp(point):
    params = {"builder": "alp", "input": "int-map", "output": "queryable", "scale": point["scale"],
              "total_limit": 10, "value_limit": 20}
    base = np.array([5.0, 1.0, -1.0])
    pairs = [(base, np.array([5.0, 1.0, 1.0]), "new key c with count 1"),
             (base, np.array([5.0, 2.0, -1.0]), "count of b + 1")]
    return params, (1, 1, 1), pairs, 3, False, tuple((f"estimate of {k}", None) for k in _KEYS)


def _chain(point):
    kind, upper = point["kind"], point.get("upper", 1.0)
    params = {"builder": "chain", "input": "ints" if kind == "count-by-categories" else "floats",
              "output": "list" if kind == "count-by-categories" else "value", **point}
    if kind == "count-by-categories":
        base = [0.0, 1.0, 1.0, 2.0]
        pairs = row_pairs(base, [([0.0], "add a record of category 0"), ([5.0], "add an unknown category")],
                          ADD_REMOVE)
        return params, 1, pairs, 7, True, (("counts", 4),)
    if point.get("size"):
        base = [0.0] * (point["size"] - 1) + [0.0]
        extra = [([upper], "last record 0 → upper")]
        pairs = row_pairs(base, extra, REPLACE)
        return params, 2, pairs, 1, True, (("value", None),)
    base = [0.2, 0.5, upper]
    extra = [([upper], "add the upper bound"), ([0.0], "add 0")]
    if kind == "clamp-sum":
        extra += [([10 * upper], "add a value beyond the bound (clamped)"), ([HUGE], "add 1e300 (clamped)"),
                  ([np.inf], "add +inf (clamped)")]
    pairs = row_pairs(base, extra, ADD_REMOVE) + [(np.zeros((0, 1)), np.array([[upper]]), "empty vs one record")]
    return params, 1, pairs, 1, True, (("value", None),)


def _combined(point):
    kind = point["kind"]
    params = {"builder": "combined", "input": "value", "output": "list" if "composition" in kind else "value",
              **point}
    width = 7 if "composition" in kind else 1
    pairs = value_pairs([(0.0, 1.0, "v vs v + d_in")], 1.0)
    return params, 1.0, pairs, width, False, (("outputs", 4),) if width > 1 else (("value", None),)


def _canonical(point):
    params = {"builder": "canonical", "input": "value", "output": "value", "d_in": 1.0, **point}
    return params, 1.0, value_pairs([(0.0, 1.0, "v vs v + d_in")], 1.0), 1, False, (("value", None),)


def _entries() -> list[Entry]:
    m, c = "opendp.measurements.", "opendp.combinators."
    noise = [
        _noise_entry("make_laplace", [{"scale": 1.0}, {"scale": 0.25}], vector="l1_distance"),
        _noise_entry("make_laplace", [{"scale": 1.0}, {"scale": 3.0}], T="int", vector="l1_distance",
                     known=lambda point: _before("0.14.2", _biased_by_2638(point))),
        _noise_entry("make_gaussian", [{"scale": 1.0}, {"scale": 4.0}], vector="l2_distance"),
        _noise_entry("make_gaussian", [{"scale": 1.0}], T="int"),
        _noise_entry("make_geometric", [{"scale": 1.0, "bounds": (0, 10)}, {"scale": 2.0}], T="int"),
        _noise_entry("make_noise", [{"scale": 1.0}], measure="max_divergence"),
    ]
    text = "opendp.{}: the privacy map of the measurement at d_in, as the installed release computes it"
    return noise + [
        _params_entry("measurements.make_canonical_noise", m + "make_canonical_noise",
                      [{"epsilon": 1.0, "delta": 1e-6}, {"epsilon": 3.0, "delta": 1e-3}], _canonical,
                      text.format("measurements.make_canonical_noise: calibrated to d_out = (ε, δ) at d_in")),
        _params_entry("measurements.threshold", [m + "make_laplace_threshold", m + "make_gaussian_threshold",
                                                 m + "make_noise_threshold"],
                      [{"name": "make_laplace_threshold", "scale": 1.0, "threshold": 8.0},
                       {"name": "make_gaussian_threshold", "scale": 1.0, "threshold": 8.0},
                       {"name": "make_noise_threshold", "scale": 1.0, "threshold": 8.0, "measure": "max_divergence"},
                       {"name": "make_laplace_threshold", "scale": 1.0, "threshold": 5, "T": "int"}],
                      _threshold, text.format("measurements.make_*_threshold: keys whose noisy count passes the "
                                              "threshold; d_in = (l0, l1, l∞) = (1, 1, 1)"),
                      known=lambda point: OPENDP_2922 if point.get("T") == "int" else ""),
        _params_entry("measurements.selection", [m + "make_noisy_max", m + "make_noisy_top_k",
                                                 m + "make_report_noisy_max_gumbel"],
                      [{"name": "make_noisy_max", "scale": 1.0}, {"name": "make_noisy_max", "scale": 1.0,
                                                                   "measure": "zero_concentrated_divergence"},
                       {"name": "make_noisy_top_k", "scale": 1.0, "k": 2}, {"name": "make_report_noisy_max_gumbel",
                                                                          "scale": 1.0}],
                      _selection, text.format("measurements.make_noisy_max / top_k: scores within d_in in l∞")),
        _params_entry("measurements.make_private_quantile", m + "make_private_quantile",
                      [{"alpha": 0.5, "scale": 1.0}, {"alpha": 0.9, "scale": 0.5}], _quantile,
                      text.format("measurements.make_private_quantile (symmetric distance, d_in = 1)"), ADD_REMOVE),
        _params_entry("measurements.randomized_response", [m + "make_randomized_response",
                                                           m + "make_randomized_response_bool",
                                                           m + "make_randomized_response_bitvec"],
                      [{"kind": "categories", "prob": 0.75}, {"kind": "bool", "prob": 0.75},
                       {"kind": "bitvec", "f": 0.5}], _rr,
                      text.format("measurements.make_randomized_response*: any two inputs (discrete distance 1)"),
                      known=lambda point: _before("0.15.0", OPENDP_2707) if point["kind"] == "bitvec" else ""),
        _params_entry("measurements.make_alp_queryable", m + "make_alp_queryable", [{"scale": 1.0}], _alp,
                      text.format("measurements.make_alp_queryable: d_in = (l0, l1, l∞) = (1, 1, 1)")),
        _params_entry("chains", ["opendp.transformations.make_sum", "opendp.transformations.make_mean",
                                 "opendp.transformations.make_variance", "opendp.transformations.make_clamp",
                                 "opendp.transformations.make_count",
                                 "opendp.transformations.make_count_by_categories"],
                      [{"kind": "sum", "scale": 1.0}, {"kind": "clamp-sum", "scale": 1.0},
                       {"kind": "sum", "scale": 1.0, "noise": "gaussian"},
                       {"kind": "mean", "scale": 0.5, "size": 4}, {"kind": "variance", "scale": 0.5, "size": 4},
                       {"kind": "count", "scale": 1.0}, {"kind": "count-by-categories", "scale": 1.0}],
                      _chain, text.format("transformations >> measurements: the chain's privacy map at d_in (1 "
                                          "under the symmetric distance; 2 on sized data, one record replaced)"),
                      ADD_REMOVE, kind="combinator"),
        _params_entry("combinators", [c + "make_zCDP_to_approxDP", c + "make_fix_delta",
                                      c + "make_fixed_approxDP_to_approxDP", c + "make_pureDP_to_zCDP",
                                      c + "make_approximate", c + "make_composition", c + "make_basic_composition"],
                      [{"kind": k, "scale": 1.0} for k in ("zCDP_to_approxDP", "fix_delta", "fixed_approxDP_to_approxDP",
                                                           "pureDP_to_zCDP", "approximate", "composition",
                                                           "basic_composition")],
                      _combined, text.format("combinators: the combined measurement's map at d_in = 1"),
                      kind="combinator"),
    ]


def _missing(exc: Exception) -> None:
    """NotInRelease for an API another release than the catalogue's lacks (on that one, ours: re-raised)."""
    if _installed_release().startswith(CATALOGUE_RELEASE):
        raise exc
    raise NotInRelease(f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}") from None


def entries() -> tuple[Entry, ...]:
    """The whole catalogue (the chains' d_in is 2 on sized data: their scenario is replace)."""
    found = []
    for entry in _entries():
        if entry.name == "chains":  # sized chains are replace, unsized add-remove: split by relation
            found.append(Entry("chains", entry.api, entry.kind, entry.claim_text, ADD_REMOVE,
                               tuple(p for p in entry.grid if not p.get("size")), entry.build))
            found.append(Entry("chains.sized", ("opendp.transformations.make_mean", "opendp.transformations.make_variance"),
                               entry.kind, entry.claim_text, REPLACE, tuple(p for p in entry.grid if p.get("size")),
                               _sized_build))
        else:
            found.append(entry)
    return tuple(found) + (lazyframe_entry(_claim, _missing),)


def _sized_build(point):
    params, d_in, pairs, width, rows, layout = _chain(point)
    return _case("chains.sized", point, params, d_in, pairs, width=width, rows=rows, relation=REPLACE, layout=layout)


def public_api() -> tuple[str, ...]:
    """The measurement constructors ``dp.m.make_*`` and combinators ``dp.c.make_*`` of the installed
    release (the ``then_*`` forms are the same constructors, partially applied)."""
    names = [f"opendp.measurements.{n}" for n in dir(dp.m) if n.startswith("make_") and n != "make_proof_link"]
    names += [f"opendp.combinators.{n}" for n in dir(dp.c) if n.startswith("make_") and n != "make_proof_link"]
    return tuple(sorted(names))


_EXCLUDED = {
    "opendp.measurements.make_user_measurement": "not DP: its privacy map is the user's, not the library's",
    "opendp.measurements.make_private_expr": "not yet written: a Polars expression (needs polars dataframes)",
    "opendp.combinators.make_population_amplification": "not auditable as a black box: the bound assumes the "
                                                        "input is a simple random sample of a larger population",
    "opendp.combinators.make_select_private_candidate": "not yet written",
    "opendp.combinators.make_sequential_composition": "not yet written (an interactive queryable)",
    "opendp.combinators.make_adaptive_composition": "not yet written (an interactive queryable)",
    "opendp.combinators.make_fully_adaptive_composition": "not yet written (an interactive odometer)",
    "opendp.combinators.make_privacy_filter": "not yet written (an interactive odometer)",
    "opendp.combinators.make_chain_mt": "covered through another entry: chains (transformation >> measurement)",
    "opendp.combinators.make_chain_pm": "covered through another entry: chains (a postprocessor >> measurement)",
    "opendp.combinators.make_chain_tt": "covered through another entry: chains (transformation >> transformation)",
}

LIBRARY = register_library(Library(
    name="opendp", distribution="opendp", entries=entries, public_api=public_api, excluded=_EXCLUDED,
    script_header=('import numpy as np\nimport opendp.prelude as dp\n\ntry:\n    import polars as pl  # the Polars entry\'s '
                   'release needs it\nexcept ImportError:\n    pl = None\n\ndp.enable_features("contrib")\n_CACHE = {}\n'),
    helpers=(encode, released, atom, scalar_noise, vector_noise, canonical, threshold, selection, quantile,
             randomized_response, alp, chain, combined, measurement, convert, flatten, group_by_sum),
    seeded=False))
