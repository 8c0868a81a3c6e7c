"""pytest plugin: keep a mechanism's privacy claim from regressing, in three lines.

Installed as the ``pytest11`` entry point ``dpaudit`` (or load it with ``-p audit.testing``)::

    def test_my_mechanism_keeps_its_claim(dp_audit):
        dp_audit(MyMechanism(epsilon=1.0, delta=1e-5))

:func:`assert_claim` (which the ``dp_audit`` fixture calls) runs :func:`audit.run_audit` and
raises :class:`AssertionError` when a certified bound contradicts the claim; the message shows the
claim, the certified ε/δ/μ lower bounds that contradict it and the neighbour pair that does.

**False alarms.**  A mechanism that satisfies its claims fails :func:`assert_claim` with
probability at most 1 − ``confidence`` (5 % at the default 0.95) over the audit's randomness.
Without the accuracy audit the privacy audit spends all of it: every bound in the report holds
simultaneously at ``confidence`` (see :mod:`audit.selection`).  With ``accuracy=True`` the two
audits could each fail a correct mechanism, so they split it (Bonferroni, half each): both run at
1 − (1 − ``confidence``)/2 (:func:`audit_confidence`), and the report's ``confidence`` says so (the
accuracy audit's variance check is asymptotic, see :mod:`audit.accuracy`).  The bound is
conservative, so the real rate is usually far lower (``benchmarks/validity.py --plugin`` measures
it), and since the default seed
(:data:`DEFAULT_SEED`) is fixed, a given test either always passes or always fails: CI stays
deterministic.  Raise ``confidence`` (e.g. 0.999) to make the guarantee stronger at the price of
a slightly weaker audit.

**Options.**  ``pytest --dp-audit-samples N`` overrides the sample count of every audit in the
run (explicit ``samples=`` included), e.g. more samples in a nightly job.  The marker
``@pytest.mark.dp_audit(samples=..., seed=..., confidence=...)`` sets the fixture's defaults for
one test.

**Session-wide error control.**  ``pytest --dp-audit-session-confidence C`` bounds the probability
that *any* audit of the session wrongly fails by 1 − C (Bonferroni): with m collected tests that
use the ``dp_audit`` fixture, the j-th audit of one test runs at confidence
1 − (1 − C)·6/(π² j²)/m, so each test spends at most (1 − C)/m (Σ_j 6/(π² j²) = 1) and the session
at most 1 − C.  The explicit ``confidence`` of a call is then overridden, and the terminal summary
says which control was applied and at what per-audit level.  Without the option each audit runs
at its own confidence, and the session's bound is the sum over its audits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

import pytest

import scenarios
from mechanisms.claims import as_relation
from mechanisms.validation import check_open_unit

from .engine import run_audit
from .graybox import check_pairs
from .render.graybox import graybox_lines
from .render.text import claim_label, claim_scope
from .render.witness import witness_lines
from .report import Verdict
from .settings import AuditSettings, option_type

__all__ = ["assert_claim", "failure_message", "DPAudit", "DEFAULT_SEED", "DEFAULT_SAMPLES", "DEFAULT_CONFIDENCE",
           "audit_confidence", "assert_no_graybox_finding"]

#: The plugin's own defaults, where they differ from :class:`audit.settings.AuditSettings`': a fixed
#: seed (the same code gives the same verdict on every CI run), fewer draws (enough to refute a
#: claim off by a few tenths of ε in seconds), no accuracy audit, no progress bar.
PLUGIN_SETTINGS = AuditSettings(samples=400_000, seed=20_260_501, accuracy=False, progress=False)
DEFAULT_SEED = PLUGIN_SETTINGS.seed
DEFAULT_SAMPLES = PLUGIN_SETTINGS.samples
#: Every certified bound holds with at least this probability; false alarms ≤ 1 − confidence.
DEFAULT_CONFIDENCE = PLUGIN_SETTINGS.confidence

_OPTION = "--dp-audit-samples"
#: Sample-count overrides of the pytest sessions in progress (a stack: pytester nests sessions).
_SAMPLE_OVERRIDES: list[Optional[int]] = []


def _sample_override() -> Optional[int]:
    return _SAMPLE_OVERRIDES[-1] if _SAMPLE_OVERRIDES else None


def audit_confidence(confidence: float, accuracy: bool) -> float:
    """The confidence each audit of one :func:`assert_claim` runs at, for an overall ``confidence``:
    ``confidence`` itself without the accuracy audit; with it, 1 − (1 − ``confidence``)/2 for both
    the privacy and the accuracy audit (Bonferroni: a mechanism meeting its claims fails either
    with probability at most the sum of the two levels, 1 − ``confidence``).  Half each: neither
    audit is favoured, and halving a level costs the privacy bounds little (ε_lb moves with the
    logarithm of the level)."""
    confidence = check_open_unit("confidence", confidence)
    return 1.0 - (1.0 - confidence) / 2.0 if accuracy else confidence


def assert_claim(mechanism: Any, scenario: Any = None, *, claim: Any = None,
                 samples: Optional[int] = None, seed: Optional[int] = DEFAULT_SEED,
                 confidence: float = DEFAULT_CONFIDENCE, accuracy: bool = False,
                 n_jobs: int = 1, **audit_options: Any):
    """Audit ``mechanism`` and fail with a readable message if its claim is refuted.

    Parameters
    ----------
    mechanism : callable
        ``mechanism(dataset, size, rng) -> (size, k)`` (see :mod:`mechanisms.base`).
    scenario : Scenario or sequence of pairs, optional
        Default: :func:`scenarios.counting` with ``d = mechanism.d`` (1 if the mechanism has no
        ``d``) and the claim's neighbour relation: its worst-case pairs.
    claim : ApproxDP, PureDP or GaussianDP, optional
        Default: ``mechanism.claim``.
    samples : int, optional
        Draws per pair and side over all phases; default :data:`DEFAULT_SAMPLES`.  ``pytest
        --dp-audit-samples N`` overrides it.
    seed : int, optional
        Default :data:`DEFAULT_SEED` (deterministic); ``None`` draws fresh entropy.
    confidence : float
        A mechanism meeting its claims fails with probability ≤ 1 − ``confidence``, whether or not
        ``accuracy`` is on (:func:`audit_confidence`).
    accuracy : bool
        Also fail when the mechanism's declared accuracy claims are refuted; the failure budget
        1 − ``confidence`` is then split between the privacy and the accuracy audit.
    n_jobs, **audit_options
        Passed to :func:`audit.run_audit` (e.g. ``backend``).

    Returns
    -------
    AuditReport
        The report, when the claim is not refuted.

    Raises
    ------
    AssertionError
        When a certified bound contradicts the claim (or, with ``accuracy=True``, an accuracy claim).
    """
    __tracebackhide__ = True  # a failing test's traceback ends at its own call, not in the plugin
    report = _run(mechanism, scenario, claim=claim, samples=samples, seed=seed, confidence=confidence,
                  accuracy=accuracy, n_jobs=n_jobs, **audit_options)
    failed_accuracy = accuracy and report.accuracy is not None and report.accuracy.verdict is Verdict.VIOLATED
    if report.verdict is Verdict.VIOLATED or failed_accuracy:
        raise AssertionError(failure_message(report, accuracy=failed_accuracy))
    return report


def assert_no_graybox_finding(mechanism: Any, scenario: Any = None, *, claim: Any = None,
                              seed: int = DEFAULT_SEED) -> Any:
    """Record/replay every pair of ``scenario`` (:func:`audit.graybox.check_pairs`, both orders) and
    fail if any finding is made: a check for CI that draws nothing at random beyond the record, so
    it is deterministic. A control-flow finding is not a falsification by itself: a correct sampler
    whose number of random calls depends on the data (rejection sampling, permute-and-flip) fails
    this check too, and wants the certified audit instead (docs/graybox.md).

    ``scenario`` and ``claim`` default as in :func:`assert_claim`.  Returns the pair checks.
    """
    __tracebackhide__ = True
    claim = claim if claim is not None else mechanism.claim
    if scenario is None:
        scenario = scenarios.counting(getattr(mechanism, "d", 1), relation=as_relation(claim.relation))
    checks = check_pairs(mechanism, getattr(scenario, "pairs", scenario), claim, seed=seed)
    findings = [finding.to_dict() for check in checks for finding in check.findings]
    if findings:
        lines = graybox_lines({"checks": [c.to_dict() for c in checks], "findings": findings})
        raise AssertionError("\n".join(lines))
    return checks


def _run(mechanism: Any, scenario: Any = None, *, claim: Any = None, samples: Optional[int] = None,
         seed: Optional[int] = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE,
         accuracy: bool = False, **audit_options: Any):
    """:func:`audit.run_audit` with the plugin's defaults (scenario, samples, seed, no progress bar)."""
    if claim is None:
        claim = getattr(mechanism, "claim", None)
    if scenario is None:
        relation = as_relation(getattr(claim, "relation", "add-remove"))
        scenario = scenarios.counting(int(getattr(mechanism, "d", 1)), relation=relation)
    override = _sample_override()
    samples = override if override is not None else (DEFAULT_SAMPLES if samples is None else samples)
    return run_audit(mechanism, scenario, claim=claim, settings=PLUGIN_SETTINGS, samples=samples,
                     confidence=audit_confidence(confidence, accuracy), seed=seed, accuracy=accuracy,
                     **audit_options)


def failure_message(report: Any, *, accuracy: bool = False) -> str:
    """What a failed :func:`assert_claim` says: the claim, the contradicting bounds, the pair, and the
    witness (the pair as data, the statistic, the event with its counts)."""
    claim = report.claim
    claimed = f"{claim_label(claim.to_dict())} {claim_scope(claim.to_dict(), report.scenario)}"
    level = f"jointly with probability ≥ {report.confidence:g}"
    lines = []
    if report.verdict is Verdict.VIOLATED:
        lines += [
            f"privacy claim {claimed} of {report.mechanism} is VIOLATED",
            f"  certified ε ≥ {report.epsilon_lower_bound:.4g} at δ = {report.reference_delta:g} "
            f"(claimed ε = {report.reference_epsilon:.4g})",
            f"  certified δ ≥ {report.delta_lower_bound:.4g} at ε = {report.reference_epsilon:.4g} "
            f"(claimed δ = {report.reference_delta:g})",
            f"  certified μ ≥ {report.mu_lower_bound:.4g}"
            + (f" (claimed μ = {claim.gaussian_mu:g})" if claim.gaussian_mu is not None else ""),
            f"  worst pair: {report.worst_pair!r}",
        ]
        lines += [f"  {violation.message}" for violation in report.violations[:3]]
        lines += [f"  {line}" for line in witness_lines(report.to_dict(), indent="  ")]
        if report.exact_epsilon is not None:
            lines.append(f"  exact ε at δ = {report.reference_delta:g}: {report.exact_epsilon:.4g}")
    if accuracy:
        lines.append(f"accuracy claims of {report.mechanism} are VIOLATED")
        lines += [f"  {violation}" for violation in report.accuracy.violations[:3]]
    draws = (report.draws or {}).get("per_side")
    if report.accuracy is not None:  # assert_claim split its failure budget between the two audits
        level += (f" (the accuracy audit at confidence {report.accuracy.confidence:g} too: a mechanism "
                  f"meeting its claims fails with probability ≤ "
                  f"{(1 - report.confidence) + (1 - report.accuracy.confidence):.3g})")
    lines.append(f"  (bounds hold {level}; {report.samples:,} samples per pair and side"
                 + (f", {int(draws):,} draws per side in total" if draws is not None else "")
                 + f"; seed {report.seed})")
    return "\n".join(lines)


@dataclass(frozen=True)
class DPAudit:
    """The ``dp_audit`` fixture: :func:`assert_claim` with this test's defaults.

    ``dp_audit(mechanism, scenario=None, **options)`` asserts; ``dp_audit.run(...)`` returns the
    report without asserting (for tests about the bounds themselves).
    """

    defaults: dict = field(default_factory=dict)

    session: Optional["_SessionControl"] = None
    calls: list = field(default_factory=list)

    def _options(self, options: dict) -> dict:
        merged = {**self.defaults, **options}
        if self.session is not None:
            self.calls.append(None)
            merged["confidence"] = self.session.confidence(len(self.calls))
        return merged

    def __call__(self, mechanism: Any, scenario: Any = None, **options: Any):
        __tracebackhide__ = True
        return assert_claim(mechanism, scenario, **self._options(options))

    def run(self, mechanism: Any, scenario: Any = None, **options: Any):
        return _run(mechanism, scenario, **self._options(options))


@dataclass
class _SessionControl:
    """Bonferroni over the session's ``tests`` dp_audit tests (see the module docstring)."""

    run_confidence: float
    tests: int = 0
    audits: int = 0
    lowest: float = 1.0

    def confidence(self, call: int) -> float:
        level = (1.0 - self.run_confidence) * 6.0 / (math.pi ** 2 * call ** 2) / max(self.tests, 1)
        self.audits += 1
        self.lowest = min(self.lowest, 1.0 - level)
        return 1.0 - level


# -- pytest hooks --------------------------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("dpaudit", "differential-privacy claim audits")
    group.addoption(_OPTION, dest="dp_audit_samples", type=option_type("samples"), default=None, metavar="N",
                    help="samples per pair and side of every dpaudit assert_claim / dp_audit "
                         "audit in this run (overrides the tests' own values)")
    group.addoption("--dp-audit-session-confidence", dest="dp_audit_session_confidence",
                    type=option_type("confidence"), default=None, metavar="C",
                    help="bound the probability that any dp_audit test of the session fails "
                         "wrongly by 1 - C (Bonferroni over the collected dp_audit tests)")


_SESSION_KEY = pytest.StashKey["_SessionControl"]()


def pytest_collection_modifyitems(config: pytest.Config, items: list) -> None:
    confidence = config.getoption("dp_audit_session_confidence", default=None)
    if confidence is not None:
        tests = sum("dp_audit" in getattr(item, "fixturenames", ()) for item in items)
        config.stash[_SESSION_KEY] = _SessionControl(confidence, tests)


def pytest_terminal_summary(terminalreporter, exitstatus, config: pytest.Config) -> None:
    control = config.stash.get(_SESSION_KEY, None)
    if control is not None and control.audits:
        terminalreporter.write_line(
            f"dpaudit: session-wide error control (Bonferroni over {control.tests} dp_audit tests): "
            f"P(any wrongly failed audit) <= {1 - control.run_confidence:.3g}; {control.audits} audits, "
            f"per-audit confidence >= {control.lowest:.6g}")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "dp_audit(samples=None, seed=None, confidence=None, **options): defaults of the "
                   "dp_audit fixture for this test")
    _SAMPLE_OVERRIDES.append(config.getoption("dp_audit_samples", default=None))


def pytest_unconfigure(config: pytest.Config) -> None:
    if _SAMPLE_OVERRIDES:
        _SAMPLE_OVERRIDES.pop()


@pytest.fixture
def dp_audit(request: pytest.FixtureRequest) -> DPAudit:
    """Audit a mechanism's claim: ``dp_audit(mechanism)`` fails the test if it is refuted."""
    defaults: dict = {}
    marker = request.node.get_closest_marker("dp_audit")
    if marker is not None:
        if marker.args:
            raise TypeError("@pytest.mark.dp_audit takes keyword arguments only "
                            f"(samples=, seed=, confidence=, ...), got {marker.args!r}")
        defaults = {key: value for key, value in marker.kwargs.items() if value is not None}
    return DPAudit(defaults, request.config.stash.get(_SESSION_KEY, None))
