"""Fixtures of every test: the environment that a test and the processes it starts see."""

import os

import pytest


@pytest.fixture(autouse=True, scope="session")
def _no_inherited_terminal_size():
    """pytest-xdist's workers set COLUMNS=80 and LINES=24, and the CLI fits its table to COLUMNS:
    a test that runs it would see another table under ``-n 2`` than under plain ``pytest``.  Tests
    of the fitting set COLUMNS themselves."""
    saved = {name: os.environ.pop(name) for name in ("COLUMNS", "LINES") if name in os.environ}
    yield
    os.environ.update(saved)
