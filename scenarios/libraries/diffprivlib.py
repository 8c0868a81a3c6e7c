"""The diffprivlib catalogue: every public mechanism, query, model and the accountant of a release.

Each entry states the privacy diffprivlib claims as its docstrings state it (quoted in
``claim_text``) and the neighbour relation its code promises.  diffprivlib's docstrings never name
a relation; its calibrations do:

- the noise primitives randomise one value with the declared ``sensitivity`` Δ: the claim holds for
  any two values within Δ (:func:`~scenarios.libraries.families.value_pairs`, vouched for here);
- the tools ``mean``, ``var``, ``std``, ``sum``, ``count_nonzero``, the quantiles and the models
  calibrate to the range of one record with the dataset's size n treated as public (``(upper −
  lower)/n`` for a mean, ``max − min`` of a monomial for linear regression): the *replace*
  relation;
- the histograms add unit-sensitivity noise to every bin: the *add-remove* relation.

The released vector of a query or a model is everything it returns or holds after ``fit``, public
attributes and the data-derived private ones a pickled model carries (``_obj_coefs`` of linear
regression), flattened by :func:`mechanisms.adapters.released.released` so that a difference in
shape (a label set read from the data) or in non-finite values is an event.

References
----------
Holohan, Braghin, Mac Aonghusa & Levacher (2019), "Diffprivlib: the IBM differential privacy
library", arXiv:1907.02444; the docstrings of diffprivlib 0.6.6 quoted per entry.
"""

from __future__ import annotations

import inspect
import warnings
from functools import partial
from typing import Any, Mapping

import numpy as np

from mechanisms.adapters import diffprivlib as adapters
from mechanisms.adapters._extra import require
from mechanisms.adapters.released import LibraryRelease, encode, released
from mechanisms.claims import ApproxDP, PureDP, Relation

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, NotInRelease, point_label, release_numbers
from .families import HUGE, row_pairs, value_pairs
from .registry import register_library

dpl = require("diffprivlib", library="diffprivlib")
#: The mechanism object of the last release (see :func:`mechanism_object`).
_LAST: dict = {}

__all__ = ["LIBRARY", "randomise", "randomise_label", "select", "eigenvector", "wishart", "query", "histogram_query",
           "fit", "fitted", "compose", "mechanism_object"]

REPLACE, ADD_REMOVE = Relation.REPLACE, Relation.ADD_REMOVE
_CLAIM_MECH = ("diffprivlib.mechanisms.{name} docstring: 'epsilon : Privacy parameter ε for the mechanism'"
               "{delta}; the mechanism is (ε, δ)-DP for inputs within `sensitivity` (DPMechanism docstring)")


# -- release functions (their source goes into reproduction scripts: names np, dpl and warnings only) -------
def seeded(factory, random_state, **kwargs):
    """``factory(random_state=random_state, **kwargs)``, or without ``random_state`` where the
    release takes none (diffprivlib before 0.5 draws from numpy's global generator)."""
    try:
        return factory(random_state=random_state, **kwargs)
    except TypeError as exc:
        if "random_state" not in str(exc):
            raise
        return factory(**kwargs)


def mechanism_object(mechanism, random_state, **kwargs):
    """diffprivlib.mechanisms.<mechanism>(random_state=random_state, **kwargs), built once and reused
    while the parameters and the generator stay the same (as a user calls ``randomise`` repeatedly)."""
    key = (mechanism, repr(sorted(kwargs.items())), id(random_state))
    if _LAST.get("key") != key:
        _LAST.clear()
        _LAST.update(key=key, mech=seeded(getattr(dpl.mechanisms, mechanism), random_state, **kwargs))
    return _LAST["mech"]


def randomise(data, random_state, *, mechanism, value="float", **kwargs):
    """One release of diffprivlib.mechanisms.<mechanism>(**kwargs).randomise(value)."""
    mech = mechanism_object(mechanism, random_state, **kwargs)
    x = np.ravel(data)[0]
    return [mech.randomise(int(x) if value == "int" else float(x))]


def randomise_label(data, random_state, *, mechanism, labels, **kwargs):
    """A categorical mechanism on label number data[0]; the release is the output label's number."""
    mech = mechanism_object(mechanism, random_state, **kwargs)
    return [labels.index(mech.randomise(labels[int(np.ravel(data)[0])]))]


def select(data, random_state, *, mechanism, **kwargs):
    """An exponential-type selection whose utility vector is the (private) data."""
    mech = seeded(getattr(dpl.mechanisms, mechanism), random_state, utility=list(np.ravel(data)), **kwargs)
    return [mech.randomise()]


def eigenvector(data, random_state, *, epsilon, sensitivity):
    """Bingham's private first eigenvector of the symmetric matrix ``data``."""
    mech = seeded(dpl.mechanisms.Bingham, random_state, epsilon=epsilon, sensitivity=sensitivity)
    return mech.randomise(np.asarray(data, dtype=float))


def wishart(data, random_state, *, epsilon, sensitivity):
    """The Wishart mechanism (diffprivlib before 0.5) on the second-moment matrix ``data``, row by row.

    It adds ``G Gᵀ`` with ``G`` a d × (d + 1) matrix of N(0, (Δ / 2ε)²) entries (Jiang, Xie & Zhang
    2016).  It draws from its own ``np.random.default_rng()``, which no argument seeds; that generator
    is replaced by one seeded from ``random_state``, so a sweep repeats.
    """
    with warnings.catch_warnings():  # deprecated in 0.4 with the warning that it is not DP
        warnings.simplefilter("ignore", DeprecationWarning)
        mech = dpl.mechanisms.Wishart(epsilon=epsilon, sensitivity=sensitivity)
    mech._rng = np.random.default_rng(random_state.randint(0, 2**63 - 1, dtype=np.int64))
    return np.ravel(mech.randomise(np.asarray(data, dtype=float)))


def query(data, random_state, *, function, capacity, **kwargs):
    """diffprivlib.tools.<function> on the data's values, everything it returns."""
    out = seeded(partial(getattr(dpl.tools, function), np.ravel(data)), random_state,
                 accountant=dpl.BudgetAccountant(), **kwargs)
    return released((out, capacity))


def histogram_query(data, random_state, *, function, capacity, **kwargs):
    """diffprivlib.tools.histogram / histogram2d / histogramdd: counts and bin edges."""
    if function == "histogram":
        args = (np.ravel(data),)
    else:
        args = (data[:, 0], data[:, 1]) if function == "histogram2d" else (data,)
    out = seeded(partial(getattr(dpl.tools, function), *args), random_state, accountant=dpl.BudgetAccountant(),
                 **kwargs)
    parts = [out[0]] + (list(out[1]) if function == "histogramdd" else list(out[1:]))
    return released(*((part, capacity) for part in parts))


def fitted(model, name):
    """Attribute ``name`` of a fitted model; ``a:i`` is item i of attribute a, ``a.b`` nested."""
    value = model
    for part in name.split("."):
        key, _, index = part.partition(":")
        value = getattr(value, key, None)
        if index and value is not None:
            value = value[int(index)]
    return value


def fit(data, random_state, *, model, attributes, capacity, supervised=True, probe=None, **kwargs):
    """diffprivlib.models.<model>(**kwargs).fit(X[, y]): the listed attributes of the fitted model,
    and its predictions (``predict_proba``) at the fixed ``probe`` points if given."""
    X, y = (data[:, :-1], data[:, -1]) if supervised else (data, None)
    try:
        est = getattr(dpl.models, model)(random_state=random_state, accountant=dpl.BudgetAccountant(), **kwargs)
    except (TypeError, AttributeError):  # releases before `random_state` and the accountant existed
        est = getattr(dpl.models, model)(**kwargs)
    est = est.fit(X, y) if supervised else est.fit(X)
    blocks = [(fitted(est, name), capacity) for name in attributes]
    if probe is not None:
        blocks.append((est.predict_proba(np.asarray(probe, dtype=float)), capacity))
    return released(*blocks)


def compose(data, random_state, *, k, epsilon, slack, sensitivity):
    """k Laplace releases of one value, spent through one BudgetAccountant(slack=slack)."""
    accountant = dpl.BudgetAccountant(slack=slack)
    out = []
    for _ in range(k):
        accountant.spend(epsilon, 0)
        mech = seeded(dpl.mechanisms.Laplace, random_state, epsilon=epsilon, sensitivity=sensitivity)
        out.append(mech.randomise(float(np.ravel(data)[0])))
    return out


# -- building cases --------------------------------------------------------------------------------
#: Parameters of the release functions that are not the library's own.
_OWN = {"mechanism", "value", "labels", "function", "capacity", "model", "attributes", "supervised", "probe"}


def _require_params(entry: str, params: Mapping[str, Any]) -> None:
    """Raise :class:`NotInRelease` when the installed release's mechanism, tool or model takes no
    parameter of that name (an older release: diffprivlib 0.4's Exponential has no ``monotonic``)."""
    module, _, name = entry.partition(".")
    target = getattr(getattr(dpl, module, None), name, None) if module in ("mechanisms", "tools", "models") else None
    if target is None:
        return
    try:
        accepted = inspect.signature(target).parameters
    except (TypeError, ValueError):
        return
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values()):
        return
    missing = [k for k in params if k not in _OWN and k not in accepted]
    if missing:
        raise NotInRelease(f"parameter {', '.join(missing)} of diffprivlib.{entry}")


def _case(entry: str, point: str, release, params: Mapping[str, Any], claim, pairs, *, cost: str, width: int,
          rows: bool, relation: Relation, batch=None, reference=None, known: str = "", layout=()) -> Case:
    _require_params(entry, params)
    scenario = (_scenario.from_pairs(pairs, relation) if rows else _scenario.custom(pairs, relation))
    mechanism = LibraryRelease(release, params, f"diffprivlib.{entry}({point})", claim, width + 1, batch=batch,
                               reference=reference)
    # The coordinates statistic (audit.statistics.coordinates) finds the one coordinate a bug touches
    # in a vector, and reads a float's bit pattern (its low bits, its grain) as well as its value.
    statistic = "coordinates"
    return Case(entry, point, {k: v for k, v in params.items() if k not in ("labels",)}, mechanism, claim, scenario,
                release, params, cost, statistic=statistic, known=known, layout=layout)


def _claim(epsilon: float, delta: float, relation: Relation):
    return PureDP(epsilon, relation) if delta == 0 else ApproxDP(epsilon, delta, relation)


def _primitive(name: str, grid, pairs_of, *, delta_text="", batch_of=None, value="float", cost="call") -> Entry:
    """A noise primitive randomising one value; ``pairs_of(point)`` gives its value pairs."""
    def build(point):
        params = {"mechanism": name, **({"value": value} if value != "float" else {}), **point}
        kwargs = {k: v for k, v in point.items()}
        try:
            adapter = batch_of(point) if batch_of else None
        except (TypeError, ValueError):  # a release the vectorized adapter does not know: one call a draw
            adapter = None
        batch = None if adapter is None else partial(_adapter_batch, adapter)
        eps = point.get("epsilon", 0.0)
        claim = _claim(eps, point.get("delta", 0.0), REPLACE) if eps else ApproxDP(1e-9, point["delta"], REPLACE)
        return _case(f"mechanisms.{name}", point_label(kwargs), randomise, params, claim, pairs_of(point),
                     cost="batch" if batch else cost, width=1, rows=False, relation=REPLACE, batch=batch,
                     reference=getattr(adapter, "reference", None), layout=(("value", None),))
    text = _CLAIM_MECH.format(name=name, delta=delta_text)
    return Entry(f"mechanisms.{name}", (f"diffprivlib.mechanisms.{name}",), "mechanism", text, REPLACE,
                 tuple(grid), build)


def _adapter_batch(adapter, data, size, rng):
    """A vectorized adapter of :mod:`mechanisms.adapters.diffprivlib` on value data[0] ∈ {0, 1}."""
    return adapter(np.full((1, 1), float(np.ravel(data)[0])), size, rng)


def _shift(sensitivity: float, low: float = 0.0):
    """Value pairs at the base value ``low``: a shift by the full sensitivity, both directions."""
    return lambda point: value_pairs([(low, low + point.get("sensitivity", sensitivity), "v vs v + Δ")],
                                     point.get("sensitivity", sensitivity))


def _bounded(point):
    """Values at and next to the domain's bounds, and across the whole domain when it fits in Δ."""
    lo, hi, s = point["lower"], point["upper"], point["sensitivity"]
    pairs = [(lo, min(hi, lo + s), "lower bound vs lower + Δ"), (hi, max(lo, hi - s), "upper bound vs upper − Δ")]
    return value_pairs(pairs, s)


def _mechanism_entries() -> list[Entry]:
    lap = lambda p: adapters.Laplace(p["epsilon"], p.get("delta", 0.0)) if p.get("sensitivity") == 1 else None  # noqa: E731
    gauss = lambda cls: (lambda p: getattr(adapters, cls)(p["epsilon"], p["delta"]) if p.get("sensitivity") == 1 else None)  # noqa: E731
    bounded = [{"epsilon": 1.0, "delta": 0.0, "sensitivity": 1.0, "lower": 0.0, "upper": 2.0},
               {"epsilon": 4.0, "delta": 0.0, "sensitivity": 1.0, "lower": -1.0, "upper": 1.0}]
    entries = [
        _primitive("Laplace", [{"epsilon": 1.0, "delta": 0.0, "sensitivity": 1.0},
                               {"epsilon": 0.1, "delta": 0.0, "sensitivity": 1.0},
                               {"epsilon": 1.0, "delta": 0.1, "sensitivity": 1.0},
                               {"epsilon": 1.0, "delta": 0.0, "sensitivity": 1e-300}],
                   _shift(1.0), delta_text=" and 'delta : ... in [0, 1]'", batch_of=lap),
        _primitive("LaplaceTruncated", bounded, _bounded),
        _primitive("LaplaceFolded", bounded, _bounded),
        _primitive("LaplaceBoundedDomain", bounded, _bounded),
        _primitive("LaplaceBoundedNoise", [{"epsilon": 1.0, "delta": 0.01, "sensitivity": 1.0},
                                           {"epsilon": 0.5, "delta": 0.3, "sensitivity": 1.0}], _shift(1.0),
                   delta_text=" and 'delta ... in (0, 0.5)'",
                   batch_of=lambda p: adapters.LaplaceBoundedNoise(p["epsilon"], p["delta"])),
        _primitive("Gaussian", [{"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0},
                                {"epsilon": 0.2, "delta": 0.1, "sensitivity": 1.0}], _shift(1.0),
                   delta_text=" in (0, 1] and delta in (0, 1]", batch_of=gauss("Gaussian")),
        _primitive("GaussianAnalytic", [{"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0},
                                        {"epsilon": 4.0, "delta": 1e-3, "sensitivity": 1.0}], _shift(1.0),
                   delta_text=" and delta in (0, 1]", batch_of=gauss("GaussianAnalytic")),
        _primitive("GaussianDiscrete", [{"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1},
                                        {"epsilon": 3.0, "delta": 1e-3, "sensitivity": 2}], _shift(1), value="int",
                   delta_text=" and delta in (0, 1]"),
        _primitive("Geometric", [{"epsilon": 1.0, "sensitivity": 1}, {"epsilon": 3.0, "sensitivity": 2}],
                   _shift(1), value="int",
                   batch_of=lambda p: adapters.Geometric(p["epsilon"]) if p["sensitivity"] == 1 else None),
        _primitive("GeometricTruncated", [{"epsilon": 1.0, "sensitivity": 1, "lower": 0, "upper": 2}],
                   _bounded, value="int"),
        _primitive("GeometricFolded", [{"epsilon": 1.0, "sensitivity": 1, "lower": 0, "upper": 2}],
                   _bounded, value="int", cost="query"),  # about 5 ms a release: its folding loop
        _primitive("Snapping", [{"epsilon": 1.0, "sensitivity": 1.0, "lower": 0.0, "upper": 2.0},
                                {"epsilon": 4.0, "sensitivity": 1.0, "lower": -1.0, "upper": 1.0}], _bounded),
        _primitive("Staircase", [{"epsilon": 1.0, "sensitivity": 1.0}, {"epsilon": 4.0, "sensitivity": 1.0}],
                   _shift(1.0)),
        _primitive("Uniform", [{"delta": 0.1, "sensitivity": 1.0}, {"delta": 0.4, "sensitivity": 1.0}], _shift(1.0),
                   delta_text=" (Uniform: ε = 0, 'delta : ... in (0, 0.5]')"),
    ]
    return entries + _selection_entries()


def _selection_entries() -> list[Entry]:
    def select_entry(name):
        def build(point):
            params = {"mechanism": name, **point}
            u = [0.0, 1.0, 2.0]
            pairs = value_pairs_vector([(u, [x + 1.0 for x in u], "all utilities + Δ"),
                                        (u, [1.0, 0.0, 2.0], "top two swap"),
                                        (u, [0.0, 1.0, 1.0], "top utility − Δ")], point["sensitivity"])
            return _case(f"mechanisms.{name}", point_label(point), select, params,
                         PureDP(point["epsilon"], REPLACE), pairs, cost="query", width=1, rows=False, relation=REPLACE,
                         layout=(("candidate index", None),))
        grid = [{"epsilon": 1.0, "sensitivity": 1.0}, {"epsilon": 1.0, "sensitivity": 1.0, "monotonic": True}]
        return Entry(f"mechanisms.{name}", (f"diffprivlib.mechanisms.{name}",), "mechanism",
                     _CLAIM_MECH.format(name=name, delta="") + "; utilities within `sensitivity` per candidate",
                     REPLACE, tuple(grid), build)

    def label_entry(name, labels, extra):
        def build(point):
            params = {"mechanism": name, "labels": labels, **extra, **point}
            pairs = [(np.array([0.0]), np.array([float(j)]), f"{labels[0]} vs {labels[j]}") for j in sorted({1, len(labels) - 1})]
            return _case(f"mechanisms.{name}", point_label(point), randomise_label, params,
                         PureDP(point["epsilon"], REPLACE), pairs, cost="call", width=1, rows=False, relation=REPLACE,
                         layout=(("output label number", None),))
        return Entry(f"mechanisms.{name}", (f"diffprivlib.mechanisms.{name}",), "mechanism",
                     _CLAIM_MECH.format(name=name, delta="") + "; any two input labels", REPLACE,
                     ({"epsilon": 1.0}, {"epsilon": 3.0}), build)

    def bingham_build(point):
        base = np.array([[1.0, 0.0], [0.0, 0.5]])
        pairs = [(base, base + np.array([[0.0, 0.0], [0.0, 1.0]]) * point["sensitivity"], "A vs A + Δ·e2e2ᵀ")]
        return _case("mechanisms.Bingham", point_label(point), eigenvector, point, PureDP(point["epsilon"], REPLACE),
                     pairs, cost="query", width=2, rows=False, relation=REPLACE, layout=(("v[0]", None), ("v[1]", None)))

    def wishart_build(point):
        # Replacing a zero record by x = Δ·e2 adds x xᵀ.  The noise's W[1,1] is (Δ/2ε)² χ²₃ ≥ 0, so
        # the release's W[1,1] − A[1,1] < Δ² has probability P(χ²₃ < (2ε)²) (0.74 at ε = 1) on the
        # first dataset and 0 on the second: a δ no pure claim allows, at every ε.
        base = np.array([[1.0, 0.0], [0.0, 0.5]])
        pairs = [(base, base + np.array([[0.0, 0.0], [0.0, 1.0]]) * point["sensitivity"] ** 2,
                  "A vs A + x xᵀ, x = Δ·e2")]
        return _case("mechanisms.Wishart", point_label(point), wishart, point, PureDP(point["epsilon"], REPLACE),
                     pairs, cost="call", width=4, rows=False, relation=REPLACE,
                     layout=tuple((f"W[{i},{j}]", None) for i in range(2) for j in range(2)),
                     known="IBM/differential-privacy-library#42 (the Wishart mechanism is not DP; removed in 0.5.0)")

    return [select_entry("Exponential"), select_entry("PermuteAndFlip"),
            label_entry("Binary", ["a", "b"], {"value0": "a", "value1": "b"}),
            label_entry("ExponentialCategorical", ["a", "b", "c"],
                        {"utility_list": [["a", "b", 1.0], ["a", "c", 2.0], ["b", "c", 1.0]]}),
            label_entry("ExponentialHierarchical", ["a", "b", "c", "d"], {"hierarchy": [["a", "b"], ["c", "d"]]}),
            Entry("mechanisms.Bingham", ("diffprivlib.mechanisms.Bingham",), "mechanism",
                  _CLAIM_MECH.format(name="Bingham", delta="") + "; covariance matrices within `sensitivity`",
                  REPLACE, ({"epsilon": 1.0, "sensitivity": 1.0}, {"epsilon": 4.0, "sensitivity": 1.0}), bingham_build),
            Entry("mechanisms.Wishart", ("diffprivlib.mechanisms.Wishart",), "mechanism",
                  "diffprivlib.mechanisms.Wishart docstring (0.4): 'The value of epsilon for achieving "
                  "(ε, δ)-differential privacy', with delta fixed at 0, for data of l2-norm within `sensitivity`; "
                  "removed in 0.5.0 as not DP (IBM/differential-privacy-library#42)",
                  REPLACE, ({"epsilon": 1.0, "sensitivity": 1.0},), wishart_build)]


def value_pairs_vector(items, sensitivity):
    """Utility-vector pairs within ``sensitivity`` in every coordinate (checked)."""
    pairs = []
    for u, v, label in items:
        u, v = np.asarray(u, dtype=float), np.asarray(v, dtype=float)
        if np.max(np.abs(u - v)) > sensitivity * (1 + 1e-12):
            raise ValueError(f"pair {label!r} exceeds the sensitivity {sensitivity!r}")
        pairs.append((u, v, label))
    return pairs


# -- tools -----------------------------------------------------------------------------------------
_TOOL_TEXT = ("diffprivlib.tools.{name} docstring: '{what} with differential privacy', 'epsilon : Privacy "
              "parameter ε'; bounds clip the data; replace relation (size n public)")


def _tool_pairs(lo: float, hi: float):
    base = [lo, 0.5 * (lo + hi), hi, lo]
    extra = [([hi], "last row lower → upper"), ([hi + 10 * (hi - lo)], "last row → beyond upper (clipped)"),
             ([HUGE], "last row → 1e300"), ([np.inf], "last row → +inf (clipped to upper)")]
    return row_pairs(base, extra, REPLACE) + [(np.array([[lo]]), np.array([[hi]]), "single record lower vs upper")]


#: Findings no upstream report covers yet; their write-ups, ready to file, are in docs/libraries/diffprivlib.md.
UNREPORTED_NAN = ("not reported upstream: the NaN-aware tools calibrate to the array's size, NaN rows included "
                  "(write-up ready to file in docs/libraries/diffprivlib.md)")
UNREPORTED_KMEANS = ("not reported upstream: KMeans publishes inertia_ and labels_ computed from the training data "
                     "without noise (write-up ready to file in docs/libraries/diffprivlib.md)")
#: The NaN-aware tools whose noise reads ``array.size`` (NaN rows included; nanstd is nanvar's root).
_SIZE_CALIBRATED = ("nanmean", "nanvar", "nanstd")
#: IBM/differential-privacy-library#106: the classifiers read their label set from the data.
ISSUE_106 = "IBM/differential-privacy-library#106 (the label set is read from the data)"
#: IBM/differential-privacy-library#94: the floating-point noise primitives are open to precision-based
#: attacks (Haney et al. 2022): linked to a VIOLATED row whose witness reads a float's bit pattern.
ISSUE_94 = ("IBM/differential-privacy-library#94 (the floating-point noise is open to precision-based attacks: "
            "the released float's bit pattern tells the neighbours apart)")


def _tool(name: str, what: str, grid=None, nan: bool = False, bounds: bool = True) -> Entry:
    def build(point):
        lo, hi = point["bounds"]
        params = {"function": name, "capacity": 2 if "percent" in point else 1, **point}
        if not bounds:  # count_nonzero counts truthy values: its data are {0, 1}, no bounds parameter
            params.pop("bounds")
        pairs = _tool_pairs(lo, hi)
        rows = True
        if point.get("nan_rows"):
            params.pop("nan_rows")
            nans = [np.nan] * point["nan_rows"] + [lo] * 3  # n = nan_rows + 4 values, 4 of them numbers
            pairs = [(np.array(nans + [lo]), np.array(nans + [hi]),
                      f"{point['nan_rows']} NaN rows and 4 at lower, last lower → upper")]
            rows = False
        last = {k: v for k, v in point.items() if k != "bounds"} | {"bounds": point["bounds"]}  # the labels' order
        return _case(f"tools.{name}", point_label(last), query, params, PureDP(point["epsilon"], REPLACE), pairs,
                     cost="query", width=3 + params["capacity"], rows=rows, relation=REPLACE,
                     layout=((name, params["capacity"]),), known=UNREPORTED_NAN if point.get("nan_rows") and name in _SIZE_CALIBRATED else "")
    # Bounds at 0, straddling it widely, and away from it (a sensitivity or clip that assumes 0 is a bound).
    grid = grid or [{"epsilon": 1.0, "bounds": (0.0, 1.0)}, {"epsilon": 0.5, "bounds": (-1e6, 1e6)},
                    {"epsilon": 1.0, "bounds": (10.0, 11.0)}]
    if nan:
        grid = grid + [{"epsilon": 1.0, "bounds": (0.0, 1.0), "nan_rows": 6}]
    return Entry(f"tools.{name}", (f"diffprivlib.tools.{name}",), "query", _TOOL_TEXT.format(name=name, what=what),
                 REPLACE, tuple(grid), build)


def _histogram(name: str) -> Entry:
    def build(point):
        d = 1 if name == "histogram" else 2
        rng = [(0.0, 1.0)] * d
        params = {"function": name, "capacity": 8 if d == 1 else 16, "bins": point["bins"],
                  "epsilon": point["epsilon"], "range": rng[0] if d == 1 else rng}
        base = np.full((4, d), 0.1)
        pairs = row_pairs(base, [(np.full(d, 0.9), "add a row in an empty bin"),
                                 (np.full(d, 5.0), "add a row beyond the range"),
                                 (np.full(d, np.nextafter(1.0, 2.0)), "add a row just beyond the range")], ADD_REMOVE)
        pairs.append((np.zeros((0, d)), np.full((1, d), 0.5), "empty vs one record"))
        width = (3 + params["capacity"]) * (2 if d == 1 else 3)
        return _case(f"tools.{name}", point_label(point), histogram_query, params,
                     PureDP(point["epsilon"], ADD_REMOVE), pairs, cost="query", width=width, rows=True,
                     relation=ADD_REMOVE, layout=tuple((n, params["capacity"]) for n in
                                                       (("counts", "edges") if d == 1 else ("counts", "edges 0", "edges 1"))))
    text = (f"diffprivlib.tools.{name} docstring: 'Compute the differentially private histogram', noise from "
            "GeometricTruncated with sensitivity 1 per bin (add-remove)")
    return Entry(f"tools.{name}", (f"diffprivlib.tools.{name}",), "query", text, ADD_REMOVE,
                 ({"epsilon": 1.0, "bins": 4}, {"epsilon": 0.3, "bins": 2}), build)


def _tool_entries() -> list[Entry]:
    q = [{"epsilon": 1.0, "bounds": (0.0, 1.0)}]
    return [
        _tool("mean", "Compute the arithmetic mean"), _tool("nanmean", "mean ignoring NaNs", nan=True),
        _tool("var", "Compute the variance"), _tool("nanvar", "variance ignoring NaNs", nan=True),
        _tool("std", "Compute the standard deviation"), _tool("nanstd", "standard deviation ignoring NaNs", nan=True),
        _tool("sum", "Sum of array elements"), _tool("nansum", "sum ignoring NaNs", nan=True),
        _tool("count_nonzero", "Counts the number of non-zero values", grid=[{"epsilon": 1.0, "bounds": (0.0, 1.0)}],
              bounds=False),
        _tool("median", "Compute the median", grid=q + [{"epsilon": 3.0, "bounds": (0.0, 1.0)}]),
        _tool("quantile", "Compute the q-th quantile", grid=[{"epsilon": 1.0, "bounds": (0.0, 1.0), "quant": 0.25}]),
        _tool("percentile", "Compute the q-th percentile",
              grid=[{"epsilon": 1.0, "bounds": (0.0, 1.0), "percent": [10.0, 90.0]}]),
        _histogram("histogram"), _histogram("histogram2d"), _histogram("histogramdd"),
    ]


# -- models ----------------------------------------------------------------------------------------
_MODEL_TEXT = ("diffprivlib.models.{name} docstring: '{what} with differential privacy ... Differential privacy "
               "is guaranteed with respect to the training sample', 'epsilon : Privacy parameter ε'")
#: Model releases hold small arrays (one or two features, at most three classes).
_CAPACITY = 9


def _release_key() -> tuple[int, ...]:
    return release_numbers(str(getattr(dpl, "__version__", "0")))


def _check_runs(entry: str, params: Mapping[str, Any], base: np.ndarray) -> None:
    """On a release older than 0.5, raise :class:`NotInRelease` with the library's own message when
    the model cannot fit the grid point's benign base dataset at all.

    Those releases are swept under the newest scikit-learn and numpy they import with (scikit-learn
    1.0, which has wheels for Python ≥ 3.10), and a model whose code relies on an older scikit-learn
    raises on every input there (0.4's GaussianNB assigns ``sigma_``, a read-only property since
    scikit-learn 1.0): no installable environment runs it, so the row is not in this release as
    installable, not an error of the audit.  Current releases are not probed: there an exception is
    an ERROR row."""
    if _release_key() >= (0, 5):
        return
    try:
        fit(base, np.random.RandomState(0), **params)
    except Exception as exc:  # noqa: BLE001 - any failure on benign data: the library's message is the reason
        import sklearn

        raise NotInRelease(f"diffprivlib.{entry} does not run in diffprivlib {dpl.__version__} with the scikit-learn "
                           f"it imports with on Python ≥ 3.10 (here scikit-learn {sklearn.__version__}, numpy "
                           f"{np.__version__}): it raises {type(exc).__name__}: {exc} on benign data") from None


def _model(name: str, what: str, attributes, grid, data_of, *, supervised=True, probe=None, known=None) -> Entry:
    def build(point):
        base, extra = data_of(point)
        params = {"model": name, "attributes": list(attributes), "capacity": _CAPACITY,
                  **({} if supervised else {"supervised": False}), **({"probe": probe} if probe else {}),
                  **{k: v for k, v in point.items() if k != "data"}}
        _require_params(f"models.{name}", params)
        _check_runs(f"models.{name}", params, base)
        pairs = row_pairs(base, extra, REPLACE)
        layout = tuple((a, _CAPACITY) for a in attributes) + ((("predict_proba(probe)", _CAPACITY),) if probe else ())
        return _case(f"models.{name}", point_label(point), fit, params, PureDP(point["epsilon"], REPLACE), pairs,
                     cost="fit", width=len(layout) * (3 + _CAPACITY), rows=True, relation=REPLACE, layout=layout,
                     known=known(point) if callable(known) else (known or {}).get(point.get("data", ""), ""))
    return Entry(f"models.{name}", (f"diffprivlib.models.{name}",), "model", _MODEL_TEXT.format(name=name, what=what),
                 REPLACE, tuple(grid), build)


def _xy(x, y):
    return np.column_stack([np.asarray(x, dtype=float).reshape(len(y), -1), np.asarray(y, dtype=float)])


def _regression_data(point):
    lo, hi = point["bounds_X"]
    if point.get("data") == "y only":  # X fixed: only the y-terms of the objective differ
        base = _xy([-0.5, 0.5, -0.5, 0.5, -0.5, 0.5], [0, 0, 0, 0, 0, 0])
        return base, [([0.5, 1.0], "last y 0 → 1 (X unchanged)")]
    base = _xy([lo, lo, lo + 0.01 * (hi - lo), lo, lo, lo], [0, 0, 1, 0, 1, 0])
    return base, [([hi, 0.0], "last x lower → upper"), ([hi + 10 * (hi - lo), 0.0], "last x → beyond upper"),
                  ([lo, 1.0], "last y 0 → 1")]


def _classification_data(point):
    lo, hi = point.get("bounds", (0.0, 1.0))
    base = _xy([lo, hi, lo, hi, 0.5 * (lo + hi), lo], [0, 1, 0, 1, 1, 0])
    extra = [([hi, 0.0], "last row's x lower → upper"), ([hi + 10 * (hi - lo), 0.0], "last x → beyond upper")]
    if point.get("data") == "new label":
        extra.append(([lo, 2.0], "last label 0 → new label 2"))
    return base, extra


def _norm_data(point):
    base = _xy([0.0, 0.2, 0.4, 0.0, 0.2, 0.0], [0, 1, 0, 1, 1, 0])
    extra = [([1.0, 0.0], "last x 0 → data_norm"), ([50.0, 0.0], "last x → beyond data_norm (clipped)")]
    if point.get("data") == "new label":
        extra.append(([0.0, 2.0], "last label 0 → new label 2"))
    return base, extra


def _unsupervised_data(d):
    def data_of(point):
        lo, hi = point.get("bounds", (0.0, 1.0))
        base = np.tile(np.linspace(lo, hi, 6).reshape(-1, 1), (1, d))
        base[-1] = lo
        return base, [(np.full(d, hi), "last row lower → upper"), (np.full(d, hi + 10 * (hi - lo)), "last row → beyond"),
                      (np.full(d, HUGE), "last row → 1e300")]
    return data_of


def _model_entries() -> list[Entry]:
    issue105 = "IBM/differential-privacy-library#105 (diagonal sensitivity uses the lower bound twice)"
    issue34 = "IBM/differential-privacy-library#34 (y-term sensitivity; fixed in 0.4.1)"
    tree_probe = [[0.0], [0.5], [1.0]]
    return [
        _model("LinearRegression", "Ordinary least squares Linear Regression",
               ["coef_", "intercept_", "_obj_coefs:0", "_obj_coefs:1", "_obj_coefs:2"],
               [{"epsilon": 1.0, "bounds_X": (0.0, 100.0), "bounds_y": (0.0, 1.0)},
                {"epsilon": 1.0, "bounds_X": (-1.0, 1.0), "bounds_y": (0.0, 1.0), "data": "y only"}],
               _regression_data, known={"": issue105, "y only": issue34}),
        _model("LogisticRegression", "Logistic Regression (aka logit, MaxEnt) classifier",
               ["classes_", "coef_", "intercept_"],
               [{"epsilon": 1.0, "data_norm": 1.0, "max_iter": 20},
                {"epsilon": 1.0, "data_norm": 1.0, "max_iter": 20, "data": "new label"}], _norm_data,
               known={"new label": ISSUE_106}),
        _model("GaussianNB", "Gaussian Naive Bayes (GaussianNB)",
               ["classes_", "class_count_", "class_prior_", "theta_", "var_"],
               [{"epsilon": 1.0, "bounds": (0.0, 1.0)}, {"epsilon": 1.0, "bounds": (0.0, 1.0), "data": "new label"}],
               _classification_data, known={"new label": ISSUE_106}),
        _model("DecisionTreeClassifier", "Decision Tree Classifier", ["classes_", "n_classes_"],
               [{"epsilon": 1.0, "bounds": (0.0, 1.0), "classes": [0, 1], "max_depth": 2}], _classification_data,
               probe=tree_probe),
        _model("RandomForestClassifier", "Random Forest Classifier", ["classes_", "n_classes_"],
               [{"epsilon": 1.0, "bounds": (0.0, 1.0), "classes": [0, 1], "n_estimators": 2, "max_depth": 2}],
               _classification_data, probe=tree_probe),
        _model("KMeans", "K-Means clustering", ["cluster_centers_", "labels_", "inertia_", "n_iter_"],
               [{"epsilon": 1.0, "bounds": (0.0, 1.0), "n_clusters": 2}], _unsupervised_data(1), supervised=False,
               known=lambda point: UNREPORTED_KMEANS),
        _model("StandardScaler", "Standardize features by removing the mean and scaling to unit variance",
               ["mean_", "var_", "scale_", "n_samples_seen_"], [{"epsilon": 1.0, "bounds": (0.0, 1.0)}],
               _unsupervised_data(1), supervised=False),
        _model("PCA", "Principal component analysis (PCA)",
               ["components_", "explained_variance_", "singular_values_", "mean_", "noise_variance_"],
               [{"epsilon": 1.0, "bounds": (0.0, 1.0), "data_norm": 1.5, "n_components": 1}],
               _unsupervised_data(2), supervised=False),
    ]


def _accountant_entry() -> Entry:
    def build(point):
        acc = dpl.BudgetAccountant(slack=point["slack"])
        for _ in range(point["k"]):
            acc.spend(point["epsilon"], 0)
        total = acc.total()
        epsilon, delta = (float(v) for v in total)
        claim = ApproxDP(epsilon, delta, REPLACE) if delta else PureDP(epsilon, REPLACE)
        params = {**point, "sensitivity": 1.0}
        return _case("accountant.BudgetAccountant", point_label(point), compose, params, claim,
                     _shift(1.0)(params), cost="query", width=point["k"], rows=False, relation=REPLACE,
                     layout=tuple((f"release {i}", None) for i in range(point["k"])))
    text = ("diffprivlib.accountant.BudgetAccountant.total docstring: 'Returns the total current privacy spend' "
            "(sequential composition, or advanced composition with `slack`); audited on k Laplace releases of one value")
    return Entry("accountant.BudgetAccountant", ("diffprivlib.accountant.BudgetAccountant",), "accountant", text,
                 REPLACE, ({"k": 10, "epsilon": 0.3, "slack": 1e-6}, {"k": 5, "epsilon": 0.5, "slack": 0.0}), build)


# -- the library -----------------------------------------------------------------------------------
def entries() -> tuple[Entry, ...]:
    """The whole catalogue."""
    return tuple(_mechanism_entries() + _tool_entries() + _model_entries() + [_accountant_entry()])


def public_api() -> tuple[str, ...]:
    """The installed release's public names: ``mechanisms.__all__`` (or its classes), the functions of
    ``tools`` and the classes of ``models``, and the accountant."""
    mechanisms = getattr(dpl.mechanisms, "__all__", None) or [n for n in dir(dpl.mechanisms) if n[:1].isupper()]
    tools = [n for n in dir(dpl.tools) if not n.startswith("_") and callable(getattr(dpl.tools, n))]
    models = [n for n in dir(dpl.models) if n[:1].isupper()]
    names = [f"diffprivlib.mechanisms.{n}" for n in mechanisms] + [f"diffprivlib.tools.{n}" for n in tools] + \
        [f"diffprivlib.models.{n}" for n in models] + ["diffprivlib.accountant.BudgetAccountant"]
    return tuple(sorted(set(names)))


_EXCLUDED = {
    "diffprivlib.mechanisms.DPMachine": "not DP: an abstract base class",
    "diffprivlib.mechanisms.DPMechanism": "not DP: an abstract base class",
    "diffprivlib.mechanisms.TruncationAndFoldingMixin": "not DP: a mixin of the truncated and folded mechanisms",
    "diffprivlib.mechanisms.Vector": "covered through another entry: models.LogisticRegression (Vector perturbs "
                                     "an objective function; its release is a function, audited by the model it fits)",
}

LIBRARY = register_library(Library(
    name="diffprivlib", distribution="diffprivlib", entries=entries, public_api=public_api, excluded=_EXCLUDED,
    script_header="import warnings\nfrom functools import partial\n\nimport numpy as np\nimport diffprivlib as dpl\n\n_LAST = {}\n",
    helpers=(encode, released, fitted, seeded, mechanism_object),
    seeded=True, witness_issues={"grain of ": ISSUE_94, "bits of ": ISSUE_94}))
