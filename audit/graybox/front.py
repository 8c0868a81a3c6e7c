"""``run_audit(..., graybox=True)``: the record/replay of every pair first, then the certified audit.

A pair search (:class:`scenarios.SearchSpec`) is replayed on every candidate of its first round
(:func:`audit.graybox.audit.search_pairs`).  With no finding, the audit is the one asked for
(all pairs, the chosen statistic) and the report's ``graybox`` entry records that the replay was
silent and what it did not cover.  With findings, the audit runs on the first finding that
implicates output columns, on its pair, with the statistic aimed at its columns (:func:`audit.graybox.certify.aimed_statistic`, fixed before any draw), with the settings'
samples and confidence; when every finding is a control-flow finding (no column implicated) the
audit is the one asked for, over every pair, the finding's among them.  The report's ``graybox``
entry lists every finding, the certified one first.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import time

import numpy as np

from scenarios.search import SearchSpec

from .audit import GrayboxReport, check_pairs, pair_of, search_pairs
from .execute import mechanism_name
from .certify import aimed_finding, aimed_statistic, certification_of

__all__ = ["graybox_then_audit"]


def _replay_seed(settings: Any) -> int:
    """The settings' seed, or fresh entropy when it is None (as the engine draws an audit's), so
    that the report's ``graybox`` entry records the seed the replays really used."""
    return settings.seed if settings.seed is not None else int(np.random.SeedSequence().entropy)


def graybox_then_audit(run_audit: Callable[..., Any], mechanism: Any, scenario: Any, claim: Any, settings: Any) -> Any:
    """Gray-box check of ``scenario``'s pairs, then ``run_audit`` aimed at the first finding (or as asked)."""
    seed = _replay_seed(settings)
    # The certified audit draws from the replays' seed too, so the recorded seed reruns both; only a
    # checkpoint resumed at seed=None keeps its own (the engine adopts it, and records it).
    plain = dataclasses.replace(settings, graybox=False,
                                seed=settings.seed if settings.checkpoint is not None else seed)
    started = time.perf_counter()
    pairs = search_pairs(scenario, seed) if isinstance(scenario, SearchSpec) else \
        getattr(scenario, "pairs", scenario)  # a pair search: every candidate is replayed
    checks = check_pairs(mechanism, pairs, claim, seed=seed)
    notes = tuple(dict.fromkeys(note for check in checks for note in check.notes))
    found = GrayboxReport(mechanism_name(mechanism), str(claim), tuple(checks),
                          tuple(f for check in checks for f in check.findings), time.perf_counter() - started,
                          seed, notes)
    if found.silent:
        report = run_audit(mechanism, scenario, claim=claim, settings=plain)
        return dataclasses.replace(report, graybox=found.to_dict())
    aimed_at = aimed_finding(found.findings)  # one that fixes a statistic of its columns, exact first
    first = aimed_at if aimed_at is not None else found.findings[0]
    if aimed_at is not None:
        statistic = aimed_statistic(first)
        aimed = dataclasses.replace(plain, statistic=statistic)
        report = run_audit(mechanism, [pair_of(first.pair, pairs)], claim=claim, settings=aimed)
    else:  # control flow implicates no column: the audit asked for, over every pair (the finding's among them)
        aimed = plain
        report = run_audit(mechanism, scenario, claim=claim, settings=plain)
    drawn = (getattr(report, "draws", None) or {}).get("per_side", settings.samples)  # an anytime audit stops early
    certified = dataclasses.replace(first, certification=certification_of(report, drawn, settings.confidence,
                                                                           aimed.statistic))
    rest = tuple(f for f in found.findings if f is not first)
    scope = ((f"the certified audit was aimed at the finding's pair {first.pair!r} only: its verdict and bounds "
              "cover that pair, not every pair of the scenario",) if aimed_at is not None else ())
    found = dataclasses.replace(found, findings=(certified,) + rest, notes=found.notes + scope)
    return dataclasses.replace(report, graybox=found.to_dict())
