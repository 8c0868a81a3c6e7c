"""What ``run_sweep(resume=True)`` does with the files of another audit: set them aside, re-audit.

A sweep resumed after dpaudit, the library, or the sweep's settings changed finds saved rows and
checkpoints that another audit made.  Such a row is audited again from scratch, exactly as a
planned row (same seed, same Bonferroni share of the sweep's confidence), and its old files are
moved to ``OUT/superseded/`` (renamed, never deleted) so that nothing is lost and nothing of the
other audit is mixed into this one.  The one exception is a saved row that audited nothing
(ERROR): audited again on every resume, it keeps a single copy, its last error (:data:`ERROR_COPY`).  The row's record then says why
(``"re-audited: its checkpoint was made by another audit (engine 7 → 8)"``).

Which audit a checkpoint belongs to is told by a small file beside it,
``OUT/checkpoints/<slug>.json``, that holds the row's fingerprint
(:func:`audit.sweep.rows.row_fingerprint`: case, claim, samples, seed, confidence, statistic,
library version, engine), whether the row was replayed first and, for a re-audit, its note (why,
and which files were set aside), so that a re-audit cut off before its row finished still says why
when a later resume finishes it.  The engine's own key
(:class:`audit.checkpoint.CheckpointKey`) does not see the library's version; this file does.  A
checkpoint without it (a sweep folder written before it existed) is judged by the engine's key
alone: the audit refuses it (:class:`audit.errors.CheckpointError`), and
:func:`audit.sweep.rows.audit_row` then sets it aside and audits again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Optional

import numpy as np

from ..checkpoint import PART_NAMES, load_state, write_atomic
from ..engine import ENGINE_VERSION
from ..errors import CheckpointError

__all__ = ["SUPERSEDED", "ERROR_COPY", "set_aside", "fingerprint_changes", "key_changes", "prepare_row", "remember"]

#: The folder of ``OUT`` that keeps the files of other audits that a resumed sweep replaced.
SUPERSEDED = "superseded"

#: The label under which a saved row that audited nothing (ERROR) is set aside, replacing the
#: copy an earlier resume kept (``superseded/rows/<slug>.error.json``).  Such a row is audited
#: again on every resume, since its cause (a library's refusal, a missing extra) may have been
#: mended; an error that recurs every time would otherwise leave one copy per resume.  The copy
#: kept is the last error, which the row's new record names; the older ones said the same or
#: were mended since.
ERROR_COPY = "error"

#: Fingerprint fields shown with their values ("engine 7 → 8"); the others are only named.
_SHOWN = {"engine": "engine", "version": "library", "samples": "samples", "seed": "seed",
          "confidence": "confidence", "statistic": "statistic", "graybox": "gray-box replay",
          "numpy": "NumPy", "mode": "mode"}
_NAMED = {"key": "the row's name", "params": "the grid point's parameters", "claim": "the claim"}


def set_aside(path: Path, out: Path, *, replace_as: Optional[str] = None) -> Optional[Path]:
    """Move ``path`` (a file of ``OUT/rows``, ``OUT/checkpoints`` or ``OUT/repro``) to
    ``OUT/superseded/<folder>/``; its new path, or None if there was nothing to move.

    By default under a name no earlier file there has (``row.json``, ``row.2.json``, ...), so
    nothing is ever overwritten.  With ``replace_as`` under ``<stem>.<replace_as><suffix>``,
    replacing the file an earlier call put there: one copy per row, however often it is set aside
    (:data:`ERROR_COPY`).
    """
    path, out = Path(path), Path(out)
    if not path.is_file():
        return None
    folder = out / SUPERSEDED / path.parent.name
    folder.mkdir(parents=True, exist_ok=True)
    if replace_as is not None:
        target = folder / f"{path.stem}.{replace_as}{path.suffix}"
    else:
        target, number = folder / path.name, 1
        while target.exists():
            number += 1
            target = folder / f"{path.stem}.{number}{path.suffix}"
    path.replace(target)
    return target


def _change(name: str, old, new) -> str:
    if name in _SHOWN:
        return f"{_SHOWN[name]} {'—' if old is None else old} → {'—' if new is None else new}"
    return _NAMED.get(name, PART_NAMES.get(name, name))


def fingerprint_changes(old: Optional[str], new: str, *, old_graybox: bool = False,
                        new_graybox: bool = False) -> str:
    """What differs between two row fingerprints (JSON texts of :func:`row_fingerprint`), e.g.
    ``"engine 7 → 8; library 0.2.11 → 0.2.12"``."""
    try:
        before = json.loads(old) if old else {}
    except (TypeError, ValueError):
        before = {}
    if not before:
        return "it was written by another version of dpaudit"
    before, after = dict(before, graybox=bool(old_graybox)), dict(json.loads(new), graybox=bool(new_graybox))
    return "; ".join(_change(name, before.get(name), after.get(name)) for name in after
                     if before.get(name) != after.get(name))


def key_changes(differs: Mapping[str, tuple]) -> str:
    """What differs between a checkpoint's key and the audit's, from
    :attr:`audit.errors.CheckpointError.differs` (part → (saved, now))."""
    return "; ".join(_change(part, *values) for part, values in differs.items())


def _sidecar(out: Path, slug: str) -> Path:
    return out / "checkpoints" / f"{slug}.json"


def _engine_changes(checkpoint: Path) -> str:
    """What of the engine's own (engine and NumPy versions) differs in an unmarked checkpoint's key."""
    try:
        meta, _ = load_state(checkpoint)
    except CheckpointError:
        return "it is unreadable"
    parts = meta.get("parts") if isinstance(meta.get("parts"), dict) else {}
    now = {"engine": ENGINE_VERSION, "numpy": np.__version__}
    return "; ".join(_change(name, parts.get(name), value) for name, value in now.items() if parts.get(name) != value)


def _merge(*notes: Optional[dict]) -> Optional[dict]:
    """One note of the re-audit notes given (reasons and superseded paths joined, without repeats)."""
    notes = [n for n in notes if n]
    if not notes:
        return None
    return {"reason": "; ".join(dict.fromkeys(n["reason"] for n in notes if n.get("reason"))),
            "superseded": list(dict.fromkeys(p for n in notes for p in n.get("superseded") or ()))}


def _read_mark(sidecar: Path) -> dict:
    """The mark beside a checkpoint: {} if there is none, ``{"fingerprint": None}`` if unreadable."""
    if not sidecar.is_file():
        return {}
    try:
        mark = json.loads(sidecar.read_text())
    except ValueError:
        return {"fingerprint": None}
    return mark if isinstance(mark, dict) else {"fingerprint": None}


def remember(out: Path, slug: str, note: dict) -> dict:
    """Add ``note`` (a reason and the paths set aside) to the re-audit note kept in the mark of the
    row's checkpoint, so that a row cut off before it finishes still says why when a later resume
    finishes it; the note kept."""
    sidecar = _sidecar(Path(out), slug)
    mark = _read_mark(sidecar)
    kept = _merge(mark.get("reaudited") if isinstance(mark.get("reaudited"), dict) else None, note)
    write_atomic(sidecar, json.dumps(dict(mark, reaudited=kept)).encode())
    return kept


def prepare_row(out: Path, slug: str, fingerprint: str, graybox: bool, saved: Optional[dict]) -> Optional[dict]:
    """Before a row of a sweep is audited: set aside its saved record, reproduction script and
    checkpoint if another audit made them, and mark the checkpoint left in place as this row's.
    Returns ``{"reason": ..., "superseded": [paths]}`` when the row is a re-audit, else None.

    ``saved`` is the row's saved record when the sweep does not keep it: made by another audit
    (another fingerprint, or replayed first where this row is not, or the reverse), or one that
    audited nothing (ERROR), which a resumed sweep audits again.

    The note is also written into the mark (``"reaudited"``).  A row whose re-audit was cut off
    before it finished has no saved record and a mark of this audit: its note is read back from
    the mark and returned, so the row's record says why once it finishes, however many resumes
    that takes.
    """
    out = Path(out)
    reasons, moved, inherited = [], [], []
    checkpoint, sidecar = out / "checkpoints" / f"{slug}.npz", _sidecar(out, slug)
    mark = _read_mark(sidecar)
    ours = mark.get("fingerprint") == fingerprint and bool(mark.get("graybox")) == graybox
    # A re-audit cut off before its row finished: the note its resume wrote into this audit's mark.
    carried = mark.get("reaudited") if saved is None and ours and isinstance(mark.get("reaudited"), dict) else None
    engine = _engine_changes(checkpoint) if checkpoint.is_file() and not mark else ""
    if saved is not None:
        changes = fingerprint_changes(saved.get("fingerprint"), fingerprint, old_graybox=bool(saved.get("graybox")),
                                      new_graybox=graybox)
        if changes:
            reasons.append(f"its saved row was made by another audit ({changes})")
        elif not engine:
            reasons.append(f"its saved row audited nothing ({saved.get('error') or 'ERROR'})"[:200])
        script = (saved.get("repro") or {}).get("path")
        # The script first: cut off between the two moves, the record left in place still names it
        # and the next resume moves it; cut off the other way, the row's re-audit would overwrite it.
        copy = ERROR_COPY if saved.get("status") == "error" else None  # one copy per row, not per resume
        if copy:  # the files the replaced error record named stay named by the row's next record
            inherited = [p for p in saved.get("superseded") or () if (out / p).is_file()]
        for path, label in ((out / script if script else None, None), (out / "rows" / f"{slug}.json", copy)):
            if path is not None and (moved_to := set_aside(path, out, replace_as=label)) is not None:
                moved.append(moved_to)
    if checkpoint.is_file():
        if mark and not ours:
            changes = fingerprint_changes(mark.get("fingerprint"), fingerprint, old_graybox=bool(mark.get("graybox")),
                                          new_graybox=graybox)
        elif not mark and (engine or saved is not None):  # unmarked: the engine's key, or the saved row's audit
            changes = engine
        else:  # this row's (or, unmarked, left to the engine, which refuses another audit's key)
            changes = None
        if changes is not None:
            if changes and not reasons:
                reasons.append(f"its checkpoint was made by another audit ({changes})")
            moved += [p for p in (set_aside(checkpoint, out), set_aside(sidecar, out)) if p is not None]
    note = None
    if moved:
        note = {"reason": "; ".join(reasons) or "its checkpoint was made by another audit",
                "superseded": [*inherited, *(p.relative_to(out).as_posix() for p in moved)]}
    note = _merge(carried, note)
    mark = {"fingerprint": fingerprint, "graybox": bool(graybox)}
    write_atomic(sidecar, json.dumps(dict(mark, reaudited=note) if note else mark).encode())
    return note

