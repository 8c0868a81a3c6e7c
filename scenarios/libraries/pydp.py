"""The catalogue of Google's differential-privacy library through its Python binding ``python-dp``
(PyDP): every aggregation, both numerical mechanisms and every partition-selection strategy.

PyDP wraps Google's C++ library.  Its claims, as its docstrings and the C++ headers state them:

- the aggregations of ``pydp.algorithms.laplacian`` (``Count``, ``BoundedSum``, ``BoundedMean``,
  ``BoundedVariance``, ``BoundedStandardDeviation``, ``Max``, ``Min``, ``Median``, ``Percentile``)
  are (ε, δ)-DP (ε-DP when δ = 0, the default) for one *privacy unit* that contributes at most
  ``linf_sensitivity`` records to the aggregated partition (``l0_sensitivity`` partitions): the
  add-remove relation over privacy units.  A unit here is one row of the dataset, holding its
  ``linf_sensitivity`` records as columns, so that the neighbours are checked to differ by one row;
- ``LaplaceMechanism(ε, Δ)`` and ``GaussianMechanism(ε, δ, Δ₂)`` add noise to one value: the claim
  holds for any two values within Δ (vouched for by this catalogue);
- a partition-selection strategy's ``should_keep(n)`` on the number n of privacy units in a
  partition is (ε, δ)-DP for a unit added or removed (n against n + 1), at
  ``max_partitions_contributed = 1``.

Google's library draws from its own secure generator, which cannot be seeded: these rows are
reproducible in distribution only.

References
----------
Wilson, Zhang, Lam, Desfontaines, Simmons-Marengo & Gipson (2020), "Differentially private SQL
with bounded user contribution", PoPETs 2020(2); Desfontaines, Voss, Gipson & Mandayam (2022),
"Differentially private partition selection", PoPETs 2022(1); the docstrings of python-dp 1.1.5.
"""

from __future__ import annotations


import numpy as np

from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import ApproxDP, PureDP, Relation

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, point_label, require_library
from .families import HUGE, row_pairs, value_pairs
from .registry import register_library

__all__ = ["LIBRARY", "aggregate", "noise", "keep", "entries", "public_api"]

REPLACE, ADD_REMOVE = Relation.REPLACE, Relation.ADD_REMOVE


def _module(name: str):
    return require_library(name, catalogue="pydp", install="pip install python-dp")


laplacian = _module("pydp.algorithms.laplacian")
numerical_mechanisms = _module("pydp.algorithms.numerical_mechanisms")
partition_selection = _module("pydp.algorithms.partition_selection")


# -- release functions (their source goes into reproduction scripts) --------------------------------
def aggregate(data, random_state, *, algorithm, dtype="float", **kwargs):
    """pydp.algorithms.laplacian.<algorithm>(**kwargs).quick_result(records): every record of every
    privacy unit (a row of ``data``); Google's generator is used, ``random_state`` is not."""
    records = np.ravel(data)
    values = [int(v) for v in records] if dtype == "int" else [float(v) for v in records]
    return [float(getattr(laplacian, algorithm)(dtype=dtype, **kwargs).quick_result(values))]


def noise(data, random_state, *, mechanism, value="float", **kwargs):
    """numerical_mechanisms.<mechanism>(**kwargs).add_noise(x) on the one value x = data[0]."""
    x = np.ravel(data)[0]
    return [float(getattr(numerical_mechanisms, mechanism)(**kwargs).add_noise(int(x) if value == "int" else float(x)))]


def keep(data, random_state, *, strategy, epsilon, delta, max_partitions_contributed=1, pre_threshold=None,
         strategy_type=None):
    """partition_selection.create_<strategy>_partition_strategy(...).should_keep(n), n = data[0] units."""
    args = (epsilon, delta, max_partitions_contributed)
    if pre_threshold is not None:
        kind = getattr(partition_selection.PartitionSelectionStrategyType, strategy_type)
        selector = partition_selection.create_pre_thresholding_partition_strategy(*args, pre_threshold, kind)
    else:
        selector = getattr(partition_selection, f"create_{strategy}_partition_strategy")(*args)
    return [float(selector.should_keep(int(np.ravel(data)[0])))]


# -- cases ------------------------------------------------------------------------------------------
def _claim(epsilon: float, delta: float, relation: Relation):
    return PureDP(epsilon, relation) if delta == 0 else ApproxDP(epsilon, delta, relation)


def _case(entry: str, point, release, params, claim, pairs, *, rows: bool, relation: Relation, known: str = "",
          layout=(("value", None),), statistic: str = "auto") -> Case:
    scenario = _scenario.from_pairs(pairs, relation) if rows else _scenario.custom(pairs, relation)
    label = point_label(point)
    mechanism = LibraryRelease(release, params, f"pydp.{entry}({label})", claim, 2, deterministic=False)
    return Case(entry, label, dict(point), mechanism, claim, scenario, release, params, "call", statistic=statistic,
                known=known, layout=layout)


def _unit_pairs(lo: float, hi: float, per_unit: int, integer: bool) -> list[tuple]:
    """Add-remove pairs of privacy units (rows of ``per_unit`` records): a unit at the upper bound,
    one beyond it (the library must clamp), one at 1e300, and the empty and single-unit datasets."""
    mid = float(int((lo + hi) / 2)) if integer else (lo + hi) / 2
    base = np.array([[lo] * per_unit, [mid] * per_unit, [hi] * per_unit, [lo] * per_unit])
    beyond = hi + 10 * (hi - lo)
    extra = [(np.full(per_unit, hi), "add a unit at upper"), (np.full(per_unit, lo), "add a unit at lower"),
             (np.full(per_unit, beyond), "add a unit beyond upper (clamped)")]
    if not integer:
        extra.append((np.full(per_unit, HUGE), "add a unit at 1e300"))
    pairs = row_pairs(base, extra, ADD_REMOVE)
    pairs.append((np.zeros((0, per_unit)), np.full((1, per_unit), hi), "empty vs one unit at upper"))
    pairs.append((np.full((1, per_unit), lo), np.array([[lo] * per_unit, [hi] * per_unit]),
                  "one unit vs two (lower, upper)"))
    return pairs


_AGG_TEXT = ("pydp.algorithms.laplacian.{name}: '{what}, in a differentially private manner'; (ε, δ)-DP "
             "(ε-DP at δ = 0) for a privacy unit contributing at most linf_sensitivity records (Google DP "
             "library, algorithms/algorithm.h), add-remove")


def _aggregation(name: str, what: str, grid) -> Entry:
    def build(point):
        lo, hi = point.get("lower_bound", 0.0), point.get("upper_bound", 1.0)
        per_unit = int(point.get("linf_sensitivity", 1))
        integer = point.get("dtype") == "int"
        params = {"algorithm": name, "dtype": point.get("dtype", "float"),
                  **{k: v for k, v in point.items() if k != "dtype"}}
        claim = _claim(point["epsilon"], point.get("delta", 0.0), ADD_REMOVE)
        return _case(f"laplacian.{name}", point, aggregate, params, claim, _unit_pairs(lo, hi, per_unit, integer),
                     rows=True, relation=ADD_REMOVE)
    return Entry(f"laplacian.{name}", (f"pydp.algorithms.laplacian.{name}",), "query",
                 _AGG_TEXT.format(name=name, what=what), ADD_REMOVE, tuple(grid), build)


def _aggregations() -> list[Entry]:
    bounded = [{"epsilon": 1.0, "lower_bound": 0.0, "upper_bound": 1.0},
               {"epsilon": 1.0, "lower_bound": 2.0, "upper_bound": 10.0},
               {"epsilon": 0.5, "lower_bound": -1e6, "upper_bound": 1e6},
               {"epsilon": 1.0, "lower_bound": 0, "upper_bound": 10, "dtype": "int"},
               {"epsilon": 1.0, "lower_bound": 0.0, "upper_bound": 1.0, "linf_sensitivity": 2},
               {"epsilon": 1.0, "delta": 1e-5, "lower_bound": 0.0, "upper_bound": 1.0}]
    order = [{"epsilon": 1.0, "lower_bound": 0.0, "upper_bound": 1.0},
             {"epsilon": 1.0, "lower_bound": -10.0, "upper_bound": 10.0},
             {"epsilon": 1.0, "lower_bound": 0, "upper_bound": 10, "dtype": "int"}]
    count = [{"epsilon": 1.0}, {"epsilon": 0.25}, {"epsilon": 1.0, "linf_sensitivity": 2}]
    return [
        _aggregation("Count", "Count computes the Count of number of items in the dataset", count),
        _aggregation("BoundedSum", "BoundedSum computes the sum of values in a dataset", bounded),
        _aggregation("BoundedMean", "BoundedMean computes the average of values in a dataset", bounded),
        _aggregation("BoundedVariance", "BoundedVariance computes the variance of values in a dataset", bounded[:4]),
        _aggregation("BoundedStandardDeviation", "BoundedStandardDeviation computes the standard deviation",
                     bounded[:4]),
        _aggregation("Max", "Max computes the maximum value in the dataset", order),
        _aggregation("Min", "Min computes the minium value in the dataset", order),
        _aggregation("Median", "Median computes the median value in the dataset", order),
        _aggregation("Percentile", "Percentile finds the value in the dataset with that percentile",
                     [{"epsilon": 1.0, "percentile": 0.9, "lower_bound": 0.0, "upper_bound": 1.0},
                      {"epsilon": 1.0, "percentile": 0.1, "lower_bound": -10.0, "upper_bound": 10.0}]),
    ]


#: The Gaussian noise's low-bits finding (no upstream report; the write-up is with PipelineDP's, which
#: draws its Gaussian noise from this mechanism).
UNREPORTED_GRAIN = ("not reported upstream: AddDoubleNoise rounds its binomial sample to a double before adding it, "
                    "so the released double's grain tells a value near 0 from one at 1 (write-up ready to file "
                    "in benchmarks/results/sweep/pipeline-dp/findings/aggregate.SUM_gaussian_grain.report.md)")


def _mechanisms() -> list[Entry]:
    def entry(name, grid, text):
        def build(point):
            s = point["sensitivity"]
            params = {"mechanism": name, **point}
            value = point.get("value", "float")
            base = [(0.0, s, "v vs v + Δ"), (2.0 ** 40, 2.0 ** 40 + s, "2^40 vs 2^40 + Δ")]
            if value == "int":
                params["value"] = "int"
            claim = _claim(point["epsilon"], point.get("delta", 0.0), REPLACE)
            # A float's grain (which grid of doubles the noisy value lies on) is what the Gaussian's
            # rounding leaks; the coordinates statistic reads it besides the value.
            return _case(f"numerical_mechanisms.{name}", point, noise, params, claim, value_pairs(base, s),
                         rows=False, relation=REPLACE, statistic="coordinates",
                         known=UNREPORTED_GRAIN if name == "GaussianMechanism" else "")
        return Entry(f"numerical_mechanisms.{name}", (f"pydp.algorithms.numerical_mechanisms.{name}",), "mechanism",
                     text, REPLACE, tuple(grid), build)
    return [
        entry("LaplaceMechanism", [{"epsilon": 1.0, "sensitivity": 1.0}, {"epsilon": 4.0, "sensitivity": 0.5},
                                   {"epsilon": 1.0, "sensitivity": 1.0, "value": "int"}],
              "pydp LaplaceMechanism(epsilon, sensitivity): ε-DP for values within the L1 sensitivity "
              "(Google DP library, numerical-mechanisms.h)"),
        entry("GaussianMechanism", [{"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0},
                                    {"epsilon": 0.5, "delta": 1e-3, "sensitivity": 2.0}],
              "pydp GaussianMechanism(epsilon, delta, sensitivity): (ε, δ)-DP for values within the L2 "
              "sensitivity (Google DP library, numerical-mechanisms.h)"),
    ]


def _partition_selection() -> Entry:
    def build(point):
        params = {**point}
        # n units against n + 1: the empty partition, one unit, and counts near each strategy's threshold.
        pairs = value_pairs([(0.0, 1.0, "0 vs 1 unit"), (1.0, 2.0, "1 vs 2 units"),
                             (float(point.get("pre_threshold", 5)), float(point.get("pre_threshold", 5)) + 1,
                              "threshold region n vs n + 1")], 1.0)
        claim = _claim(point["epsilon"], point["delta"], ADD_REMOVE)
        return _case("partition_selection", point, keep, params, claim, pairs, rows=False, relation=ADD_REMOVE,
                     layout=(("kept", None),))
    grid = [{"strategy": "truncated_geometric", "epsilon": 1.0, "delta": 1e-5},
            {"strategy": "truncated_geometric", "epsilon": 0.5, "delta": 1e-2},
            {"strategy": "laplace", "epsilon": 1.0, "delta": 1e-5},
            {"strategy": "gaussian", "epsilon": 1.0, "delta": 1e-5},
            {"strategy": "pre_thresholding", "epsilon": 1.0, "delta": 1e-5, "pre_threshold": 3,
             "strategy_type": "NEAR_TRUNCATED_GEOMETRIC"}]
    api = tuple(f"pydp.algorithms.partition_selection.create_{s}_partition_strategy"
                for s in ("truncated_geometric", "laplace", "gaussian", "pre_thresholding"))
    return Entry("partition_selection", api, "mechanism",
                 "pydp partition_selection.create_*_partition_strategy(epsilon, delta, max_partitions_contributed): "
                 "'(Ɛ, 𝛿)-differentially private partition selection' (PartitionSelectionStrategy docstring), a "
                 "privacy unit added or removed", ADD_REMOVE, tuple(grid), build)


# -- the library --------------------------------------------------------------------------------------
def entries() -> tuple[Entry, ...]:
    """The whole catalogue."""
    return tuple(_aggregations() + _mechanisms() + [_partition_selection()])


def public_api() -> tuple[str, ...]:
    """The installed release's public names: ``laplacian.__all__``, the classes of
    ``numerical_mechanisms``, the ``create_*`` functions and classes of ``partition_selection`` and
    the noise distributions of ``pydp.distributions``."""
    distributions = _module("pydp.distributions")
    names = [f"pydp.algorithms.laplacian.{n}" for n in getattr(laplacian, "__all__", dir(laplacian))
             if n[:1].isupper()]
    names += [f"pydp.algorithms.numerical_mechanisms.{n}" for n in dir(numerical_mechanisms) if n[:1].isupper()]
    names += [f"pydp.algorithms.partition_selection.{n}" for n in dir(partition_selection)
              if n.startswith("create_") or n.startswith("PartitionSelection")]
    names += [f"pydp.distributions.{n}" for n in dir(distributions) if n[:1].isupper()]
    return tuple(sorted(set(names)))


_P = "pydp.algorithms.partition_selection."
_EXCLUDED = {
    "pydp.algorithms.numerical_mechanisms.NumericalMechanism": "not DP: the base class of the two mechanisms",
    "pydp.algorithms.numerical_mechanisms.ConfidenceInterval": "not DP: the type of a confidence interval",
    _P + "PartitionSelectionStrategy": "not DP: the base class of the strategies",
    _P + "PartitionSelectionStrategyType": "not DP: the enumeration of strategy names",
    _P + "create_partition_strategy": "covered through another entry: partition_selection (it dispatches by name "
                                      "to the create_*_partition_strategy functions audited there)",
    "pydp.distributions.LaplaceDistribution": "not DP: a noise sampler, no privacy parameter or claim",
    "pydp.distributions.GaussianDistribution": "not DP: a noise sampler, no privacy parameter or claim",
    "pydp.distributions.GeometricDistribution": "not DP: a noise sampler, no privacy parameter or claim",
}

LIBRARY = register_library(Library(
    name="pydp", distribution="python-dp", entries=entries, public_api=public_api, excluded=_EXCLUDED,
    script_header="import numpy as np\nfrom pydp.algorithms import laplacian, numerical_mechanisms, "
                  "partition_selection\n",
    helpers=(), seeded=False))
