"""The dpmm catalogue (``dpmm``, DP marginal models): the PrivBayes, MST and AIM pipelines, whose release
is the synthetic table they generate.

A pipeline's claim is the (ε, δ) it is created with (``PrivBayesPipeline(epsilon=ε, delta=δ)``),
for one record added or removed.  ``fit(df)`` without a ``domain`` reads each categorical column's
categories from the data (dpmm itself warns "PrivacyLeakage: No categorical domain provided ...
will be imputed"), and the generated table's columns carry that domain as their categorical dtype:
a category that only one record holds is released with certainty, whatever the noise.

The release (:func:`generate`) is what a caller receives: the categories of each column's dtype
(their number and whether the new category a = 3 is among them) and the statistics of
:func:`scenarios.libraries.snsynth.table_statistics`-like cell counts of the generated rows.

The release call sets ``gen_kwargs={"n_iters": ITERATIONS}``: the number of mirror-descent steps
of the model's inference (Private-PGM), which runs on the noisy marginals after they are measured,
so it is post-processing and the claim covers every value of it (Dwork & Roth 2014, Prop. 2.1).
The library's defaults (5,000 for PrivBayes, 10,000 for MST, 1,000 a round for AIM) spend more
than 90% of a fit's CPU there (profiled: ``mirror_descent`` took 11.1 of 12.4 s of a PrivBayes
fit); with 100 steps a fit on two columns of eight records takes 0.3 s of CPU for PrivBayes,
0.8 s for AIM and 3.2 s for MST, whose selection step runs its own 2,500-step inference that no
parameter reaches.  The domain leak is upstream of all of it.  Rows are of cost ``pipeline``
(:data:`audit.sweep.plan.BUDGETS`): 100 fits a side at the default budget, far above the 34 a side
with which a perfectly separating event refutes (1, 1e-5)-DP.

References
----------
dpmm documentation and source (sassoftware/dpmm 0.1.9: ``dpmm.pipelines``, ``fit(df, domain=...)``);
Zhang et al. (2017), "PrivBayes: private data release via Bayesian networks", ACM TODS 42(4).
"""

from __future__ import annotations

import numpy as np

from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import ApproxDP, PureDP, Relation

from .. import scenario as _scenario
from .catalogue import Case, Entry, Library, require_library
from .families import row_pairs
from .registry import register_library
from .tables import cell_statistics

__all__ = ["LIBRARY", "generate", "entries", "public_api", "PIPELINES", "ITERATIONS"]

ADD_REMOVE = Relation.ADD_REMOVE
DOMAIN_A, DOMAIN_B = 4, 2
#: The audited pipelines of ``dpmm.pipelines``.
PIPELINES = ("PrivBayesPipeline", "MSTPipeline", "AIMPipeline")
#: Mirror-descent steps of the inference run on the measured marginals (post-processing).
ITERATIONS = 100

pipelines = require_library("dpmm.pipelines", catalogue="dpmm", install="pip install dpmm")
pd = require_library("pandas", catalogue="dpmm", install="pip install dpmm")


def generate(data, random_state, *, pipeline, epsilon, delta, rows, n_iters):
    """<pipeline>(epsilon, delta, n_jobs=1, gen_kwargs={"n_iters": n_iters}).fit(table).generate(rows)
    on categorical columns a, b: the number of categories of each column's dtype, whether a = 3 is
    one of them, and the count of each cell (a, b) of a ∈ {0..3} × b ∈ {0, 1} among the generated
    rows."""
    table = np.asarray(data, dtype=int).reshape(-1, 2)
    frame = pd.DataFrame({"a": pd.Categorical(table[:, 0]), "b": pd.Categorical(table[:, 1])})
    model = getattr(pipelines, pipeline)(epsilon=epsilon, delta=delta, n_jobs=1, gen_kwargs={"n_iters": n_iters})
    model.fit(frame, random_state=random_state)
    out = model.generate(rows)
    categories = [len(out["a"].cat.categories), len(out["b"].cat.categories), float(3 in set(out["a"].cat.categories))]
    synthetic = np.column_stack([np.asarray(out["a"], dtype=float), np.asarray(out["b"], dtype=float)])
    counts, _ = cell_statistics(synthetic, [], (DOMAIN_A, DOMAIN_B))
    return [float(c) for c in categories] + counts[:DOMAIN_A * DOMAIN_B]


_BASE = np.array([[0, 0], [1, 0], [2, 0], [0, 1], [1, 1], [0, 0], [1, 0], [0, 1]], dtype=float)


def _entry(pipeline: str) -> Entry:
    def build(point):
        params = {"pipeline": pipeline, "rows": 20, "n_iters": ITERATIONS, **point}
        claim = (PureDP(point["epsilon"], ADD_REMOVE) if point["delta"] == 0
                 else ApproxDP(point["epsilon"], point["delta"], ADD_REMOVE))
        pairs = row_pairs(_BASE, [([3.0, 0.0], "add a record with a new category a = 3")], ADD_REMOVE)
        label = ", ".join(f"{k}={v!r}" for k, v in point.items())
        layout = (("categories of a", None), ("categories of b", None), ("a = 3 in the domain", None))
        layout += tuple((f"count of cell ({a}, {b})", None) for a in range(DOMAIN_A) for b in range(DOMAIN_B))
        mechanism = LibraryRelease(generate, params, f"dpmm.{pipeline}({label})", claim, len(layout) + 1,
                                   deterministic=False)
        return Case(f"pipelines.{pipeline}", label, dict(point), mechanism, claim,
                    _scenario.from_pairs(pairs, ADD_REMOVE), generate, params, "pipeline", statistic="coordinates",
                    known="dpmm: categorical domain imputed from the data (its own PrivacyLeakage warning)",
                    layout=layout)
    text = (f"dpmm.pipelines.{pipeline}(epsilon, delta): the generated table is (ε, δ)-DP for one record added or "
            "removed; fit(df) without a domain imputes the categories from the data")
    return Entry(f"pipelines.{pipeline}", (f"dpmm.pipelines.{pipeline}",), "model", text, ADD_REMOVE,
                 ({"epsilon": 1.0, "delta": 1e-5},), build)


def entries() -> tuple[Entry, ...]:
    """The whole catalogue."""
    return tuple(_entry(name) for name in PIPELINES)


def public_api() -> tuple[str, ...]:
    """The pipelines of ``dpmm.pipelines`` (``PIPELINE_DICT`` of the installed release)."""
    names = getattr(pipelines, "PIPELINE_DICT", {})
    classes = [getattr(v, "__name__", str(v)) for v in names.values()] or \
        [n for n in dir(pipelines) if n.endswith("Pipeline")]
    return tuple(sorted(f"dpmm.pipelines.{n}" for n in set(classes)))


LIBRARY = register_library(Library(
    name="dpmm", distribution="dpmm", entries=entries, public_api=public_api, excluded={},
    script_header="import numpy as np\nimport pandas as pd\nfrom dpmm import pipelines\n\nDOMAIN_A, DOMAIN_B = 4, 2\n",
    helpers=(cell_statistics,), seeded=False))
