"""The main audit trained on the quick look's draws (audit/stages.py, QUICK_LOOK_TRAINS_MAIN).

The draws it trains on are checked by a second route: drawn directly from the quick look's chunk
generators (:func:`audit.sampling.chunk_rng` with :func:`audit.stages.quick_entropy`), they must
equal the raw rows the training source keeps.  The allocation is checked against
:func:`audit.allocation.allocate` and :func:`audit.allocation.training_draws` of the same sizes.
"""

import numpy as np
import pytest

import scenarios
from audit import Verdict, run_audit, stages
from audit.allocation import allocate, training_draws
from audit.sampling import AuditJob, ChunkTask, Phase, chunk_plan, chunk_rng
from audit.selection import LOOK_FRACTIONS
from audit.statistics import training_plan
from mechanisms import GaussianMechanism, LaplaceMechanism
from mechanisms.claims import ApproxDP

SEED = 20261128
CLAIM = ApproxDP(1.0, 1e-5)


def _plan(samples, output_dim=1):
    return stages.plan_stages(samples, output_dim, "auto", CLAIM, 1, 0.05, early_stopping=True)


def test_a_1d_main_audit_trains_only_on_the_quick_looks_draws_and_gives_its_own_to_the_other_phases():
    samples = 1_000_000
    quick, main = _plan(samples)
    rest = samples - int(samples * LOOK_FRACTIONS[0])
    old = training_draws(rest, 1, True)  # what it trained on from its own draws
    assert (main.samples, main.allocation.training, main.borrowed, main.training) == (rest, 0, old, old)
    assert main.lender is quick and old <= quick.samples
    assert main.allocation == allocate(rest, 0, LOOK_FRACTIONS[1:], True)
    assert main.allocation.pilot + main.allocation.selection + main.allocation.certification == rest


def test_a_vector_main_audit_borrows_every_quick_look_draw_and_draws_the_rest_of_its_training():
    samples = 1_000_000
    quick, main = _plan(samples, output_dim=3)
    rest = samples - quick.samples
    old = training_draws(rest, 3, True)
    assert (main.borrowed, main.allocation.training, main.training) == (quick.samples, old - quick.samples, old)


def test_switched_off_the_main_audit_trains_on_its_own_draws(monkeypatch):
    monkeypatch.setattr(stages, "QUICK_LOOK_TRAINS_MAIN", False)
    quick, main = _plan(1_000_000)
    assert main.borrowed == 0 and main.allocation.training == training_draws(main.samples, 1, True)


def test_the_training_sources_are_the_quick_looks_chunks_in_phase_order_cut_at_the_borrowed_draws():
    quick, main = _plan(1_000_000)
    chunk = 4096
    sources = main.training_sources(chunk, 1)
    plans = quick.plans(chunk, 1)[0]
    expected = [(phase, index, size) for phase in (Phase.TRAINING, Phase.PILOT, Phase.SELECTION, Phase.CERTIFICATION)
                for index, size in enumerate(plans.get(phase, [[]])[0])]
    assert [(s.phase, s.chunk, s.size) for s in sources] == expected[:len(sources)]
    assert all(s.lent for s in sources) and sum(s.keep for s in sources) == main.borrowed
    assert all(s.keep == s.size for s in sources[:-1]) and 0 < sources[-1].keep <= sources[-1].size
    assert main.plans(chunk, 1)[0][Phase.TRAINING] == [[s.keep for s in sources]]


def test_a_training_source_keeps_exactly_the_quick_looks_draws():
    quick, main = _plan(200_000)
    chunk, entropy = 2048, 12345
    mechanism = LaplaceMechanism(1.0)
    pair = scenarios.counting(1).pairs[0]
    job = AuditJob(mechanism, "laplace", ((pair.base, pair.neighbor),), ("p",), entropy, 1)
    job = AuditJob(mechanism, "laplace", job.datasets, job.labels, entropy, 1,
                   training=training_plan("auto", main.training, chunk, 1))
    sources = stages._sized_sources(main, job, chunk, 1)
    assert sum(s.rows for s in sources) == main.training  # under the raw-row cap: every draw kept raw
    for side, dataset in ((0, pair.base), (1, pair.neighbor)):
        for source in (sources[0], sources[-1]):  # a whole chunk, and the one cut short
            result = stages.run_training_source(job, ChunkTask(0, side, Phase.TRAINING, 0, source.keep), source)
            rng = chunk_rng(stages.quick_entropy(entropy), 0, side, source.phase, source.chunk)
            direct = mechanism(dataset, source.size, rng)[:source.keep]
            np.testing.assert_array_equal(result.rows[:, 0], np.ravel(direct))
            assert result.n == source.keep


@pytest.mark.statistical
def test_a_true_claim_audited_with_borrowed_training_spends_exactly_the_budget():
    # The analytic Gaussian meets (1, 1e-5) exactly: VIOLATED would be a false alarm (≤ 0.05).
    samples = 400_000
    report = run_audit(GaussianMechanism(1.0, 1e-5), scenarios.counting(1), samples=samples, seed=SEED,
                       progress=False, accuracy=False)
    looks = report.draws["looks"]
    assert report.verdict is Verdict.NOT_REFUTED and looks["quick_look"] == "passed"
    rest = samples - int(samples * LOOK_FRACTIONS[0])
    assert looks["training_from_quick_look"] == report.statistic["training_samples"] == training_draws(rest, 1, True)
    phases = report.draws["per_pair_per_side"]
    assert phases.get("training", 0) == 0
    assert sum(phases.values()) == samples + stages.PROBE_DRAWS


@pytest.mark.parametrize("chunk", [256, 4096])
def test_the_raw_rows_of_a_borrowing_main_audit_stay_within_the_training_plans_cap(chunk):
    # Many sources (the quick look's chunks of every phase, then its own): shares rounded up
    # would overrun the cap by up to one row per source.
    quick, main = _plan(3_000_000, output_dim=3)
    plan = training_plan("auto", main.training, chunk, 3)
    job = AuditJob(None, "m", ((None, None),), ("p",), 1, 3, training=plan)
    sources = stages._sized_sources(main, job, chunk, 1)
    cap = min(main.training, plan.rows_per_chunk * len(chunk_plan(main.training, chunk)))
    assert plan.rows_per_chunk > 0 and len(sources) > 10 and cap < main.training
    assert sum(s.rows for s in sources) == cap
    assert all(0 <= s.rows <= s.keep for s in sources)
