"""Opacus's DP-SGD swept at the small budget: one ``PrivacyEngine.make_private`` row (about 10 s of CPU).

The row trains a linear model with Opacus itself (per-sample gradients, clipping, noise, Poisson
sampling) and releases the parameter trajectory; its claim is the PRV accountant's profile, which
holds for a correct implementation, so the row is refuted with probability at most 1 − confidence.
"""

from __future__ import annotations

import pytest

from audit.sweep.plan import plan_rows
from audit.sweep.rows import audit_row

pytestmark = pytest.mark.statistical


def test_opacus_make_private_claim_holds(tmp_path):
    pytest.importorskip("opacus")
    from scenarios.libraries import library

    lib = library("opacus")
    entry = next(e for e in lib.entries() if e.name == "PrivacyEngine.make_private")
    case = entry.cases()[0]
    row, = plan_rows((case,), library="opacus", budget="small", confidence=0.95, seed=2026)
    record = audit_row(row, library="opacus", version=lib.version(), out=tmp_path, checkpoints=False)
    assert record.get("status") != "error", record.get("error")
    assert record["verdict"] == "NOT_REFUTED", record
