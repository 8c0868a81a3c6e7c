"""ρ-zCDP, Rényi DP and privacy-profile claims: conversions checked against second routes."""

import math

import numpy as np
import pytest
from scipy import optimize

from audit import run_audit
from mechanisms import GaussianMechanism
from mechanisms.claims import ApproxDP, ProfileClaim, RenyiDP, ZCDP, claim_from_dict, claim_types
from mechanisms.gdp import gdp_delta, gdp_tradeoff
from scenarios import counting

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.rdp import rdp_privacy_accountant as rdp_module  # noqa: E402

EPSILONS = np.array([0.0, 0.1, 0.5, 1.0, 2.0, 4.0, 8.0])
ALPHAS = np.concatenate([[0.0], np.geomspace(1e-9, 1e-2, 15), np.linspace(0.02, 1.0, 50)])


def _conversion(alpha, rdp, epsilon):
    """log δ at one order, written out from Canonne–Kamath–Steinke 2020 Prop. 12."""
    return (alpha - 1) * (rdp - epsilon) + (alpha - 1) * math.log(1 - 1 / alpha) - math.log(alpha)


def test_every_claim_type_is_registered_and_rebuilt_from_its_dict_form():
    # Scenario files and report.json reach a claim through the registry, by its kind: each type is
    # found there, and its dict form rebuilds it: exactly, or for a profile given as a function, as
    # the tabulated step function, which may only allow more (δ ≥ the original's at every ε).
    for claim in (ApproxDP(1, 1e-5), ZCDP(0.5), RenyiDP([2.0], [1.0]),
                  ProfileClaim(lambda e: gdp_delta(e, 1.0))):
        assert claim_types()[claim.kind] is type(claim)
        rebuilt = claim_from_dict(claim.to_dict())
        if isinstance(claim, ProfileClaim):
            assert type(rebuilt) is ProfileClaim and rebuilt.relation == claim.relation
            assert np.all(rebuilt.delta_at(EPSILONS) >= claim.delta_at(EPSILONS))
        else:
            assert rebuilt == claim


def test_rdp_profile_equals_dp_accounting_compute_delta():
    # Same bound (Prop. 12 and the KL/TV bound) computed by dp-accounting, order by order;
    # only rounding differs: relative tolerance 1e-10.
    orders = [1.5, 2.0, 3.0, 5.0, 8.0, 16.0, 32.0, 64.0]
    sigma = 1.3
    rdp = [a / (2 * sigma**2) for a in orders]  # Gaussian RDP (Mironov 2017, Prop. 7)
    claim = RenyiDP(orders, rdp)
    for epsilon in EPSILONS:
        expected = rdp_module.compute_delta(orders, rdp, float(epsilon))[0]
        assert float(claim.delta_at(epsilon)) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("rho", [0.05, 0.5, 2.0])
def test_zcdp_profile_against_continuous_minimisation(rho):
    # Second route: minimise the Prop. 12 bound over real α with scipy.  The grid value can only
    # be larger (toward the claim).  The grid's step in ln(α − 1) is 0.7%, so near the optimum
    # log δ loses O(step²·curvature): < 5e-3 in log δ even at δ ~ 1e-140 (measured 2e-3).
    claim = ZCDP(rho)
    for epsilon in EPSILONS[1:]:
        result = optimize.minimize_scalar(lambda log_a: _conversion(1 + math.exp(log_a), rho * (1 + math.exp(log_a)), epsilon),
                                          bounds=(-9, 12), method="bounded", options={"xatol": 1e-10})
        best = min(math.exp(result.fun), math.sqrt(-math.expm1(-rho * 1.0001)), 1.0)
        value = float(claim.delta_at(epsilon))
        assert -1e-9 <= math.log(value) - math.log(best) <= 5e-3


@pytest.mark.parametrize("rho", [0.05, 0.5, 2.0])
def test_zcdp_never_optimistic_for_the_gaussian_that_meets_it(rho):
    # N(0, σ²) vs N(Δ, σ²) with μ = Δ/σ = √(2ρ) is exactly ρ-zCDP: its true profile and trade-off
    # must be allowed by the claim's conversion (δ_claim ≥ δ_true, f_claim ≤ G_μ).
    claim, mu = ZCDP(rho), math.sqrt(2 * rho)
    assert np.all(claim.delta_at(EPSILONS) >= gdp_delta(EPSILONS, mu) * (1 - 1e-12))
    assert np.all(claim.tradeoff(ALPHAS) <= gdp_tradeoff(ALPHAS, mu) + 1e-12)


def test_profile_tradeoff_grid_errs_toward_the_claim():
    # The exact Gaussian profile implies exactly G_μ (Dong, Roth & Su 2022, Prop. 2.12); the grid
    # supremum may only fall short of it, by < 1e-4 with 2560 grid points (measured 2.4e-7).
    mu = 1.0
    claim = ProfileClaim(lambda e: gdp_delta(e, mu))
    curve, exact = claim.tradeoff(ALPHAS), gdp_tradeoff(ALPHAS, mu)
    assert np.all(curve <= exact + 1e-12)
    assert np.max(exact - curve) < 1e-4
    assert claim.epsilon == pytest.approx(GaussianMechanism(sigma=1.0).epsilon_for_delta(1e-5), rel=1e-9)


def test_profile_claim_from_dp_event_matches_gaussian_profile():
    # dp-accounting's pessimistic PLD of a Gaussian, discretisation 1e-4: δ within 1e-3 relative
    # above the exact Balle–Wang profile (it is an upper bound) at these ε.
    claim = ProfileClaim.from_dp_event(dp_accounting.GaussianDpEvent(1.0))
    exact = gdp_delta(EPSILONS[:5], 1.0)
    values = claim.delta_at(EPSILONS[:5])
    assert np.all(values >= exact * (1 - 1e-9)) and np.all(values <= exact * (1 + 1e-3))


def test_tabulated_profile_is_a_step_function_and_round_trips():
    claim = ProfileClaim.from_table([0.0, 1.0, 2.0], [0.5, 0.1, 0.01], reference_delta=0.05)
    assert claim.delta_at([0.0, 0.5, 1.0, 1.99, 2.0, 9.0]).tolist() == [0.5, 0.5, 0.1, 0.1, 0.01, 0.01]
    assert claim.epsilon == pytest.approx(2.0, abs=1e-9)
    again = claim_from_dict(claim.to_dict())
    assert again.epsilon == pytest.approx(2.0, abs=1e-9)
    for original in (ZCDP(0.3, "replace"), RenyiDP([2.0, 3.0], [0.4, 0.7])):
        assert claim_from_dict(original.to_dict()) == original


@pytest.mark.parametrize("bad, message", [
    (lambda: ZCDP(-1.0), "`rho` must be a finite number > 0"),
    (lambda: RenyiDP([1.0], [0.5]), "`orders` must all be > 1"),
    (lambda: RenyiDP([2.0, 3.0], [0.5]), "`epsilons` must have one value per order"),
    (lambda: ProfileClaim(lambda e: 2.0 + 0 * np.asarray(e)), "`profile` must return deltas in [0, 1]"),
    (lambda: ProfileClaim.from_table([1.0, 0.5], [0.1, 0.2]), "strictly increasing"),
    (lambda: ZCDP(0.5, reference_delta=2.0), "`reference_delta` must be in (0, 1)"),
])
def test_bad_parameters_are_named(bad, message):
    with pytest.raises(ValueError) as info:
        bad()
    assert message in str(info.value)


@pytest.mark.statistical
def test_engine_audits_zcdp_claims_both_ways():
    # σ = 1, d = 1: μ = 1 is exactly 0.5-zCDP.  The true claim holds (false alarm ≤ 5%, seeded);
    # 0.02-zCDP implies T ≥ f with f(0.1) ≥ 0.8, while the Gaussian's G_1(0.1) = 0.61: at 2e5 samples
    # the certified β_hi at α ≈ 0.1 is within ~0.01 of 0.61, far below 0.8: refuted.
    mechanism, scenario = GaussianMechanism(sigma=1.0), counting(1)
    holds = run_audit(mechanism, scenario, claim=ZCDP(0.5), samples=200_000, seed=11, progress=False,
                      accuracy=False)
    assert holds.verdict.value == "NOT_REFUTED"
    assert float(ZCDP(0.02).tradeoff(0.1)) > 0.8
    refuted = run_audit(mechanism, scenario, claim=ZCDP(0.02), samples=200_000, seed=12, progress=False,
                        accuracy=False)
    assert refuted.verdict.value == "VIOLATED"
    assert refuted.to_dict()["claim"]["type"] == "zcdp"


# -- scenario files ------------------------------------------------------------------------------
from audit.spec import load_spec as load  # noqa: E402
from scenarios.files import ScenarioFileError  # noqa: E402

_FILE = """
[mechanism]
name = "gaussian"
sigma = 1.0

[claim]
{claim}

[scenario]
kind = "counting"
d = 1
"""

@pytest.mark.parametrize("text, expected", [
    ('type = "zcdp"\nrho = 0.5', ZCDP(0.5)),
    ('type = "rdp"\norders = [2, 4]\nepsilons = [1.0, 2.0]\nreference_delta = 1e-6',
     RenyiDP([2, 4], [1.0, 2.0], reference_delta=1e-6)),
])
def test_files_state_zcdp_and_rdp_claims(tmp_path, text, expected):
    path = tmp_path / "claim.toml"
    path.write_text(_FILE.format(claim=text))
    assert load(path).claim == expected


def test_files_state_profile_claims(tmp_path, monkeypatch):
    (tmp_path / "profiles_for_test.py").write_text(
        "import dp_accounting\nfrom mechanisms.gdp import gdp_delta\n"
        "def gaussian_profile(e):\n    return gdp_delta(e, 1.0)\n"
        "GAUSSIAN_EVENT = dp_accounting.GaussianDpEvent(1.0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "claim.toml"
    path.write_text(_FILE.format(claim='type = "profile"\nepsilons = [0.0, 1.0]\ndeltas = [0.4, 0.1]'))
    assert float(load(path).claim.delta_at(1.5)) == 0.1
    for target in ("gaussian_profile", "GAUSSIAN_EVENT"):
        path.write_text(_FILE.format(claim=f'type = "profile"\ncallable = "profiles_for_test:{target}"'))
        claim = load(path).claim
        assert float(claim.delta_at(1.0)) == pytest.approx(float(gdp_delta(1.0, 1.0)), rel=1e-3)


@pytest.mark.parametrize("text, message", [
    ('type = "zcdp"', "claim.rho is missing"),
    ('type = "zcdp"\nrho = "big"', "claim.rho must be a number"),
    ('type = "rdp"\norders = [2]\nepsilons = [1.0]\nmu = 1', "claim.mu is not a known key"),
    ('type = "profile"\ncallable = "profiles_for_test:gaussian_profile"\nepsilons = [1.0]',
     "cannot be given together"),
    ('type = "zcdp"\nrho = -1', "claim.rho must be a finite number > 0"),
])
def test_bad_curve_claims_in_files(tmp_path, text, message):
    path = tmp_path / "claim.toml"
    path.write_text(_FILE.format(claim=text))
    with pytest.raises(ScenarioFileError) as info:
        load(path)
    assert message in str(info.value)
