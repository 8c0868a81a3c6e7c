"""What ``run_sweep(resume=True)`` does with the files of another audit: set them aside, re-audit.

A sweep resumed after dpaudit, the library, or the sweep's settings changed finds saved rows and
checkpoints that another audit made.  Such a row is audited again from scratch, exactly as a
planned row (same seed, same Bonferroni share of the sweep's confidence), and its old files are
moved to ``OUT/superseded/`` (renamed, never deleted) so that nothing is lost and nothing of the
other audit is mixed into this one.  The one exception is a saved row that audited nothing
(ERROR): audited again on every resume, it keeps a single copy, its last error
(:data:`ERROR_COPY`).  The row's record then says why
(``"re-audited: its checkpoint was made by another audit (engine 7 → 8)"``).

Which audit a checkpoint belongs to is told by a small file beside it,
``OUT/checkpoints/<slug>.json``, that holds the row's fingerprint
(:func:`audit.sweep.rows.row_fingerprint`: case, claim, samples, seed, confidence, statistic,
library version, engine, digests of the release and of the neighbouring datasets), whether the row was replayed first and, for a re-audit, its note (why,
and which files were set aside), so that a re-audit cut off before its row finished still says why
when a later resume finishes it.  The engine's own key
(:class:`audit.checkpoint.CheckpointKey`) does not see the library's version; this file does.  A
checkpoint without it (a sweep folder written before it existed) is judged by the engine's key
alone: the audit refuses it (:class:`audit.errors.CheckpointError`), and
:func:`audit.sweep.rows.audit_row` then sets it aside and audits again.

**Crash safety.**  Setting a row's files aside takes several steps (the script, the record, the
checkpoint and its mark), and a process may die between any two.  So the plan is written first,
into the mark (``"setting_aside"``: every move with its target, the mark's old text, the mark to
write at the end), then carried out in order, the old mark copied beside the checkpoint's target
*before* the checkpoint moves, so a set-aside checkpoint is never without its label.  The mark
keeps the old fingerprint until the very end, so a checkpoint still in place is never taken for
this audit's.  The next resume finds the plan and finishes it (:func:`recover`) before it reads
anything else of the row: the moves not made yet, then the final mark with the re-audit's note.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Optional

import numpy as np

from ..checkpoint import PART_NAMES, load_state, write_atomic
from ..engine import ENGINE_VERSION
from ..errors import CheckpointError

__all__ = ["SUPERSEDED", "ERROR_COPY", "set_aside", "fingerprint_changes", "key_changes", "refusal_reason",
           "prepare_row", "recover", "set_aside_checkpoint"]

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


def _target(out: Path, path: Path, replace_as: Optional[str] = None, also: tuple[str, ...] = ()) -> Path:
    """Where :func:`set_aside` puts ``path``: ``OUT/superseded/<folder>/<name>``, under the first of
    ``<stem>``, ``<stem>.2``, ... that no file there has with ``path``'s suffix or any of ``also``
    (a checkpoint and its label share a number), or ``<stem>.<replace_as><suffix>``."""
    folder = out / SUPERSEDED / path.parent.name
    if replace_as is not None:
        return folder / f"{path.stem}.{replace_as}{path.suffix}"
    name, number = path.stem, 1
    while any((folder / f"{name}{suffix}").exists() for suffix in (path.suffix, *also)):
        number += 1
        name = f"{path.stem}.{number}"
    return folder / f"{name}{path.suffix}"


def _move(source: Path, target: Path) -> None:
    """One rename (``os.replace``: atomic within a file system)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    source.replace(target)


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
    target = _target(out, path, replace_as)
    _move(path, target)
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


def refusal_reason(error: CheckpointError) -> str:
    """Why the engine refused a row's checkpoint, as a row's record says it: made by another audit
    (the parts of the key that differ), not checkable (what could not be fingerprinted: the keys
    match, but an edit to those parts would go unnoticed), or unreadable."""
    if error.differs:
        return f"its checkpoint was made by another audit ({key_changes(error.differs)})"
    if error.unverified:
        listed = "; ".join(error.unverified[:3]) + ("; ..." if len(error.unverified) > 3 else "")
        return f"its checkpoint could not be checked: part of the mechanism cannot be fingerprinted ({listed})"[:300]
    detail = str(error).split(": ", 1)[-1].split(".  ")[0]
    if error.unreadable:
        return f"its checkpoint is unreadable ({detail})"[:300]
    return f"its checkpoint was made by another audit ({detail})"[:300]


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


#: The key of a row's mark that holds a set-aside in progress (module docstring, crash safety).
_PLAN = "setting_aside"


def _carry_out(out: Path, slug: str, plan: dict) -> None:
    """Make the moves of ``plan`` not made yet, in order, then write the mark it ends with.

    A move whose source is gone was made before a cut (nothing else writes a row's files between a
    cut and the next resume's :func:`recover`).  The checkpoint's label is written just before
    the checkpoint moves, every time it has not moved yet: a label without its checkpoint (cut
    between the two) is rewritten with the same text, never left apart from it.
    """
    label = plan.get("label")
    for source, target in plan["moves"]:
        if not (out / source).is_file():
            continue
        if label and source == label["of"]:
            write_atomic(out / label["path"], label["text"].encode())
        _move(out / source, out / target)
    write_atomic(_sidecar(out, slug), json.dumps(plan["mark"]).encode())


def _set_aside_all(out: Path, slug: str, mark: dict, moves: list[tuple[Path, Path]], label: Optional[dict],
                   final: dict) -> None:
    """Set ``moves`` (source, target) aside crash-safely: the plan into the mark, then carried out."""
    plan = {"moves": [[a.relative_to(out).as_posix(), b.relative_to(out).as_posix()] for a, b in moves],
            "label": label, "mark": final}
    # The old fingerprint stays until the end: a checkpoint still in place is never this audit's.
    write_atomic(_sidecar(out, slug), json.dumps(dict(mark, **{_PLAN: plan})).encode())
    _carry_out(out, slug, plan)


def recover(out: Path, slug: str) -> bool:
    """Finish the set-aside of a row's files that a crash cut off (its plan is in the row's mark):
    the moves not made yet, then the mark, with the re-audit's note, it was to end with.  Whether
    there was one.  :func:`run_sweep` calls it for every row before reading the row's files."""
    out = Path(out)
    plan = _read_mark(_sidecar(out, slug)).get(_PLAN)
    if not isinstance(plan, dict):
        return False
    _carry_out(out, slug, plan)
    return True


def set_aside_checkpoint(out: Path, slug: str, reason: str, *, labelled: bool) -> list[str]:
    """Set aside a row's checkpoint that the engine refused, crash-safely, and add ``reason`` to
    the re-audit note in its mark (so a row cut off before it finishes still says why); the
    paths set aside.  ``labelled``: the mark in place describes that checkpoint (it was refused
    for what the mark does not see), so a copy goes beside it; otherwise the mark is this audit's
    and the checkpoint was another's (unmarked, judged by the engine's key alone)."""
    out = Path(out)
    checkpoint, sidecar = out / "checkpoints" / f"{slug}.npz", _sidecar(out, slug)
    mark = _read_mark(sidecar)
    target = _target(out, checkpoint, also=(".json",))
    plain = {k: v for k, v in mark.items() if k != "reaudited"}
    label = ({"of": checkpoint.relative_to(out).as_posix(), "path": target.with_suffix(".json").relative_to(out)
              .as_posix(), "text": json.dumps(plain)} if labelled and mark else None)
    paths = [target.relative_to(out).as_posix()] + ([label["path"]] if label else [])
    previous = mark.get("reaudited") if isinstance(mark.get("reaudited"), dict) else None
    final = dict(mark, reaudited=_merge(previous, {"reason": reason, "superseded": paths}))
    _set_aside_all(out, slug, mark, [(checkpoint, target)], label, final)
    return paths


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
    recover(out, slug)  # a set-aside cut off by a crash is finished first
    record_path = out / "rows" / f"{slug}.json"
    if saved is not None and not record_path.is_file():
        saved = None  # set aside by that recovery, whose note the mark now holds
    reasons: list[str] = []
    inherited: list[str] = []
    moves: list[tuple[Path, Path]] = []
    label = None
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
        copy = ERROR_COPY if saved.get("status") == "error" else None  # one copy per row, not per resume
        if copy:  # the files the replaced error record named stay named by the row's next record
            inherited = [p for p in saved.get("superseded") or () if (out / p).is_file()]
        # The script first: the record names it, so a record still in place finds it.
        for path, replace_as in ((out / script if script else None, None), (record_path, copy)):
            if path is not None and path.is_file():
                moves.append((path, _target(out, path, replace_as)))
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
            target = _target(out, checkpoint, also=(".json",))  # the checkpoint and its label share a number
            moves.append((checkpoint, target))
            if sidecar.is_file():
                label = {"of": checkpoint.relative_to(out).as_posix(),
                         "path": target.with_suffix(".json").relative_to(out).as_posix(), "text": sidecar.read_text()}
    note = None
    if moves:
        paths = [*inherited, *(b.relative_to(out).as_posix() for _, b in moves), *([label["path"]] if label else [])]
        note = {"reason": "; ".join(reasons) or "its checkpoint was made by another audit", "superseded": paths}
    note = _merge(carried, note)
    final = {"fingerprint": fingerprint, "graybox": bool(graybox)}
    final = dict(final, reaudited=note) if note else final
    if moves:
        _set_aside_all(out, slug, mark, moves, label, final)
    else:
        write_atomic(sidecar, json.dumps(final).encode())
    return note
