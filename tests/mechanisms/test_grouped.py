"""Tests of Lebeda's grouped correlated Gaussian mechanism (Algorithm 2, Lemma 4.2).

"Lebeda" is C. J. Lebeda, "Better Gaussian Mechanism using Correlated Noise" (2024),
"GT" is docs/ground-truth.md.  Statistical tolerances are stated where they are used.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

from mechanisms import CorrelatedGaussianMechanism, GaussianDP, GroupedCorrelatedGaussianMechanism

SEED = 20240918
CALIBRATIONS = [("add-remove", "paper"), ("replace", "paper"), ("replace", "tight")]


def paper_variances(mu: float, d: int, relation: str, eta: str) -> tuple[float, float]:
    """(Var η_j, Var z_{j,k}) from Algorithm 2 lines 4 and 6 (and GT §5 for eta="tight")."""
    if relation == "add-remove":
        return (math.sqrt(d) + 1) / (4 * mu**2), (d + math.sqrt(d)) / (4 * mu**2)
    return (4.0 if eta == "paper" else 1.0) / mu**2, d / mu**2


def paper_covariance(mu: float, groups: int, d: int, relation: str, eta: str) -> np.ndarray:
    """Block-diagonal output covariance built from the paper's variances: per group the counts
    share η_j (a·11ᵀ + b·I), ỹ_j = n_j + 2η_j adds 2a to each count and 4a on itself."""
    a, b = paper_variances(mu, d, relation, eta)
    cov = np.zeros((groups * (d + 1), groups * (d + 1)))
    for j in range(groups):
        lo = j * (d + 1)
        block = cov[lo:lo + d + 1, lo:lo + d + 1]
        block[:d, :d] = a + b * np.eye(d)
        block[:d, d] = block[d, :d] = 2 * a
        block[d, d] = 4 * a
    return cov


def mahalanobis(delta: np.ndarray, cov: np.ndarray) -> float:
    return float(math.sqrt(delta @ np.linalg.solve(cov, delta)))


def corner_rows(groups: int, d: int) -> list[np.ndarray]:
    """The all-zero row and every non-zero 0/1 pattern placed in each group."""
    rows = [np.zeros(groups * d)]
    for j in range(groups):
        for bits in itertools.product((0.0, 1.0), repeat=d):
            if any(bits):
                row = np.zeros(groups * d)
                row[j * d:(j + 1) * d] = bits
                rows.append(row)
    return rows


# -- layout ---------------------------------------------------------------------------------------
def test_output_layout_and_group_sizes():
    mech = GroupedCorrelatedGaussianMechanism(1.0, groups=3, d=2)
    data = np.array([
        [1.0, 0.5, 0.0, 0.0, 0.0, 0.0],  # group 0
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # all-zero: counts in no group (Algorithm 2 line 8)
        [0.0, 0.0, 0.25, 0.0, 0.0, 0.0],  # group 1
        [0.0, 1.0, 0.0, 0.0, 0.0, 0.0],  # group 0
    ])
    # per group: its d counts, then n_j
    expected = np.array([1.0, 1.5, 2.0, 0.25, 0.0, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(mech.true_answer(data), expected)
    assert mech.output_dim == 9 and mech.row_dim == 6
    assert mech.query_columns == (0, 1, 3, 4, 6, 7)
    # With negligible noise (μ = 1e9) the output is the true answer in that layout.
    quiet = GroupedCorrelatedGaussianMechanism(1e9, groups=3, d=2)
    out = quiet(data, 4, np.random.default_rng(SEED))
    assert out.shape == (4, 9) and out.dtype == np.float64
    np.testing.assert_allclose(out, np.broadcast_to(expected, (4, 9)), atol=1e-7)


def test_single_group_matches_algorithm1_on_rows_without_zero_rows():
    grouped = GroupedCorrelatedGaussianMechanism(0.8, groups=1, d=4)
    alg1 = CorrelatedGaussianMechanism(0.8, 4)
    data = np.random.default_rng(SEED).uniform(0.1, 1.0, size=(6, 4))
    np.testing.assert_allclose(grouped.true_answer(data), alg1.true_answer(data), rtol=1e-15)
    np.testing.assert_allclose(grouped.output_covariance(), alg1.output_covariance(), rtol=1e-14)


# -- variances ------------------------------------------------------------------------------------
@pytest.mark.parametrize("mu, d", [(1.0, 100), (0.5, 9), (2.0, 1)])
def test_per_column_variances(mu, d):
    groups = 3
    var = {cal: GroupedCorrelatedGaussianMechanism(mu, groups, d, relation=cal[0], eta=cal[1])
           .noise_variance() for cal in CALIBRATIONS}
    count_cols = [j * (d + 1) + i for j in range(groups) for i in range(d)]
    size_cols = [j * (d + 1) + d for j in range(groups)]
    # add/remove: Algorithm 1 per group, (d + 2√d + 1)/(4μ²) per count (Lebeda Lemma 3.1) and
    # Var(ỹ_j) = 4·(√d + 1)/(4μ²).
    np.testing.assert_allclose(var["add-remove", "paper"][count_cols],
                               (d + 2 * math.sqrt(d) + 1) / (4 * mu**2), rtol=1e-13)
    np.testing.assert_allclose(var["add-remove", "paper"][size_cols],
                               (math.sqrt(d) + 1) / mu**2, rtol=1e-13)
    # replacement as printed: (d + 4)/μ² per count, Var(ỹ_j) = 16/μ² (GT §5, Algorithm 2).
    np.testing.assert_allclose(var["replace", "paper"][count_cols], (d + 4) / mu**2, rtol=1e-13)
    np.testing.assert_allclose(var["replace", "paper"][size_cols], 16 / mu**2, rtol=1e-13)
    # replacement, tight η_j ~ N(0, 1/μ²): (d + 1)/μ² per count, Var(ỹ_j) = 4/μ² (GT §5).
    np.testing.assert_allclose(var["replace", "tight"][count_cols], (d + 1) / mu**2, rtol=1e-13)
    np.testing.assert_allclose(var["replace", "tight"][size_cols], 4 / mu**2, rtol=1e-13)


def test_eta_has_no_effect_under_add_remove():
    paper = GroupedCorrelatedGaussianMechanism(1.0, 2, 5, eta="paper")
    tight = GroupedCorrelatedGaussianMechanism(1.0, 2, 5, eta="tight")
    np.testing.assert_array_equal(paper.output_covariance(), tight.output_covariance())


@pytest.mark.statistical
@pytest.mark.parametrize("relation, eta", CALIBRATIONS)
def test_sampling_covariance_means_and_marginals(relation, eta):
    mu, groups, d, n = 0.9, 2, 3, 150_000
    mech = GroupedCorrelatedGaussianMechanism(mu, groups, d, relation=relation, eta=eta)
    cov = paper_covariance(mu, groups, d, relation, eta)
    np.testing.assert_allclose(mech.output_covariance(), cov, rtol=1e-14)
    np.testing.assert_array_equal(mech.noise_variance(), np.diag(mech.output_covariance()))
    rng = np.random.default_rng(SEED)
    data = np.zeros((5, groups * d))
    for i, j in enumerate([0, 1, 1, 0, 1]):
        data[i, j * d:(j + 1) * d] = rng.uniform(0.1, 1.0, size=d)
    noise = mech(data, n, np.random.default_rng(SEED + 1)) - mech.true_answer(data)
    # Means within 5 standard errors √(σ_ii/n).
    assert np.all(np.abs(noise.mean(axis=0)) <= 5 * np.sqrt(np.diag(cov) / n))
    # Covariance entries (including the zero cross-group ones): Var(sample cov_ij) ≈
    # (σ_ii σ_jj + σ_ij²)/n for Gaussian data (CLT); allow 5 standard errors per entry.
    se = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / n)
    assert np.all(np.abs(np.cov(noise, rowvar=False) - cov) <= 5 * se)
    # KS of each column's error against its N(0, σ_ii) marginal; reject only at p < 1e-3.
    for col in range(cov.shape[0]):
        assert stats.kstest(noise[:, col], "norm", args=(0, math.sqrt(cov[col, col]))).pvalue > 1e-3


# -- exact privacy --------------------------------------------------------------------------------
@pytest.mark.parametrize("relation, eta", CALIBRATIONS)
def test_claim_and_calibrated_relation_is_exact(relation, eta):
    mech = GroupedCorrelatedGaussianMechanism(1.7, 4, 10, relation=relation, eta=eta)
    assert mech.claim == GaussianDP(1.7, relation)
    # Lemma 4.2 (and GT §5 for "tight"): exactly μ-GDP under the calibrated relation.
    assert mech.exact_mu() == pytest.approx(1.7, rel=1e-13)


@pytest.mark.parametrize("d", [1, 4, 100])
def test_exact_mu_under_the_other_relation(d):
    mu = 0.6
    add = GroupedCorrelatedGaussianMechanism(mu, 3, d)
    # Derived (grouped.py docstring): add/remove noise audited under replacement is as loose as
    # Algorithm 1: μ_rep² = 4μ²√d/(√d + 1) (complementing a row in one group).
    root = math.sqrt(d)
    expected = 2 * mu * math.sqrt(root / (root + 1))
    assert add.exact_mu("replace") == pytest.approx(expected, rel=1e-13)
    # Replacement noise audited under add/remove: μ²(1/4 + 1/16) (paper), μ²(1/4 + 1/4) (tight).
    paper = GroupedCorrelatedGaussianMechanism(mu, 3, d, relation="replace", eta="paper")
    tight = GroupedCorrelatedGaussianMechanism(mu, 3, d, relation="replace", eta="tight")
    assert paper.exact_mu("add-remove") == pytest.approx(mu * math.sqrt(5) / 4, rel=1e-13)
    assert tight.exact_mu("add-remove") == pytest.approx(mu / math.sqrt(2), rel=1e-13)


@pytest.mark.parametrize("relation, eta", CALIBRATIONS)
@pytest.mark.parametrize("groups, d", [(1, 2), (1, 3), (2, 2), (3, 3), (2, 1)])
def test_exact_mu_by_brute_force_over_corner_pairs(groups, d, relation, eta):
    """Independent check: max over corner neighbour pairs of ‖Σ^{-1/2}(m − m')‖, means from the
    mechanism on real datasets, Σ from the paper's variances."""
    mu = 1.1
    mech = GroupedCorrelatedGaussianMechanism(mu, groups, d, relation=relation, eta=eta)
    cov = paper_covariance(mu, groups, d, relation, eta)
    rows = corner_rows(groups, d)
    base = np.vstack([rows[1], rows[-1], rows[0]])  # a row in group 0, one in the last, a zero row
    mean = {i: mech.output_mean(np.vstack([base, row])) for i, row in enumerate(rows)}
    add = max(mahalanobis(mean[i] - mech.output_mean(base), cov) for i in mean)
    rep = max(mahalanobis(mean[i] - mean[j], cov) for i in mean for j in mean)
    assert add == pytest.approx(mech.exact_mu("add-remove"), rel=1e-12)
    if d >= 2:
        assert rep == pytest.approx(mech.exact_mu("replace"), rel=1e-12)
    else:
        # d = 1: the within-group supremum d/b needs x' → 0⁺ (not a corner; next test), so the
        # corners reach only the across-group pair √(1/(2b) + 1/(2a)) (groups ≥ 2) or the
        # add/remove-like pair (one group).
        a, b = paper_variances(mu, d, relation, eta)
        attained = 1 / (2 * b) + 1 / (2 * a) if groups >= 2 else 1 / (4 * b) + 1 / (4 * a)
        assert rep == pytest.approx(math.sqrt(attained), rel=1e-12)
        assert rep <= mech.exact_mu("replace") * (1 + 1e-12)


def test_replacement_supremum_for_one_query_per_group_is_approached():
    # d = 1, one group: replacing x = (1) by x' = (ε) keeps n_1 and moves the count by 1 − ε, so
    # μ_rep = sup = √(1/b) is approached as ε → 0 but never attained (grouped.py docstring).
    mu = 0.9
    mech = GroupedCorrelatedGaussianMechanism(mu, 1, 1)
    cov = paper_covariance(mu, 1, 1, "add-remove", "paper")
    for eps in (1e-3, 1e-6):
        shift = mech.output_mean([[1.0]]) - mech.output_mean([[eps]])
        expected = mech.exact_mu("replace") * (1 - eps)
        assert mahalanobis(shift, cov) == pytest.approx(expected, rel=1e-9)


def test_profile_under_the_other_relation_exceeds_the_claim():
    mech = GroupedCorrelatedGaussianMechanism(1.0, 2, 100)  # add/remove calibration
    grid = np.linspace(0.0, 6.0, 13)
    assert np.all(mech.privacy_profile(grid, relation="replace") > mech.claim.delta_at(grid))
    np.testing.assert_allclose(mech.privacy_profile(grid), mech.claim.delta_at(grid), rtol=1e-12)


# -- accuracy -------------------------------------------------------------------------------------
@pytest.mark.parametrize("relation, eta", CALIBRATIONS)
def test_error_bound_single_query(relation, eta):
    mu, d = 1.2, 16
    mech = GroupedCorrelatedGaussianMechanism(mu, 3, d, relation=relation, eta=eta)
    a, b = paper_variances(mu, d, relation, eta)
    # GT §4: a single Gaussian error N(0, a + b): σ Φ⁻¹(1 − α/2).
    expected = math.sqrt(a + b) * stats.norm.isf(0.025)
    assert mech.error_bound(0.05) == pytest.approx(expected, rel=1e-13)


def test_error_bound_within_one_group_equals_algorithm1():
    grouped = GroupedCorrelatedGaussianMechanism(0.7, 5, 25)
    alg1 = CorrelatedGaussianMechanism(0.7, 25)
    for k in (2, 10, 25):
        assert grouped.error_bound(0.05, k) == pytest.approx(alg1.error_bound(0.05, k), rel=1e-12)


def test_error_bound_one_query_per_group_is_independent():
    # d = 1: the k ≤ groups queries are independent N(0, a + b): exact (GT §4)
    # a_k = σ Φ⁻¹((1 + (1 − α)^{1/k})/2).
    mech = GroupedCorrelatedGaussianMechanism(1.0, 8, 1, relation="replace", eta="tight")
    sd = math.sqrt(mech.noise_variance()[0])
    for k in (2, 5, 8):
        expected = sd * stats.norm.isf(-math.expm1(math.log1p(-0.05) / k) / 2)
        assert mech.error_bound(0.05, k) == pytest.approx(expected, rel=1e-11)


@pytest.mark.statistical
def test_error_bound_over_all_groups_by_monte_carlo():
    mu, groups, d, alpha, n = 1.0, 3, 8, 0.05, 300_000
    mech = GroupedCorrelatedGaussianMechanism(mu, groups, d, relation="replace", eta="paper")
    data = np.zeros((0, groups * d))
    noise = mech(data, n, np.random.default_rng(SEED + 2))[:, list(mech.query_columns)]
    # Binomial: the exceedance frequency has standard error √(α(1−α)/n) ≈ 4e-4; allow 5 of them.
    tol = 5 * math.sqrt(alpha * (1 - alpha) / n)
    for k in (groups * d, d + 3):  # all counts; one full group plus 3 counts of the next
        t = mech.error_bound(alpha, k)
        assert abs(np.mean(np.max(np.abs(noise[:, :k]), axis=1) > t) - alpha) <= tol
    # Spreading k = 3 counts over three groups needs a larger bound than keeping them in one.
    # The groups' noises are independent (block-diagonal covariance), each count N(0, a + b), so
    # the exact exceedance of the one-group bound t is p = 1 − (1 − 2Φ(−t/sd))³ (≈ 0.05215).
    # That p > α is checked exactly; the Monte Carlo frequency must then match p within 5
    # binomial standard errors √(p(1−p)/n) (p − α ≈ 2.1e-3 is only ~5 SE, too close to test
    # "frequency > α + 5 SE" reliably).
    t = mech.error_bound(alpha, 3)
    sd = math.sqrt(mech.noise_variance()[0])
    p = -math.expm1(3 * math.log1p(-2 * special.ndtr(-t / sd)))
    assert p - alpha > 1e-3
    spread = noise[:, [0, d, 2 * d]]
    observed = np.mean(np.max(np.abs(spread), axis=1) > t)
    assert abs(observed - p) <= 5 * math.sqrt(p * (1 - p) / n)


# -- bad input ------------------------------------------------------------------------------------
def test_rows_in_two_groups_are_rejected():
    mech = GroupedCorrelatedGaussianMechanism(1.0, 3, 2)
    data = np.zeros((4, 6))
    data[0, 0] = 1.0
    data[2, [1, 5]] = 0.5  # groups 0 and 2
    with pytest.raises(ValueError, match=r"row 2 is non-zero in groups \[0, 2\]"):
        mech(data, 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="row 2"):
        mech.true_answer(data)


@pytest.mark.parametrize("dataset, text", [
    (np.zeros((2, 2)), "shape"),  # width d instead of groups·d
    (np.full((1, 6), -0.5), "[0, 1]"),
    (np.array([[math.nan, 0, 0, 0, 0, 0]]), "NaN"),
])
def test_bad_datasets_are_rejected(dataset, text):
    mech = GroupedCorrelatedGaussianMechanism(1.0, 3, 2)
    with pytest.raises(ValueError) as info:
        mech(dataset, 3, np.random.default_rng(0))
    assert text in str(info.value)


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(mu=0.0, groups=2, d=3), ValueError, "`mu`"),
    (dict(mu=-0.5, groups=2, d=3), ValueError, "-0.5"),
    (dict(mu=math.inf, groups=2, d=3), ValueError, "`mu`"),
    (dict(mu=1.0, groups=0, d=3), ValueError, "`groups`"),
    (dict(mu=1.0, groups=2.0, d=3), TypeError, "`groups`"),
    (dict(mu=1.0, groups=2, d=0), ValueError, "`d`"),
    (dict(mu=1.0, groups=2, d="3"), TypeError, "'3'"),
    (dict(mu=1.0, groups=2, d=3, relation="remove"), ValueError, "'remove'"),
    (dict(mu=1.0, groups=2, d=3, relation=None), TypeError, "`relation`"),
    (dict(mu=1.0, groups=2, d=3, eta="Paper"), ValueError, "'Paper'"),
    (dict(mu=1.0, groups=2, d=3, eta="loose"), ValueError, "`eta`"),
    (dict(mu=1.0, groups=2, d=3, eta=1), TypeError, "`eta`"),
])
def test_bad_parameters_are_rejected(kwargs, error, text):
    with pytest.raises(error) as info:
        GroupedCorrelatedGaussianMechanism(**kwargs)
    assert text in str(info.value)


def test_bad_accuracy_and_sampling_arguments():
    mech = GroupedCorrelatedGaussianMechanism(1.0, 2, 3)
    with pytest.raises(ValueError, match="`k`.*got 7"):
        mech.error_bound(0.05, 7)
    with pytest.raises(ValueError, match="`alpha`"):
        mech.error_bound(1.0)
    with pytest.raises(ValueError, match="`size`"):
        mech(np.zeros((1, 6)), 0, np.random.default_rng(0))
    with pytest.raises(TypeError, match="`rng`"):
        mech(np.zeros((1, 6)), 2, None)


def test_name():
    assert (GroupedCorrelatedGaussianMechanism(1, 3, 10).name
            == "GroupedCorrelatedGaussian[add-remove](μ=1, groups=3, d=10)")
    assert (GroupedCorrelatedGaussianMechanism(0.5, 2, 4, relation="replace", eta="tight").name
            == "GroupedCorrelatedGaussian[replace/tight](μ=0.5, groups=2, d=4)")
