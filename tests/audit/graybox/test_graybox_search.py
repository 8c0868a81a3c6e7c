"""``run_audit(mechanism, scenarios.search(...), graybox=True)``: every candidate of the pair search replayed.

The per-query Laplace fault (scale 1/ε per query, the k = 4 counts move together) has
Σ|Δᵢ|/bᵢ = Σ_j |x_j|/b = 2 against ε = 0.5 on a pair that adds a row in the box's corner (and
more than 0.5 on most pairs), which the search's structured candidates hold: the replay finds it
deterministically, and the audit aimed at
it (the exact Laplace log-likelihood ratio) refutes a true ε of 2 against 0.5 far inside 2,000
draws a side.  The correct Laplace mechanism is silent on every candidate (a deterministic
statement), and its audit reports VIOLATED with probability at most 1 − confidence.
"""

from __future__ import annotations

import pytest

import scenarios
from audit import run_audit
from audit.graybox.audit import search_pairs
from mechanisms import LaplaceMechanism
from scenarios.domains import Box
from scenarios.faulty_cases import FAULTY_MECHANISMS


def test_search_pairs_are_distinct_neighbours_of_the_domain():
    spec = scenarios.search(Box(0.0, 1.0, n=4, d=2), "add-remove", budget=20)
    pairs = search_pairs(spec, 3)
    assert len(pairs) > 32 and len({p.label for p in pairs}) == len(pairs)
    assert all(p.neighbor.shape[0] == p.base.shape[0] + 1 for p in pairs)
    assert [p.label for p in search_pairs(spec, 3)] == [p.label for p in pairs]  # seeded


@pytest.mark.statistical
def test_a_search_scenario_is_replayed_on_every_candidate_and_the_audit_aimed():
    mechanism, _ = FAULTY_MECHANISMS["laplace-per-query"]()
    spec = scenarios.search(Box(0.0, 1.0, n=4, d=4), "add-remove", budget=20)
    report = run_audit(mechanism, spec, graybox=True, samples=2000, seed=1, progress=False)
    first = report.graybox["findings"][0]
    assert len(report.graybox["checks"]) == 2 * len(search_pairs(spec, 1))
    assert first["kind"] == "sensitivity" and first["measured"] > first["allowed"] == 0.5
    assert max(f["measured"] for f in report.graybox["findings"]) == pytest.approx(2.0)  # a row in the corner
    assert report.verdict.value == "VIOLATED" and first["certification"]["statistic"] == "AimedLaplace"
    correct = run_audit(LaplaceMechanism(1.0, d=1), scenarios.search(Box(0.0, 1.0, n=4, d=1), "add-remove", budget=20),
                        graybox=True, samples=2000, seed=1, progress=False)
    assert correct.graybox["findings"] == [] and correct.verdict.value == "NOT_REFUTED"
