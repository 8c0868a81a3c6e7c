"""Shared fixtures: small, seeded scenarios for engine tests."""

import contextlib

import pytest

import scenarios


@pytest.fixture
def ones_pair_1d():
    """One add/remove pair of the 1-D counting scenario: D and D plus an all-ones row."""
    return [scenarios.counting(1).pairs[0]]


@pytest.fixture
def interrupt_chunks(monkeypatch):
    """``with interrupt_chunks(calls):`` an in-process audit raises KeyboardInterrupt (simulating
    ^C) at chunk call ``calls + 1``, leaving the mechanism itself untouched: a checkpoint is only
    resumed by the same mechanism (audit/fingerprint.py)."""
    from audit import sampling

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
