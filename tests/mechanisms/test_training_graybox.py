"""``audit_training(..., graybox=True)``: the user's trainer recorded and replayed, then certified.

Noise added to each example's gradient before clipping draws one noise row per sampled example,
so the noise call's shape follows the data: a replay names the line (a deterministic finding),
and the audit aimed at it reads the per-step updates (``view="updates"``), which refute the
trainer within 500 trainings a side (tests/mechanisms/test_training_user.py refutes it at seed 7
without the replay; the benchmark stopped at 196).  A correct trainer draws the same noise on D
and D′: the replay is silent, deterministically, and its audit reports VIOLATED with probability
at most 1 − confidence.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="the torch extra (torch, opacus) is not installed")

from audit.training import audit_training  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import training_zoo as zoo  # noqa: E402

RNG = np.random.default_rng(0)
X = RNG.standard_normal((31, 3)).astype(np.float32)
Y = (X[:, 0] + 0.5 * RNG.standard_normal(31) > 0).astype(np.int64)
CLAIM = dict(noise_multiplier=zoo.SIGMA, steps=zoo.T, delta=1e-3, batch_size=zoo.B)


@pytest.mark.statistical
def test_noise_before_clipping_is_named_at_its_line_and_certified_through_the_updates():
    report = audit_training(zoo.func_noise_before_clipping, X, Y, view="updates", seed=7, progress=False,
                            graybox=True, trainings=500, **CLAIM)
    first = report.graybox["findings"][0]
    assert first["kind"] == "control-flow" and first["site"]["file"].endswith("training_zoo.py")
    assert first["site"]["function"] == "func_dpsgd" and "shape" in first["message"]
    assert report.verdict.value == "VIOLATED" and first["certification"]["verdict"] == "VIOLATED"
    assert first["certification"]["samples"] == report.draws["per_side"] < 500


@pytest.mark.statistical
def test_a_correct_trainer_is_silent_on_replay():
    report = audit_training(zoo.func_correct, X, Y, view="updates", seed=7, progress=False, graybox=True,
                            trainings=48, **CLAIM)
    assert report.graybox["findings"] == [] and len(report.graybox["checks"]) == 2
    assert report.verdict.value == "NOT_REFUTED"
