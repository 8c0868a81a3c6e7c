"""The pytest plugin (audit.testing), exercised through pytester in inner pytest runs.

Verdicts used (fixed default seed, so deterministic): the analytic Gaussian mechanism meets its
(1, 1e-5) claim exactly (a failure would be a false alarm, probability ≤ 0.05 over seeds); the
classical calibration at (7, 0.1) has exact ε(0.1) = 8.016 > 7 (docs/ground-truth.md §1) and is refuted
at 2 000 000 samples per side (1 312 500 of them certify; before the allocation of issue 18,
10⁶ certified): the ideal single-threshold test certifies ε_lb ≈ 7.59 ± 0.15 over seeds at 10⁶
certification draws, 3.9 SD above 7.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]


PASSING = """
    import mechanisms

    def test_gaussian_keeps_its_claim(dp_audit):
        dp_audit(mechanisms.GaussianMechanism(epsilon=1.0, delta=1e-5), samples=20_000)
"""

VIOLATED = """
    import warnings
    import mechanisms
    from audit.testing import assert_claim

    def test_classical_calibration_at_eps_7():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mechanism = mechanisms.GaussianMechanism(7.0, 0.1, calibration="classical")
        assert_claim(mechanism, samples=2_000_000)
"""

OVERRIDE = """
    import pytest
    import mechanisms
    from audit.testing import assert_claim

    def test_override_applies_to_explicit_samples(dp_audit):
        report = dp_audit(mechanisms.GaussianMechanism(1.0, 1e-5), samples=1_000_000)
        assert report.samples == 12_345

    def test_override_applies_to_assert_claim():
        assert assert_claim(mechanisms.LaplaceMechanism(1.0)).samples == 12_345
"""


@pytest.mark.statistical
def test_a_claim_that_holds_passes(pytester, plugin_args):
    pytester.makepyfile(PASSING)
    result = pytester.runpytest(*plugin_args)
    result.assert_outcomes(passed=1)


@pytest.mark.statistical
def test_a_violated_claim_fails_with_a_readable_message(pytester, plugin_args):
    pytester.makepyfile(VIOLATED)
    result = pytester.runpytest(*plugin_args)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*AssertionError: privacy claim (7, 0.1)-DP [[]add-remove[]] of Gaussian[[]classical[]]* is VIOLATED",
        "*certified ε ≥ * at δ = 0.1 (claimed ε = 7)",
        "*worst pair: 'add all-ones row'",
        "*pair 'add all-ones row': one event (* vs * of * draws) certifies ε at δ = 0.1 ≥ *, but the claim allows at most 7",
        "*exact ε at δ = 0.1: 8.016",
        "*bounds hold jointly with probability ≥ 0.95; 2,000,000 samples per pair and side, "
        "* draws per side in total; seed 20260501*",
    ])


@pytest.mark.statistical
def test_sample_override_from_the_command_line(pytester, plugin_args):
    pytester.makepyfile(OVERRIDE)
    result = pytester.runpytest(*plugin_args, "--dp-audit-samples", "12345")
    result.assert_outcomes(passed=2)


@pytest.mark.statistical
def test_sample_option_takes_the_exact_integer_forms_of_the_cli(pytester, plugin_args):
    """One parser for every door: ``1e5`` is 100,000 here as on the command line and in files."""
    pytester.makepyfile(OVERRIDE.replace("12_345", "100_000"))
    result = pytester.runpytest(*plugin_args, "--dp-audit-samples", "1e5")
    result.assert_outcomes(passed=2)


def test_sample_option_is_validated(pytester, plugin_args):
    pytester.makepyfile(PASSING)
    result = pytester.runpytest(*plugin_args, "--dp-audit-samples", "0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*argument --dp-audit-samples: must be a positive integer*got '0'*"])


def test_marker_sets_the_fixture_defaults(pytester, plugin_args):
    pytester.makepyfile("""
        import pytest
        import mechanisms

        @pytest.mark.dp_audit(samples=30_000, seed=7, confidence=0.99)
        def test_marked(dp_audit):
            report = dp_audit.run(mechanisms.GaussianMechanism(sigma=2.0))
            assert (report.samples, report.seed, report.confidence) == (30_000, 7, 0.99)
    """)
    result = pytester.runpytest(*plugin_args, "--strict-markers")
    result.assert_outcomes(passed=1)


@pytest.mark.statistical
def test_assert_claim_is_deterministic_by_default():
    import mechanisms
    from audit.testing import DEFAULT_SEED, assert_claim

    first = assert_claim(mechanisms.GaussianMechanism(sigma=2.0), samples=20_000)
    second = assert_claim(mechanisms.GaussianMechanism(sigma=2.0), samples=20_000)
    assert first.seed == DEFAULT_SEED
    assert first.to_dict(include_runtime=False) == second.to_dict(include_runtime=False)
