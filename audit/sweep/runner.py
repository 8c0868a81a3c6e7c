"""``run_sweep``: every catalogue row of a library audited, in parallel, resumably, with a report.

The rows of a sweep are independent audits.  They run side by side over joblib workers (each
audit on one worker, ``n_jobs=1``), or as tasks of a Dask cluster through joblib's Dask backend
(``backend="dask"``, ``scheduler=`` an address; without one a local cluster).  No number of a
row depends on which worker ran it: its seed is its own (:func:`audit.sweep.plan.row_seed`).

Each finished row is written at once to ``OUT/rows/<slug>.json`` (atomically), and each audit
checkpoints its progress in ``OUT/checkpoints/``; with ``resume=True`` a rerun keeps every saved
row whose fingerprint (case, claim, samples, seed, confidence, library version, engine) matches
and continues the unfinished audits from their checkpoints.  A row whose saved record or
checkpoint another audit made, or that audited nothing (ERROR), is audited again from scratch and
its old files kept in ``OUT/superseded/`` (:mod:`audit.sweep.resume`).  Without it the folders
are cleared first.  An interrupted sweep (Ctrl-C) still writes ``sweep.json`` (``finished`` false)
and ``sweep.md`` for the rows done, then raises :class:`SweepInterrupted`, whose message says how
many rows finished and that ``resume=True`` (``--resume``) continues.

An entry whose public names the installed release lacks (:func:`scenarios.libraries.missing_api`),
or a grid point whose ``build`` raises :class:`scenarios.libraries.NotInRelease`, is a row "not in
this release" (status ``absent``): it is reported, not planned, and counts in no error control.
For each VIOLATED row a reproduction script is written to ``OUT/repro/``
(:mod:`audit.sweep.repro`); the row's ``repro`` record says how its event was chosen
(``event_choice``: certain, or uncertain and what the script carries instead).  The whole sweep
is then written as ``sweep.json`` and ``sweep.md``.
"""

from __future__ import annotations

import datetime
import fnmatch
import json
import shutil
import sys
import warnings
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
from joblib import Parallel, delayed, parallel_config
from tqdm.auto import tqdm

from scenarios.libraries import NotInRelease, missing_api
from scenarios.libraries import library as find_library

from ..checkpoint import write_atomic
from ..render.witness import pair_statistic
from ..settings import AuditSettings
from ..executor import quiet_abandoned_tasks
from ..version import __version__
from .graybox import graybox_row
from .plan import BUDGETS, PlannedRow, plan_rows, row_slug
from .repro import REPRO_DRAWS, certified_projections, certified_sets, readable_event, script_draws, script_text
from .repro_additive import certified_scores
from .resume import SUPERSEDED, prepare_row, recover
from .rows import audit_row, linked_known, row_fingerprint, save_row
from .table import sweep_markdown

__all__ = ["run_sweep", "DEFAULT_OUT", "DEFAULT_CONFIDENCE", "DEFAULT_SEED", "SWEEP_BACKENDS", "SweepInterrupted",
           "sweep_counts"]

#: The probability that no claim that holds is reported VIOLATED anywhere in a sweep, by default:
#: the audits' own default confidence (:class:`audit.settings.AuditSettings`).
DEFAULT_CONFIDENCE = AuditSettings.confidence
#: A sweep's default seed: fixed, so a sweep rerun gives the same table.
DEFAULT_SEED = 2026

DEFAULT_OUT = "dpaudit-sweep"
#: Where rows may run: joblib's process and thread backends, or a Dask cluster.
SWEEP_BACKENDS = ("loky", "multiprocessing", "threading", "dask")


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by Ctrl-C after writing the report of the rows done; ``document`` is that
    report (``finished`` false) and the message says how to continue."""

    def __init__(self, message: str, document: dict) -> None:
        super().__init__(message)
        self.document = document

    def __str__(self) -> str:
        return str(self.args[0])


def sweep_counts(rows: Sequence[dict]) -> dict:
    """How many row records are VIOLATED, NOT_REFUTED, ERROR (audited nothing) and absent (not in
    this release)."""
    counts = {"violated": 0, "not_refuted": 0, "error": 0, "absent": 0}
    for row in rows:
        status = row.get("status")
        if status == "absent":
            counts["absent"] += 1
        elif status == "error" or row.get("verdict") is None:
            counts["error"] += 1
        else:
            counts["violated" if row["verdict"] == "VIOLATED" else "not_refuted"] += 1
    return counts


def _point_label(point: Any) -> str:
    return ", ".join(f"{k}={v}" for k, v in dict(point).items()) or "—"


def _absent(library: str, version: Optional[str], entry: Any, point: str, reason: str) -> dict:
    key = f"{entry.name} [{point}]"
    return {"key": key, "slug": row_slug(key), "library": library, "version": version, "entry": entry.name,
            "point": point, "status": "absent", "reason": reason,
            "claim": entry.claim_text if len(entry.claim_text) <= 60 else entry.claim_text[:59] + "…",
            "relation": entry.relation.value}


def _build(selected: tuple, library: str, version: Optional[str]) -> tuple[tuple, list[dict]]:
    """The cases of the selected entries the release has, and a record for each one it lacks."""
    cases, absent = [], []
    for entry in selected:
        reason = missing_api(entry.api)
        if reason is not None:
            absent.append(_absent(library, version, entry, "*", reason))
            continue
        built = []
        for point in entry.grid:
            try:
                built.append(entry.build(point))
            except NotInRelease as exc:
                text = str(exc)
                absent.append(_absent(library, version, entry, _point_label(point),
                                      text if text.startswith("not in this release") else f"not in this release: {text}"))
        labels = [case.point for case in built]
        if len(set(labels)) != len(labels):
            raise ValueError(f"{entry.name}: grid point labels repeat: {labels}")
        cases += built
    return tuple(cases), absent


def _split_pattern(pattern: str) -> tuple[str, str]:
    """``"ENTRY [POINT]"`` → (ENTRY, POINT), both globs; a plain ``"ENTRY"`` selects every point."""
    name, bracket, point = pattern.partition(" [")
    return name, point.removesuffix("]") if bracket else "*"


def _matches(name: str, pattern: str) -> bool:
    """``name`` is ``pattern`` itself or matches it as a glob: an entry named with brackets
    (``measurements.make_laplace[int]``), which as a glob is a character class, still selects itself."""
    return name == pattern or fnmatch.fnmatchcase(name, pattern)


def _select_points(cases: tuple, absent: list[dict], patterns: Optional[Sequence[str]]) -> tuple[tuple, list[dict]]:
    """The rows whose entry and grid point match a pattern (``"models.PCA [*n_components=1*]"``)."""
    if not patterns:
        return cases, absent

    def keep(entry: str, point: str) -> bool:
        # point "*": a row for a whole entry the release lacks, kept wherever its entry is selected
        return any(_matches(entry, n) and (p == "*" or point == "*" or _matches(point, p))
                   for n, p in map(_split_pattern, patterns))
    return (tuple(c for c in cases if keep(c.entry, c.point)),
            [r for r in absent if keep(r["entry"], r["point"])])


def _select(entries: tuple, patterns: Optional[Sequence[str]]) -> tuple:
    if not patterns:
        return entries
    chosen = tuple(e for e in entries if any(_matches(e.name, _split_pattern(p)[0]) for p in patterns))
    if not chosen:
        names = ", ".join(e.name for e in entries)
        raise ValueError(f"`entries` {list(patterns)!r} match no entry of the catalogue (entries: {names})")
    return chosen


def _witness_datasets(record: dict, case) -> Optional[tuple[np.ndarray, np.ndarray, str]]:
    label = (record.get("witness") or {}).get("pair")
    for pair in (record.get("report") or {}).get("scenario", {}).get("pairs", []):
        if pair.get("label") == label and "base" in pair and "neighbor" in pair:
            return np.asarray(pair["base"], dtype=np.float64), np.asarray(pair["neighbor"], dtype=np.float64), label
    for pair in getattr(case.scenario, "pairs", ()):
        if pair.label == label:
            return np.asarray(pair.base), np.asarray(pair.neighbor), label
    return None


def _projections(record: dict, label: str) -> list:
    """The weight vectors of the linear statistics the audit trained for the witness pair, if any:
    its chosen statistic's and its alternate lanes' (:mod:`audit.statistics.lanes`), whose event
    the report may certify instead."""
    entry = pair_statistic(record.get("report") or {}, label)
    if entry is None:
        return []
    return [statistic["weights"] for statistic in [entry, *(entry.get("alternates") or [])] if statistic.get("weights")]


def _repro(row: PlannedRow, record: dict, lib_info: dict) -> Optional[dict]:
    """The reproduction script of a VIOLATED row, or None (with a reason in the record)."""
    case = row.case
    found = _witness_datasets(record, case)
    if found is None:
        return {"error": "the witness pair's datasets are not in the report"}
    base, neighbour, label = found
    rng = np.random.default_rng(np.random.SeedSequence([row.seed, 0x5EED]))
    # Never more releases than the row's own audit drew; a gray-box row's release is too costly for
    # the fixed count: its own draws a side (what a perfectly separating event needs).
    draws = row.samples if case.graybox else min(REPRO_DRAWS[case.cost], row.samples)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = case.mechanism(base, draws, rng)
        b = case.mechanism(neighbour, draws, rng)
    delta = float(case.claim.reference_delta)
    epsilon = float(case.claim.epsilon_at(delta))
    event = readable_event(a, b, epsilon, delta, projections=_projections(record, label),
                           certified=certified_sets(record.get("report") or {}, label),
                           scores=certified_scores(record.get("report") or {}, label),
                           certified_lines=certified_projections(record.get("report") or {}, label))
    if event is None:
        return {"error": "no simple event of the released vector exceeds the claim with confidence on fresh "
                         "draws, and the audit's certified event is not one numpy can restate; it is in the report"}
    n = row.samples if case.graybox else script_draws(event, case.cost, epsilon)
    layout = ""
    coordinate = "a weighted sum of the whole vector (W)" if event.index < 0 else case.coordinate(event.index)
    if event.statistic:
        coordinate = "the whole vector through the audit's additive statistic (TABLES)"
    if case.layout:
        blocks = ", ".join(f"{name}" + ("" if cap is None else f" (capacity {cap})") for name, cap in case.layout)
        which = "The event reads" if event.index < 0 else f"output[{event.index}] is"
        layout = (f"\nThe released vector holds, in order: {blocks}; each block of capacity c is "
                  f"[size, leading dimension, non-finite count, c values].\n{which} {coordinate}.\n")
    report = record.get("report") or {}
    finding = (f"The sweep of {lib_info['name']} {record.get('version')} (dpaudit {__version__}, "
               f"{lib_info['date']}) reported VIOLATED for {case.entry} [{case.point}], which claims "
               f"{record['claim']} under {record['relation']}: certified epsilon >= "
               f"{report.get('epsilon_lower_bound', float('nan')):.4g} at delta = {delta:g}, at confidence "
               f"{row.confidence:.6g} (the sweep's Bonferroni share). Witness pair: {label}.")
    text = script_text(header=lib_info["header"], helpers=lib_info["helpers"], release=case.release,
                       params=case.release_params, base=base, neighbour=neighbour, pair_label=label,
                       event=event, draws=n, epsilon=epsilon, delta=delta,
                       title=f"Reproduce: {lib_info['name']} {case.key}", finding=finding,
                       seeded=lib_info["seeded"], layout=layout,
                       width=case.mechanism.output_dim - 1 if hasattr(case.mechanism, "output_dim") else 0)
    return {"text": text, "event": event.code(), "coordinate": coordinate,
            "more_likely_under": event.more_likely, "choosing_frequencies": [event.p_base, event.p_neighbour],
            "draws": n, "certified_event": event.certified, "event_choice": event.choice}


def _run_one(row: PlannedRow, lib_info: dict, out: Path) -> dict:
    if lib_info.get("graybox") or row.case.graybox:  # replay the row's pairs first, the audit aimed at a finding
        record = graybox_row(row, library=lib_info["name"], version=lib_info["version"], out=out)
    else:
        record = audit_row(row, library=lib_info["name"], version=lib_info["version"], out=out)
    if record.get("verdict") == "VIOLATED" and lib_info["repro"]:
        try:
            record["repro"] = _repro(row, record, lib_info)
        except Exception as exc:  # noqa: BLE001 - a failed script must not lose the row
            record["repro"] = {"error": f"{type(exc).__name__}: {exc}"}
    return record


def _stream(rows: Sequence[PlannedRow], lib_info: dict, out: Path, n_jobs: int, backend: str,
            scheduler: Optional[str]):
    if n_jobs == 1 and backend != "dask":
        for row in rows:
            yield _run_one(row, lib_info, out)
        return
    tasks = (delayed(_run_one)(row, lib_info, out) for row in rows)
    with warnings.catch_warnings():
        quiet_abandoned_tasks()
        if backend == "dask":
            from distributed import Client  # optional extra: dpaudit[dask]

            with Client(scheduler) if scheduler else Client(processes=True, n_workers=max(n_jobs, 1),
                                                            threads_per_worker=1) as client:
                with parallel_config(backend="dask", wait_for_workers_timeout=60):
                    stream = Parallel(n_jobs=-1, return_as="generator_unordered")(tasks)
                    yield from stream
                client.close()
            return
        stream = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator_unordered")(tasks)
        try:
            yield from stream
        finally:
            stream.close()


def _reset(out: Path) -> None:
    for folder in ("rows", "checkpoints", "repro", SUPERSEDED):
        shutil.rmtree(out / folder, ignore_errors=True)


def _note_reaudit(record: dict, planned: Optional[dict], bar: Any) -> None:
    """Put why a resumed sweep audited the row again, and where its old files went, in its record
    (:mod:`audit.sweep.resume`), and say so on the terminal."""
    if planned is not None:
        reasons = [planned["reason"], record.get("reaudited")]
        record["reaudited"] = "; ".join(dict.fromkeys(r for r in reasons if r))
        record["superseded"] = planned["superseded"] + record.get("superseded", [])
    if record.get("reaudited"):
        bar.write(f"dpaudit sweep: {record['key']}: re-audited: {record['reaudited']}; the old files are kept in "
                  f"{', '.join(record['superseded'])}", file=sys.stderr)


def run_sweep(library: str, *, budget: str = "default", out: Any = DEFAULT_OUT, n_jobs: int = 1,
              backend: str = "loky", scheduler: Optional[str] = None, resume: bool = False,
              confidence: float = DEFAULT_CONFIDENCE, seed: int = DEFAULT_SEED, entries: Optional[Sequence[str]] = None,
              samples: Optional[int] = None, statistic: Any = None, progress: bool = True,
              repro: bool = True, date: Optional[str] = None, graybox: bool = False) -> dict:
    """Audit every catalogue row of ``library`` and write the sweep report to ``out``.

    Parameters
    ----------
    library : str
        A registered library (:func:`scenarios.libraries.library_names`).
    budget : {"small", "default"}
        Draws per row by cost of one release (:data:`audit.sweep.plan.BUDGETS`).
    out : path
        Output folder: ``sweep.json``, ``sweep.md``, ``rows/``, ``repro/``, ``checkpoints/``.
    n_jobs, backend, scheduler
        Rows run side by side on ``n_jobs`` joblib workers of ``backend``, or on a Dask cluster
        (``backend="dask"``, ``scheduler`` its address).
    resume : bool
        Keep the rows saved by an interrupted sweep with the same plan, and continue.
    confidence : float
        The probability that no claim that holds is reported VIOLATED anywhere in the sweep;
        every row runs at 1 − (1 − confidence)/m.
    seed : int
        The sweep's seed; each row's is derived from it and the row's key.
    entries : sequence of str, optional
        Glob patterns of entry names to audit (default: all); m counts only the rows selected.
    samples : int, optional
        Draws per pair and side for every row, overriding the budget.
    statistic : str or object, optional
        The test statistic of every row (any option of :class:`audit.AuditSettings`); by default each
        case's own: ``"coordinates"`` for a vector release, ``"auto"`` for one value.
    progress : bool
        A progress bar over rows.
    repro : bool
        Write a reproduction script for each VIOLATED row.
    date : str, optional
        The date recorded in the report (default: today, ISO format).
    graybox : bool
        Record and replay each row's pairs first and aim the row's audit at the first finding
        (:mod:`audit.sweep.graybox`); the findings go to ``sweep.md`` and the row records.

    Returns
    -------
    dict
        The sweep document written to ``sweep.json``: its settings, the coverage of the
        library's public API, and one record per row.
    """
    if backend not in SWEEP_BACKENDS:
        raise ValueError(f"`backend` must be one of {SWEEP_BACKENDS}, got {backend!r}")
    if budget not in BUDGETS:
        raise ValueError(f"`budget` must be one of {tuple(BUDGETS)}, got {budget!r}")
    lib = find_library(library)
    version = lib.version()
    catalogue = lib.entries()
    coverage = lib.coverage(catalogue)
    selected = _select(catalogue, entries)
    cases, absent = _select_points(*_build(selected, lib.name, version), entries)
    if not cases and not absent:
        raise ValueError(f"`entries` {list(entries)!r} match no grid point of the selected entries")
    rows = plan_rows(cases, library=lib.name, budget=budget, confidence=confidence, seed=seed, samples=samples,
                     statistic=statistic)
    out = Path(out)
    if not resume:
        _reset(out)
    (out / "rows").mkdir(parents=True, exist_ok=True)
    date = date or datetime.date.today().isoformat()
    lib_info = {"name": lib.name, "version": version, "header": lib.script_header, "helpers": lib.helpers,
                "seeded": lib.seeded, "repro": repro, "date": date, "graybox": bool(graybox)}

    records: dict[str, dict] = {}
    stale: dict[str, dict] = {}  # saved rows of another audit: re-audited, their files set aside
    for row in rows:
        path = out / "rows" / f"{row.slug}.json"
        if resume:
            recover(out, row.slug)  # a set-aside that a crash cut off is finished before the row's files are read
        if resume and path.is_file():
            saved = json.loads(path.read_text())
            if (saved.get("fingerprint") == row_fingerprint(row, version) and saved.get("status") != "error"
                    and bool(saved.get("graybox")) == (graybox or row.case.graybox)):
                records[row.slug] = saved
            else:
                stale[row.slug] = saved
    todo = [row for row in rows if row.slug not in records]
    reaudited = {row.slug: note for row in todo
                 if (note := prepare_row(out, row.slug, row_fingerprint(row, version), graybox or row.case.graybox,
                                         stale.get(row.slug)))}
    bar = tqdm(total=len(rows), initial=len(rows) - len(todo), desc=f"sweep {lib.name}", unit="row",
               disable=not progress)
    by_slug = {row.slug: row for row in rows}
    settings = {"budget": budget, "samples": samples, "statistic": statistic, "confidence": confidence, "seed": seed,
                "entries": entries, "date": date, "graybox": bool(graybox)}
    try:
        for record in _stream(todo, lib_info, out, n_jobs, backend, scheduler):
            row = by_slug[record["slug"]]
            record["fingerprint"] = row_fingerprint(row, version)
            _note_reaudit(record, reaudited.get(row.slug), bar)
            script = record.get("repro") or {}
            if "text" in script:
                path = out / "repro" / f"{row.slug}.py"
                write_atomic(path, script.pop("text").encode())
                script["path"] = path.relative_to(out).as_posix()
            save_row(record, out / "rows" / f"{row.slug}.json")
            records[row.slug] = record
            bar.set_postfix_str(f"{record.get('verdict', record.get('status'))}: {row.case.key}"[:60])
            bar.update(1)
    except KeyboardInterrupt:
        bar.close()
        document = _document(lib, version, catalogue, coverage, rows, records, absent, settings, finished=False)
        _write(out, document)
        done = sum(1 for row in rows if row.slug in records)
        raise SweepInterrupted(
            f"dpaudit: interrupted: {done} of {len(rows)} rows finished and saved in {out / 'rows'} (their report: "
            f"{out / 'sweep.md'}, {out / 'sweep.json'}); the unfinished audits' progress is in "
            f"{out / 'checkpoints'}; rerun the same command with --resume to continue", document) from None
    finally:
        bar.close()

    document = _document(lib, version, catalogue, coverage, rows, records, absent, settings, finished=True)
    _write(out, document)
    return document


def _document(lib: Any, version: Optional[str], catalogue: tuple, coverage: Any, rows: Sequence[PlannedRow],
              records: dict, absent: list[dict], settings: dict, *, finished: bool) -> dict:
    """The sweep document: settings, coverage, the records of the rows done, then the absent rows."""
    done = [{k: v for k, v in records[row.slug].items() if k != "report"} for row in rows if row.slug in records]
    done = [dict(r, known=linked_known(r, lib.witness_issues)) for r in done]
    samples, statistic, entries = settings["samples"], settings["statistic"], settings["entries"]
    return {
        "library": lib.name, "version": version, "date": settings["date"], "dpaudit": __version__,
        "budget": settings["budget"], "samples_override": samples,
        "statistic_override": None if statistic is None else str(statistic),
        "confidence": settings["confidence"], "error_control": "bonferroni",
        "rows_planned": len(rows), "row_confidence": rows[0].confidence if rows else None, "seed": settings["seed"],
        "entries_selected": list(entries) if entries else None,
        "finished": finished, "rows_done": len(done), "counts": sweep_counts(done + absent),
        "coverage": coverage.to_dict(),
        "entries": [{"name": e.name, "api": list(e.api), "kind": e.kind, "claim": e.claim_text,
                     "relation": e.relation.value, "grid_points": len(e.grid)} for e in catalogue],
        "rows": done + absent,
        "graybox": settings.get("graybox", False),
    }


def _write(out: Path, document: dict) -> None:
    write_atomic(out / "sweep.json", json.dumps(document, indent=1, default=str).encode())
    write_atomic(out / "sweep.md", sweep_markdown(document).encode())
