"""One row of a sweep: auditing one case, and the row's record in the sweep report.

A row record is a plain dict written to ``OUT/rows/<slug>.json`` as soon as its audit finishes
(atomically, :func:`audit.checkpoint.write_atomic`), so an interrupted sweep continues where it
stopped.  It keeps what the sweep table shows — claim, verdict, certified bounds, the statistic
and the pair of the witness — and, in ``report``, the audit's whole report dict (without its
``runtime``), so a renderer can say more about the witness than the table does.  Everything here
reads the report dict; nothing re-derives a statistic or a bound.
"""

from __future__ import annotations

import dataclasses
import json
import time
import warnings
from typing import Any, Mapping, Optional

import numpy as np

from mechanisms.adapters.released import RAISED, LibraryRelease
from mechanisms.base import mechanism_name

from ..checkpoint import write_atomic
from ..engine import ENGINE_VERSION, run_audit
from ..errors import CheckpointError, MechanismError
from ..fingerprint import value_digest
from ..render.text import claim_label
from ..render.witness import pair_statistic
from ..settings import AuditSettings
from .plan import PlannedRow
from .resume import refusal_reason, set_aside_checkpoint

__all__ = ["audit_row", "row_fingerprint", "witness_summary", "linked_known", "PREFLIGHT_DRAWS"]

#: Releases per dataset drawn before the audit to find inputs the library refuses outright.
PREFLIGHT_DRAWS = 4


def row_fingerprint(row: PlannedRow, library_version: Optional[str]) -> str:
    """What must match for a saved row to be reused by ``--resume``: the case's name, grid point and
    claim, the plan (samples, seed, confidence, statistic), the library's version, the engine, and
    digests (:func:`audit.fingerprint.value_digest`) of the release the catalogue builds and of the
    neighbouring datasets it audits, so a row whose catalogue changed what it draws or on which
    pairs (same name and parameters) is audited again, not reused."""
    case = row.case
    return json.dumps({"key": case.key, "params": case.params, "claim": case.claim.to_dict(),
                       "samples": row.samples, "seed": row.seed, "confidence": row.confidence,
                       "statistic": str(row.statistic), "version": library_version,
                       "engine": ENGINE_VERSION, **_case_digests(case)}, sort_keys=True, default=str)


_DIGESTS: dict[int, tuple[Any, dict[str, str]]] = {}


def _case_digests(case) -> dict[str, str]:
    """``{"mechanism": ..., "pairs": ...}``: short digests of the case's release and of its
    scenario's datasets, computed once per case object (a fingerprint is asked for several times
    per row)."""
    cached = _DIGESTS.get(id(case))
    if cached is not None and cached[0] is case:
        return cached[1]
    pairs = getattr(case.scenario, "pairs", None)
    datasets = ([(pair.label, np.asarray(pair.base), np.asarray(pair.neighbor)) for pair in pairs]
                if pairs is not None else case.scenario)
    digests = {"mechanism": value_digest(case.mechanism).hexdigest[:16],
               "pairs": value_digest(datasets).hexdigest[:16]}
    _DIGESTS[id(case)] = (case, digests)
    return digests


def _preflight(case) -> tuple[Any, list[str]]:
    """The case's scenario without the pairs on which the library raises on every preflight release
    of *both* datasets (nothing to compare), and a message per dropped pair.

    A dataset that always raises while its neighbour does not is kept: the exception is an output
    that tells the two apart, and the audit certifies it.  The preflight draws come from a fixed
    generator of their own and only decide which pairs are audited, before any audit draw.
    """
    mechanism, scenario = case.mechanism, case.scenario
    pairs = getattr(scenario, "pairs", None)
    if not isinstance(mechanism, LibraryRelease) or pairs is None:
        return scenario, []
    rng = np.random.default_rng(0)
    kept, dropped = [], []
    for pair in pairs:
        raised = [bool((mechanism(data, PREFLIGHT_DRAWS, rng)[:, -1] == RAISED).all())
                  for data in (pair.base, pair.neighbor)]
        if not all(raised):
            kept.append(pair)
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mechanism.release(np.asarray(pair.base), np.random.RandomState(0), **mechanism.params)
            message = "the library raised on every preflight release of both datasets"
        except Exception as exc:  # noqa: BLE001 - the library's own refusal, reported as such
            message = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
        dropped.append(f"pair {pair.label!r} dropped, the library refuses both datasets: {message}")
    if len(kept) == len(pairs):
        return scenario, []
    return (dataclasses.replace(scenario, pairs=tuple(kept)) if kept else None), dropped


def witness_summary(report: dict) -> dict:
    """The pair, event and statistic a report's verdict rests on, from its dict.

    Uses the report's ``witness`` section where it has one (the refuting event, else the event
    attaining the headline bound), and otherwise its first violation or its worst pair.  The
    statistic is the one the event is a threshold of: an alternate lane's
    (:mod:`audit.statistics.lanes`) is named as one of auto's lanes, beside auto's choice.
    """
    evidence = report.get("evidence") or []
    witness = report.get("witness") or {}
    index = None
    for key in ("refuting", witness.get("headline", "epsilon")):
        record = witness.get(key) if isinstance(witness.get(key), dict) else None
        if record is not None and record.get("evidence") is not None:
            index = int(record["evidence"])
            break
    lane = 0
    if index is not None and index < len(evidence):
        item = evidence[index]
        pair, event, lane = item.get("pair"), item.get("event"), int(item.get("lane") or 0)
    elif report.get("violations"):
        pair, event = report["violations"][0].get("pair"), report["violations"][0].get("message")
    else:
        pair, event = report.get("worst_pair"), None
    choice = None
    info = pair_statistic(report, pair) if pair is not None else None
    if info is not None:
        choice = info.get("auto_choice") or info.get("coordinates_choice") or info.get("kind")
        names = info.get("lanes") or []
        if 0 < lane < len(names):  # the event is a threshold of an alternate lane's statistic
            choice = f"{names[lane]} (one of auto's lanes; auto chose {choice})"
    option = (report.get("statistic") or {}).get("option")
    statistic = option if not choice or choice == option else f"{option}: {choice}" if option else choice
    return {"pair": pair, "event": event, "statistic": statistic}


def linked_known(record: dict, witness_issues: Mapping[str, str]) -> str:
    """The row's known issues: the catalogue's (``record["known"]``), then, for a VIOLATED row, each
    issue of ``witness_issues`` (:attr:`scenarios.libraries.Library.witness_issues`) whose text its
    witness statistic contains, joined by "; " without repeats."""
    known = [record.get("known") or ""]
    if record.get("verdict") == "VIOLATED":
        statistic = str((record.get("witness") or {}).get("statistic") or "")
        known += [issue for text, issue in witness_issues.items() if text in statistic]
    return "; ".join(dict.fromkeys(k for k in known if k))


def audit_row(row: PlannedRow, *, library: str, version: Optional[str], out, checkpoints: bool = True) -> dict:
    """Audit one planned row and return its record (an error record if it cannot run)."""
    case = row.case
    record: dict[str, Any] = {
        "key": case.key, "slug": row.slug, "library": library, "version": version, "entry": case.entry,
        "point": case.point, "params": case.params, "cost": case.cost, "known": case.known,
        "mechanism": mechanism_name(case.mechanism), "claim": claim_label(case.claim.to_dict()),
        "relation": case.claim.relation.value, "samples": row.samples, "seed": row.seed,
        "confidence": row.confidence, "refutable": row.refutable,
    }
    started = time.perf_counter()
    scenario, dropped = _preflight(case)
    if dropped:
        record["dropped_pairs"] = dropped
    if scenario is None:
        return dict(record, status="error", error="; ".join(dropped), wall_time_s=time.perf_counter() - started)
    settings = AuditSettings(samples=row.samples, confidence=row.confidence, seed=row.seed,
                             statistic=row.statistic, n_jobs=1, progress=False,
                             checkpoint=(out / "checkpoints" / f"{row.slug}.npz") if checkpoints else None)
    try:
        try:
            report = _run(case, scenario, settings)
        except CheckpointError as exc:  # refused (another audit's, or not checkable): set aside, audit from scratch
            if settings.checkpoint is None or not settings.checkpoint.is_file():
                raise
            record["reaudited"] = refusal_reason(exc)
            # The reason is kept in the checkpoint's mark too: cut off before it finishes, the row still
            # says why.  Refused only for what could not be fingerprinted, the checkpoint is the one the
            # mark describes, and the mark's copy labels it.
            record["superseded"] = set_aside_checkpoint(out, row.slug, record["reaudited"],
                                                        labelled=bool(exc.unverified) and not exc.differs)
            report = _run(case, scenario, settings)
    except (ValueError, TypeError, MechanismError, ImportError) as exc:
        text = str(exc).strip().splitlines()
        return dict(record, status="error", error=f"{type(exc).__name__}: {text[0] if text else ''}",
                    wall_time_s=time.perf_counter() - started)
    data = report.to_dict(include_runtime=False)
    record.update(status="done", verdict=str(report.verdict),
                  epsilon_lb=report.epsilon_lower_bound, delta_lb=report.delta_lower_bound,
                  mu_lb=report.mu_lower_bound, exact_epsilon=report.exact_epsilon,
                  witness=witness_summary(data), draws=data.get("draws", {}).get("per_side"),
                  wall_time_s=time.perf_counter() - started, report=data)
    return record


def _run(case, scenario, settings: AuditSettings):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a library's warnings are not part of the row
        return run_audit(case.mechanism, scenario, claim=case.claim, settings=settings)


def save_row(record: dict, path) -> None:
    """Write a row record atomically."""
    write_atomic(path, json.dumps(record, indent=1, default=str, allow_nan=True).encode())
