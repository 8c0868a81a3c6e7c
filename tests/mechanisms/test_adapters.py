"""Third-party adapters: vectorize, diffprivlib and OpenDP (claims, exact truth, sampling).

The library tests skip, with the reason, only when the optional ``thirdparty`` extra is missing;
CI installs it.  Reference values come from docs/ground-truth.md §1, §2 and §7, named in comments.

Statistical tests: diffprivlib adapters are seeded from our rng, so their draws are fixed and a
test either always passes or always fails.  OpenDP draws from its own unseedable generator: its
tests are distributional, with thresholds whose false-failure probability is stated (KS at
p < 1e-3, moments at 5 standard errors: two-sided normal tail 5.7e-7).
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

import audit
from mechanisms import ApproxDP, GaussianMechanism, PureDP
from mechanisms.adapters import vectorize
from scenarios import files
from audit.spec import load_spec

SEED = 20260711
REPO = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
KS_LEVEL = 1e-3      # reject the exact noise law only at p < 1e-3
CLT_SIGMAS = 5.0     # moment tolerance in standard errors (false failure 5.7e-7)


def _import_adapter(name: str):
    # Skip only when the library itself is not installed (ModuleNotFoundError).  An installed
    # library that fails to import, and any ImportError raised by our adapter module, is a
    # failure: catching every ImportError here would hide bugs in mechanisms/adapters.
    pytest.importorskip(name, reason=f"needs the optional thirdparty extra: {name} is not installed",
                        exc_type=ModuleNotFoundError)
    return importlib.import_module(f"mechanisms.adapters.{name}")


@pytest.fixture(scope="module")
def dpl():
    return _import_adapter("diffprivlib")


@pytest.fixture(scope="module")
def odp():
    return _import_adapter("opendp")


def _counting(total: int) -> np.ndarray:
    """A counting dataset whose sum is ``total``."""
    return np.ones((total, 1))


# -- the optional extra ------------------------------------------------------------------------------
def test_import_mechanisms_does_not_import_adapters_or_libraries():
    # A fresh interpreter: this test process may already have imported the libraries.
    code = ("import sys, mechanisms\n"
            "assert 'mechanisms.adapters' not in sys.modules\n"
            "import mechanisms.adapters\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in ('diffprivlib', 'opendp', 'sklearn')"
            " or m in ('mechanisms.adapters.diffprivlib', 'mechanisms.adapters.opendp')]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)


@pytest.mark.parametrize("module, blocked", [("diffprivlib", ("diffprivlib", "diffprivlib.mechanisms")),
                                             ("opendp", ("opendp", "opendp.prelude"))])
def test_missing_library_raises_import_error_with_install_hint(monkeypatch, module, blocked):
    # A None entry in sys.modules makes `import name` fail as if it were not installed.
    for name in blocked:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.delitem(sys.modules, f"mechanisms.adapters.{module}", raising=False)
    with pytest.raises(ImportError, match=r'pip install "dpaudit\[thirdparty\]"'):
        importlib.import_module(f"mechanisms.adapters.{module}")


# -- vectorize ---------------------------------------------------------------------------------------
def _seeded_fn(data, seed):
    return float(np.sum(data)) + np.random.default_rng(seed).standard_normal()


@pytest.mark.statistical
def test_vectorize_shape_dtype_and_seeded_determinism():
    mech = vectorize(_seeded_fn, name="seeded", seed_keyword="seed")
    assert mech.deterministic
    first = mech(_counting(3), 500, np.random.default_rng(SEED))
    again = mech(_counting(3), 500, np.random.default_rng(SEED))
    other = mech(_counting(3), 500, np.random.default_rng(SEED + 1))
    assert first.shape == (500, 1) and first.dtype == np.float64
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    # N(3, 1) draws: mean within 5 standard errors (1/√500)
    assert abs(first.mean() - 3.0) < CLT_SIGMAS / math.sqrt(500)


def test_vectorize_vector_output_and_unseeded_fn_leaves_rng_alone():
    counter = iter(range(10**6))
    mech = vectorize(lambda data: np.array([next(counter), 1.0, 2.0]), name="vec", output_dim=3)
    rng = np.random.default_rng(SEED)
    state = rng.bit_generator.state
    out = mech([[0.5]], 4, rng)
    assert out.shape == (4, 3) and out.dtype == np.float64
    np.testing.assert_array_equal(out[:, 0], [0, 1, 2, 3])
    assert rng.bit_generator.state == state and not mech.deterministic


@pytest.mark.parametrize("fn, output_dim, shape", [(lambda data: [1.0, 2.0], 1, "(2,)"),
                                                   (lambda data: 1.0, 2, "()"),
                                                   (lambda data: np.zeros((1, 2)), 2, "(1, 2)")])
def test_vectorize_rejects_wrong_output_shape(fn, output_dim, shape):
    mech = vectorize(fn, name="bad", output_dim=output_dim)
    with pytest.raises(ValueError, match=rf"bad: `fn` must return .*got shape {re.escape(shape)}"):
        mech(_counting(1), 3, np.random.default_rng(0))


def test_vectorize_rejects_changing_output_shape():
    outputs = iter([np.zeros(2), np.zeros(2), 1.0])
    mech = vectorize(lambda data: next(outputs), name="fickle", output_dim=2)
    with pytest.raises(ValueError, match=r"fickle: `fn` returned shape \(\) at sample 2"):
        mech(_counting(1), 3, np.random.default_rng(0))


@pytest.mark.parametrize("kwargs, error, match", [
    ({"fn": 3, "name": "x"}, TypeError, "`fn` must be callable, got 3"),
    ({"fn": len, "name": " "}, ValueError, "`name` must be a non-empty string"),
    ({"fn": len, "name": "x", "output_dim": 0}, ValueError, "`output_dim` must be an integer >= 1, got 0"),
    ({"fn": len, "name": "x", "seed_keyword": "2x"}, ValueError, "`seed_keyword` must be a keyword"),
])
def test_vectorize_validates_at_the_door(kwargs, error, match):
    fn = kwargs.pop("fn")
    with pytest.raises(error, match=match):
        vectorize(fn, **kwargs)


def test_vectorize_validates_size_and_rng():
    mech = vectorize(lambda data: 0.0, name="zero")
    with pytest.raises(ValueError, match="`size` must be an integer >= 1, got 0"):
        mech(_counting(1), 0, np.random.default_rng(0))
    with pytest.raises(TypeError, match="`rng` must be a numpy.random.Generator"):
        mech(_counting(1), 1, np.random.RandomState(0))


def test_vectorize_truth_from_reference_or_not_implemented():
    with_truth = vectorize(lambda data: 0.0, name="g", claim=ApproxDP(2.0, 1e-5),
                           reference=GaussianMechanism(sigma=2.0))
    assert with_truth.exact_mu() == 0.5
    # docs/ground-truth.md §1: (σ/Δ, δ) = (2, 1e-5) → ε = 1.9930914044
    assert with_truth.epsilon_for_delta(1e-5) == pytest.approx(1.9930914044, rel=1e-9)
    assert with_truth.noise_variance()[0] == pytest.approx(4.0, rel=1e-15)
    bare = vectorize(lambda data: 0.0, name="bare")
    for method, args in (("exact_mu", ()), ("privacy_profile", (1.0,)),
                         ("epsilon_for_delta", (1e-5,)), ("tradeoff", (0.1,))):
        with pytest.raises(NotImplementedError, match="bare: no exact"):
            getattr(bare, method)(*args)
    # Unknown noise law: no accuracy attributes at all (the accuracy audit tests for them).
    assert not hasattr(bare, "error_bound") and not hasattr(bare, "noise_variance")


def test_vectorize_diffprivlib_public_api_seeded(dpl):
    from diffprivlib.mechanisms import Laplace

    def release(data, random_state):
        return Laplace(epsilon=1.0, sensitivity=1.0, random_state=random_state).randomise(float(np.sum(data)))

    mech = vectorize(release, name="dpl laplace", claim=PureDP(1.0), seed_keyword="random_state")
    a = mech(_counting(2), 200, np.random.default_rng(SEED))
    np.testing.assert_array_equal(a, mech(_counting(2), 200, np.random.default_rng(SEED)))


# -- adapter contract --------------------------------------------------------------------------------
def _diffprivlib_adapters(dpl):
    return [dpl.GaussianAnalytic(1.0, 1e-5), dpl.Gaussian(1.0, 1e-5), dpl.Laplace(1.0),
            dpl.Laplace(1.0, 0.1), dpl.LaplaceBoundedNoise(1.0, 1e-5),
            dpl.LaplaceTruncated(1.0, lower=0.0, upper=10.0)]


@pytest.mark.parametrize("batch", ["vectorized", "loop"])
def test_diffprivlib_contract_shape_dtype_determinism(dpl, batch):
    for adapter in _diffprivlib_adapters(dpl):
        mech = dataclasses.replace(adapter, batch=batch)
        a = mech(_counting(5), 300, np.random.default_rng(SEED))
        assert a.shape == (300, 1) and a.dtype == np.float64, mech.name
        assert np.isfinite(a).all()
        assert mech.deterministic
        np.testing.assert_array_equal(a, mech(_counting(5), 300, np.random.default_rng(SEED)))
        assert not np.array_equal(a, mech(_counting(5), 300, np.random.default_rng(SEED + 1)))
        np.testing.assert_array_equal(mech.true_answer(_counting(5)), [5.0])


def test_opendp_contract_shape_dtype_not_seedable(odp):
    for mech in (odp.make_gaussian(2.0), odp.make_laplace(1.0)):
        a = mech(_counting(5), 300, np.random.default_rng(SEED))
        b = mech(_counting(5), 300, np.random.default_rng(SEED))
        assert a.shape == (300, 1) and a.dtype == np.float64 and np.isfinite(a).all()
        # OpenDP's generator cannot be seeded: equal seeds still give different draws.
        assert not mech.deterministic and not np.array_equal(a, b)


def test_adapters_validate_inputs(dpl, odp):
    for mech in (dpl.Laplace(1.0), odp.make_laplace(1.0)):
        with pytest.raises(ValueError, match=r"values must lie in \[0, 1\]"):
            mech(np.array([[2.0]]), 5, np.random.default_rng(0))
        with pytest.raises(ValueError, match="`size` must be an integer >= 1, got 0"):
            mech(_counting(1), 0, np.random.default_rng(0))
        with pytest.raises(ValueError, match=r"must have shape \(n, 1\)"):
            mech(np.ones((3, 2)), 5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="`batch` must be one of"):
        dpl.Laplace(1.0, batch="fast")
    with pytest.raises(ValueError, match="`delta` must be in"):
        dpl.GaussianAnalytic(1.0, 1.5)
    with pytest.raises(ValueError, match="`scale` must be a finite number > 0, got -1.0"):
        odp.make_gaussian(-1.0)
    # diffprivlib's own refusals come through, naming the class and the parameters
    with pytest.raises(ValueError, match=r"diffprivlib.Gaussian rejected epsilon=2.0.*greater than 1"):
        dpl.Gaussian(2.0, 1e-5)
    with pytest.raises(ValueError, match=r"LaplaceBoundedNoise rejected .*delta=0.6"):
        dpl.LaplaceBoundedNoise(1.0, 0.6)


def test_adapters_pickle_and_rebuild(dpl, odp):
    for mech in _diffprivlib_adapters(dpl) + [odp.make_gaussian(2.0), odp.make_laplace(1.0)]:
        copy = pickle.loads(pickle.dumps(mech))
        assert copy.name == mech.name and copy.claim == mech.claim
        assert copy(_counting(1), 3, np.random.default_rng(0)).shape == (3, 1)


# -- noise laws --------------------------------------------------------------------------------------
N_LAW = 20_000


def _noise(mech, total=5, size=N_LAW, seed=SEED):
    return mech(_counting(total), size, np.random.default_rng(seed))[:, 0] - total


def _check_law(noise, cdf, variance, kurtosis, what):
    # KS against the exact law (reject only at p < 1e-3), and the first two moments within
    # 5 standard errors: SE(mean) = √(var/n), SE(s²) ≈ var·√((κ − 1)/n), κ the kurtosis.
    n = noise.size
    assert stats.kstest(noise, cdf).pvalue > KS_LEVEL, what
    assert abs(noise.mean()) < CLT_SIGMAS * math.sqrt(variance / n), what
    assert abs(noise.var() - variance) < CLT_SIGMAS * variance * math.sqrt((kurtosis - 1) / n), what


@pytest.mark.statistical
@pytest.mark.parametrize("batch", ["vectorized", "loop"])
def test_diffprivlib_noise_laws(dpl, batch):
    size = N_LAW if batch == "vectorized" else 5_000
    gauss = dataclasses.replace(dpl.GaussianAnalytic(1.0, 1e-5), batch=batch)
    _check_law(_noise(gauss, size=size), stats.norm(scale=gauss.sigma).cdf, gauss.sigma**2, 3.0,
               gauss.name)
    laplace = dataclasses.replace(dpl.Laplace(1.0, 0.1), batch=batch)
    b = laplace.scale
    _check_law(_noise(laplace, size=size), stats.laplace(scale=b).cdf, 2 * b * b, 6.0, laplace.name)
    bounded = dataclasses.replace(dpl.LaplaceBoundedNoise(2.0, 0.05), batch=batch)
    noise = _noise(bounded, size=size)
    assert np.abs(noise).max() <= bounded.bound  # bounded noise, τ = 2.0864 (docs/ground-truth.md §2)
    variance = float(bounded.noise_variance()[0])
    # kurtosis of a Laplace truncated this tightly is < 6; 6 keeps the variance check conservative
    _check_law(noise, bounded.reference.cdf, variance, 6.0, bounded.name)


@pytest.mark.statistical
@pytest.mark.parametrize("batch", ["vectorized", "loop"])
def test_diffprivlib_laplace_truncated_is_a_clamp(dpl, batch):
    # Clamp to [4, 6] around f = 5 with b = 1: atoms P(out = 4) = P(out = 6) = e^{-1}/2 = 0.18394.
    mech = dataclasses.replace(dpl.LaplaceTruncated(1.0, lower=4.0, upper=6.0), batch=batch)
    size = N_LAW if batch == "vectorized" else 5_000
    out = mech(_counting(5), size, np.random.default_rng(SEED))[:, 0]
    assert out.min() >= 4.0 and out.max() <= 6.0
    atom = 0.5 * math.exp(-1.0)
    for edge in (4.0, 6.0):
        # binomial count: 5 standard errors √(p(1−p)/n)
        share = np.mean(out == edge)
        assert abs(share - atom) < CLT_SIGMAS * math.sqrt(atom * (1 - atom) / size)
    inside = out[(out > 4.0) & (out < 6.0)] - 5.0
    lap = stats.laplace()
    cdf = lambda x: (lap.cdf(x) - lap.cdf(-1.0)) / (lap.cdf(1.0) - lap.cdf(-1.0))  # noqa: E731
    assert stats.kstest(inside, cdf).pvalue > KS_LEVEL
    # Not the truncated Laplace mechanism: no accuracy attributes (atoms at the bounds) ...
    assert not hasattr(mech, "error_bound") and not hasattr(mech, "noise_variance")
    # ... but exactly Laplace's privacy: ε₀ = 1, δ(ε') = 1 − e^{(ε'−1)/2} (docs/ground-truth.md §2)
    assert float(mech.privacy_profile(0.5)) == pytest.approx(1 - math.exp(-0.25), rel=1e-12)


@pytest.mark.statistical
def test_diffprivlib_vectorized_and_loop_paths_agree(dpl):
    # Same law, different random streams: a two-sample KS must not reject at p < 1e-3.
    for adapter in _diffprivlib_adapters(dpl):
        fast = _noise(adapter, size=10_000, seed=SEED)
        slow = _noise(dataclasses.replace(adapter, batch="loop"), size=5_000, seed=SEED + 7)
        assert stats.ks_2samp(fast, slow).pvalue > KS_LEVEL, adapter.name


@pytest.mark.statistical
def test_opendp_noise_laws(odp):
    gauss = odp.make_gaussian(2.0)
    _check_law(_noise(gauss, size=10_000), stats.norm(scale=2.0).cdf, 4.0, 3.0, gauss.name)
    laplace = odp.make_laplace(1.0)
    _check_law(_noise(laplace, size=N_LAW), stats.laplace(scale=1.0).cdf, 2.0, 6.0, laplace.name)


# -- claims and exact truth against docs/ground-truth.md --------------------------------------------------
@pytest.mark.parametrize("epsilon, delta, sigma", [
    (1.0, 1e-5, 3.7306316348), (0.1, 1e-5, 30.749566132), (4.0, 1e-6, 1.1935185872),
    (1.0, 0.3, 0.6902305800)])
def test_diffprivlib_gaussian_analytic_sigma_and_truth(dpl, epsilon, delta, sigma):
    # docs/ground-truth.md §1 analytic calibration references; diffprivlib bisects to float resolution,
    # so 1e-9 relative (the references have 11 significant digits).
    mech = dpl.GaussianAnalytic(epsilon, delta)
    assert mech.claim == ApproxDP(epsilon, delta)
    assert mech.sigma == pytest.approx(sigma, rel=1e-9)
    assert mech.exact_mu() == pytest.approx(1 / sigma, rel=1e-9)
    assert mech.epsilon_for_delta(delta) == pytest.approx(epsilon, rel=1e-8)  # BW18 is exact
    # abs=0: δ ≤ 1e-5 here, so pytest.approx's default abs=1e-12 would swamp rel=1e-8.
    assert float(mech.privacy_profile(epsilon)) == pytest.approx(delta, rel=1e-8, abs=0)


def test_diffprivlib_gaussian_classical(dpl):
    mech = dpl.Gaussian(1.0, 1e-5)
    assert mech.sigma == pytest.approx(math.sqrt(2 * math.log(1.25e5)), rel=1e-15)
    assert mech.claim == ApproxDP(1.0, 1e-5)
    # docs/ground-truth.md §1: classical calibration, claimed ε = 1 → true 0.751 (3 digits given)
    assert mech.epsilon_for_delta(1e-5) == pytest.approx(0.751, abs=5e-4)


def test_diffprivlib_laplace_claims_and_truth(dpl):
    pure = dpl.Laplace(1.0)
    assert pure.claim == PureDP(1.0) and pure.scale == 1.0
    assert pure.epsilon_for_delta(0.0) == pytest.approx(1.0, rel=1e-15)
    approx = dpl.Laplace(1.0, 0.1)
    assert approx.claim == ApproxDP(1.0, 0.1)
    assert approx.scale == pytest.approx(1 / (1 - math.log(0.9)), rel=1e-15)
    # Truth: Laplace with ε₀ = ε − ln(1 − δ); docs/ground-truth.md §2 profile at ε' = ε gives
    # 1 − e^{ln(1−δ)/2} = 1 − √(1 − δ) ≈ δ/2: the claim holds with room to spare.
    assert float(approx.privacy_profile(1.0)) == pytest.approx(1 - math.sqrt(0.9), rel=1e-12)


@pytest.mark.parametrize("epsilon, delta, tau, profile", [
    (1.0, 1e-5, 11.3611, {0.0: 0.39347392009, 0.5: 0.22120556699, 0.99: 4.997421450e-3,
                           1.0: 1e-5, 3.0: 1e-5}),
    (2.0, 0.05, 2.0864, {0.0: 0.64201436081, 1.0: 0.41307490072, 2.0: 0.05})])
def test_diffprivlib_laplace_bounded_noise_is_geng(dpl, epsilon, delta, tau, profile):
    # docs/ground-truth.md §2 truncated Laplace references (τ to 4 decimals, δ to 10-11 digits).
    mech = dpl.LaplaceBoundedNoise(epsilon, delta)
    assert mech.claim == ApproxDP(epsilon, delta)
    assert mech.scale == pytest.approx(1 / epsilon, rel=1e-15)
    assert mech.bound == pytest.approx(tau, abs=5e-5)
    for eps, expected in profile.items():
        # abs=0: for δ = 1e-5 the default abs=1e-12 would be 100 times rel=1e-9.
        assert float(mech.privacy_profile(eps)) == pytest.approx(expected, rel=1e-9, abs=0), eps
    assert mech.worst_case_error() == pytest.approx(mech.bound, rel=1e-15)


def test_diffprivlib_laplace_truncated_truth_needs_a_pair_inside(dpl):
    narrow = dpl.LaplaceTruncated(1.0, lower=0.0, upper=0.5)
    with pytest.raises(NotImplementedError, match="no exact privacy profile"):
        narrow.privacy_profile(1.0)


def test_misdeclared_sensitivity_is_a_wrong_claim(dpl):
    # Declared Δ = 0.5 for a count: b = 0.5, true ε₀ = 2 (the truth uses the true Δ = 1);
    # docs/ground-truth.md §2: δ(1) = 1 − e^{(1−2)/2}.
    mech = dpl.Laplace(1.0, sensitivity=0.5)
    assert mech.claim == PureDP(1.0)
    assert float(mech.privacy_profile(1.0)) == pytest.approx(1 - math.exp(-0.5), rel=1e-12)


def test_opendp_gaussian_claim_is_the_loose_conversion(odp):
    mech = odp.make_gaussian(2.0)
    # docs/ground-truth.md §7: OpenDP's zCDP → (ε, δ) conversion gives 2.16572 (5 decimals given) where
    # the exact Gaussian (§1, σ = 2, δ = 1e-5) has 1.9930914044.
    assert mech.rho == 0.125
    assert mech.claim.delta == 1e-5
    assert mech.claim.epsilon == pytest.approx(2.16572, abs=5e-6)
    assert mech.exact_mu() == 0.5
    assert mech.epsilon_for_delta(1e-5) == pytest.approx(1.9930914044, rel=1e-9)
    assert mech.library_delta(mech.claim.epsilon) == pytest.approx(1e-5, rel=1e-6)
    # σ = 1 (docs/ground-truth.md §1): exact ε(1e-5) = 4.3771780957
    assert odp.make_gaussian(1.0).epsilon_for_delta(1e-5) == pytest.approx(4.3771780957, rel=1e-9)


def test_opendp_laplace_claim_and_truth(odp):
    mech = odp.make_laplace(0.5)
    assert mech.claim == PureDP(2.0)
    assert mech.epsilon_for_delta(1e-5) == pytest.approx(2.0 + 2 * math.log1p(-1e-5), rel=1e-12)
    assert mech.noise_variance()[0] == pytest.approx(0.5, rel=1e-12)


# -- the bundled thirdparty suite --------------------------------------------------------------------
def _thirdparty_files():
    return sorted((REPO / "scenarios" / "suite" / "thirdparty").glob("*.toml"))


def test_thirdparty_suite_expected_matches_exact_truth(dpl, odp):
    paths = _thirdparty_files()
    assert len(paths) >= 7
    for path in paths:
        spec = load_spec(path)
        mech, claim = spec.mechanism, spec.claim
        # violated iff the exact δ exceeds the claimed δ at the claimed ε (1e-9 relative slack
        # for calibrations that are exact up to rounding, e.g. BW18 bisection)
        exact = float(mech.privacy_profile(claim.epsilon))
        verdict = "violated" if exact > claim.delta * (1 + 1e-9) + 1e-300 else "holds"
        assert verdict == spec.expected, (path.name, exact, claim)
        assert "Exact truth" in path.read_text(encoding="utf-8"), path.name


@pytest.mark.statistical
@pytest.mark.parametrize("name, verdict", [("diffprivlib_laplace_misdeclared_sensitivity", "VIOLATED"),
                                           ("diffprivlib_laplace_bounded_noise", "NOT_REFUTED")])
def test_thirdparty_scenario_end_to_end(dpl, name, verdict):
    spec = load_spec(REPO / "scenarios" / "suite" / "thirdparty" / f"{name}.toml")
    report = audit.run_audit(spec.mechanism, spec.scenario, claim=spec.claim, samples=200_000,
                             confidence=spec.confidence, seed=spec.seed, progress=False,
                             accuracy=False)
    assert str(report.verdict) == verdict
