"""Gray-box audits: record every random call on D, replay on D′, name the line, then certify.

:func:`check_pair` makes the checks of :mod:`audit.graybox.checks` on one pair (three
executions: the record on D, the replay on D′, the scaled replay on D that also proves the record
reproducible); :func:`check_pairs` checks many pairs (both orders), the entry point for callers
that bring their own pairs (the sweep's neighbour families).  The certified audit aimed at each
finding is :func:`audit.graybox.certified.graybox_audit`.

What a finding proves, and what silence does not, is in docs/graybox.md.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Optional

import numpy as np

from scenarios.scenario import NeighborPair
from scenarios.search import SearchSpec, is_valid, random_candidates, structured_candidates

from ..render.graybox import graybox_lines
from ..sampling import single_threaded_blas

from .checks import SPARE_ROWS, Footprint, control_flow, library_sensitivity, one_sided, output_checks
from .execute import LAMBDA, check_reproduced, execute
from .tape import same_params
from .findings import Finding, FindingKind, PairCheck, ReplayError
from .intercept import holding
from .trace import CallSite

__all__ = ["check_pair", "check_pairs", "check_case", "pair_of", "search_pairs", "SEARCH_RANDOM", "GrayboxReport", "MAX_ROWS", "DEFAULT_ROWS", "ReplayError"]

#: Output rows asked of the mechanism per execution (a loop-based mechanism pays per row).
DEFAULT_ROWS = 4
#: Most rows a vectorized mechanism is asked for so that its footprint can be fitted.
MAX_ROWS = 1024


def _rows_of(data: Any) -> int:
    shape = np.shape(data)
    return int(shape[0]) if len(shape) else 0


def check_pair(mechanism: Any, base: Any, neighbour: Any, claim: Any, *, label: str = "pair", seed: int = 0,
               rows: int = DEFAULT_ROWS) -> PairCheck:
    """The gray-box checks of one ordered pair (D, D′) under ``claim`` (:func:`_check_pair`).

    A mechanism whose first execution in the process draws more than later ones (a library that
    draws an identifier once, a cache filled on first use) fails the reproduction check once; the
    check is then made again from a new record, and fails for good only if it fails again.
    """
    with holding(), single_threaded_blas():  # the patches stay installed over the pair's executions; one
        # BLAS thread, as in the audit's chunks (the mechanism's values then match the audit's, and a
        # footprint fit on a busy 2-core machine was measured 100x slower with two threads)
        try:
            return _check_pair(mechanism, base, neighbour, claim, label=label, seed=seed, rows=rows)
        except ReplayError as first:
            if "not replayable" not in str(first):
                raise
            return _check_pair(mechanism, base, neighbour, claim, label=label, seed=seed, rows=rows)


def _check_pair(mechanism: Any, base: Any, neighbour: Any, claim: Any, *, label: str = "pair", seed: int = 0,
                rows: int = DEFAULT_ROWS) -> PairCheck:
    """The gray-box checks of one ordered pair (D, D′) under ``claim``.

    Raises
    ------
    ReplayError
        The mechanism raises, returns a wrong shape, or cannot be replayed (one line, naming it).
    """
    started = time.perf_counter()
    record, _ = execute(mechanism, base, rows, seed=seed)
    executions = 1
    # A call whose leading dimension is the rows holds one element per row, unless each row is its
    # own call of the mechanism's release (``vectorized`` False): then a batch of that size inside
    # one release would be scaled by λ in every row, and the replay's unscaled rows not reproduced.
    elements = Footprint(record).elements if getattr(mechanism, "vectorized", True) else 0
    wanted = 2 * (elements + SPARE_ROWS)
    if elements and rows < wanted <= MAX_ROWS:
        rows = wanted
        record, _ = execute(mechanism, base, rows, seed=seed)
        executions += 1
    row_difference = abs(_rows_of(base) - _rows_of(neighbour))
    replay, _ = execute(mechanism, neighbour, rows, seed=seed + 1, source=record, side="D′", slack=row_difference)
    if elements:  # the scaled replay: footprint on the second half, reproduction on the first
        scaled, diverged = execute(mechanism, base, rows, seed=seed + 2, source=record, lam=LAMBDA,
                                   scaled_rows=slice(rows // 2, rows))
        check_reproduced(mechanism, record, scaled, diverged, slice(0, rows // 2))
        executions += 2
    else:  # no footprint to fit: reproduce the first quarter of the rows only (a prefix of the calls),
        # unless a call answered by value holds one entry per row (a batched library call)
        # and a vectorized sampler whose draws depend on how many rows it is asked for
        batched = any(call.by_value and any(np.ndim(v) and np.shape(v)[0] == rows for v in call.params.values()
                                            if isinstance(v, (np.ndarray, list, tuple))) for call in record.calls)
        half = rows if batched else max(1, rows // 4)
        scaled, diverged = execute(mechanism, base, half, seed=seed + 2, source=record)
        executions += 1 + half / rows
        try:
            check_reproduced(mechanism, record, scaled, diverged, slice(0, half), prefix=True)
        except ReplayError:
            if half == rows:
                raise
            scaled, diverged = execute(mechanism, base, rows, seed=seed + 2, source=record)
            check_reproduced(mechanism, record, scaled, diverged, slice(0, rows))
            executions += 1
    findings: list[Finding] = []
    notes: list[str] = []
    flow = control_flow(record, replay, label, row_difference)
    findings += library_sensitivity(record, replay, label)
    info: dict = {}
    adaptive, extra = _adaptive(mechanism, base, rows, seed, record, flow) if flow is not None else (False, 0)
    executions += extra
    if adaptive:
        notes.append(f"call {flow.detail['index']} at {flow.site} is calibrated from earlier noise (it changes when "
                     "only the noise is scaled): an adaptive calibration, not a finding; the coupling ends there")
        flow = None
        replay = None
    if flow is not None:
        findings.insert(0, flow)
        notes.append("the coupling ends at the first divergent call: the output checks were not made")
    elif replay is None:
        pass
    elif record.output.shape != replay.output.shape:
        findings.append(Finding(FindingKind.UNNOISED_FLOW, label, CallSite("<output>", 0, "<output>"),
                                float(replay.output.shape[1]), float(record.output.shape[1]), "output columns",
                                (), f"the release has {record.output.shape[1]} columns on D and "
                                f"{replay.output.shape[1]} on D′", {}, exact=True))
    else:
        found, more, info = output_checks(record, replay, scaled if elements else None, LAMBDA, claim, label)
        findings += found
        notes += more
    findings, confirm_notes, extra = _confirm_constant(mechanism, base, neighbour, record, findings, seed, claim)
    notes += confirm_notes
    executions += extra
    opaque = tuple(dict.fromkeys(call.site for call in record.calls if call.opaque))
    uncoupled = [] if replay is None else [c for c in replay.calls if c.primitive == "opendp.Measurement"]
    if uncoupled and any(not np.array_equal(np.asarray(a.params.get("input")), np.asarray(b.params.get("input")))
                         for a, b in zip(record.calls, replay.calls) if a.primitive == b.primitive == "opendp.Measurement"):
        notes.append("an OpenDP measurement received another input on D′: its Rust sampler was drawn afresh, so "
                     "the outputs it reaches are not coupled and were not checked")
    seconds = time.perf_counter() - started
    return PairCheck(label, tuple(findings), tuple(notes), len(record.calls), opaque, executions, seconds,
                     record.seconds, rows, info)


def _adaptive(mechanism: Any, base: Any, rows: int, seed: int, record: Any, flow: Finding) -> tuple[bool, int]:
    """Whether the divergent call of ``flow`` is calibrated from earlier *noise* (an adaptive
    mechanism, e.g. a clip norm updated from a noisy count) rather than from the data: replayed on
    D with every location-scale draw scaled by λ, its calibration (or an earlier call) changes.

    A call whose calibration reads only the data is unchanged by that replay, so the finding stands.
    Returns (adaptive, executions made).
    """
    index = flow.detail.get("index")
    if index is None or not any(call.family for call in record.calls[:index]):
        return False, 0
    perturbed, _ = execute(mechanism, base, rows, seed=seed + 3, source=record, lam=LAMBDA, scale_all=True)
    if len(perturbed.calls) <= index:
        return True, 1
    before = [a.primitive != b.primitive or not same_params(a.calibration(), b.calibration()) or a.shape != b.shape
              for a, b in zip(record.calls[:index + 1], perturbed.calls[:index + 1])]
    return any(before), 1


#: Rows of the fresh runs that confirm a column seen constant on the check's rows.
CONFIRM_ROWS = 256
#: A mechanism whose record took longer than this is not run again to confirm (seconds).
CONFIRM_BUDGET = 0.05


def _confirm_constant(mechanism: Any, base: Any, neighbour: Any, record: Any, findings: list[Finding],
                      seed: int, claim: Any) -> tuple[list[Finding], list[str], float]:
    """Fresh runs of :data:`CONFIRM_ROWS` rows on D and D′ for each column an unnoised-flow
    finding saw constant on the check's few rows (randomness, e.g. a discrete draw, can repeat on
    a few rows): the finding stands if the column is constant on every row of both and still
    differs.  A mechanism too slow to run again keeps the finding, marked as seen on few rows."""
    candidates = [f for f in findings if f.kind is FindingKind.UNNOISED_FLOW and "constant_rows" in f.detail
                  and record.calls]
    if not candidates:
        return findings, [], 0
    if record.seconds > CONFIRM_BUDGET:
        return findings, [f"output column(s) {sorted({c for f in candidates for c in f.columns})} were constant on "
                          f"{record.rows} rows only (too slow to confirm on more)"], 0
    wide, _ = execute(mechanism, base, CONFIRM_ROWS, seed=seed + 5)
    wide2, _ = execute(mechanism, neighbour, CONFIRM_ROWS, seed=seed + 6, side="D′")
    kept, notes = [], []
    for finding in findings:
        if finding in candidates:
            j = finding.columns[0]
            a, b = wide.output[:, j], wide2.output[:, j]
            if finding.detail.get("one_sided"):
                confirmed = np.all(a == a[0]) and one_sided(a, b, claim, finding.pair, j) is not None
            else:
                confirmed = np.all(a == a[0]) and np.all(b == b[0]) and a[0] != b[0]
            if confirmed:
                finding = dataclasses.replace(finding, detail={**finding.detail, "constant_rows": CONFIRM_ROWS})
            else:
                notes.append(f"output column {j} was constant on {record.rows} rows but varies over "
                             f"{CONFIRM_ROWS} fresh rows: randomness reaches it, not a finding")
                continue
        kept.append(finding)
    return kept, notes, 2  # two calls of a mechanism fast enough to be asked for many rows at once


def _labelled(pairs: Iterable[Any]) -> Iterator[tuple[str, Any, Any]]:
    for number, pair in enumerate(pairs):
        base, neighbour = (pair.base, pair.neighbor) if hasattr(pair, "base") else pair
        yield getattr(pair, "label", None) or f"pair {number}", base, neighbour


#: Random candidates of a pair search's domain replayed on top of its structured ones.
SEARCH_RANDOM = 32


def search_pairs(spec: SearchSpec, seed: int, count: int = SEARCH_RANDOM) -> list[NeighborPair]:
    """The pairs a replay checks for a pair search (:class:`scenarios.SearchSpec`): the search's
    structured candidates and ``count`` random ones of its domain (:mod:`scenarios.search`), each
    a neighbour pair of the domain, without repeats.  Replays are cheap, so every candidate is
    replayed rather than the few a black-box search keeps."""
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x6B0C5]))
    candidates = structured_candidates(spec, rng) + random_candidates(spec, rng, count)
    pairs, seen = [], set()
    for number, candidate in enumerate(candidates):
        if candidate.key in seen or not is_valid(spec, candidate):
            continue
        seen.add(candidate.key)
        pairs.append(NeighborPair(np.asarray(candidate.base, dtype=np.float64),
                                  np.asarray(candidate.neighbor, dtype=np.float64),
                                  f"search {candidate.kind} {number}"))
    return pairs


def pair_of(label: str, scenario: Any) -> Any:
    """The ``NeighborPair`` a finding's pair label names (``"... (reversed)"``: the other order)."""
    for name, base, neighbour in _labelled(getattr(scenario, "pairs", scenario)):
        if label == name:
            return NeighborPair(np.asarray(base, dtype=np.float64), np.asarray(neighbour, dtype=np.float64), label)
        if label == f"{name} (reversed)":
            return NeighborPair(np.asarray(neighbour, dtype=np.float64), np.asarray(base, dtype=np.float64), label)
    raise ValueError(f"no pair of the scenario is labelled {label!r}")


def check_pairs(mechanism: Any, pairs: Iterable[Any], claim: Optional[Any] = None, *, seed: int = 0,
                both_orders: bool = True, stop_at_first: bool = False) -> list[PairCheck]:
    """Gray-box checks of many pairs (``NeighborPair`` or ``(D, D′)``), in both orders by default.

    The entry point for a caller with its own pairs (a sweep's neighbour families, a pair search).
    """
    claim = claim if claim is not None else mechanism.claim
    checks: list[PairCheck] = []
    with holding(), single_threaded_blas():  # the patches and the BLAS limit are set once for all the pairs
        for label, base, neighbour in _labelled(pairs):
            orders = [(base, neighbour, label)] + ([(neighbour, base, f"{label} (reversed)")] if both_orders else [])
            for a, b, name in orders:
                check = check_pair(mechanism, a, b, claim, label=name, seed=seed + 7919 * len(checks))
                checks.append(check)
                if stop_at_first and check.findings:
                    return checks
    return checks


def check_case(case: Any, *, seed: int = 0, both_orders: bool = True) -> list[PairCheck]:
    """Gray-box checks of a library catalogue's case (``scenarios.libraries``' ``Case``: its
    mechanism, its scenario's pairs and its claim): what ``dpaudit sweep --graybox`` calls per row."""
    return check_pairs(case.mechanism, case.scenario.pairs, case.claim, seed=seed, both_orders=both_orders)


@dataclass(frozen=True)
class GrayboxReport:
    """A gray-box audit: each pair's check, the findings (each with its certification)."""

    mechanism: str
    claim: str
    checks: tuple[PairCheck, ...]
    findings: tuple[Finding, ...]
    seconds: float
    seed: int
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def silent(self) -> bool:
        """No finding (which is no proof of privacy: docs/graybox.md)."""
        return not self.findings

    @property
    def cost_ratio(self) -> float:
        """Largest ratio of a pair's check time to one execution (its record) of the mechanism."""
        return max((c.seconds / max(c.execution_seconds, 1e-9) for c in self.checks), default=float("nan"))

    def to_dict(self) -> dict:
        return {"mechanism": self.mechanism, "claim": self.claim, "seed": self.seed, "seconds": self.seconds,
                "silent": self.silent, "findings": [f.to_dict() for f in self.findings],
                "checks": [c.to_dict() for c in self.checks], "notes": list(self.notes)}

    def summary(self) -> str:
        return "\n".join(graybox_lines(self.to_dict()))


