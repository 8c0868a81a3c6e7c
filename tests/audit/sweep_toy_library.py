"""A toy "library" in one file, for the sweep's tests: numpy-only releases registered through
:func:`scenarios.libraries.register_library`, as a third-party catalogue would be.

- ``noise.laplace``: x + Lap(Δ/ε), claiming ε-DP for values within Δ: true;
- ``noise.halved``: x + Lap(Δ/(2ε)), claiming ε-DP: false, its true ε is 2ε
  (docs/ground-truth.md §2: Laplace of scale b has ε = Δ/b);
- ``labels.count_by_label``: noisy counts per label over the labels *present in the data*,
  claiming ε-DP under replace: false, the number of counts tells whether a new label appeared.
"""

from __future__ import annotations

import numpy as np

import scenarios
from mechanisms.adapters.released import LibraryRelease, encode, released
from mechanisms.claims import PureDP, Relation
from scenarios.libraries import Case, Entry, Library, NotInRelease, register_library
from scenarios.libraries.families import row_pairs, value_pairs

NAME = "toy-numpy"


def noise(data, random_state, *, epsilon, sensitivity, factor=1.0):
    """One value plus Laplace noise of scale sensitivity / (factor * epsilon)."""
    return [float(np.ravel(data)[0]) + random_state.laplace(0.0, sensitivity / (factor * epsilon))]


def count_by_label(data, random_state, *, epsilon):
    """Noisy counts of the labels present in the data (the bug: the label set is read from the data)."""
    labels, counts = np.unique(np.ravel(data), return_counts=True)
    return released((labels, 4), (counts + random_state.laplace(0.0, 2.0 / epsilon, counts.size), 4))


def _noise_entry(name: str, factor: float) -> Entry:
    def build(point):
        params = {"epsilon": point["epsilon"], "sensitivity": 1.0, "factor": factor}
        claim = PureDP(point["epsilon"], Relation.REPLACE)
        mech = LibraryRelease(noise, params, f"toy.{name}", claim, 2)
        scenario = scenarios.custom(value_pairs([(0.0, 1.0, "0 vs 1")], 1.0), "replace")
        return Case(f"noise.{name}", f"ε={point['epsilon']}", point, mech, claim, scenario, noise, params, "batch",
                    layout=(("value", None),))
    return Entry(f"noise.{name}", (f"toy.noise.{name}",), "mechanism", "ε-DP for values within Δ (toy)",
                 Relation.REPLACE, ({"epsilon": 1.0},), build)


def _labels_build(point):
    params = {"epsilon": point["epsilon"]}
    claim = PureDP(point["epsilon"], Relation.REPLACE)
    mech = LibraryRelease(count_by_label, params, "toy.count_by_label", claim, 15)
    pairs = row_pairs([0.0, 1.0, 1.0, 0.0], [([2.0], "last label 0 → new label 2")], "replace")
    return Case("labels.count_by_label", f"ε={point['epsilon']}", point, mech, claim,
                scenarios.from_pairs(pairs, "replace"), count_by_label, params, "query",
                statistic="coordinates", layout=(("labels", 4), ("counts", 4)))


def entries() -> tuple[Entry, ...]:
    return (_noise_entry("laplace", 1.0), _noise_entry("halved", 2.0),
            Entry("labels.count_by_label", ("toy.labels.count_by_label",), "query", "ε-DP (toy)", Relation.REPLACE,
                  ({"epsilon": 1.0},), _labels_build))


def public_api() -> tuple[str, ...]:
    return ("toy.noise.laplace", "toy.noise.halved", "toy.labels.count_by_label", "toy.internal.Base",
            "toy.noise.unwritten")


LIBRARY = register_library(Library(
    name=NAME, distribution="numpy", entries=entries, public_api=public_api,
    excluded={"toy.internal.Base": "not DP: a base class", "toy.noise.unwritten": "not yet written"},
    script_header="import numpy as np\n", helpers=(encode, released), seeded=True))


# -- a second toy library: a row that audits nothing, an entry and a parameter the release lacks -----
BROKEN = "toy-broken"


def refuse(data, random_state, *, epsilon):
    """A release the "library" refuses on every input (its row audits nothing)."""
    raise ValueError("this release refuses every input")


def _refused_build(point):
    params = {"epsilon": point["epsilon"]}
    claim = PureDP(point["epsilon"], Relation.REPLACE)
    mech = LibraryRelease(refuse, params, "toy.refuse", claim, 2)
    scenario = scenarios.custom(value_pairs([(0.0, 1.0, "0 vs 1")], 1.0), "replace")
    return Case("noise.refused", f"ε={point['epsilon']}", point, mech, claim, scenario, refuse, params, "batch",
                layout=(("value", None),))


def _partly_build(point):
    if point.get("new_parameter"):
        raise NotInRelease("parameter `new_parameter` of toy.noise.laplace")
    return _noise_entry("laplace", 1.0).build(point)


def broken_entries() -> tuple[Entry, ...]:
    text = "ε-DP for values within Δ (toy)"
    return (_noise_entry("laplace", 1.0),
            Entry("noise.refused", ("toy.noise.refused",), "mechanism", text, Relation.REPLACE, ({"epsilon": 1.0},),
                  _refused_build),
            # numpy imports and has no such function: the entry is not in this release
            Entry("noise.future", ("numpy.random.no_such_mechanism",), "mechanism", text, Relation.REPLACE,
                  ({"epsilon": 1.0},), _refused_build),
            Entry("noise.partly", ("toy.noise.partly",), "mechanism", text, Relation.REPLACE,
                  ({"epsilon": 1.0, "new_parameter": True},), _partly_build))


BROKEN_LIBRARY = register_library(Library(
    name=BROKEN, distribution="numpy", entries=broken_entries, public_api=lambda: ("toy.noise.laplace",),
    script_header="import numpy as np\n", seeded=True))
