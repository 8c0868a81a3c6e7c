"""Gray-box replay of real libraries: diffprivlib's models and Opacus/PyTorch trainers.

Deterministic: each finding is a statement about the code (a calibration, a divisor or a shape
read from the data; a value moving beyond its sensitivity) that does not depend on the values
drawn, and the records are seeded (diffprivlib's OS entropy is replayed by value).
"""

from __future__ import annotations

import warnings

import pytest

from audit.graybox import FindingKind, check_case, check_pairs


def _cases(library_name: str, entry: str):
    from scenarios.libraries.registry import library

    return [case for e in library(library_name).entries() if e.name == entry for case in e.cases()]


def _first(checks):
    return next((f for c in checks for f in c.findings), None)


def test_diffprivlib_linear_regression_sensitivity_is_pinpointed_and_its_control_is_silent():
    pytest.importorskip("diffprivlib")
    warnings.simplefilter("ignore")
    buggy, control = _cases("diffprivlib", "models.LinearRegression")
    assert "#105" in buggy.known
    worst = [p for p in buggy.scenario.pairs if p.label == "last x lower → upper"]
    finding = _first(check_pairs(buggy.mechanism, worst, buggy.claim, both_orders=False))
    assert finding.kind is FindingKind.SENSITIVITY
    assert finding.site.file.endswith("linear_regression.py") and finding.allowed < finding.measured
    assert _first(check_case(control)) is None


def test_diffprivlib_label_set_from_the_data_is_a_control_flow_finding():
    pytest.importorskip("diffprivlib")
    warnings.simplefilter("ignore")
    for entry, module in (("models.GaussianNB", "naive_bayes.py"),):  # LogisticRegression: benchmarks/graybox.py
        plain, new_label = _cases("diffprivlib", entry)
        assert _first(check_case(plain, both_orders=False)) is None
        pair = [p for p in new_label.scenario.pairs if "new label" in p.label]
        finding = _first(check_pairs(new_label.mechanism, pair, new_label.claim, both_orders=False))
        assert finding.kind is FindingKind.CONTROL_FLOW and finding.site.file.endswith(module)


def test_opacus_mean_reduction_divisor_and_noise_before_clipping_are_named_at_their_lines():
    pytest.importorskip("opacus")
    from benchmarks.graybox_trainers import noise_before_clipping
    from mechanisms.training import TorchTraining
    from scenarios import counting

    mean = [c for c in _cases("opacus", "PrivacyEngine.make_private") if "loss_reduction=mean" in c.key]
    buggy, control = [c for c in mean if c.known], [c for c in mean if not c.known]
    finding = _first(check_case(buggy[0], both_orders=False))
    assert finding.kind is FindingKind.CONTROL_FLOW and "expected_batch_size" in finding.message
    assert _first(check_case(control[0], both_orders=False)) is None
    trainer = TorchTraining(train=noise_before_clipping, accountant="pld")
    finding = _first(check_pairs(trainer, counting(1, n=0).pairs[:1], trainer.claim, both_orders=False))
    assert finding.kind is FindingKind.CONTROL_FLOW and "shape" in finding.message
    assert finding.site.file.endswith("graybox_trainers.py")
