"""The SmartNoise Synth catalogue (``smartnoise-synth``): synthetic-data generators, whose release is
the synthetic table, and the covariance-method linear regression of ``snsynth.models``.

**A generator's release** is the synthetic table it samples after one fit, read by statistics that
see one record (:func:`table_statistics`): the count of every cell of the (small, categorical)
domain, hence the count of the record and of its neighbours, the one-way marginals, and the
record's Hamming distance to the nearest synthetic row.  Neighbours add or remove one record: a
record in a rare cell, one with a category that appears nowhere else, a common one.

The claim is the ``epsilon`` the generator is created with (``Synthesizer.create(name,
epsilon=ε)``: "the privacy budget"), ε-DP for one record added or removed; MST and AIM, which
take a ``delta`` too ("privacy parameter") and spend ρ = cdp_rho(ε, δ) in zCDP, claim (ε, δ)-DP.  snsynth's documentation
notes that the transformer infers a categorical column's categories from the data unless it is
fitted on public data (``preprocessor_eps`` pays only for continuous bounds): the rows here call
``fit`` both ways, as a user who follows the quick start does, and with a transformer fitted on
the public domain.

**DPLinearRegression** fits ``coef_`` from a covariance matrix (``DPcovariance``) released with Laplace noise
calibrated to the declared bounds, sensitivity 2/n·range_i·range_j with n public (replace
relation), after clipping to the bounds.  Until 1.0.5 the clipped data were computed and the raw
data used (opendp/smartnoise-sdk#622, fixed in 1.0.6): a record beyond the bounds then moves the
covariance without limit.  The row audits the covariance release itself: under numpy ≥ 2 every
``DPLinearRegression.fit`` raises after it, in the sweep step (``np.where(m is False)`` on a 0-d
array), so the coefficients are not a release one can observe there.

**Black box or gray box, per entry.**  An MWEM fit costs about 0.1 s of CPU, so its rows are
black-box rows at the default budget.  An MST fit costs about 0.6 s and an AIM fit about 1.5 s
(after the 3 s a process spends once compiling mbi's JAX estimation), out of reach of that budget:
their rows are gray-box rows (:attr:`~.catalogue.Case.graybox`): the pair is recorded on D and
replayed on D′ (docs/graybox.md), and the certified audit runs with the draws its separating
event needs (:func:`audit.sweep.plan.refutable_samples`): one of rate 0.25 for MST and 0.35 for
AIM (``Case.event_rate``, measured: see :func:`entries`), a perfect one for DP-CTGAN and DP-GAN,
gray-box rows too at one epoch.

MWEM draws from numpy's global generator, MST's and AIM's Gaussian noise comes from OpenDP's
``make_gaussian`` (sampled in Rust) and the covariance noise from ``np.random``: the sweep does not
seed them, so rows are reproducible in distribution only.

References
----------
SmartNoise Synth documentation (docs.smartnoise.org/synth: Synthesizer.create, TableTransformer);
Hardt, Ligett & McSherry (2012), "A simple and practical algorithm for differentially private
data release" (MWEM); McKenna, Miklau & Sheldon (2021), "Winning the NIST contest: a scalable and
general approach to differentially private synthetic data", JPC 11(3) (MST); McKenna et al.
(2022), "AIM: an adaptive and iterative mechanism for differentially private synthetic data",
PVLDB 15(11); opendp/smartnoise-sdk#622.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import io
import os

import numpy as np

from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import ApproxDP, PureDP, Relation

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, point_label, require_library
from .families import row_pairs
from .registry import register_library
from .tables import cell_statistics

__all__ = ["LIBRARY", "table_statistics", "synthesize", "regression", "entries", "public_api"]

ADD_REMOVE, REPLACE = Relation.ADD_REMOVE, Relation.REPLACE
#: The categorical domain of the generator rows: a ∈ {0, 1, 2, 3}, b ∈ {0, 1}; a = 3 is the new category.
DOMAIN_A, DOMAIN_B = 4, 2
SNSYNTH_622 = "opendp/smartnoise-sdk#622 (covariance clips the data, then uses the raw data; fixed in 1.0.6)"
INFERRED = ("snsynth documents it: a transformer not fitted on public data infers each categorical column's "
            "categories from the data, which no preprocessor_eps pays for")
SNSYNTH_473 = ("opendp/smartnoise-sdk#473 (MWEM's histogram bins span each column's min and max in the data, "
               "whatever the transformer's categories; closed, still so in 1.0.8)")

snsynth = require_library("snsynth", catalogue="smartnoise-synth", install="pip install smartnoise-synth")
pd = require_library("pandas", catalogue="smartnoise-synth", install="pip install smartnoise-synth")


# -- release functions (their source goes into reproduction scripts) --------------------------------
def table_statistics(table, probes):
    """What one record can change in a synthetic table of columns a, b: the count of each cell
    (a, b) of the domain, the rows outside it, the one-way marginals, and each probe record's
    Hamming distance to the nearest synthetic row (:func:`~.tables.cell_statistics`)."""
    counts, distances = cell_statistics(table, probes, (DOMAIN_A, DOMAIN_B))
    return counts + distances


def synthesize(data, random_state, *, synth, epsilon, rows, probes, public_domain=False, **kwargs):
    """Synthesizer.create(synth, epsilon).fit(table) then sample(rows): the synthetic table's
    statistics (:func:`table_statistics`).  ``public_domain``: the transformer is first fitted on a
    table of every category of the public domain, as snsynth's documentation advises.  What the
    fit prints (AIM prints its initial σ) is discarded."""
    frame = pd.DataFrame(np.asarray(data, dtype=int).reshape(-1, 2), columns=["a", "b"])
    model = snsynth.Synthesizer.create(synth, epsilon=epsilon, **kwargs)
    with contextlib.redirect_stdout(io.StringIO()):
        if public_domain:
            domain = pd.DataFrame([(a, b) for a in range(DOMAIN_A) for b in range(DOMAIN_B)], columns=["a", "b"])
            style = "gan" if synth in ("dpctgan", "patectgan", "dpgan", "pategan") else "cube"  # as each fit's own
            transformer = snsynth.TableTransformer.create(domain, style=style, categorical_columns=["a", "b"])
            transformer.fit(domain, epsilon=0.0)  # else fit() below fits it on the data (create only types it)
            model.fit(frame, transformer=transformer, preprocessor_eps=0.0)
        else:
            model.fit(frame, categorical_columns=["a", "b"], preprocessor_eps=0.0)
        table = model.sample(rows)
    return table_statistics(table[["a", "b"]].to_numpy(), probes)


def covariance_class():
    """snsynth.models.dp_covariance.DPcovariance; releases up to 1.0.5 fail to import the package
    ``snsynth.models`` on scikit-learn ≥ 0.24 (``sklearn.linear_model.base``), so the module's file is
    then loaded on its own (it imports only numpy, pandas and math)."""
    try:
        return importlib.import_module("snsynth.models.dp_covariance").DPcovariance
    except ImportError:
        path = os.path.join(os.path.dirname(snsynth.__file__), "models", "dp_covariance.py")
        spec = importlib.util.spec_from_file_location("snsynth_dp_covariance", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.DPcovariance


def regression(data, random_state, *, epsilon, bounds):
    """snsynth.models.dp_covariance.DPcovariance(n, ["x", "y"], bounds, epsilon).release(table): the
    noisy lower triangle of the covariance of rows (x, y) that DPLinearRegression.fit solves."""
    rows = np.asarray(data, dtype=float).reshape(-1, 2)
    frame = pd.DataFrame({"x": rows[:, 0], "y": rows[:, 1]})
    ranges = pd.DataFrame({"x": list(bounds[0]), "y": list(bounds[1])})
    covariance = covariance_class()
    return [float(v) for v in covariance(len(rows), ["x", "y"], ranges, epsilon).release(frame)]


# -- cases ------------------------------------------------------------------------------------------
#: Eight records: cell (2, 1) is empty (rare), category a = 3 absent (new).
_BASE = np.array([[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [0, 0], [1, 0], [0, 1]], dtype=float)
_EXTRA = {"new category": ([3.0, 0.0], "add a record with a new category a = 3"),
          "rare cell": ([2.0, 1.0], "add a record in the empty cell (2, 1)"),
          "common": ([0.0, 0.0], "add a common record (0, 0)")}


#: Keys of a grid point that choose the pair and the relation, not the synthesizer's arguments.
_ROW_KEYS = ("data", "relation")


def _generator(name: str, grid, *, text: str, approx: bool = False, graybox: bool = False,
               event_rate: float = 1.0, fixed=None, module: str = "") -> Entry:
    """An entry of ``Synthesizer.create(name, ...)``: ε-DP (``approx``: (ε, δ)-DP with the grid
    point's ``delta``) for one record added or removed; a ``graybox`` entry's rows are gray-box rows
    that draw what an event of probability ``event_rate`` on one side (0 on the other) needs.
    ``module``: where the release defines the generator, when ``snsynth.<name>`` is not a module."""
    def build(point):
        # One pair a row (see entries); "replace": the last record (0, 1) becomes the new category, n fixed.
        relation = REPLACE if point.get("relation") == "replace" else ADD_REMOVE
        pairs = (point.get("data", "new category"),)
        probes = [list(_EXTRA[k][0]) for k in pairs]
        # A gray-box row audits at the few draws its separating event needs (``event_rate``): 200 synthetic
        # rows make "the new category appears" near certain on D′ whenever the generator gives it mass.
        params = {"synth": name, "rows": 200 if graybox else 20, "probes": probes, **(fixed or {}),
                  **{k: v for k, v in point.items() if k not in _ROW_KEYS}}
        claim = (ApproxDP(point["epsilon"], point["delta"], relation) if approx
                 else PureDP(point["epsilon"], relation))
        extra = [(_EXTRA[k][0], _EXTRA[k][1] if relation is ADD_REMOVE else
                  f"last record (0, 1) → {tuple(int(v) for v in _EXTRA[k][0])}, {k}") for k in pairs]
        scenario = _scenario.from_pairs(row_pairs(_BASE, extra, relation), relation)
        label = point_label(point)
        layout = tuple((f"count of cell ({a}, {b})", None) for a in range(DOMAIN_A) for b in range(DOMAIN_B))
        layout += (("rows outside the domain", None),) + tuple((f"marginal a = {a}", None) for a in range(DOMAIN_A))
        layout += tuple((f"marginal b = {b}", None) for b in range(DOMAIN_B))
        layout += tuple((f"distance of {p} to the table", None) for p in probes)
        mechanism = LibraryRelease(synthesize, params, f"snsynth.{name}({label})", claim, len(layout) + 1,
                                   deterministic=False)
        return Case(f"synthesizers.{name}", label, dict(point), mechanism, claim, scenario, synthesize, params, "fit",
                    statistic="coordinates", layout=layout, graybox=graybox, event_rate=event_rate,
                    known=(SNSYNTH_473 if name == "mwem" and pairs == ("new category",) else
                           INFERRED if pairs == ("new category",) and not point.get("public_domain") else ""))
    api = (f"snsynth.{name}",) + ((module,) if module else ())
    return Entry(f"synthesizers.{name}", api, "model", text, ADD_REMOVE, tuple(grid), build)


def _regression() -> Entry:
    def build(point):
        bounds = ((0.0, 1.0), (0.0, 1.0))
        params = {"epsilon": point["epsilon"], "bounds": bounds}
        claim = PureDP(point["epsilon"], REPLACE)
        # n = 100 records on the diagonal (x = y, spread over the bounds): with n public the noise
        # scale 2/n·3/ε keeps the released covariance positive definite on most fits.
        grid = np.linspace(0.0, 1.0, 100)
        base = np.column_stack([grid, grid])
        extra = [([1.0, 0.0], "last record → corner (1, 0)"), ([50.0, 0.0], "last record → outlier (50, 0), beyond "
                                                                            "the bounds (clipped)"),
                 ([50.0, 50.0], "last record → outlier (50, 50)")]
        scenario = _scenario.from_pairs(row_pairs(base, extra, REPLACE), REPLACE)
        label = point_label(point)
        mechanism = LibraryRelease(regression, params, f"snsynth.DPcovariance({label})", claim, 4,
                                   deterministic=False)
        return Case("models.DPcovariance", label, dict(point), mechanism, claim, scenario, regression, params,
                    "query", statistic="coordinates", known=SNSYNTH_622,
                    layout=(("cov(x, x)", None), ("cov(x, y)", None), ("cov(y, y)", None)))
    text = ("snsynth.models.DPcovariance(n, cols, bounds, global_eps).release(data), the covariance method of "
            "DPLinearRegression ('Differentially Private Linear Regression using the Covariance Method'): Laplace "
            "noise of scale sensitivity/(ε/3) per entry, sensitivity 2/n·range_i·range_j (n public: replace "
            "relation), data clipped to the bounds")
    return Entry("models.DPcovariance", ("snsynth.models.DPLinearRegression", "snsynth.models.DPcovariance"), "model",
                 text, REPLACE, ({"epsilon": 1.0}, {"epsilon": 2.0}), build)


# -- the library --------------------------------------------------------------------------------------
def entries() -> tuple[Entry, ...]:
    """The whole catalogue."""
    # MWEM's rows are black-box rows: a fit costs about 0.1 s of CPU (20 multiplicative-weights rounds
    # in Python), so a row of the default budget (1,500 fits a dataset) is 5 minutes of CPU a pair.
    mwem = _generator("mwem", [{"epsilon": 1.0}, {"epsilon": 1.0, "public_domain": True},
                               {"epsilon": 1.0, "data": "rare cell"},
                               {"epsilon": 1.0, "public_domain": True, "relation": "replace"}],
                      text="snsynth Synthesizer.create('mwem', epsilon=ε): 'epsilon: the privacy budget' of the fit; "
                           "the synthetic table is ε-DP for one record added or removed (the transformer's "
                           "categories are public only if it is fitted on public data)")
    # MST's and AIM's rows are gray-box rows: a fit costs 0.6 s (MST) and 1.5 s (AIM) of CPU once the
    # process has compiled mbi's JAX estimation (3 s, once), out of reach of the default budget.  With
    # the categories read from the data, the new category appears in 200 synthetic rows on a fraction
    # of the fits with its record and on none without it (benchmarks/snsynth_event_rates.py: fresh
    # unseeded fits, not a sweep's; 1.0.8): 54 of 100 fits for MST and 50 of 100 for AIM, one-sided 95%
    # lower Clopper-Pearson bounds 0.45 and 0.41.  The rows draw what an event of rate 0.25 (MST) and
    # 0.35 (AIM) needs, 303 and 212 fits a side, rates set from earlier, smaller runs (26 of 60, 46 of
    # 100) and below both bounds.  AIM's ``rounds`` (the default is 16 a column, 32 here; the claim
    # holds for any number) are left at the default the users run: at 2 a fit takes 0.84 s and the
    # category shows on 39 of 100 fits (bound 0.31), a third less CPU a row, for a configuration
    # nobody runs by default.
    grid = [{"epsilon": 1.0, "delta": 1e-9}, {"epsilon": 1.0, "delta": 1e-9, "public_domain": True}]
    mst = _generator("mst", grid, approx=True, graybox=True, event_rate=0.25,
                     text="snsynth Synthesizer.create('mst', epsilon=ε, delta=δ) (MSTSynthesizer: 'epsilon: "
                          "privacy budget for the synthesizer', 'delta: privacy parameter'): Gaussian one- and "
                          "two-way marginals and an exponential-mechanism tree at ρ = cdp_rho(ε, δ), so the "
                          "synthetic table is (ε, δ)-DP for one record added or removed (McKenna et al. 2021)")
    aim = _generator("aim", grid, approx=True, graybox=True, event_rate=0.35,
                     text="snsynth Synthesizer.create('aim', epsilon=ε, delta=δ) (AIMSynthesizer: 'epsilon: "
                          "privacy budget for the synthesizer', 'delta: privacy parameter'): Gaussian marginals "
                          "chosen by the exponential mechanism at ρ = cdp_rho(ε, δ), so the synthetic table is "
                          "(ε, δ)-DP for one record added or removed (McKenna et al. 2022)")
    # DP-CTGAN's and DP-GAN's rows are gray-box rows too, at one epoch of one batch of the eight
    # records (0.1 s a fit once torch is warm): the claim holds for any number of epochs (the
    # accountant calibrates the training to its steps), and the few fits a gray-box row affords
    # would not train a longer one.  With categories from the data the new category was in the 200
    # synthetic rows on 40 of 40 fits with its record and on none of 40 without (1.0.8): a perfect
    # event.  δ is passed, as the default 1/(n·√n) depends on the data.
    gans = [{"epsilon": 1.0, "delta": 1e-5}, {"epsilon": 1.0, "delta": 1e-5, "public_domain": True}]
    dpctgan = _generator("dpctgan", gans, approx=True, graybox=True,
                         fixed={"epochs": 1, "batch_size": 8, "verbose": False, "cuda": False},
                         module="snsynth.pytorch.nn.dpctgan",
                         text="snsynth Synthesizer.create('dpctgan', epsilon=ε, delta=δ) (DPCTGAN: CTGAN whose "
                              "discriminator is trained by Opacus's DP-SGD until the accountant reaches ε at δ), so "
                              "the synthetic table is (ε, δ)-DP for one record added or removed (its DataSampler "
                              "draws the conditional vectors, in training and in sample(), from the data's own "
                              "category frequencies, which 1.0.8 does not noise)")
    dpgan = _generator("dpgan", gans, approx=True, graybox=True, fixed={"epochs": 1, "batch_size": 8},
                       module="snsynth.pytorch.nn.dpgan",
                       text="snsynth Synthesizer.create('dpgan', epsilon=ε, delta=δ) (DPGAN: a GAN whose "
                            "discriminator is trained by Opacus's DP-SGD, noise multiplier 3.5, until the "
                            "accountant reaches ε at δ), so the synthetic table is (ε, δ)-DP for one record "
                            "added or removed")
    return (mwem, mst, aim, dpctgan, dpgan, _regression())


def public_api() -> tuple[str, ...]:
    """The generators ``Synthesizer.create`` knows (``snsynth.base.synth_map`` of the installed release)
    and the models of ``snsynth.models``."""
    synth_map = getattr(importlib.import_module("snsynth.base"), "synth_map", {})
    try:
        models = list(getattr(importlib.import_module("snsynth.models"), "__all__", []))
    except ImportError:  # up to 1.0.5 on a current scikit-learn (see covariance_class)
        models = ["DPLinearRegression"]
    return tuple(sorted([f"snsynth.{n}" for n in synth_map] + [f"snsynth.models.{n}" for n in models] +
                        ["snsynth.models.DPcovariance"]))


_EXCLUDED = {
    "snsynth.patectgan": "not auditable as a black box, nor as a gray-box row within the sweep's budget: one fit "
                         "of the eight records at one epoch took 285 s of CPU (1.0.8, measured), so a gray-box row, "
                         "at the ~54 fits a side a perfectly separating event needs, would take about 8.5 hours "
                         "(17 for the two rows each other generator has)",
    "snsynth.pategan": "not auditable as a black box on a table a fit can afford: on eight records 1.0.8 raises 'number sections "
                       "must be larger than 0' (its teachers split the data into n // 1000 parts, none below 1,000 "
                       "records)",
    "snsynth.pacsynth": "not yet written: on small tables its Rust core panics ('adding noise to number of "
                        "records resulted in a negative number') and aborts the process, which a row cannot catch",
}

LIBRARY = register_library(Library(
    name="smartnoise-synth", distribution="smartnoise-synth", entries=entries, public_api=public_api,
    excluded=_EXCLUDED, script_header="import contextlib\nimport importlib\nimport importlib.util\nimport io\nimport os\n"
                                      "import numpy as np\nimport pandas as pd\nimport snsynth\n\n"
                                      f"DOMAIN_A, DOMAIN_B = {DOMAIN_A}, {DOMAIN_B}\n",
    helpers=(cell_statistics, table_statistics, covariance_class), seeded=False))
