"""Fixtures of the audit tests: a small seeded scenario for the engine, and the arguments that load
the pytest plugin in pytester's inner runs."""

from importlib import metadata

import pytest

import scenarios


@pytest.fixture
def ones_pair_1d():
    """One add/remove pair of the 1-D counting scenario: D and D plus an all-ones row."""
    return [scenarios.counting(1).pairs[0]]


@pytest.fixture
def plugin_args() -> list[str]:
    """Load the plugin once: by its entry point name when installed, else by module."""
    installed = any(ep.name == "dpaudit" for ep in metadata.entry_points(group="pytest11"))
    return ["-p", "dpaudit" if installed else "audit.testing", "-p", "no:cacheprovider"]
