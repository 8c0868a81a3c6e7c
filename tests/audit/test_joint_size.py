"""The joint headline test's exact size (benchmarks/joint_size.py): the largest rejection probability
on the null's boundary, from binomial sums, is at most the level.  Deterministic: no draws."""

from __future__ import annotations

import numpy as np

from benchmarks.joint_size import LEVEL, rejection_probability, rejection_thresholds


def test_the_joint_tests_exact_size_is_at_most_its_level():
    # n = 30: every (c_A, c_B) is evaluated (check=True), so the rejection region used by the sum is
    # the test's own, not an assumption about its shape.
    thresholds = rejection_thresholds("epsilon@0.0", 30, 0.5, check=True)
    probabilities = rejection_probability("epsilon@0.0", 30, 0.5, thresholds, np.linspace(0.005, 0.995, 199))
    assert probabilities.max() <= LEVEL
    # the test is not vacuous: somewhere on the boundary it rejects about as often as allowed
    assert probabilities.max() > LEVEL / 3
