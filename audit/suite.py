"""Running the audits of a ``dpaudit run``: one at a time, or several at once across workers.

An audit of the bundled suite is short (one to five seconds), so splitting each audit's chunks over
two workers gains little: most of an audit's wall time is its serial part (probe, pilot, event
selection, certification, figures).  With ``--jobs J > 1`` on a local joblib backend and more than
one file, :func:`run_audits` therefore runs up to J *audits* at once, each on one worker with
``n_jobs=1``.  This changes no number in any report: an audit's random streams are keyed by its
own seed and chunk (:func:`audit.sampling.chunk_rng`), never by the worker, so a report is the same
for any ``n_jobs`` or backend (only its ``runtime`` section says how it ran).  Results come back
in file order, so report.json, summary.md and report.html read the same either way.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence

from joblib import Parallel, delayed

from mechanisms.base import mechanism_name

from .checkpoint import write_atomic
from .engine import run_audit
from .errors import CheckpointError, MechanismError, ReproducibilityWarning
from .executor import quiet_abandoned_tasks
from .feasibility import SampleSizeWarning
from .fingerprint import reached_parts, value_digest
from .render.files import error_entry, make_entry
from .render.plots import PlotsUnavailable, save_figures
from .render.text import figure_stem
from .report import jsonable
from .settings import AuditSettings
from .version import __version__
from .witness import pair_truth

__all__ = ["RunSettings", "audit_entry", "run_audits", "checkpoint_path", "timing_path", "side_by_side",
           "audit_key", "audit_key_parts", "changed_parts", "close_timing", "SUITE_PARALLEL_BACKENDS"]

#: Backends on which the audits of a run may run side by side (Dask spreads each audit's chunks).
SUITE_PARALLEL_BACKENDS = ("loky", "multiprocessing", "threading")


@dataclass(frozen=True)
class RunSettings:
    """What ``dpaudit run`` applies to every audit of the run.

    ``overrides`` are :class:`~audit.settings.AuditSettings` fields given on the command line
    (``samples``, ``confidence``, ``seed``, ``statistic``), applied over each file's own settings;
    the others say how this machine runs the audits.
    """

    out: Path
    overrides: Mapping[str, Any] = field(default_factory=dict)
    #: Each audit's confidence (by name), where the run's error control sets it (``dpaudit run``).
    confidences: Mapping[str, float] = field(default_factory=dict)
    n_jobs: int = 1
    backend: str = "loky"
    backend_options: Mapping[str, Any] = field(default_factory=dict)
    plots: bool = True
    progress: bool = True
    debug: bool = False

    def audit_settings(self, spec: Any, *, n_jobs: Optional[int] = None,
                       progress: Optional[bool] = None) -> AuditSettings:
        """The settings of ``spec``'s audit in this run: the file's, the overrides, this machine's."""
        return spec.settings.replace(
            **self.overrides, confidence=self.confidences.get(spec.name), n_jobs=self.n_jobs if n_jobs is None else n_jobs, backend=self.backend,
            backend_options=dict(self.backend_options), checkpoint=checkpoint_path(self.out, spec),
            progress=self.progress if progress is None else progress)


def checkpoint_path(out: Path, spec: Any) -> Path:
    """Where the audit of ``spec`` saves its progress: ``OUT/checkpoints/<name>.npz``."""
    return Path(out) / "checkpoints" / f"{figure_stem(spec.name)}.npz"


def timing_path(out: Path, spec: Any) -> Path:
    """Where ``dpaudit run`` keeps the time an unfinished audit of ``spec`` has taken so far:
    ``OUT/checkpoints/<name>.time.json`` (removed with the checkpoint)."""
    return Path(out) / "checkpoints" / f"{figure_stem(spec.name)}.time.json"


def _earlier_time(out: Path, spec: Any) -> float:
    """Seconds the audit of ``spec`` ran before this run (0 without a timing file): the time its
    earlier runs recorded when interrupted (:func:`close_timing`), or, for a run stopped without a
    chance to record it (killed), the time up to its checkpoint's last save."""
    path = timing_path(out, spec)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        earlier = float(record.get("earlier_s", 0.0))
    except (OSError, ValueError, TypeError, AttributeError):
        return 0.0
    started = record.get("started_at")
    checkpoint = checkpoint_path(out, spec)
    if started is not None and checkpoint.exists():
        earlier += max(0.0, checkpoint.stat().st_mtime - float(started))
    return earlier


def _start_timing(out: Path, spec: Any) -> float:
    earlier = _earlier_time(out, spec)
    write_atomic(timing_path(out, spec), json.dumps({"earlier_s": earlier, "started_at": time.time()}).encode())
    return earlier


def close_timing(out: Path, spec: Any, now: Optional[float] = None) -> None:
    """Record, at an interruption, the time the unfinished audit of ``spec`` has taken in total."""
    path = timing_path(out, spec)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if record.get("started_at") is None:
        return
    now = time.time() if now is None else now
    record = {"earlier_s": float(record.get("earlier_s", 0.0)) + max(0.0, now - float(record["started_at"])),
              "started_at": None}
    write_atomic(path, json.dumps(record).encode())


def _source_digest(mechanism: Any) -> str:
    """A digest of the source file defining the mechanism (its function, or its object's class);
    "unknown" when unreadable."""
    target = mechanism if inspect.isfunction(mechanism) or inspect.isclass(mechanism) else type(mechanism)
    try:
        source = inspect.getsourcefile(target)
        return hashlib.sha256(Path(source).read_bytes()).hexdigest() if source else "unknown"
    except (TypeError, OSError):
        return "unknown"


def _code_digest(mechanism: Any) -> str:
    """The digest of what the mechanism reaches (:func:`audit.fingerprint.value_digest`: its code,
    closure, the globals it reads, its parameters), so that editing another function of the same
    module does not make its audit stale.  Where part of it cannot be digested, the digest of its
    source file is added: an edit anywhere in that file then counts as a change."""
    digest = value_digest(mechanism)
    return digest.hexdigest if not digest.unverified else f"{digest.hexdigest}+{_source_digest(mechanism)}"


#: The settings that decide an audit's report, in the order a change is named.
_DECIDING = ("samples", "confidence", "seed", "statistic", "early_stopping", "accuracy")


def audit_key_parts(spec: Any, settings: AuditSettings) -> dict:
    """What identifies an audit's result: its file (path and content), the settings that decide its
    report, its claim, its mechanism's name and code (:func:`_code_digest`), and dpaudit's version;
    ``code_parts`` (not part of the key) splits the code's digest by part
    (:func:`audit.fingerprint.reached_parts`), so that a re-audit can say which part changed."""
    try:
        content = hashlib.sha256(Path(spec.path).read_bytes()).hexdigest()
    except OSError:
        content = "unreadable"
    decided = {name: value for name, value in settings.to_dict().items() if name in _DECIDING}
    parts = {"path": str(spec.path), "file": content, "settings": decided, "version": __version__,
             "claim": None if spec.claim is None else spec.claim.to_dict(),
             "mechanism": mechanism_name(spec.mechanism), "code": _code_digest(spec.mechanism),
             "code_parts": {name: digest[:16] for name, digest in reached_parts(spec.mechanism).items()}}
    return json.loads(json.dumps(parts, sort_keys=True, default=str))  # as report.json keeps it


def audit_key(spec: Any, settings: AuditSettings, parts: Optional[dict] = None) -> str:
    """The digest of :func:`audit_key_parts`.  ``dpaudit run --resume`` takes an audit from the
    saved report only when its key is unchanged."""
    parts = audit_key_parts(spec, settings) if parts is None else parts
    keyed = {name: value for name, value in parts.items() if name != "code_parts"}
    return hashlib.sha256(json.dumps(keyed, sort_keys=True, default=str).encode()).hexdigest()


def changed_parts(saved: Optional[dict], parts: dict) -> str:
    """What changed between an audit's saved key parts and ``parts``, in words: "its settings
    (samples 20000 → 30000) and its mechanism's code or the values it reads"."""
    if not isinstance(saved, dict):  # a report written before the parts were kept
        return "its file, settings or code"
    said = []
    if saved.get("path") != parts["path"] or saved.get("file") != parts["file"]:
        said.append("its file")
    old, new = saved.get("settings") or {}, parts["settings"]
    settings = [f"{name} {old.get(name)} → {new.get(name)}" for name in _DECIDING if old.get(name) != new.get(name)]
    if settings:
        said.append(f"its settings ({', '.join(settings)})")
    if saved.get("claim") != parts["claim"]:
        said.append("its claim")
    if saved.get("mechanism") != parts["mechanism"]:
        said.append(f"its mechanism ({saved.get('mechanism')} → {parts['mechanism']})")
    elif saved.get("code") != parts["code"]:
        said.append("its mechanism's code or the values it reads" + _which(saved.get("code_parts"), parts["code_parts"]))
    if saved.get("version") != parts["version"]:
        said.append(f"dpaudit's version ({saved.get('version')} → {parts['version']})")
    return " and ".join(said) or "its file, settings or code"


def _which(saved: Any, parts: dict, shown: int = 3) -> str:
    """`` (noisy_count: global SCALE)``: the parts of a mechanism whose digest changed, added or
    went, when the saved report kept them."""
    if not isinstance(saved, dict):
        return ""
    names = sorted(name for name in set(saved) | set(parts) if saved.get(name) != parts.get(name))
    if not names:
        return ""
    more = f", and {len(names) - shown} more" if len(names) > shown else ""
    return f" ({', '.join(names[:shown])}{more})"


#: Warnings of an audit that ``dpaudit run`` shows at once and keeps in the report's entry.
_REPORTED_WARNINGS = (ReproducibilityWarning, SampleSizeWarning)


def audit_entry(spec: Any, settings: RunSettings, *, n_jobs: Optional[int] = None,
                progress: Optional[bool] = None) -> dict:
    """Audit ``spec`` and return its report.json entry, with its figures drawn.

    An audit that cannot run (bad input, a mechanism that raises) gives an error entry instead;
    the traceback goes in the private key ``"_traceback"`` when ``settings.debug``.  A checkpoint
    of another audit (:class:`audit.errors.CheckpointError`) propagates.  The audit's warnings about
    its mechanism or its sample size are printed when raised and kept in the entry; its runtime
    records the time of earlier, interrupted runs (``earlier_runs_s``).
    """
    audit_settings = settings.audit_settings(spec, n_jobs=n_jobs, progress=progress)
    earlier = _start_timing(settings.out, spec)
    caught: list[str] = []

    def show(message, category, filename, lineno, file=None, line=None):
        text = str(message)
        caught.append(text)
        print(f"dpaudit: {spec.name}: warning: {text}", file=sys.stderr, flush=True)

    try:
        with warnings.catch_warnings():
            for category in _REPORTED_WARNINGS:
                warnings.simplefilter("always", category)
            default_show, warnings.showwarning = warnings.showwarning, show
            try:
                report = run_audit(spec.mechanism, spec.scenario, claim=spec.claim, settings=audit_settings)
            finally:
                warnings.showwarning = default_show
    except CheckpointError:
        raise
    except (ValueError, TypeError, MechanismError, ImportError) as exc:
        text = str(exc).strip()
        entry = error_entry(spec, f"{spec.path}: {text.splitlines()[0] if text else type(exc).__name__}")
        if settings.debug:
            entry["_traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return entry
    entry = make_entry(spec, report)
    entry["warnings"] = list(entry.get("warnings") or []) + caught
    parts = audit_key_parts(spec, audit_settings)
    entry["audit_key"] = audit_key(spec, audit_settings, parts)
    entry["audit_key_parts"] = parts
    if earlier:  # the time of earlier, interrupted runs of this audit: runtime, like the wall time
        entry["report"]["runtime"]["earlier_runs_s"] = earlier
    if spec.expected == "violated" and report.verdict.value != "VIOLATED":
        entry["pair_truth"] = _pair_truth(spec, report)
    if settings.plots:
        try:
            paths = save_figures(entry, Path(settings.out) / "figures", spec.name)
        except PlotsUnavailable as exc:
            entry["_plots_unavailable"] = str(exc)
        else:
            entry["figures"] = {kind: path.relative_to(settings.out).as_posix() for kind, path in paths.items()}
    return entry


def _pair_truth(spec: Any, report: Any) -> Optional[dict]:
    """The mechanism's exact ε on the audited pairs (:func:`audit.witness.pair_truth`), for the note
    on a false claim that was not refuted; the pairs as the report lists them (a search's included)."""
    labels = [pair.label for pair in report.pairs]
    known = {pair.label: (pair.base, pair.neighbor) for pair in getattr(spec.scenario, "pairs", ())}
    for pair in report.scenario.get("pairs") or []:
        if pair.get("label") not in known and "base" in pair and "neighbor" in pair:
            known[pair["label"]] = (pair["base"], pair["neighbor"])
    if any(label not in known for label in labels):
        return None
    truth = pair_truth(spec.mechanism, [known[label] for label in labels], labels, report.claim)
    return None if truth is None else jsonable(truth)


def side_by_side(specs: Sequence[Any], settings: RunSettings) -> bool:
    """Whether :func:`run_audits` runs several of ``specs`` at once."""
    return settings.n_jobs != 1 and len(specs) > 1 and settings.backend in SUITE_PARALLEL_BACKENDS


def run_audits(specs: Sequence[Any], settings: RunSettings) -> Iterator[dict]:
    """The entries of ``specs``' audits, in order, as each finishes (see the module docstring).

    The caller announces each audit (sequential runs show a progress bar per audit; side-by-side
    runs none).  An interrupted side-by-side run stops its workers; each audit's checkpoint keeps
    what it had saved.
    """
    if not side_by_side(specs, settings):
        for spec in specs:
            yield audit_entry(spec, settings)
        return
    with warnings.catch_warnings():
        quiet_abandoned_tasks()
        parallel = Parallel(n_jobs=settings.n_jobs, backend=settings.backend, return_as="generator")
        stream = parallel(delayed(audit_entry)(spec, settings, n_jobs=1, progress=False) for spec in specs)
        try:
            yield from stream
        finally:
            stream.close()
