"""Atomic checkpoints of an audit's accumulated sufficient statistics.

A checkpoint holds a fingerprint of everything that determines the report (engine version, seed,
mechanism, claim, pairs, sample counts, chunk size) and, per phase, which chunks are done and what
they contributed.  It is rewritten after every batch of chunks by writing a temporary file in the
same directory and renaming it over the old one (``os.replace`` is atomic), so an interrupted run
leaves either the previous or the new checkpoint, never a torn one.  Rerunning the same call
resumes: finished chunks are not drawn again, and since every chunk's samples depend only on its
key, the resumed report equals the uninterrupted one.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path
from typing import Optional

import numpy as np

from .errors import CheckpointError

__all__ = ["save_state", "load_state", "write_atomic"]


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


def load_state(path, fingerprint: Optional[str] = None) -> Optional[tuple[dict, dict]]:
    """Load a checkpoint; ``None`` if the file does not exist.

    Raises :class:`CheckpointError` if it is unreadable or if its fingerprint differs from
    ``fingerprint`` (a checkpoint of another audit must never be mixed into this one).
    """
    path = Path(path)
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(bytes(data["__meta__"]).decode())
            arrays = {key: data[key] for key in data.files if key != "__meta__"}
    except Exception as exc:
        raise CheckpointError(f"`checkpoint` file {str(path)!r} is not a readable dpaudit checkpoint: {exc}") from exc
    if fingerprint is not None and meta.get("fingerprint") != fingerprint:
        raise CheckpointError(
            f"`checkpoint` file {str(path)!r} belongs to a different audit (other mechanism, pairs, "
            "claim, seed, samples or confidence); delete it or choose another path")
    return meta, arrays
