"""Shared fixtures: small, seeded scenarios for engine tests."""

import pytest

import scenarios


@pytest.fixture
def ones_pair_1d():
    """One add/remove pair of the 1-D counting scenario: D and D plus an all-ones row."""
    return [scenarios.counting(1).pairs[0]]
