"""Fixtures of the audit tests: a small seeded scenario for the engine, and the arguments that load
the pytest plugin in pytester's inner runs, and a simulated ^C between chunks."""

import contextlib
from importlib import metadata

import pytest

import scenarios
from audit import sampling


@pytest.fixture
def ones_pair_1d():
    """One add/remove pair of the 1-D counting scenario: D and D plus an all-ones row."""
    return [scenarios.counting(1).pairs[0]]


@pytest.fixture
def plugin_args() -> list[str]:
    """Load the plugin once: by its entry point name when installed, else by module. The inner run
    does not read the project's pytest settings, so it blocks pytest-benchmark here too: where that
    plugin is installed it warns inside an xdist worker, and warnings are errors."""
    installed = any(ep.name == "dpaudit" for ep in metadata.entry_points(group="pytest11"))
    plugin = "dpaudit" if installed else "audit.testing"
    return ["-p", plugin, "-p", "no:cacheprovider", "-p", "no:benchmark"]


@pytest.fixture
def interrupt_chunks(monkeypatch):
    """``with interrupt_chunks(calls):`` an in-process audit raises KeyboardInterrupt (simulating
    ^C) at chunk call ``calls + 1``, leaving the mechanism itself untouched: a checkpoint is only
    resumed by the same mechanism (audit/fingerprint.py)."""

    @contextlib.contextmanager
    def after(calls: int):
        original, made = sampling.draw_outputs, []

        def draw(*args, **kwargs):
            if len(made) >= calls:
                raise KeyboardInterrupt
            made.append(None)
            return original(*args, **kwargs)

        with monkeypatch.context() as patch:
            patch.setattr(sampling, "draw_outputs", draw)
            yield

    return after
