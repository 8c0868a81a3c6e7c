"""What ``dpaudit run`` keeps in its output folder, and how a run shares its error budget.

The folder holds report.json (``finished`` false while a run is going or after it was interrupted),
summary.md, report.html, figures, and, per unfinished audit, its checkpoint and timing file in
``checkpoints/``.  :func:`unfinished_run` says what an interrupted run left there (the command line
refuses to start over it unless told ``--resume`` or ``--overwrite``); :func:`dropped_audits` names the
finished audits a rerun of fewer files would drop from the report (refused too, unless
``--overwrite``); :func:`replaced_files` and :func:`remove_replaced` remove what a run replaced
(figures it did not draw again, the dropped audits' checkpoints), so report and folder agree;
:func:`saved_entries` gives the finished audits ``--resume`` takes from report.json instead of running
them again, and says what changed for those it audits again; :func:`saved_message` is the one line an
interruption prints; :func:`remove_checkpoints` tidies up after a finished run.  :func:`error_control`
decides each audit's confidence: the stricter of its file's and the run's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from .render.files import ReportFileError, load_report
from .render.text import figure_stem
from .suite import RunSettings, audit_key, audit_key_parts, changed_parts, checkpoint_path, timing_path

__all__ = ["error_control", "unfinished_run", "dropped_audits", "replaced_files", "remove_replaced", "SavedRun", "saved_entries", "saved_message", "remove_checkpoints"]


def error_control(specs, confidence: Optional[float], method: str) -> dict:
    """The run-wide false-alarm control of ``dpaudit run`` (recorded in the report's settings).

    Each audit runs at the stricter of its file's own confidence and the level the run asks: with
    Bonferroni over m > 1 audits, 1 − γ/m where γ = 1 − ``confidence`` (default 0.95); otherwise
    ``confidence`` when given.  The run's error control can therefore only make an audit stricter,
    never weaker than its file.  By the union bound the probability that a run of correct claims
    reports some VIOLATED is at most Σ_i (1 − c_i) over the audits' confidences c_i, which is at
    most γ under Bonferroni, whatever the audits' dependence.  ``levels`` lists each audit's file
    and run levels.
    """
    m = len(specs)
    files = [float(spec.confidence) for spec in specs]
    if method == "bonferroni" and m > 1:
        run = 0.95 if confidence is None else confidence
        share = 1.0 - (1.0 - run) / m
        asked = [share] * m
        control = {"method": "bonferroni", "audits": m, "run_confidence": run, "per_audit_confidence": share}
    else:
        asked = [confidence] * m
        control = {"method": "none" if m > 1 else "single audit", "audits": m}
    levels = [file if run_level is None else max(file, run_level) for file, run_level in zip(files, asked)]
    control["levels"] = [{"name": spec.name, "file": file, "run": run_level, "audit": level}
                         for spec, file, run_level, level in zip(specs, files, asked, levels)]
    control["run_false_alarm_bound"] = min(1.0, sum(1.0 - level for level in levels))
    return control


def unfinished_run(out: Path, specs: Sequence[Any]) -> Optional[str]:
    """What an unfinished run left in ``out`` (None if nothing): a report.json marked unfinished,
    or checkpoints or timing files of this run's audits that no finished report accounts for."""
    try:
        document = load_report(out / "report.json") if (out / "report.json").exists() else None
    except ReportFileError:
        document = None
    pending = [spec.name for spec in specs
               if checkpoint_path(out, spec).exists() or timing_path(out, spec).exists()]
    marked = document is not None and document.get("finished") is False
    if not marked and not (pending and (document is None or document.get("finished") is not True)):
        return None
    parts = []
    if document is not None:
        done = sum(entry.get("report") is not None for entry in document["audits"])
        parts.append(f"{done} audit(s) finished and saved in {out / 'report.json'}")
    if pending:
        parts.append(f"progress of {', '.join(repr(name) for name in pending)} saved in {out / 'checkpoints'}")
    return "; ".join(parts) or "report.json marked unfinished"


@dataclass(frozen=True)
class SavedRun:
    """What ``--resume`` finds in ``OUT/report.json`` for the audits of this run.

    ``kept``: the finished audits taken from the report (by name); ``changed``: the finished audits
    whose file, settings or code changed since, each with what changed in words (audited again);
    ``failed``: the audits that ended with an error (audited again); ``interrupted``: whether the
    earlier run was interrupted (the report is marked unfinished) rather than finished.
    """

    kept: dict = field(default_factory=dict)
    changed: dict = field(default_factory=dict)
    failed: tuple = ()
    interrupted: bool = False

    @property
    def when(self) -> str:
        """When the saved audits finished, as a message says it."""
        return "before the interruption" if self.interrupted else "in the earlier run"


def saved_entries(out: Path, specs: Sequence[Any], options: RunSettings) -> SavedRun:
    """The finished audits of an earlier run that ``--resume`` takes from ``out/report.json``
    instead of running again (those whose :func:`audit.suite.audit_key` is unchanged), and those
    it audits again (see :class:`SavedRun`)."""
    path = out / "report.json"
    if not path.exists():
        return SavedRun()
    try:
        document = load_report(path)
    except ReportFileError:
        return SavedRun()
    entries = {entry["name"]: entry for entry in document["audits"]}
    kept, changed, failed = {}, {}, []
    for spec in specs:
        entry = entries.get(spec.name)
        if entry is None:
            continue
        if entry.get("report") is None:
            failed.append(spec.name)
            continue
        settings = options.audit_settings(spec)
        parts = audit_key_parts(spec, settings)
        if entry.get("audit_key") == audit_key(spec, settings, parts):
            kept[spec.name] = entry
        else:
            changed[spec.name] = changed_parts(entry.get("audit_key_parts"), parts)
    return SavedRun(kept, changed, tuple(failed), interrupted=document.get("finished") is False)


def _saved_document(out: Path) -> Optional[dict]:
    try:
        return load_report(out / "report.json") if (out / "report.json").exists() else None
    except ReportFileError:
        return None


def dropped_audits(out: Path, specs: Sequence[Any]) -> list[str]:
    """The finished audits of ``out/report.json`` that a run of ``specs`` does not include: it would
    drop them from report.json, report.html and summary.md (each is rewritten with this run's audits)."""
    document = _saved_document(out)
    names = {spec.name for spec in specs}
    return [] if document is None else [entry["name"] for entry in document["audits"]
                                        if entry.get("report") is not None and entry["name"] not in names]


def replaced_files(out: Path, specs: Sequence[Any]) -> list[Path]:
    """The files of ``out`` that belong to its saved report (read before a run rewrites it): every
    audit's figures, and the checkpoints of the audits a run of ``specs`` does not include (an
    ``--overwrite`` run drops them).  :func:`remove_replaced` removes those the run did not reuse."""
    document = _saved_document(out)
    if document is None:
        return []
    names = {spec.name for spec in specs}
    paths = []
    for entry in document["audits"]:
        paths += [out / str(path) for path in (entry.get("figures") or {}).values()]
        if entry["name"] not in names:
            stem = figure_stem(entry["name"])
            paths += [out / "checkpoints" / f"{stem}.npz", out / "checkpoints" / f"{stem}.time.json"]
    return [path for path in paths if path.resolve().is_relative_to(out.resolve())]


def remove_replaced(out: Path, replaced: Sequence[Path], entries: Sequence[dict]) -> None:
    """After a run wrote its report: remove the files of :func:`replaced_files` that none of its
    ``entries`` uses (the figures of an audit run again with ``--no-plots``, of a dropped audit), so
    that report.json, report.html, summary.md and ``figures/`` describe the same audits."""
    used = {(out / str(path)).resolve() for entry in entries for path in (entry.get("figures") or {}).values()}
    for path in replaced:
        if path.resolve() not in used and path.is_file():
            path.unlink()


def saved_message(out: Path, specs: Sequence[Any], entries: Sequence[dict]) -> str:
    """One line: which audits are finished in the report, which have progress in a checkpoint."""
    done = {entry["name"] for entry in entries}
    pending = [spec for spec in specs if spec.name not in done and checkpoint_path(out, spec).exists()]
    finished = f"{len(entries)} of {len(specs)} audits finished and saved in {out / 'report.json'}"
    partial = (f"; partial progress of {', '.join(repr(s.name) for s in pending)} saved in "
               f"{out / 'checkpoints'}" if pending else "; no partial progress saved")
    return (f"dpaudit: interrupted: {finished}{partial}; rerun the same command with --resume to continue "
            "(or with --overwrite to discard it)")


def remove_checkpoints(out: Path, specs: Sequence[Any], entries: Sequence[dict]) -> int:
    """Delete the checkpoints (and timing files) of the completed audits, and the folder if it is
    left empty."""
    removed = 0
    for spec, entry in zip(specs, entries):
        if entry.get("report") is None:
            continue
        path = checkpoint_path(out, spec)
        if path.exists():
            path.unlink()
            removed += 1
        timing = timing_path(out, spec)
        if timing.exists():
            timing.unlink()
    folder = out / "checkpoints"
    if folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
    return removed
