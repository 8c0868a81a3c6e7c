"""What an audit says before it draws: a mechanism that ignores its ``rng``, a sample size that cannot
refute anything or will take long, outputs that need encoding; and what a failing plugin test shows.

Statistical content: the mechanisms add N(0, 3.73²) to a count (exact ε(1e-5) ≈ 1.3 against a claim of
1, not refuted at these sample sizes with these seeds) or Laplace noise of scale 1 (1-DP, tight).  The
best-case bounds below are exact joint tests of perfectly separated counts (:mod:`audit.feasibility`),
so the warnings are deterministic; no assertion rests on a random draw except that the rng-respecting
mechanism gives equal outputs for equal generators, which is exact.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import audit.feasibility
import scenarios
from audit import MechanismError, run_audit
from audit.cli import main
from audit.errors import ReproducibilityWarning
from audit.feasibility import SampleSizeWarning
from mechanisms import ApproxDP, GaussianMechanism, LaplaceMechanism, PureDP

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.statistical


def from_np_random(dataset, size, rng):
    return np.sum(dataset) + np.random.normal(0.0, 3.73, (size, 1))


def from_rng(dataset, size, rng):
    return np.sum(dataset) + rng.normal(0.0, 3.73, (size, 1))


class Unseedable:
    """Declares that it cannot be seeded (as the OpenDP adapters do)."""

    deterministic = False
    claim = ApproxDP(1.0, 1e-5)

    def __call__(self, dataset, size, rng):
        return from_np_random(dataset, size, rng)


def audit_quietly(mechanism, claim=ApproxDP(1.0, 1e-5), **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_audit(mechanism, scenarios.counting(1), claim=claim, seed=4, progress=False, **options)
    return [w for w in caught if issubclass(w.category, (ReproducibilityWarning, SampleSizeWarning))]


def test_a_mechanism_drawing_from_np_random_is_named_with_its_rng():
    (warning,) = audit_quietly(from_np_random, samples=5_000)
    assert warning.category is ReproducibilityWarning
    text = str(warning.message)
    assert "'from_np_random'" in text and "`rng`" in text and "np.random" in text
    assert "same seed will not give the same report" in text
    assert audit_quietly(from_rng, samples=5_000) == []
    assert audit_quietly(Unseedable(), samples=5_000) == []  # it said so itself


def test_the_cli_shows_and_keeps_the_warning(tmp_path, capsys, monkeypatch):
    (tmp_path / "ux_unseeded.py").write_text(
        "import numpy as np\n"
        "def count(dataset, size, rng):\n"
        "    return np.sum(dataset) + np.random.normal(0.0, 3.73, (size, 1))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "unseeded.toml"
    path.write_text('name = "unseeded"\n[mechanism]\ncallable = "ux_unseeded:count"\n[claim]\ntype = "approx-dp"\n'
                    'epsilon = 1.0\ndelta = 1e-5\n[scenario]\nkind = "counting"\nd = 1\n[audit]\nsamples = 5_000\n'
                    'seed = 1\n')
    code = main(["run", str(path), "--out", str(tmp_path / "out"), "--no-plots", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 0 and "dpaudit: unseeded: warning: mechanism 'count' gave different outputs" in err
    entry = json.loads((tmp_path / "out" / "report.json").read_text())["audits"][0]
    assert any("`rng`" in warning for warning in entry["warnings"])
    assert "warning: mechanism 'count' gave different outputs" in (tmp_path / "out" / "summary.md").read_text()


def test_a_sample_size_too_small_to_mean_anything_says_the_best_it_could_certify():
    # 10 samples: 1 selection draw per side and 8 certification draws; perfectly separated outputs would
    # certify at most ε ≥ 1.29 at δ = 0 (the exact joint test of 8 of 8 against 0 of 8).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = run_audit(LaplaceMechanism(1.0), scenarios.counting(1), samples=10, seed=1, progress=False)
    (warning,) = [w for w in caught if w.category is SampleSizeWarning]
    text = str(warning.message)
    assert "`samples`=10 leaves 1 selection draw(s) per side" in text
    assert "at most ε at δ = 0 ≥ 1.29" in text and "use at least 320 samples" in text
    assert report.epsilon_lower_bound == 0.0  # what the warning announced


def test_a_sample_size_that_can_never_refute_the_claim_says_so():
    # (20, 0.1)-DP: perfect separation of 88 certification draws certifies at most ε ≥ 3.85 at δ = 0.1.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=UserWarning)
        mechanism = GaussianMechanism(20.0, 0.1)
    (warning,) = audit_quietly(mechanism, claim=mechanism.claim, samples=100)
    text = str(warning.message)
    assert "cannot refute this claim whatever the mechanism does" in text
    assert "≥ 3.85 at confidence 0.95 (the claim allows 20)" in text and "every verdict will be NOT_REFUTED" in text


def test_a_long_run_is_announced_with_an_estimate(monkeypatch):
    # The threshold is lowered so that a small run counts as long; the estimate is then extrapolated
    # from one timed chunk, whatever this machine's speed (no timing is asserted).
    monkeypatch.setattr(audit.feasibility, "LONG_RUN_DRAWS", 1)
    monkeypatch.setattr(audit.feasibility, "LONG_RUN_SECONDS", 0.0)
    (warning,) = audit_quietly(from_rng, samples=2_000)
    text = str(warning.message)
    assert "`samples`=2,000 means 8,000 draws of mechanism 'from_rng'" in text
    assert "draws/s" in text and "checkpoint" in text


@pytest.mark.parametrize("output, hint", [
    (lambda size: {"count": np.zeros(size)}, "one column per key"),
    (lambda size: np.array(["yes"] * size), "encode categories (strings, labels) as integers"),
    (lambda size: (np.zeros(size), np.ones(size)), "np.column_stack(parts)"),
])
def test_outputs_that_are_not_a_real_array_say_how_to_encode_them(output, hint):
    def mechanism(dataset, size, rng):
        return output(size)

    with pytest.raises(MechanismError, match="expected|must return") as raised:
        run_audit(mechanism, scenarios.counting(1), claim=PureDP(1.0), samples=1_000, progress=False)
    assert hint in str(raised.value)


FAILING = """
    import numpy as np
    from mechanisms.claims import ApproxDP


    class TooLittleNoise:
        name = "too-little-noise"
        d = 1
        claim = ApproxDP(1.0, 1e-5)

        def __call__(self, dataset, size, rng):
            return np.asarray(dataset, dtype=float).sum() + rng.standard_normal((size, 1))


    def test_my_mechanism(dp_audit):
        dp_audit(TooLittleNoise(), samples=20_000)
"""


def test_a_failing_claim_test_shows_its_own_line_not_the_plugins_frames(pytester, plugin_args):
    pytester.makepyfile(FAILING)
    result = pytester.runpytest(*plugin_args)
    result.assert_outcomes(failed=1)
    output = result.stdout.str()
    assert "dp_audit(TooLittleNoise(), samples=20_000)" in output and "is VIOLATED" in output
    assert "audit/testing.py" not in output and "def assert_claim" not in output
