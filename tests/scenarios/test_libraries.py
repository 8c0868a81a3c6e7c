"""The library catalogues: every public name accounted for, every case well formed, the families.

These tests draw nothing: they build each catalogue of the installed releases (skipped where the
library is missing) and check what the sweep would run.
"""

from __future__ import annotations

import numpy as np
import pytest

from mechanisms.claims import Claim
from scenarios.libraries import COSTS, Case, Entry, library
from scenarios.libraries.families import row_pairs, value_pairs


@pytest.fixture(scope="module", params=["diffprivlib", "opendp"])
def catalogue(request):
    pytest.importorskip(request.param)
    lib = library(request.param)
    return lib, lib.entries()


def test_every_public_name_is_audited_or_left_out_with_a_reason(catalogue):
    lib, entries = catalogue
    coverage = lib.coverage(entries)
    assert coverage.unaccounted == (), f"{lib.name}: public names neither audited nor excluded"
    assert set(coverage.excluded) <= set(coverage.public), "an exclusion names something the release lacks"
    assert coverage.fraction >= 0.75


def test_every_case_is_well_formed(catalogue):
    lib, entries = catalogue
    keys = set()
    for entry in entries:
        assert isinstance(entry, Entry)
        for case in entry.cases():
            assert isinstance(case, Case) and isinstance(case.claim, Claim) and case.cost in COSTS
            assert case.entry == entry.name and case.key not in keys
            keys.add(case.key)
            assert case.claim.relation is entry.relation
            assert case.mechanism.output_dim >= 2 and len(case.scenario.pairs) >= 1
            assert case.coordinate(case.mechanism.output_dim - 1).startswith("raised")


def test_value_pairs_are_checked_against_the_sensitivity():
    assert len(value_pairs([(0.0, 1.0, "a")], 1.0)) == 1
    with pytest.raises(ValueError, match="exceeds the sensitivity"):
        value_pairs([(0.0, 1.5, "too far")], 1.0)


def test_row_pairs_add_or_replace_one_row():
    base = np.array([[0.0], [1.0]])
    (d, added, _), = row_pairs(base, [([5.0], "add")], "add-remove")
    (_, replaced, _), = row_pairs(base, [([5.0], "replace")], "replace")
    assert added.tolist() == [[0.0], [1.0], [5.0]] and replaced.tolist() == [[0.0], [5.0]]
    with pytest.raises(ValueError, match="a row to replace"):
        row_pairs(np.zeros((0, 1)), [([1.0], "x")], "replace")
