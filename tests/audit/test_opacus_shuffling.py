"""The pieces of benchmarks/opacus_shuffling.py against second routes."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from benchmarks import opacus_shuffling as shuf
from mechanisms.gdp import gdp_delta


@pytest.mark.parametrize("q, sigma, steps", [(0.1, 1.0, 10), (0.01, 0.5, 500), (1e-3, 1.5, 5000)])
def test_opacus_accountant_against_dp_accounting(q, sigma, steps):
    """Second route: dp_accounting's RdpAccountant at the same orders.  At integer orders both sum
    the same finite binomial series (Mironov, Talwar & Zhang 2019, §3.3): equal to rel 1e-9.  At
    fractional orders dp_accounting adds every term of the series in absolute value, an upper bound,
    while Opacus 0.11 keeps the signs (exact: see the quadrature test), so dp_accounting's RDP is
    ≥ Opacus's and the ε from it by Opacus's conversion is ≥ Opacus's ε; dp_accounting's own
    (tighter) conversion of its curve can still only be ≤ that."""
    pytest.importorskip("dp_accounting")
    from dp_accounting import GaussianDpEvent, PoissonSampledDpEvent, SelfComposedDpEvent
    from dp_accounting.rdp import RdpAccountant

    eps, _ = shuf.opacus_epsilon(q, sigma, steps)
    accountant = RdpAccountant(orders=list(shuf.OPACUS_ALPHAS))
    accountant.compose(SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps))
    orders = np.asarray(shuf.OPACUS_ALPHAS)
    theirs = np.asarray(accountant._rdp)  # noqa: SLF001 - the accountant's RDP curve, second route
    ours = np.array([shuf.opacus_rdp(q, sigma, a) for a in orders]) * steps
    integer = orders == np.round(orders)
    np.testing.assert_allclose(ours[integer], theirs[integer], rtol=1e-9)
    assert (theirs[~integer] >= ours[~integer] * (1 - 1e-8)).all()  # equal to rounding where the series is short
    converted = float(np.min(theirs - math.log(shuf.DELTA) / (orders - 1)))
    assert converted >= eps - 1e-12
    assert accountant.get_epsilon(shuf.DELTA) <= converted + 1e-9


@pytest.mark.parametrize("q, sigma, alpha", [(0.01, 0.5, 1.5), (0.01, 0.5, 2.6), (0.1, 1.0, 4.7), (1e-3, 1.5, 30.5)])
def test_opacus_fractional_rdp_matches_quadrature(q, sigma, alpha):
    """Third route at fractional orders: A_α = E_{z∼N(0,σ²)}[((1 − q) + q·e^{(2z − 1)/(2σ²)})^α] by
    adaptive quadrature (relative tolerance 1e-12; compared at rel 1e-8)."""
    from scipy import integrate

    def integrand(z: float) -> float:
        log_ratio = math.log1p(q * math.expm1((2 * z - 1) / (2 * sigma * sigma)))
        return math.exp(-z * z / (2 * sigma * sigma) + alpha * log_ratio) / (sigma * math.sqrt(2 * math.pi))

    value = integrate.quad(integrand, -40 * sigma, 40 * sigma + alpha, limit=500, epsabs=0, epsrel=1e-12)[0]
    assert shuf.opacus_rdp(q, sigma, alpha) == pytest.approx(math.log(value) / (alpha - 1), rel=1e-8)


def test_opacus_epsilon_full_batch_is_gaussian_rdp():
    """q = 1: RDP_α = α/(2σ²) exactly (Mironov 2017, Prop. 7)."""
    eps, alpha = shuf.opacus_epsilon(1.0, 2.0, 3)
    assert eps == pytest.approx(3 * alpha / 8 + math.log(1 / shuf.DELTA) / (alpha - 1), rel=1e-12)


@pytest.mark.parametrize("steps, mu, alpha", [(1, 1.3, 5), (3, 0.9, 4), (4, 2.0, 3), (2, 1.0, 6)])
def test_mixture_moment_matches_brute_force(steps, mu, alpha):
    """Second route: E[(Σ_i W_i)^α] summed over all T^α index tuples, E[Π W] = Π_i e^{μ²k_i(k_i−1)/2}
    (k_i how often i occurs); exact up to floating point (rel 1e-10)."""
    total = 0.0
    for tup in itertools.product(range(steps), repeat=alpha):
        k = np.bincount(tup, minlength=steps)
        total += math.exp(0.5 * mu * mu * float((k * (k - 1)).sum()))
    expected = math.log(total) - alpha * math.log(steps)
    assert shuf.mixture_log_moment(steps, mu, alpha) == pytest.approx(expected, rel=1e-10, abs=1e-12)


def test_mixture_moment_closed_forms():
    """α = 2: E[(mean W)²] = 1 + (e^{μ²} − 1)/T; T = 1: the Gaussian's D_α = αμ²/2."""
    assert math.exp(shuf.mixture_log_moment(1000, 1.5, 2)) == pytest.approx(1 + math.expm1(2.25) / 1000, rel=1e-12)
    assert shuf.mixture_log_moment(1, 0.7, 9) / 8 == pytest.approx(9 * 0.49 / 2, rel=1e-12)


@pytest.mark.parametrize("mu, eps", [(2.0, 1.0), (1.0, 0.5), (2.0, 3.0)])
def test_exact_upper_bounds_hold_at_one_step(mu, eps):
    """At T = 1 the pair is the Gaussian one, whose δ is Balle & Wang's closed form: every exact
    upper bound must be at least it (deterministic)."""
    truth = float(gdp_delta(eps, mu))
    assert shuf.rdp_bound_q_over_p(1, mu, 1, eps) >= truth
    assert shuf.amgm_bound_p_over_q(1, mu, 1, eps) >= truth
    assert shuf.tail_bound_p_over_q(1, mu, 1, eps) >= truth


@pytest.mark.statistical
@pytest.mark.parametrize("order", ["Q||P", "P||Q"])
@pytest.mark.parametrize("mu, eps", [(2.0, 1.0), (1.0, 0.3)])
def test_monte_carlo_at_one_step_brackets_balle_wang(order, mu, eps):
    """At T = 1 the Monte Carlo bounds are one-sided 95% Clopper–Pearson bounds on δ: the closed
    form must lie between them (each side fails with probability ≤ 5% for these fixed seeds), and the
    mean of Z is within 4 standard errors (CLT, Z ∈ [0, 1])."""
    truth = float(gdp_delta(eps, mu))
    hits, n, mean = shuf.monte_carlo_delta(1, mu, 1, eps, order, 200_000, seed=71)
    low, high = shuf.clopper_pearson(hits, n)
    assert low <= truth <= high
    assert abs(mean - truth) <= 4 * math.sqrt(truth * (1 - truth) / n)


@pytest.mark.statistical
def test_monte_carlo_two_epochs_of_one_step_is_gaussian_composition():
    """E = 2, T = 1: the product of two Gaussian pairs is the Gaussian pair at μ√2 (second route)."""
    truth = float(gdp_delta(1.2, 1.5 * math.sqrt(2)))
    hits, n, _ = shuf.monte_carlo_delta(1, 1.5, 2, 1.2, "Q||P", 200_000, seed=72)
    low, high = shuf.clopper_pearson(hits, n)
    assert low <= truth <= high


def test_bad_order_names_the_parameter():
    with pytest.raises(ValueError, match="`order`"):
        shuf.monte_carlo_delta(2, 1.0, 1, 1.0, "QP", 10, seed=1)


@pytest.mark.parametrize("mu", [0.6, 1.5, 2.0])
@pytest.mark.parametrize("power", [0.25, 1.0, 3.0, 6.0])
def test_reverse_moment_at_one_step_is_lognormal(mu, power):
    """T = 1: E[W^{−s}] = e^{μ²s(s+1)/2} (lognormal).  The upper Riemann sum over-estimates φ, so the
    bound is never below the truth (beyond rounding, 1e-9) and, its cells shifting W by at most a
    factor e^{μ·dz}, above it by at most s·μ·dz in log (dz = 0.002)."""
    truth = mu * mu * power * (power + 1) / 2
    bound = shuf.reverse_log_moment(1, mu, power)
    assert truth - 1e-9 <= bound <= truth + power * mu * 0.002 + 1e-9


@pytest.mark.statistical
@pytest.mark.parametrize("power", [0.5, 2.0])
def test_reverse_moment_against_monte_carlo(power):
    """T = 10, μ = 1: the bound is at least the Monte Carlo mean of m^{−s} less 4 standard errors
    (CLT, 200 000 draws), and above it by no more than the stated excess plus 4 standard errors."""
    rng = np.random.default_rng(73)
    m = np.exp(rng.standard_normal((200_000, 10)) - 0.5).mean(axis=1) ** -power
    mean, se = m.mean(), m.std(ddof=1) / math.sqrt(m.size)
    bound = math.exp(shuf.reverse_log_moment(10, 1.0, power))
    assert mean - 4 * se <= bound <= (mean + 4 * se) * math.exp(power * 0.002)


@pytest.mark.parametrize("mu, eps", [(2.0, 1.0), (1.0, 0.5)])
def test_chernoff_bound_holds_at_one_step(mu, eps):
    """T = 1: the reverse-moment bound is at least Balle & Wang's δ (deterministic)."""
    assert shuf.chernoff_bound_p_over_q(1, mu, 1, eps) >= float(gdp_delta(eps, mu))
