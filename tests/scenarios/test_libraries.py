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


@pytest.fixture(scope="module", params=["diffprivlib", "opendp", "opacus"])
def catalogue(request):
    pytest.importorskip(request.param)
    lib = library(request.param)
    return lib, lib.entries()


def test_every_public_name_is_audited_or_left_out_with_a_reason(catalogue):
    lib, entries = catalogue
    coverage = lib.coverage(entries)
    assert coverage.unaccounted == (), f"{lib.name}: public names neither audited nor excluded"
    assert set(coverage.excluded) <= set(coverage.public), "an exclusion names something the release lacks"
    # Opacus: the fast-gradient-clipping, per-layer, adaptive and distributed optimizers are "not yet
    # written" (measured 0.4 on 1.6.0); the others audit at least three quarters of their DP names.
    assert coverage.fraction >= (0.4 if lib.name == "opacus" else 0.75)


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


def test_opacus_claims_are_what_its_accountants_report():
    """Each row's headline ε at δ = 1e-5 is the one Opacus's own accountant reports, and the
    make_private rows' sample rate is the same on both datasets of every pair."""
    pytest.importorskip("opacus")
    from opacus.accountants import PRVAccountant, RDPAccountant

    for entry in library("opacus").entries():
        for index, case in enumerate(entry.cases()):
            p = case.params
            assert case.claim.epsilon_at(p["delta"]) == pytest.approx(p["opacus_epsilon"], rel=1e-3, abs=1e-3)
            if entry.name in ("accountants.RDPAccountant", "accountants.PRVAccountant") and index == 0:
                engine = RDPAccountant() if "RDP" in entry.name else PRVAccountant()
                engine.history = [(p["noise_multiplier"], p["sample_rate"], p["steps"])]
                assert p["opacus_epsilon"] == pytest.approx(engine.get_epsilon(p["delta"]), rel=1e-9)
            if entry.name == "PrivacyEngine.make_private":
                for pair in case.scenario.pairs:
                    sizes = (len(pair.base), len(pair.neighbor))
                    assert len({-(-n // p["batch_size"]) for n in sizes}) == 1


def test_opacus_make_private_rejects_a_data_dependent_sample_rate():
    pytest.importorskip("opacus")
    from scenarios.libraries.opacus import _engine_build

    with pytest.raises(ValueError, match="len\\(data_loader\\) differs"):
        _engine_build({"noise_multiplier": 1.0, "max_grad_norm": 1.0, "rows": 4, "batch_size": 2, "steps": 1})
