"""The synthcity catalogue (``synthcity``): its DP generators, whose release is the synthetic table.

The DP generators are the plugins whose constructor takes an ``epsilon``: ``privbayes``, ``dpgan``,
``pategan`` and ``aim`` (category "privacy"; ``adsgan`` and ``decaf`` share the category but claim
no DP).  A generator is used as synthcity's quick start shows::

    plugin = Plugins().get(name, epsilon=ε, ...)
    plugin.fit(frame)
    table = plugin.generate(count).dataframe()

**The release** is the synthetic table, read by statistics that see one record
(:func:`table_statistics`): the count of every cell (a, b) of the small categorical domain (hence
the count of the record and of its neighbours), the rows outside it, the one-way marginals, the
largest value of column a (a bound read from the data shows there), and each probe record's
Hamming distance to the nearest synthetic row.  Neighbours add or replace one record: a record
whose category a = 3 no other record holds, one in the empty cell (2, 1), a common one.

**The claims.**  PrivBayes (``epsilon``, "PrivBayes satisfies 2eps-differential privacy, eps1 +
eps2", the budget split in halves) is ε-DP; AIM, DP-GAN (Opacus ``make_private_with_epsilon``) and
PATE-GAN are (ε, δ)-DP with the ``delta`` passed to them.  Two of synthcity's defaults make the
claim depend on the data, which is why the rows pass δ: DP-GAN's ``delta=None`` becomes 1/n, and
PATE-GAN sets ``self.delta = None`` whatever ``delta`` it is given and then uses 1/(n·√n).

**What synthcity reads from the data, before any noise** (the bug classes the rows reach):
``Plugin.fit`` builds the training schema from the data (each column's categories, its min and
max) and ``generate`` keeps only rows that satisfy it; the tabular encoder of the GANs and
PrivBayes's ``LabelEncoder`` take their categories from the data too.  A category that only one
record holds is then released whenever the generator draws it, and never without the record.
PrivBayes adds Laplace noise of scale 2(d − K)/(n·ε/2) to *counts*, the scale of the paper's
noise on probabilities, n times too small (the bug DataResponsibly/DataSynthesizer#34 reported
in the code synthcity's follows); and ``Plugin.fit`` reseeds numpy, torch and ``random`` with the
plugin's ``random_state``, 0 unless the caller sets it, so that by default every fit on the same
data draws the same noise and the table is a deterministic function of the data.  The rows pass
``random_state`` drawn from the audit's generator, except one PrivBayes row that keeps the default.

**Black box or gray box, per row.**  A PrivBayes fit costs about 0.1 s of CPU on twelve records,
so its rows are black-box rows at the default budget (1,500 fits a dataset).  A DP-GAN or PATE-GAN
fit costs about 0.5 to 1.3 s of CPU with a few iterations (1.5 to 4 s of wall time on the shared
machine), out of reach of that budget: their rows are gray-box rows (:attr:`Case.graybox`): the
pair is recorded on D and replayed on D′ (docs/graybox.md), and the certified audit runs with the
draws a perfectly separating event needs (:func:`audit.sweep.plan.refutable_samples`).

References
----------
synthcity documentation and source (vanderschaarlab/synthcity 0.2.12: ``synthcity.plugins``,
``plugins/privacy/plugin_*.py``, ``plugins/core/plugin.py``); Zhang et al. (2017), "PrivBayes:
private data release via Bayesian networks", ACM TODS 42(4); Jordon, Yoon & van der Schaar (2019),
"PATE-GAN", ICLR; Xie et al. (2018), "Differentially private generative adversarial network";
McKenna et al. (2022), "AIM: an adaptive and iterative mechanism for differentially private
synthetic data", PVLDB 15(11); vanderschaarlab/synthcity#278 (PATE-GAN's bounds read from the data).
"""

from __future__ import annotations

import inspect
import sys
import tempfile
from typing import Mapping

import numpy as np
from tqdm import tqdm

from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import ApproxDP, PureDP, Relation

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, point_label, require_library
from .families import row_pairs
from .registry import register_library
from .tables import cell_statistics

__all__ = ["LIBRARY", "table_statistics", "generate", "entries", "public_api"]

ADD_REMOVE, REPLACE = Relation.ADD_REMOVE, Relation.REPLACE
#: The categorical domain of the rows: a ∈ {0, 1, 2, 3}, b ∈ {0, 1}; a = 3 is the new category.
DOMAIN_A, DOMAIN_B = 4, 2
SYNTHCITY_278 = "vanderschaarlab/synthcity#278 (PATE-GAN: data bounds read from the data, not DP)"
SCHEMA = ("synthcity: Plugin.fit reads the schema (categories, min and max) from the data and generate keeps "
          "only rows inside it; no upstream report")
PRIVBAYES_SCALE = ("synthcity PrivBayes: Laplace noise on counts at the scale of noise on probabilities, n times "
                   "too small (as DataResponsibly/DataSynthesizer#34); no upstream report for synthcity")
SEEDED = "synthcity: Plugin.fit reseeds numpy, torch and random with random_state = 0 by default; no upstream report"

_INSTALL = "dpaudit sweep synthcity==VERSION builds its environment (docs/libraries/synthcity.md)"
plugins_module = require_library("synthcity.plugins", catalogue="synthcity", install=_INSTALL)
pd = require_library("pandas", catalogue="synthcity", install=_INSTALL)


def _warm_up() -> None:
    """Run the lazy initialisations of a process's first GAN fit now, outside any replay.

    They draw random *names* through Python's ``random``: ``tempfile.gettempdir()`` probes the
    temporary directory with a random file name (torch reaches it when its first optimizer step
    imports ``torch._dynamo``), and tqdm's first bar creates a multiprocessing lock whose
    semaphore has a random name.  Both draw once per process, so the first fit made 16 random
    calls more than any later fit on the same data, and its gray-box record could not be replayed.
    Neither name reaches the synthetic table.
    """
    tempfile.gettempdir()
    tqdm.get_lock()


_warm_up()


# -- release functions (their source goes into reproduction scripts) --------------------------------
def table_statistics(table, probes):
    """What one record can change in a synthetic table of columns a, b: the count of each cell
    (a, b) of the domain, the rows outside it, the one-way marginals, the largest value of a, and
    each probe record's Hamming distance to the nearest synthetic row (:func:`~.tables.cell_statistics`)."""
    counts, distances = cell_statistics(table, probes, (DOMAIN_A, DOMAIN_B))
    rows = np.asarray(table, dtype=float).reshape(-1, 2)
    largest = float(rows[:, 0].max()) if len(rows) else -1.0
    return counts + [largest] + distances


def generate(data, random_state, *, plugin, rows, probes, seeded=True, **kwargs):
    """Plugins().get(plugin, **kwargs).fit(table).generate(rows): the synthetic table's statistics
    (:func:`table_statistics`).  ``seeded``: the plugin's ``random_state`` is drawn from
    ``random_state`` (else synthcity's default, 0, with which every fit draws the same noise)."""
    torch = sys.modules.get("torch")  # synthcity imported it; one thread a fit (the sweep runs its own workers)
    if torch is not None:
        torch.set_num_threads(1)
    frame = pd.DataFrame(np.asarray(data, dtype=int).reshape(-1, 2), columns=["a", "b"])
    if seeded:
        kwargs["random_state"] = int(random_state.randint(2**31 - 1))
    model = plugins_module.Plugins(categories=["privacy"]).get(plugin, **kwargs)
    model.fit(frame)
    table = model.generate(rows).dataframe()[["a", "b"]].to_numpy()
    return table_statistics(table, probes)


# -- cases ------------------------------------------------------------------------------------------
#: Twelve records (PrivBayes clusters parents with KMeans(n_clusters=10), so it needs ten at least):
#: cell (2, 1) is empty (rare), category a = 3 absent (new); the last record (0, 1) is the one replaced.
_BASE = np.array([[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [0, 0], [1, 0], [2, 0], [0, 0], [1, 1], [1, 0], [0, 1]],
                 dtype=float)
_EXTRA = {"new category": ([3.0, 0.0], "add a record with a new category a = 3"),
          "rare cell": ([2.0, 1.0], "add a record in the empty cell (2, 1)"),
          "common": ([0.0, 0.0], "add a common record (0, 0)")}
_LAYOUT = tuple((f"count of cell ({a}, {b})", None) for a in range(DOMAIN_A) for b in range(DOMAIN_B))
_LAYOUT += (("rows outside the domain", None),) + tuple((f"marginal a = {a}", None) for a in range(DOMAIN_A))
_LAYOUT += tuple((f"marginal b = {b}", None) for b in range(DOMAIN_B)) + (("largest a", None),)
#: Keys of a grid point that choose the pair, the relation and the mode, not the plugin's arguments.
_ROW_KEYS = ("data", "relation", "seeded")


def _generator(name: str, grid, *, approx: bool, graybox: bool, known: str, text: str, fixed: Mapping,
               known_new: bool = False) -> Entry:
    """An entry of plugin ``name``; ``known`` is the issue its rows reach (``known_new``: also the
    new-category row's, else that row reaches the schema read from the data, :data:`SCHEMA`)."""
    def build(point):
        relation = REPLACE if point.get("relation") == "replace" else ADD_REMOVE
        key = point.get("data", "new category")
        probes = [list(_EXTRA[key][0])]
        arguments = {**fixed, **{k: v for k, v in point.items() if k not in _ROW_KEYS}}
        # A gray-box row audits at the few draws a perfectly separating event needs: 200 synthetic rows
        # make "the new category appears" near certain on D′ whenever the generator gives it any mass.
        params = {"plugin": name, "rows": 200 if graybox else 20, "probes": probes,
                  "seeded": point.get("seeded", True), **arguments}
        claim = (ApproxDP(point["epsilon"], point["delta"], relation) if approx else PureDP(point["epsilon"], relation))
        extra = [(_EXTRA[key][0], _EXTRA[key][1] if relation is ADD_REMOVE else
                  f"last record (0, 1) → {tuple(int(v) for v in _EXTRA[key][0])}, {key}")]
        scenario = _scenario.from_pairs(row_pairs(_BASE, extra, relation), relation)
        layout = _LAYOUT + tuple((f"distance of {p} to the table", None) for p in probes)
        label = point_label(point)
        mechanism = LibraryRelease(generate, params, f"synthcity.{name}({label})", claim, len(layout) + 1,
                                   deterministic=False)
        # What the pair reaches: a new category the schema read from the data; a rare cell the entry's own issue.
        row_known = SEEDED if point.get("seeded") is False else (SCHEMA if key == "new category" and not known_new
                                                                 else known)
        return Case(f"plugins.{name}", label, dict(point), mechanism, claim, scenario, generate, params, "fit",
                    statistic="coordinates", known=row_known, layout=layout, graybox=graybox)
    return Entry(f"plugins.{name}", (f"synthcity.plugins.privacy.plugin_{name}",), "model", text,
                 REPLACE if all(p.get("relation") == "replace" for p in grid) else ADD_REMOVE, tuple(grid), build)


def entries() -> tuple[Entry, ...]:
    """The whole catalogue."""
    privbayes = _generator(
        "privbayes", [{"epsilon": 1.0}, {"epsilon": 1.0, "data": "rare cell", "relation": "replace"},
                      {"epsilon": 1.0, "data": "common", "seeded": False}],
        approx=False, graybox=False, known=PRIVBAYES_SCALE, fixed={},
        text="synthcity Plugins().get('privbayes', epsilon=ε): 'PrivBayes satisfies 2eps-differential privacy, "
             "eps1 + eps2 in the paper' with eps1 = eps2 = ε/2 (plugin_privbayes.py), so the table is ε-DP")
    # A few iterations keep a fit near a second; the claim holds for any number of iterations (the
    # accountant calibrates the noise to the steps taken).
    dpgan = _generator(
        "dpgan", [{"epsilon": 1.0, "delta": 1e-5}],
        approx=True, graybox=True, known=SCHEMA, fixed={"n_iter": 10, "batch_size": 8},
        text="synthcity Plugins().get('dpgan', epsilon=ε, delta=δ): the discriminator trained by Opacus "
             "make_private_with_epsilon(target_epsilon=ε, target_delta=δ) ('DP epsilon: privacy budget'), so the "
             "generated table is (ε, δ)-DP (δ = 1/n when not given)")
    pategan = _generator(
        "pategan", [{"epsilon": 1.0, "delta": 1e-5}],
        approx=True, graybox=True, known=SYNTHCITY_278, known_new=True,
        fixed={"n_iter": 2, "n_teachers": 2, "batch_size": 8},
        text="synthcity Plugins().get('pategan', epsilon=ε, delta=δ): teachers trained on disjoint partitions, "
             "Laplace noise on their votes, training stopped once the moments accountant reaches ε "
             "(plugin_pategan.py; the given delta is replaced by 1/(n·√n))")
    return (privbayes, dpgan, pategan)


def public_api() -> tuple[str, ...]:
    """The plugins of the installed release that are DP generators or claim privacy: every plugin of
    category "privacy", and any other whose constructor takes ``epsilon``, each named by its module
    (``synthcity.plugins.privacy.plugin_privbayes`` is ``Plugins().get("privbayes")``)."""
    loader = plugins_module.Plugins()
    names = []
    for name in loader.list():
        cls = loader.get_type(name)
        if cls.type() == "privacy" or "epsilon" in inspect.signature(cls.__init__).parameters:
            names.append(f"synthcity.plugins.{cls.type()}.plugin_{name}")
    return tuple(sorted(names))


_EXCLUDED = {
    "synthcity.plugins.privacy.plugin_aim": (
        "not auditable as a black box: one fit and generate of 20 rows takes 20 s of CPU (60 s of wall time on "
        "the shared 2-core machine) on two columns of twelve records, so a gray-box row (its replay and the ~94 "
        "fits of a perfectly separating event's audit) alone needs over 30 minutes of CPU, the sweep's budget"),
    "synthcity.plugins.privacy.plugin_adsgan": "not DP: AdsGAN's identifiability penalty takes no epsilon, claims no DP",
    "synthcity.plugins.privacy.plugin_decaf": "not DP: DECAF (fairness by causal debiasing) takes no epsilon, claims "
                                              "no DP",
}

LIBRARY = register_library(Library(
    name="synthcity", distribution="synthcity", entries=entries, public_api=public_api, excluded=_EXCLUDED,
    script_header="import sys\nimport numpy as np\nimport pandas as pd\n"
                  "from synthcity import plugins as plugins_module\n\n"
                  f"DOMAIN_A, DOMAIN_B = {DOMAIN_A}, {DOMAIN_B}\n",
    helpers=(cell_statistics, table_statistics), seeded=True))
