"""Record/replay: interception of each source, replay of identical randomness, the checks' exact numbers.

These tests are deterministic: a finding is an exact statement about the replayed coupling, so no
assertion rests on the value of a draw (the footprint fit holds for any draw of continuous noise).
"""

from __future__ import annotations

import itertools
import math
import random
import secrets

import numpy as np
import pytest

from audit.graybox import FindingKind, ReplayError, Tape, check_pair, intercepting
from audit.graybox.execute import execute
from mechanisms.claims import ApproxDP, GaussianDP, PureDP
from mechanisms.gdp import gdp_delta
from scenarios.faulty_cases import FAULTY_MECHANISMS


def _pair(d: int = 1):
    return np.zeros((3, d)), np.vstack([np.zeros((3, d)), np.ones((1, d))])


class LaplaceSum:
    """Laplace on k column sums with scale b (correct for b = k/ε)."""

    def __init__(self, k: int, b: float, epsilon: float) -> None:
        self.k, self.b, self.claim = k, b, PureDP(epsilon)

    def __call__(self, data, size, rng):
        return np.asarray(data).sum(axis=0) + rng.laplace(0.0, self.b, (size, self.k))


def test_every_source_is_recorded_and_replayed_from_the_record():
    def mechanism(data, size, rng):
        own = np.random.default_rng()  # does not honour rng
        parts = [rng.normal(0, 1, size), own.random(size), np.random.laplace(0, 1, size),
                 np.full(size, random.gauss(0, 1)), np.full(size, secrets.randbelow(1000)),
                 np.random.RandomState().uniform(size=size)]
        return np.column_stack(parts) + np.asarray(data).sum()

    base, neighbour = _pair()
    record, _ = execute(mechanism, base, 3, seed=1)
    primitives = [c.primitive for c in record.calls]
    assert primitives[:3] == ["Generator.normal", "Generator.random", "RandomState.laplace"]
    assert any(p.startswith("random.gauss>") for p in primitives)
    assert any(c.opaque for c in record.calls)  # secrets: OS entropy, replayed by value
    assert all(c.site.function == "mechanism" for c in record.calls)
    replay, diverged = execute(mechanism, neighbour, 3, seed=99, source=record)
    assert diverged is None
    np.testing.assert_allclose(replay.output - record.output, 1.0, rtol=0, atol=1e-12)  # identical randomness: Δ = Δf


def test_torch_draws_are_replayed_whatever_the_generator_seed():
    torch = pytest.importorskip("torch")

    def mechanism(data, size, rng):
        gen = torch.Generator().manual_seed(int(np.random.default_rng().integers(1 << 30)))
        noise = torch.normal(0.0, 2.0, size=(size, 2), generator=gen) + torch.randn(size, 2)
        return noise.numpy().astype(np.float64) + np.asarray(data).sum()

    base, neighbour = _pair()
    record, _ = execute(mechanism, base, 4, seed=1)
    assert [c.primitive for c in record.calls][-2:] == ["torch.normal", "torch.randn"]
    replay, _ = execute(mechanism, neighbour, 4, seed=2, source=record)
    np.testing.assert_allclose(replay.output - record.output, 1.0, rtol=0, atol=1e-5)


def test_laplace_sensitivity_finding_names_the_line_and_both_numbers():
    mechanism = LaplaceSum(k=4, b=2.0, epsilon=0.5)  # b should be k/ε = 8
    check = check_pair(mechanism, *_pair(4), mechanism.claim, label="p")
    finding, = [f for f in check.findings if f.kind is FindingKind.SENSITIVITY]
    assert finding.measured == pytest.approx(4 * 1 / 2.0, rel=1e-9)  # Σ|Δᵢ|/bᵢ = 4·1/2
    assert finding.allowed == 0.5 and finding.exact
    assert finding.site.function == "__call__" and finding.site.file.endswith("test_graybox_replay.py")
    assert check.executions <= 4


def test_correct_laplace_and_gaussian_are_silent():
    assert not check_pair(LaplaceSum(4, 8.0, 0.5), *_pair(4), PureDP(0.5)).findings
    sigma = 2.0

    def gaussian(data, size, rng):
        return np.asarray(data).sum(axis=0) + sigma * rng.standard_normal((size, 4))

    # ‖Δ‖₂ = 2 for the all-ones row: μ = 2/σ = 1 exactly, so GaussianDP(1) holds and GaussianDP(0.99) does not
    assert not check_pair(gaussian, *_pair(4), GaussianDP(1.0)).findings
    finding, = check_pair(gaussian, *_pair(4), GaussianDP(0.99)).findings
    assert finding.measured == pytest.approx(1.0, rel=1e-9) and finding.allowed == 0.99


def test_gaussian_allowance_of_an_approx_claim_is_the_mu_whose_profile_meets_delta():
    sigma = 3.0

    def gaussian(data, size, rng):
        return np.asarray(data).sum(axis=0) + sigma * rng.standard_normal((size, 1))

    claim = ApproxDP(0.5, 1e-5)
    finding, = check_pair(gaussian, *_pair(1), claim).findings
    assert finding.measured == pytest.approx(1 / sigma, rel=1e-9)
    # the allowed μ solves δ_μ(0.5) = 1e-5 (bisection to 2⁻⁶⁰ of the bracket)
    assert float(gdp_delta(0.5, finding.allowed)) == pytest.approx(1e-5, rel=1e-6)


def test_control_flow_finding_names_the_branch():
    def branchy(data, size, rng):
        data = np.asarray(data)
        if data.shape[0] > 3:
            return data.sum() + rng.laplace(0, 0.5, (size, 1))  # a scale read from the data
        return data.sum() + rng.laplace(0, 1.0, (size, 1))

    finding, = check_pair(branchy, *_pair(), PureDP(1.0)).findings
    assert finding.kind is FindingKind.CONTROL_FLOW
    assert "calibration scale" in finding.message and "another call site" in finding.message


def test_deterministic_release_is_an_exact_unnoised_finding():
    def leak(data, size, rng):
        return np.full((size, 1), float(np.asarray(data).sum()))

    finding, = check_pair(leak, *_pair(), PureDP(1.0)).findings
    assert finding.kind is FindingKind.UNNOISED_FLOW and finding.exact and finding.measured == 1.0


def test_per_record_sampling_draws_are_not_control_flow():
    def subsampled(data, size, rng):
        data = np.asarray(data)
        chosen = rng.random((data.shape[0],)) < 0.5
        return (data[chosen].sum() + 4.0 * rng.standard_normal((size, 1)))

    assert not [f for f in check_pair(subsampled, *_pair(), GaussianDP(1.0)).findings
                if f.kind is FindingKind.CONTROL_FLOW]


def test_unreplayable_and_raising_mechanisms_get_one_line_errors():
    calls = itertools.count()

    def clock(data, size, rng):
        # state outside rng, as a clock or a global counter is: every call differs, on any machine
        # (a clock's low digits are not enough: CI's clock ticked in whole microseconds, so
        # perf_counter_ns() % 1000 was 0 on every call and the mechanism replayed)
        return np.full((size, 1), next(calls) + rng.random())

    with pytest.raises(ReplayError, match="not replayable"):
        check_pair(clock, *_pair(), PureDP(1.0))

    def raises_on_neighbour(data, size, rng):
        if np.asarray(data).shape[0] > 3:
            raise ArithmeticError("boom")
        return rng.random((size, 1))

    with pytest.raises(ReplayError, match="raised ArithmeticError on D′"):
        check_pair(raises_on_neighbour, *_pair(), PureDP(1.0))


def test_runs_do_not_nest_and_patches_are_undone():
    original = np.random.default_rng
    with intercepting(Tape()):
        with pytest.raises(RuntimeError, match="do not nest"):
            with intercepting(Tape()):
                pass
    assert np.random.default_rng is original and random.random.__self__ is random._inst


@pytest.mark.parametrize("name", ["gaussian-sensitivity", "laplace-per-query", "correlated-half-size-noise",
                                  "correlated-replace", "gaussian-classical-large-eps"])
def test_zoo_faults_are_pinpointed(name):
    mechanism, scenario = FAULTY_MECHANISMS[name]()
    found = [f for pair in scenario.pairs for f in check_pair(mechanism, pair.base, pair.neighbor, mechanism.claim).findings]
    assert found and all(f.kind is FindingKind.SENSITIVITY and f.measured > f.allowed for f in found)
    assert all(not math.isnan(f.measured) and f.site.line > 0 for f in found)


def test_a_calibration_read_from_earlier_noise_is_adaptive_not_a_finding():
    def adaptive(data, size, rng):
        total = float(np.asarray(data).sum())
        noisy = total + rng.laplace(0.0, 2.0)  # a released noisy count (ε = 1/2)
        scale = 2.0 * max(1.0, abs(noisy))  # calibrated from the noisy count: post-processing
        return np.column_stack([np.full(size, noisy), rng.laplace(0.0, scale, size) + 0.0])

    check = check_pair(adaptive, *_pair(), PureDP(1.0))
    assert not [f for f in check.findings if f.kind is FindingKind.CONTROL_FLOW]
    assert any("adaptive calibration" in note for note in check.notes)

    def from_data(data, size, rng):
        total = float(np.asarray(data).sum())
        noisy = total + rng.laplace(0.0, 2.0)
        return np.column_stack([np.full(size, noisy), rng.laplace(0.0, 2.0 * (1.0 + total), size)])

    flow, = [f for f in check_pair(from_data, *_pair(), PureDP(1.0)).findings if f.kind is FindingKind.CONTROL_FLOW]
    assert "calibration scale" in flow.message and flow.site.function == "from_data"


@pytest.mark.parametrize("rate, found", [(0.5, True), (1e-4, False)])
def test_a_column_fixed_on_d_that_often_moves_on_d_prime_is_unnoised(rate, found):
    # Column 0 is 0 on D whatever the draws; on D′ it is 1 with probability `rate`, from a uniform.
    # rate ½: on 4 rows (then 256 fresh rows) the 99.9% Clopper–Pearson lower bound on P_D′(y ≠ 0)
    # exceeds δ = 1e-3 unless fewer than ~5 of 256 rows move (probability < 1e-60); rate 1e-4:
    # the bound stays below δ unless ≥ 2 of 4 rows move (probability < 1e-7).  Seeded anyway.
    def leaky(data, size, rng):
        u = rng.random(size)
        moved = (u < rate) if np.asarray(data).shape[0] > 3 else np.zeros(size, dtype=bool)
        return np.column_stack([moved.astype(float), rng.laplace(0.0, 1.0, size)])

    findings = [f for f in check_pair(leaky, *_pair(), ApproxDP(1.0, 1e-3)).findings
                if f.kind is FindingKind.UNNOISED_FLOW]
    assert bool(findings) is found
    if found:
        assert findings[0].columns == (0,) and findings[0].detail["constant_rows"] == 256


def test_the_afforded_mu_is_the_same_whether_bisected_or_cached():
    """For an (ε, δ) claim the afforded μ solves δ_μ(ε) = δ (Balle & Wang 2018, Thm 8): checked
    against mechanisms.gdp's profile at that μ, then again from the cache, and for another δ."""
    from audit.graybox import privacy
    from mechanisms.claims import ApproxDP
    from mechanisms.gdp import gdp_delta

    for delta in (1e-5, 1e-3):
        claim = ApproxDP(1.0, delta)
        _, first, _ = privacy.gaussian_allowance(0.1, claim)
        _, again, _ = privacy.gaussian_allowance(0.1, claim)
        assert first == again and gdp_delta(1.0, first) == pytest.approx(delta, rel=1e-6)
