"""Early stopping's quick look (audit/stages.py): a whole audit on the first 1/16 of the budget,
with its own training and seed, at the first look's share of the failure budget.

Verdicts used (seeds fixed): the analytic Gaussian at (1, 1e-5) meets its claim exactly, so a
VIOLATED verdict, or a quick look that stops, is a false alarm of probability ≤ 1 − confidence =
0.05; calibrated for sensitivity ¼ it has exact ε(1e-5) ≈ 4 against the claimed 1.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import scenarios
from audit import Verdict, run_audit
from audit import exact, stages
from audit.selection import LOOK_FRACTIONS, LOOK_SHARES
from audit.slots import headline_slots
from mechanisms import GaussianMechanism
from mechanisms.claims import ApproxDP

SEED = 20261123


@pytest.mark.statistical
def test_a_clear_violation_stops_at_the_quick_look_and_counts_only_its_draws():
    # Calibrated for sensitivity ¼ on a count: exact ε(1e-5) ≈ 4 against a claimed 1.
    samples = 400_000
    report = run_audit(GaussianMechanism(1.0, 1e-5, sensitivity=0.25), scenarios.counting(1),
                       samples=samples, seed=SEED, progress=False, accuracy=False)
    looks = report.draws["looks"]
    assert report.verdict is Verdict.VIOLATED
    assert (looks["look"], looks["of"], looks["quick_look"]) == (1, 3, "stopped")
    phases = report.draws["per_pair_per_side"]
    assert sum(phases.values()) == int(samples * LOOK_FRACTIONS[0]) + stages.PROBE_DRAWS
    assert "the quick look" in report.summary()


@pytest.mark.statistical
def test_a_true_claim_runs_every_look_and_spends_exactly_the_budget():
    samples = 400_000
    report = run_audit(GaussianMechanism(1.0, 1e-5), scenarios.counting(1), samples=samples, seed=SEED,
                       progress=False, accuracy=False)
    looks = report.draws["looks"]
    assert report.verdict is Verdict.NOT_REFUTED
    assert (looks["look"], looks["of"], looks["quick_look"]) == (3, 3, "passed")
    phases = report.draws["per_pair_per_side"]
    assert phases["quick look"] == int(samples * LOOK_FRACTIONS[0])
    assert sum(phases.values()) == samples + stages.PROBE_DRAWS
    assert looks["planned"]["samples"] + looks["planned"]["quick_look"]["samples"] == samples


def test_the_looks_share_the_failure_budget_exactly():
    claim = ApproxDP(1.0, 1e-5)
    quick, main = stages.plan_stages(1_000_000, 1, "auto", claim, 2, 0.05, early_stopping=True)
    assert quick.budget.looks + main.budget.looks == LOOK_SHARES and sum(LOOK_SHARES) == pytest.approx(1.0)
    assert quick.looks == 1 and main.looks == len(LOOK_FRACTIONS) - 1
    assert quick.budget.headline_slots == main.budget.headline_slots == headline_slots(claim)


def test_small_budgets_have_no_quick_look_but_the_main_audit_still_looks():
    claim = ApproxDP(1.0, 1e-5)
    quick, main = stages.plan_stages(2_000, 1, "auto", claim, 1, 0.05, early_stopping=True)
    assert quick is None and main.looks == 2 and sum(main.budget.looks) == pytest.approx(1.0)
    report = run_audit(GaussianMechanism(1.0, 1e-5), scenarios.counting(1), samples=2_000, seed=SEED,
                       progress=False, accuracy=False)
    assert report.draws["looks"]["of"] == 2 and report.draws["looks"]["quick_look"] == "none"
    tiny = stages.plan_stages(200, 1, "auto", claim, 1, 0.05, early_stopping=True)[1]
    assert tiny.looks == 1 and tiny.budget.looks == (pytest.approx(1.0),)


@pytest.mark.statistical
def test_draws_count_what_each_pair_drew_in_a_passed_quick_look():
    # counting(1): the all-zeros pair looks silent, so certification draws move to the other pair
    # in the quick look as in the main audit; per_side is the exact total (rounding may lose a few).
    samples = 400_000
    report = run_audit(GaussianMechanism(1.0, 1e-5), scenarios.counting(1), samples=samples, seed=SEED,
                       progress=False, accuracy=False)
    draws = report.draws
    assert draws["looks"]["quick_look"] == "passed" and len(draws["quick_look_per_pair"]) == 2
    assert draws["quick_look_per_pair"][0] != draws["quick_look_per_pair"][1]
    total = draws["pairs"] * (samples + stages.PROBE_DRAWS)
    assert total - 8 <= draws["per_side"] <= total


def test_the_quick_look_has_its_own_reproducible_seed():
    seeds = (0, 1, 2, 2**64)
    derived = [stages.quick_entropy(seed) for seed in seeds]
    assert len(set(derived)) == 4 and all(value < 2**128 for value in derived) and not set(derived) & set(seeds)
    # Reproducible: a fresh interpreter (its own hash seed, nothing cached) derives the same seeds,
    # as a resumed or repeated audit must.
    root = Path(stages.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    code = f"from audit import stages; print([stages.quick_entropy(seed) for seed in {seeds!r}])"
    fresh = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert fresh.stdout.strip() == repr(derived)


def test_exact_values_of_an_immutable_mechanism_are_computed_once(monkeypatch):
    calls = []
    original = GaussianMechanism.epsilon_for_delta

    def counted(self, delta, relation=None):
        calls.append(delta)
        return original(self, delta, relation=relation)

    monkeypatch.setattr(GaussianMechanism, "epsilon_for_delta", counted)
    monkeypatch.setattr(exact, "_EXACT_VALUES", {})
    mechanism = GaussianMechanism(1.0, 1e-5)
    first = run_audit(mechanism, scenarios.counting(1), samples=20_000, seed=1, progress=False, accuracy=False)
    computed = len(calls)
    second = run_audit(GaussianMechanism(1.0, 1e-5), scenarios.counting(1), samples=20_000, seed=2,
                       progress=False, accuracy=False)
    assert computed > 0 and len(calls) == computed  # an equal mechanism: nothing recomputed
    assert second.exact_epsilon == first.exact_epsilon == original(mechanism, 1e-5)
    run_audit(GaussianMechanism(2.0, 1e-5), scenarios.counting(1), samples=20_000, seed=1, progress=False,
              accuracy=False)
    assert len(calls) == 2 * computed  # other parameters, other truth


def test_exact_values_of_a_composition_of_a_mutable_mechanism_are_not_remembered():
    from dataclasses import dataclass

    from mechanisms import Composition

    @dataclass
    class Mutable:  # a user's mechanism: unhashable, and its parameters may change
        sigma: float = 1.0

        def __call__(self, dataset, size, rng):
            return rng.normal(0.0, self.sigma, (size, 1))

    composed = Composition(Mutable(), 2)
    assert not exact.is_immutable(composed) and exact.is_immutable(Composition(GaussianMechanism(1.0, 1e-5), 2))
    assert exact.exact_value(composed, "epsilon_for_delta", 1e-5) is None  # no crash, and nothing known
