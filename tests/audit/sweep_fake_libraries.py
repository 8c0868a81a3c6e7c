"""Small numpy fakes of the APIs the ecosystem catalogues call (python-dp, pipeline-dp, smartnoise-sql,
smartnoise-synth), so that CI, which installs none of them, tests each catalogue's plumbing: the
calls it makes, the widths of its release vectors, its coverage, and the gray-box replay.

Each fake exposes the names the catalogue uses, with the same signatures, and computes a plausible
release from a seeded generator (:data:`RNG`, reset by :func:`install`).  Two fakes carry a switch
that plants a documented bug class, for the statistical tests:

- ``pydp`` ``BoundedSum`` with ``FLAGS["clamp"] = False`` sums the raw values (no clamping to the
  bounds): adding a unit at 1e300 moves the sum by 1e300 against Laplace noise of scale 1/ε;
- ``snsynth``'s ``DPcovariance`` with ``FLAGS["raw"] = True`` clips the data and then uses the raw
  data, as smartnoise-synth ≤ 1.0.5 did (opendp/smartnoise-sdk#622);
- ``pipeline_dp``'s ``VECTOR_SUM`` with ``FLAGS["clip_total"] = True`` clips the partition's total to
  ``vector_max_norm`` instead of each unit's sum, as pipeline-dp ≤ 0.2.1 did
  (OpenMined/PipelineDP#551): one unit beyond the bound moves a total of −M to +M, twice the
  sensitivity its noise is calibrated to;
- the fake dpmm pipeline, like dpmm, gives the generated columns the categorical domain it imputed
  from the data;
- the fake synthesizer (every name ``Synthesizer.create`` knows: MWEM, MST, AIM, the GANs) samples
  uniformly over the categories its transformer was fitted on, read from the data unless a
  transformer fitted on the public domain is given: a new category appears in the synthetic table
  only when the record that carries it is in the data.  As in snsynth, ``TableTransformer.create``
  only types the columns, and ``fit`` fits a transformer that is not yet fitted on the data.
"""

from __future__ import annotations

import sys
import types
from collections import namedtuple

import numpy as np
import pandas as pd
from fake_modules import forget

RNG = np.random.default_rng(0)
FLAGS = {"clamp": True, "raw": False, "clip_total": False}


def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


def install(monkeypatch, library: str, seed: int = 0) -> None:
    """Put the fake of ``library`` into ``sys.modules`` (undone by ``monkeypatch``), drop the
    catalogue module and its registration so that the next import builds them on the fake."""
    global RNG
    RNG = np.random.default_rng(seed)
    FLAGS.update(clamp=True, raw=False, clip_total=False)
    from scenarios.libraries import registry

    modules = {"pydp": _pydp, "pipeline-dp": _pipeline_dp, "smartnoise-sql": _snsql, "smartnoise-synth": _snsynth,
               "dpmm": _dpmm}[library]()
    for name, module in modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    catalogue = registry.BUILT_IN[library]
    forget(monkeypatch, sys.modules, catalogue)
    forget(monkeypatch, registry._REGISTRY, library)


# -- python-dp ----------------------------------------------------------------------------------------
def _pydp() -> dict:
    class Algorithm:
        def __init__(self, epsilon=1.0, delta=0, lower_bound=None, upper_bound=None, l0_sensitivity=1,
                     linf_sensitivity=1, dtype="int", percentile=0.5):
            self.epsilon, self.lo, self.hi, self.linf = epsilon, lower_bound, upper_bound, linf_sensitivity
            self.percentile = percentile

        def _values(self, values):
            values = np.asarray(values, dtype=float)
            return np.clip(values, self.lo, self.hi) if FLAGS["clamp"] else values

        def _noise(self, sensitivity):
            return RNG.laplace(0.0, self.linf * sensitivity / self.epsilon)

    class Count(Algorithm):
        def quick_result(self, values):
            return int(round(len(values) + self._noise(1.0)))

    class BoundedSum(Algorithm):
        def quick_result(self, values):
            return float(np.sum(self._values(values)) + self._noise(max(abs(self.lo), abs(self.hi))))

    class BoundedMean(Algorithm):
        def quick_result(self, values):
            values = self._values(values)
            mid = (self.lo + self.hi) / 2
            count = max(len(values) + self._noise(1.0), 1.0)
            return float(np.clip(mid + (np.sum(values - mid) + self._noise((self.hi - self.lo) / 2)) / count,
                                 self.lo, self.hi))

    class Quantile(Algorithm):
        def quick_result(self, values):
            values = self._values(values)
            centre = np.quantile(values, self.percentile) if len(values) else (self.lo + self.hi) / 2
            return float(np.clip(centre + self._noise(self.hi - self.lo), self.lo, self.hi))

    laplacian = _module("pydp.algorithms.laplacian", Count=Count, BoundedSum=BoundedSum, BoundedMean=BoundedMean,
                        BoundedVariance=BoundedMean, BoundedStandardDeviation=BoundedMean, Max=Quantile, Min=Quantile,
                        Median=Quantile, Percentile=Quantile)
    laplacian.__all__ = ["BoundedMean", "BoundedStandardDeviation", "BoundedSum", "BoundedVariance", "Count", "Max",
                         "Median", "Min", "Percentile"]

    class LaplaceMechanism:
        def __init__(self, epsilon, sensitivity=1.0):
            self.scale = sensitivity / epsilon

        def add_noise(self, x):
            return type(x)(x + RNG.laplace(0.0, self.scale))

    class GaussianMechanism(LaplaceMechanism):
        def __init__(self, epsilon, delta, sensitivity=1.0):
            self.scale = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon

        def add_noise(self, x):
            return float(x + RNG.normal(0.0, self.scale))

    numerical = _module("pydp.algorithms.numerical_mechanisms", LaplaceMechanism=LaplaceMechanism,
                        GaussianMechanism=GaussianMechanism, NumericalMechanism=object, ConfidenceInterval=tuple)

    class Strategy:
        def __init__(self, epsilon, delta, max_partitions, pre_threshold=1, *_):
            self.threshold = pre_threshold + 1 + np.log(1 / (2 * delta)) / epsilon
            self.epsilon = epsilon

        def should_keep(self, n):
            return n > 0 and n + RNG.laplace(0.0, 1 / self.epsilon) > self.threshold

    selection = _module("pydp.algorithms.partition_selection", PartitionSelectionStrategy=Strategy,
                        PartitionSelectionStrategyType=types.SimpleNamespace(NEAR_TRUNCATED_GEOMETRIC=0, LAPLACE=1,
                                                                             GAUSSIAN=2),
                        create_partition_strategy=Strategy, create_truncated_geometric_partition_strategy=Strategy,
                        create_laplace_partition_strategy=Strategy, create_gaussian_partition_strategy=Strategy,
                        create_pre_thresholding_partition_strategy=Strategy)
    algorithms = _module("pydp.algorithms", laplacian=laplacian, numerical_mechanisms=numerical,
                         partition_selection=selection)
    distributions = _module("pydp.distributions", LaplaceDistribution=object, GaussianDistribution=object,
                            GeometricDistribution=object)
    return {"pydp": _module("pydp", algorithms=algorithms, distributions=distributions), "pydp.algorithms": algorithms,
            "pydp.algorithms.laplacian": laplacian, "pydp.algorithms.numerical_mechanisms": numerical,
            "pydp.algorithms.partition_selection": selection, "pydp.distributions": distributions}


# -- pipeline-dp --------------------------------------------------------------------------------------
def _pipeline_dp() -> dict:
    names = ("COUNT", "PRIVACY_ID_COUNT", "SUM", "MEAN", "VARIANCE", "VECTOR_SUM")
    metrics = types.SimpleNamespace(**{n: n for n in names}, PERCENTILE=lambda p: f"PERCENTILE({p})")
    enum = lambda *members: types.SimpleNamespace(__members__={m: m for m in members}, **{m: m for m in members})  # noqa: E731

    class Params(types.SimpleNamespace):
        pass

    class Accountant:
        def __init__(self, total_epsilon, total_delta, **_):
            self.epsilon = total_epsilon

        def compute_budgets(self):
            pass

    class DPEngine:
        def __init__(self, budget, backend):
            self.budget = budget

        def _noise(self):
            return RNG.laplace(0.0, 1.0 / self.budget.epsilon)

        def aggregate(self, col, params, extractors, public_partitions=None, out_explain_computation_report=None):
            if not col:
                raise ValueError("col must be non-empty")
            groups: dict = {}
            for row in col:
                groups.setdefault(extractors.partition_extractor(row), []).append(extractors.value_extractor(row))
            keys = public_partitions if public_partitions is not None else [k for k, v in groups.items() if len(v) > 5]
            Row = namedtuple("MetricsTuple", [f"m{i}" for i in range(len(params.metrics))])
            if params.metrics == ["VECTOR_SUM"]:
                return [(k, Row(self._vector_sum(col, k, params, extractors))) for k in keys]
            return [(k, Row(*(len(groups.get(k, [])) + self._noise() for _ in params.metrics))) for k in keys]

        def _vector_sum(self, col, key, params, extractors):
            """Each unit's vectors summed, clipped to the L∞ bound per unit (or, with
            FLAGS["clip_total"], only the partition's total), plus Laplace noise of scale M/ε."""
            bound, units = params.vector_max_norm, {}
            for row in col:
                if extractors.partition_extractor(row) == key:
                    unit = extractors.privacy_id_extractor(row)
                    units[unit] = units.get(unit, 0.0) + np.asarray(extractors.value_extractor(row), dtype=float)
            if FLAGS["clip_total"]:
                total = np.clip(sum(units.values()), -bound, bound)
            else:
                total = sum(np.clip(v, -bound, bound) for v in units.values())
            return total + RNG.laplace(0.0, bound / self.budget.epsilon, size=np.shape(total))

        def select_partitions(self, col, params, extractors):
            counts: dict = {}
            for row in col:
                counts[extractors.partition_extractor(row)] = counts.get(extractors.partition_extractor(row), 0) + 1
            return [k for k, n in counts.items() if n + self._noise() > 10]

        def add_dp_noise(self, col, params, out_explain_computation_report=None):
            return [(k, v + self._noise()) for k, v in col]

        def calculate_private_contribution_bounds(self, *args, **kwargs):
            raise NotImplementedError

        def explain_computations_report(self):
            return ""

    module = _module("pipeline_dp", Metrics=metrics, NoiseKind=enum("LAPLACE", "GAUSSIAN"),
                     NormKind=enum("Linf", "L1", "L2"),
                     PartitionSelectionStrategy=enum("TRUNCATED_GEOMETRIC", "LAPLACE_THRESHOLDING",
                                                     "GAUSSIAN_THRESHOLDING", "WEIGHTED_GAUSSIAN_THRESHOLDING"),
                     AggregateParams=Params, SelectPartitionsParams=Params, AddDPNoiseParams=Params, DataExtractors=Params,
                     LocalBackend=object, DPEngine=DPEngine, NaiveBudgetAccountant=Accountant,
                     PLDBudgetAccountant=Accountant, BudgetAccountant=object)
    return {"pipeline_dp": module}


# -- smartnoise-sql -----------------------------------------------------------------------------------
def _snsql() -> dict:
    class PrivateReader:
        rewrites = 0

        def __init__(self, frame, privacy, metadata):
            self.frame, self.privacy, self.metadata = frame, privacy, metadata

        def parse_query_string(self, sql):
            return sql

        def _rewrite_ast(self, query):
            PrivateReader.rewrites += 1
            return ("subquery", query)

        def _execute_ast(self, query):
            _, sql = self._rewrite_ast(query)
            width = sql.split(" FROM ")[0].count(",") + 1
            noise = lambda: RNG.laplace(0.0, 1.0 / self.privacy.epsilon)  # noqa: E731
            if "GROUP BY" in sql:
                groups = self.frame.groupby("g").size()
                return [["g"] + ["v"] * (width - 1)] + [[g, *(n + noise() for _ in range(width - 1))]
                                                       for g, n in groups.items()]
            return [["v"] * width, [len(self.frame) + noise() for _ in range(width)]]

        def get_privacy_cost(self, sql):
            return (self.privacy.epsilon * (sql.count("(") or 1), self.privacy.delta)

        execute = execute_df = execute_with_accuracy = execute_with_accuracy_df = lambda self, sql: None

    class Privacy:
        def __init__(self, epsilon=1.0, delta=1e-15):
            self.epsilon, self.delta = epsilon, delta
            self.mechanisms = types.SimpleNamespace(map={})

    names = types.SimpleNamespace(count="count", sum_float="sum_float", gaussian="gaussian", laplace="laplace")
    reader_module = _module("snsql.sql.private_reader", PrivateReader=PrivateReader)
    module = _module("snsql", Privacy=Privacy, Stat=names, Mechanism=names,
                     from_df=lambda frame, privacy, metadata: PrivateReader(frame, privacy, metadata))
    return {"snsql": module, "snsql.sql": _module("snsql.sql", private_reader=reader_module),
            "snsql.sql.private_reader": reader_module}


# -- smartnoise-synth ---------------------------------------------------------------------------------
def _snsynth() -> dict:
    class Transformer:
        def __init__(self, columns):
            self.columns, self.categories, self.fit_complete = list(columns), None, False

        @staticmethod
        def create(frame, style="cube", categorical_columns=()):
            return Transformer(categorical_columns)

        def fit(self, frame, epsilon=0.0):
            self.categories, self.fit_complete = {c: sorted(set(frame[c])) for c in self.columns}, True

    class Mwem:
        #: Where the fake draws: its seeded generator (MWEM's rows); the MST and AIM fakes draw from
        #: numpy's global generator, as snsynth's selection does, which a gray-box replay intercepts.
        draw = None

        def __init__(self, epsilon):
            self.epsilon = epsilon

        def fit(self, frame, transformer=None, categorical_columns=(), preprocessor_eps=0.0):
            self.columns = list(frame.columns)
            transformer = transformer or Transformer.create(frame, categorical_columns=self.columns)
            if not transformer.fit_complete:
                transformer.fit(frame, epsilon=preprocessor_eps)
            self.categories = transformer.categories

        def sample(self, rows):
            draw = self.draw or RNG.choice
            return pd.DataFrame({c: draw(self.categories[c], size=rows) for c in self.columns})

    class Synthesizer:
        @staticmethod
        def create(name, epsilon=None, **kwargs):
            model = Mwem(epsilon)
            model.draw = None if name == "mwem" else np.random.choice
            model.kwargs = kwargs  # what the catalogue passes (epochs, batch_size, delta)
            return model

    class DPcovariance:
        def __init__(self, n, cols, rng, global_eps):
            self.columns, self.rng = cols, rng
            ranges = [rng[c][1] - rng[c][0] for c in cols]
            self.scale = [2 / n * ranges[i] * ranges[j] / (global_eps / 3) for i in range(2) for j in range(i, 2)]

        def release(self, data):
            clipped = np.column_stack([np.clip(data[c], *self.rng[c]) for c in self.columns])
            used = data[self.columns].to_numpy() if FLAGS["raw"] else clipped
            covariance = np.cov(used.T)[np.triu_indices(2)]
            return list(covariance + RNG.laplace(0.0, self.scale))

    covariance = _module("snsynth.models.dp_covariance", DPcovariance=DPcovariance)
    models = _module("snsynth.models", __all__=["DPLinearRegression"], DPLinearRegression=object,
                     dp_covariance=covariance)
    base = _module("snsynth.base", synth_map={n: {} for n in ("mwem", "dpctgan", "patectgan", "mst", "pacsynth",
                                                               "dpgan", "pategan", "aim")})
    # The modules the release's generators live in (the names the catalogue's entries carry).
    mwem = _module("snsynth.mwem", MWEMSynthesizer=Synthesizer)
    mst, aim = _module("snsynth.mst", MSTSynthesizer=Synthesizer), _module("snsynth.aim", AIMSynthesizer=Synthesizer)
    nn = {f"snsynth.pytorch.nn.{n}": _module(f"snsynth.pytorch.nn.{n}", **{n.upper(): Synthesizer})
          for n in ("dpctgan", "dpgan")}
    module = _module("snsynth", Synthesizer=Synthesizer, TableTransformer=Transformer, models=models, base=base,
                     mwem=mwem, mst=mst, aim=aim, __file__="snsynth/__init__.py")
    return {"snsynth": module, "snsynth.base": base, "snsynth.models": models, "snsynth.models.dp_covariance": covariance,
            "snsynth.mwem": mwem, "snsynth.mst": mst, "snsynth.aim": aim, **nn,
            "snsynth.pytorch": _module("snsynth.pytorch"), "snsynth.pytorch.nn": _module("snsynth.pytorch.nn")}


# -- dpmm ---------------------------------------------------------------------------------------------
def _dpmm() -> dict:
    class Pipeline:
        def __init__(self, epsilon=1.0, delta=1e-5, n_jobs=-1, **_):
            self.epsilon = epsilon

        def fit(self, frame, domain=None, random_state=None):
            self.categories = {c: list(frame[c].cat.categories) for c in frame.columns}

        def generate(self, rows):
            return pd.DataFrame({c: pd.Categorical(RNG.choice(v, size=rows), categories=v)
                                 for c, v in self.categories.items()})

    PrivBayesPipeline = type("PrivBayesPipeline", (Pipeline,), {})
    MSTPipeline = type("MSTPipeline", (Pipeline,), {})
    AIMPipeline = type("AIMPipeline", (Pipeline,), {})
    pipelines = _module("dpmm.pipelines", PrivBayesPipeline=PrivBayesPipeline, MSTPipeline=MSTPipeline,
                        AIMPipeline=AIMPipeline, PIPELINE_DICT={"priv_bayes": PrivBayesPipeline, "mst": MSTPipeline,
                                                                "aim": AIMPipeline})
    return {"dpmm": _module("dpmm", pipelines=pipelines), "dpmm.pipelines": pipelines}
