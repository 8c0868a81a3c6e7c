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

import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence

from .settings import AuditSettings

from joblib import Parallel, delayed

from .engine import run_audit
from .errors import CheckpointError, MechanismError
from .executor import quiet_abandoned_tasks
from .render.files import error_entry, make_entry
from .render.plots import PlotsUnavailable, save_figures
from .render.text import figure_stem

__all__ = ["RunSettings", "audit_entry", "run_audits", "checkpoint_path", "side_by_side",
           "SUITE_PARALLEL_BACKENDS"]

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
            **self.overrides, n_jobs=self.n_jobs if n_jobs is None else n_jobs, backend=self.backend,
            backend_options=dict(self.backend_options), checkpoint=checkpoint_path(self.out, spec),
            progress=self.progress if progress is None else progress)


def checkpoint_path(out: Path, spec: Any) -> Path:
    """Where the audit of ``spec`` saves its progress: ``OUT/checkpoints/<name>.npz``."""
    return Path(out) / "checkpoints" / f"{figure_stem(spec.name)}.npz"


def audit_entry(spec: Any, settings: RunSettings, *, n_jobs: Optional[int] = None,
                progress: Optional[bool] = None) -> dict:
    """Audit ``spec`` and return its report.json entry, with its figures drawn.

    An audit that cannot run (bad input, a mechanism that raises) gives an error entry instead;
    the traceback goes in the private key ``"_traceback"`` when ``settings.debug``.  A checkpoint
    of another audit (:class:`audit.errors.CheckpointError`) propagates.
    """
    try:
        report = run_audit(spec.mechanism, spec.scenario, claim=spec.claim,
                           settings=settings.audit_settings(spec, n_jobs=n_jobs, progress=progress))
    except CheckpointError:
        raise
    except (ValueError, TypeError, MechanismError, ImportError) as exc:
        text = str(exc).strip()
        entry = error_entry(spec, f"{spec.path}: {text.splitlines()[0] if text else type(exc).__name__}")
        if settings.debug:
            entry["_traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return entry
    entry = make_entry(spec, report)
    if settings.plots:
        try:
            paths = save_figures(entry, Path(settings.out) / "figures", spec.name)
        except PlotsUnavailable as exc:
            entry["_plots_unavailable"] = str(exc)
        else:
            entry["figures"] = {kind: path.relative_to(settings.out).as_posix() for kind, path in paths.items()}
    return entry


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
