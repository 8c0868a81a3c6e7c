"""Opacus's DP-SGD swept at the small budget: one ``PrivacyEngine.make_private`` row (about 10 s of CPU).

The row trains a linear model with Opacus itself (per-sample gradients, clipping, noise, Poisson
sampling) and releases the parameter trajectory; its claim is the PRV accountant's profile, which
holds for a correct implementation, so the row is refuted with probability at most 1 − confidence.

With Opacus's default loss_reduction="mean" at n = 3 rows and batch size 2, every step is divided
by int(n/2), 1 on D and 2 on D' (meta-pytorch/opacus#819): the release's spread doubles, and the
trajectory's first coordinate alone tells the datasets apart far beyond the claim.  The row is seeded
(torch's generator), so the verdict is fixed; a sweep that missed it would be a loss of power.
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


def test_opacus_mean_reduction_divisor_is_refuted(tmp_path):
    pytest.importorskip("opacus")
    from scenarios.libraries import library
    from scenarios.libraries.opacus import OPACUS_819

    lib = library("opacus")
    entry = next(e for e in lib.entries() if e.name == "PrivacyEngine.make_private")
    case = next(c for c in entry.cases() if c.known == OPACUS_819)
    row, = plan_rows((case,), library="opacus", budget="small", confidence=0.95, seed=2026)
    record = audit_row(row, library="opacus", version=lib.version(), out=tmp_path, checkpoints=False)
    assert record.get("status") != "error", record.get("error")
    assert record["verdict"] == "VIOLATED" and record["known"] == OPACUS_819, record
