"""Error control across audits: Bonferroni over a `dpaudit run` and over a pytest session."""

from __future__ import annotations

import pytest

import scenarios
from audit.spec import load_spec
from audit.cli import error_control
from audit.render.text import error_control_text

pytest_plugins = ["pytester"]


def test_bonferroni_splits_the_run_confidence_over_the_audits():
    specs = [load_spec(p) for p in scenarios.bundled_suite("default")]
    control = error_control(specs, None, "bonferroni")
    m = len(specs)
    assert control["method"] == "bonferroni" and control["audits"] == m
    # The union bound: m audits at level γ/m each.
    assert m * (1 - control["per_audit_confidence"]) == pytest.approx(0.05, rel=1e-12)
    assert "≤ 0.05" in error_control_text(control)


def test_without_control_the_report_states_the_summed_bound():
    specs = [load_spec(p) for p in scenarios.bundled_suite("default")]
    control = error_control(specs, None, "none")
    assert control["run_false_alarm_bound"] == pytest.approx(min(1.0, sum(1 - s.confidence for s in specs)))
    assert "none" in error_control_text(control)


def test_one_file_keeps_its_own_confidence():
    spec = load_spec(scenarios.bundled_suite("default")[0])
    control = error_control([spec], None, "bonferroni")
    assert control["method"] == "single audit" and "per_audit_confidence" not in control


SESSION = """
    import mechanisms

    def test_a(dp_audit):
        report = dp_audit.run(mechanisms.GaussianMechanism(1.0, 1e-5), samples=20_000)
        assert abs(report.confidence - (1 - 0.1 * 6 / 3.141592653589793 ** 2 / 2)) < 1e-12

    def test_b(dp_audit):
        dp_audit.run(mechanisms.GaussianMechanism(1.0, 1e-5), samples=20_000)
        second = dp_audit.run(mechanisms.GaussianMechanism(1.0, 1e-5), samples=20_000)
        assert abs(second.confidence - (1 - 0.1 * 6 / 3.141592653589793 ** 2 / 4 / 2)) < 1e-12
"""


def test_pytest_session_confidence_is_shared_by_bonferroni(pytester, plugin_args):
    pytester.makepyfile(SESSION)
    result = pytester.runpytest(*plugin_args, "--dp-audit-session-confidence", "0.9")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*session-wide error control (Bonferroni over 2 dp_audit tests)*<= 0.1*3 audits*"])
