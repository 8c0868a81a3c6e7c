"""Atomic checkpoints of an audit's accumulated sufficient statistics.

A checkpoint holds a :class:`CheckpointKey`, the fingerprint of everything that determines the
report (engine and NumPy versions, seed, the mechanism's code and parameters as
:mod:`audit.fingerprint` digests them, the statistic, claim, pairs, sample counts, chunk size) and,
per phase, which chunks are done and what they contributed.  It is rewritten after every batch of chunks by writing a temporary file in the
same directory and renaming it over the old one (``os.replace`` is atomic), so an interrupted run
leaves either the previous or the new checkpoint, never a torn one.  Rerunning the same call
resumes: finished chunks are not drawn again, and since every chunk's samples depend only on its
key, the resumed report equals the uninterrupted one.  A checkpoint whose key differs in any part
(an edited mechanism, another seed, ...) is refused, naming the parts that differ; one whose
mechanism could not be digested in full is resumed only when the caller vouches that it is
unchanged (``assume_unchanged``).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Optional

import numpy as np

from .errors import CheckpointError

__all__ = ["CheckpointKey", "save_state", "load_state", "write_atomic", "PART_NAMES"]

#: How a refusal names each part of a :class:`CheckpointKey` that differs.
PART_NAMES = {
    "engine": "the dpaudit engine version",
    "numpy": "NumPy's version (its generators draw the samples)",
    "mechanism": "the mechanism (its code, closure, defaults, the globals it reads, or its parameters)",
    "statistic": "the test statistic",
    "claim": "the claim",
    "pairs": "the neighbouring pairs",
    "samples": "`samples`",
    "confidence": "`confidence`",
    "seed": "the seed",
    "plan": "the sample plan (chunk size, output dimension, histogram, allocation)",
    "mode": "the audit mode (fixed or anytime)",
}


@dataclass(frozen=True)
class CheckpointKey:
    """What a checkpoint may be resumed under: one text per part (a digest or a value) and the
    parts of the mechanism or statistic that could not be digested (:mod:`audit.fingerprint`)."""

    parts: Mapping[str, str]
    unverified: tuple[str, ...] = field(default=())
    vouched: bool = False  # the caller says the unverified parts are unchanged (not saved)

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(dict(self.parts), sort_keys=True).encode()).hexdigest()

    def meta(self) -> dict:
        """The checkpoint's JSON metadata for this key."""
        return {"fingerprint": self.digest, "parts": dict(self.parts), "unverified": list(self.unverified)}


def write_atomic(path: "os.PathLike[str] | str", data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file, never a mix."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; give the usual permissions
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def save_state(path, meta: dict, arrays: dict[str, np.ndarray]) -> None:
    """Save JSON-able ``meta`` and named arrays atomically as one .npz file."""
    buffer = io.BytesIO()
    np.savez(buffer, __meta__=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)
    write_atomic(path, buffer.getvalue())


def load_state(path, key: Optional[CheckpointKey] = None) -> Optional[tuple[dict, dict]]:
    """Load a checkpoint; ``None`` if the file does not exist.

    Raises :class:`CheckpointError` if it is unreadable; if its key differs from ``key`` (a
    checkpoint of another audit, or of this audit with an edited mechanism, must never be mixed
    into this one: the message names what differs); or if part of the mechanism or statistic could
    not be digested and the key is not ``vouched`` for (the message lists those parts).
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["__meta__"]).decode())
            arrays = {name: data[name] for name in data.files if name != "__meta__"}
    except Exception as exc:
        raise CheckpointError(f"`checkpoint` file {str(path)!r} is not a readable dpaudit checkpoint: {exc}",
                              unreadable=True) from exc
    if key is None:
        return meta, arrays
    if meta.get("fingerprint") != key.digest:
        saved = meta.get("parts")
        if not isinstance(saved, dict):
            what = "it was written by another version of dpaudit"
        else:
            differs = {part: (saved.get(part), key.parts.get(part)) for part in sorted(set(saved) | set(key.parts))
                       if saved.get(part) != key.parts.get(part)}
            differ = [PART_NAMES.get(part, part) for part in differs]
            what = "it differs in " + "; ".join(differ) if differ else "its fingerprint differs"
        raise CheckpointError(
            f"`checkpoint` file {str(path)!r} belongs to a different audit: {what}.  Resuming it would "
            "mix draws of another audit into this report; delete it or choose another path",
            differs if isinstance(saved, dict) else None)
    if key.unverified and not key.vouched:
        listed = "; ".join(key.unverified[:5]) + ("; ..." if len(key.unverified) > 5 else "")
        raise CheckpointError(
            f"`checkpoint` file {str(path)!r} cannot be resumed safely: part of the mechanism or statistic "
            f"cannot be fingerprinted ({listed}), so an edit to it would go unnoticed.  Pass "
            "assume_unchanged=True if it has not changed since the checkpoint was written, or delete the file",
            unverified=key.unverified)
    return meta, arrays
