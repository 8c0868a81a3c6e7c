"""The joint test of a headline event (audit/joint_bounds.py): exactness against brute force,
validity by simulation at the null's boundary, and that it certifies more than Bonferroni."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from scipy import stats

from audit.bounds import delta_lower_bound, epsilon_lower_bound, mu_lower_bound
from audit.intervals import cp_lower, cp_upper
from audit.joint_bounds import NUISANCE_SHARE, JointTest, slot_quantity
from audit.slots import MU, TRADEOFF, Slot
from mechanisms.claims import approx_tradeoff
from mechanisms.gdp import gdp_tradeoff

FUNCTIONALS = {"epsilon@0.0": lambda a, b: epsilon_lower_bound(a, b, 0.0),
               "delta@1.0": lambda a, b: delta_lower_bound(a, b, 1.0), "mu": mu_lower_bound}
CURVES = {"epsilon@0.0": lambda v, a: approx_tradeoff(a, v, 0.0),
          "delta@1.0": lambda v, a: approx_tradeoff(a, 1.0, v), "mu": lambda v, a: gdp_tradeoff(a, v)}


def _brute_force_p(slot, count_a, count_b, n, level, value, grid=4001):
    """max over a fine grid of the nuisance interval of P(Z ≥ z_obs) on H₀'s boundary, by
    enumerating every outcome (an independent route: no cells, blocks or duality)."""
    inner = level / 2
    counts = np.arange(n + 1)
    z = FUNCTIONALS[slot](cp_upper(counts[None, :], n, inner), 1.0 - cp_lower(counts[:, None], n, inner))
    observed = FUNCTIONALS[slot](cp_upper(count_b, n, inner), 1.0 - cp_lower(count_a, n, inner))
    region = z >= observed  # rows: c_A, columns: c_B
    eta = NUISANCE_SHARE * level
    low, high = cp_lower(count_b, n, eta / 2), cp_upper(count_b, n, eta / 2)
    best = 0.0
    for b in np.linspace(low, high, grid):
        a = float(np.clip(1.0 - CURVES[slot](value, b), 0.0, 1.0))
        best = max(best, float(stats.binom.pmf(counts, n, a) @ region @ stats.binom.pmf(counts, n, b)))
    return best, eta


@pytest.mark.parametrize("slot, count_a, count_b, n, value", [
    ("epsilon@0.0", 24, 3, 40, 0.8), ("epsilon@0.0", 30, 12, 40, 0.3),
    ("delta@1.0", 26, 1, 30, 0.1), ("mu", 25, 6, 35, 0.9), ("epsilon@0.0", 10, 0, 10, 1.7)])
def test_p_value_is_the_brute_force_one_up_to_its_stated_slack(slot, count_a, count_b, n, value):
    level = 0.05
    computed = JointTest(Slot.parse(slot), count_a, count_b, n, level).p_value(value)
    exact, eta = _brute_force_p(slot, count_a, count_b, n, level, value)
    # An upper bound on the exact p-value (sup over the nuisance interval, plus η) ...
    assert computed >= min(1.0, exact + eta) - 1e-9 and computed < 1.0
    # ... that the cells' corners (48 of them over the interval) inflate by little.
    assert computed <= exact + eta + 0.01


@pytest.mark.statistical
@pytest.mark.parametrize("slot, n, value, b", [
    ("epsilon@0.0", 135, 1.0, 0.07), ("epsilon@0.0", 60, 0.5, 0.4), ("delta@1.0", 300, 0.05, 0.1),
    ("mu", 200, 1.0, 0.1)])
def test_false_rejections_at_the_boundary_stay_below_the_level(slot, n, value, b):
    # True (α, β) = (b, f_value(b)) lies on H₀(value)'s boundary, where the test is least
    # conservative.  The false-rejection rate over 4,000 seeded draws must not exceed the level
    # beyond three binomial standard errors.
    level, reps = 0.05, 4000
    a = 1.0 - float(CURVES[slot](value, b))
    rng = np.random.default_rng(20261123)
    count_a, count_b = rng.binomial(n, a, reps), rng.binomial(n, b, reps)

    @functools.lru_cache(maxsize=None)
    def rejects(x, y):
        return JointTest(Slot.parse(slot), x, y, n, level).rejects(value)

    rate = np.mean([rejects(int(x), int(y)) for x, y in zip(count_a, count_b)])
    assert rate <= level + 3 * np.sqrt(level * (1 - level) / reps)


@pytest.mark.parametrize("slot, count_a, count_b, n", [
    ("epsilon@1e-05", 400, 80, 1_450_000), ("epsilon@1e-05", 43_045, 6, 164_796), ("mu", 900, 100, 2_000),
    ("delta@1.0", 5_000, 1_500, 100_000), ("epsilon@0.001", 300, 10, 2_000), ("epsilon@1e-05", 400, 0, 500)])
def test_lower_bound_is_where_the_test_stops_rejecting(slot, count_a, count_b, n):
    # The search stops with a bracket of width 1e-4 (relative above 1) around the boundary.
    test = JointTest(Slot.parse(slot), count_a, count_b, n, 0.0216)
    bound = test.lower_bound()
    assert test.rejects(bound) and not test.rejects(bound + 1e-4 * max(1.0, bound))
    assert test.p_value(0.5 * bound) <= test.p_value(bound)  # nested nulls


@pytest.mark.parametrize("slot, count_a, count_b, n, level", [
    ("epsilon@0.0", 67, 9, 135, 0.027), ("epsilon@1e-05", 400, 80, 1_450_000, 0.0216),
    ("epsilon@1e-05", 200, 30, 1_450_000, 0.0216), ("mu", 700_000, 300_000, 1_450_000, 0.0216)])
def test_joint_bound_certifies_at_least_the_bonferroni_bound(slot, count_a, count_b, n, level):
    # Bonferroni: two one-sided Clopper–Pearson bounds at half the level each.
    quantity = slot_quantity(Slot.parse(slot))
    bonferroni = float(quantity.value(cp_upper(count_b, n, level / 2), 1.0 - cp_lower(count_a, n, level / 2)))
    assert JointTest(Slot.parse(slot), count_a, count_b, n, level).lower_bound() >= bonferroni


def test_no_evidence_certifies_nothing():
    assert JointTest(Slot.epsilon_at(0.0), 10, 10, 100, 0.05).lower_bound() == 0.0
    assert JointTest(MU, 0, 50, 100, 0.05).lower_bound() == 0.0


@pytest.mark.parametrize("kwargs, error, message", [
    ({"level": 0.7}, ValueError, "`level` must be in"), ({"count_a": 11}, ValueError, "counts must satisfy"),
    ({"slot": "epsilon@0.0"}, TypeError, "`slot` must be an audit.slots.Slot, got 'epsilon@0.0'"),
    ({"slot": TRADEOFF}, ValueError, "`slot` must be a headline slot .*, got 'tradeoff'")])
def test_bad_input_is_named(kwargs, error, message):
    arguments = dict(slot=Slot.epsilon_at(0.0), count_a=5, count_b=1, n=10, level=0.05)
    arguments.update(kwargs)
    with pytest.raises(error, match=message):
        JointTest(**arguments)
