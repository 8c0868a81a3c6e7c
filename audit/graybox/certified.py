"""The gray-box audit with certification: :func:`graybox_audit` (also ``audit.graybox_audit``).

Every pair of a scenario is recorded and replayed (:func:`audit.graybox.audit.check_pairs`, both
orders); the first findings are then certified by the engine's audit on their pair with the
statistic each fixes in advance (:mod:`audit.graybox.certify`).  This module imports the engine,
so it stays out of the :mod:`audit.graybox` package's namespace (the engine imports the package).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any, Optional

from ..engine import run_audit
from ..settings import AuditSettings
from .audit import GrayboxReport, check_pairs, pair_of
from .certify import aimed_statistic, certification_of
from .execute import mechanism_name
from .findings import Certification, Finding

__all__ = ["graybox_audit", "certify"]


def certify(finding: Finding, mechanism: Any, pair: Any, claim: Any, *, samples: int, seed: int,
            confidence: float = 0.95, statistic: Optional[Any] = None) -> Certification:
    """Run the certified audit aimed at ``finding`` on its pair; return what it certified."""
    chosen = aimed_statistic(finding)
    if isinstance(chosen, str) and chosen == "auto" and statistic is not None:
        chosen = statistic
    report = run_audit(mechanism, [pair], claim=claim, statistic=chosen, samples=samples, seed=seed,
                       confidence=confidence, progress=False, accuracy=False)
    return certification_of(report, samples, confidence, chosen)


def graybox_audit(mechanism: Any, scenario: Any, *, claim: Optional[Any] = None, seed: int = 0,
                  certify_findings: bool = True, samples: int = 20_000, confidence: float = 0.95,
                  statistic: Optional[Any] = None, both_orders: bool = True,
                  max_certified: int = 3) -> GrayboxReport:
    """Record/replay every pair of ``scenario``, then certify up to ``max_certified`` findings.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, size, rng)``; never edited, its random calls are intercepted.
    scenario : Scenario or sequence of pairs
    claim : Claim, optional
        Defaults to ``mechanism.claim``.
    seed : int
        Seeds the record (the checks themselves draw nothing else).
    certify_findings : bool
        Run the certified audit aimed at each finding (:func:`audit.graybox.certify.certify`).
    samples, confidence, statistic
        Of those certified audits (``statistic`` for findings that implicate no column).
    both_orders : bool
        Check (D′, D) too.
    max_certified : int
        Findings certified, the first ones found (one per pair and kind).  Their audits share
        ``1 − confidence`` by Bonferroni: each runs at ``1 − (1 − confidence)/k`` for the ``k``
        findings certified, a number fixed by the replays (independent of every audit draw) before
        any audit draws, so the chance that a correct mechanism gets any VIOLATED line is at most
        ``1 − confidence``.
    """
    # The audit settings own these checks; the replays need a seed, and a certified audit 100 draws.
    checked = AuditSettings.from_options({"seed": seed, "samples": samples, "confidence": confidence},
                                         where="graybox_audit")
    if checked.seed is None:
        raise ValueError("`seed` must be a non-negative integer (the replays are seeded), got None")
    if checked.samples < 100:
        raise ValueError(f"`samples` must be at least 100 for a certified audit, got {samples!r}")
    seed, samples, confidence = checked.seed, checked.samples, checked.confidence
    claim = claim if claim is not None else getattr(mechanism, "claim", None)
    if claim is None:
        raise ValueError("`claim` is required: the mechanism has no `claim` attribute")
    started = time.perf_counter()
    pairs = list(getattr(scenario, "pairs", scenario))
    checks = check_pairs(mechanism, pairs, claim, seed=int(seed), both_orders=both_orders)
    findings: list[Finding] = []
    certified = set()
    keys = dict.fromkeys((f.pair, f.kind) for check in checks for f in check.findings)
    shares = max(1, min(max_certified, len(keys))) if certify_findings else 1
    each = 1.0 - (1.0 - confidence) / shares  # Bonferroni over the certified findings
    for check in checks:
        for finding in check.findings:
            key = (finding.pair, finding.kind)
            if certify_findings and len(certified) < max_certified and key not in certified:
                try:
                    pair = pair_of(finding.pair, pairs)
                    finding = replace(finding, certification=certify(
                        finding, mechanism, pair, claim, samples=samples, seed=int(seed) + len(certified),
                        confidence=each, statistic=statistic))
                except (ValueError, TypeError) as exc:
                    finding = replace(finding, detail={**finding.detail, "certification_error": str(exc)})
                certified.add(key)
            findings.append(finding)
    notes = tuple(dict.fromkeys(note for check in checks for note in check.notes))
    return GrayboxReport(mechanism_name(mechanism), str(claim), tuple(checks), tuple(findings),
                         time.perf_counter() - started, int(seed), notes)


