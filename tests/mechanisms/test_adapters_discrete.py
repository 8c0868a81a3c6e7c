"""Third-party discrete mechanisms: their samples follow the reference law whose truth we report.

Every test fits sampled frequencies with a chi-square test, on seeded (diffprivlib) or unseedable
(OpenDP) draws: a false failure has probability 1e-6 per fit if the library samples the reference
law.
"""

import importlib

import numpy as np
import pytest
from scipy import stats

from mechanisms.claims import ZCDP, PureDP

pytestmark = pytest.mark.statistical


def _adapter(name: str):
    """The adapter module for library ``name``.  Skip only when the library itself is not installed
    (ModuleNotFoundError); an ImportError raised by the adapter module is a failure, not a skip."""
    pytest.importorskip(name, reason=f"needs the optional thirdparty extra: {name} is not installed",
                        exc_type=ModuleNotFoundError)
    return importlib.import_module(f"mechanisms.adapters.{name}")


def _pvalue(draws, values, pmf):
    """Chi-square fit with the outer cells pooled into the tails."""
    observed = np.array([np.sum(draws <= values[0])] + [np.sum(draws == v) for v in values[1:-1]]
                        + [np.sum(draws >= values[-1])])
    return stats.chisquare(observed, pmf * draws.size).pvalue


def _lattice_pmf(log_weight, low, high):
    x = np.arange(-400, 401)
    p = np.exp(log_weight(x.astype(float)))
    p /= p.sum()
    inner = (x > low) & (x < high)
    return np.arange(low, high + 1), np.concatenate([[p[x <= low].sum()], p[inner], [p[x >= high].sum()]])


def test_diffprivlib_geometric_is_discrete_laplace():
    dpl = _adapter("diffprivlib")
    mech = dpl.Geometric(0.7)
    assert mech.claim == PureDP(0.7) and mech.reference is not None
    draws = mech(np.ones((3, 1)), 200_000, np.random.default_rng(5)).ravel() - 3
    values, pmf = _lattice_pmf(lambda x: -0.7 * np.abs(x), -6, 6)
    assert _pvalue(draws, values, pmf) > 1e-6
    loop = dpl.Geometric(0.7, batch="loop")(np.ones((3, 1)), 20_000, np.random.default_rng(6)).ravel() - 3
    assert _pvalue(loop, values, pmf) > 1e-6
    with pytest.raises(ValueError, match="0/1 entries"):
        mech(np.full((3, 1), 0.5), 10, np.random.default_rng(0))  # sum 1.5


def test_diffprivlib_exponential_is_the_reference_softmax():
    dpl = _adapter("diffprivlib")
    mech = dpl.Exponential(1.0)
    assert mech.claim == PureDP(1.0)
    for batch, size in (("vectorized", 200_000), ("loop", 20_000)):
        draws = dpl.Exponential(1.0, batch=batch)(np.ones((3, 1)), size, np.random.default_rng(7)).ravel()
        pmf = np.exp(mech.reference.log_pmf(3))
        observed = np.bincount(draws.astype(int), minlength=pmf.size)
        assert stats.chisquare(observed, pmf * draws.size).pvalue > 1e-6
    assert mech.epsilon_for_delta(0.0) == pytest.approx(mech.reference.epsilon_for_delta(0.0))


def test_opendp_discrete_gaussian_and_laplace():
    odp = _adapter("opendp")
    gauss = odp.make_discrete_gaussian(2.0)
    assert gauss.claim == ZCDP(0.125) and gauss.reference is not None
    draws = gauss(np.ones((3, 1)), 30_000, np.random.default_rng(0)).ravel() - 3
    values, pmf = _lattice_pmf(lambda x: -x * x / 8.0, -7, 7)
    assert _pvalue(draws, values, pmf) > 1e-6
    laplace = odp.make_discrete_laplace(1.0)
    assert laplace.claim == PureDP(1.0) and laplace.reference is not None
    draws = laplace(np.ones((3, 1)), 30_000, np.random.default_rng(0)).ravel() - 3
    values, pmf = _lattice_pmf(lambda x: -np.abs(x), -6, 6)
    assert _pvalue(draws, values, pmf) > 1e-6
    assert odp.make_discrete_gaussian(2.0 ** 0.5 * 1.0000001).reference is None  # σ² not rational: unknown
