"""The tape: records every intercepted random call, or answers each from a record (replay).

Recording stores, for each call, what the source's generator state was just before it (a numpy
bit generator's ``state``, a ``RandomState``'s or a torch generator's state) or, for sources with
no state (OS entropy, Python's ``random`` core calls), the values it returned.  Replaying call *i*
restores the state recorded at call *i* and lets the real primitive draw with the arguments of
the replay: the same underlying uniforms, transformed by the replay's own parameters.  That is
the coupling of Re:cord-play (Cebere et al., PoPETs 2026): both executions see identical
randomness, whether or not the mechanism honours the ``rng`` it is given; a call whose primitive
differs from the record's call at the same position ends the coupling there (``diverged``).

A replay may also *scale* the noise of location-scale calls on some output rows,
loc + λ·scale·z instead of loc + scale·z: the change of each output coordinate then shows which
noise reaches it and with what weight (:mod:`audit.graybox.footprint`).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Optional

import numpy as np

from .trace import PROTECTED, SAMPLING, CallSite, RandomCall, Trace

__all__ = ["Tape", "active_tape", "call_site", "as_array", "clear_site_cache", "same_params"]

_LOCAL = threading.local()
_HERE = os.path.dirname(os.path.abspath(__file__))


def active_tape() -> Optional["Tape"]:
    """The tape of the current thread, or None outside a gray-box run."""
    return getattr(_LOCAL, "tape", None)


def _set_active(tape: Optional["Tape"]) -> None:
    _LOCAL.tape = tape


def _package_dirs(names: tuple[str, ...]) -> tuple[str, ...]:
    dirs = []
    for name in names:
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            dirs.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    return tuple(dirs)


_ALWAYS_SKIP = ("numpy", "torch")
_SKIPPED_FILES = ("random", "secrets")


#: filename → (skipped, helper module) per ``skip`` tuple; cleared when a run starts (modules may load).
_CLASSIFIED: dict[tuple, dict[str, tuple[bool, Optional[str]]]] = {}


def clear_site_cache() -> None:
    """Forget the classification of source files (a module imported since may be skipped now)."""
    _CLASSIFIED.clear()


def _classify(filename: str, skip: tuple[str, ...]) -> tuple[bool, Optional[str]]:
    table = _CLASSIFIED.setdefault(skip, {})
    known = table.get(filename)
    if known is not None:
        return known
    dirs = _package_dirs(_ALWAYS_SKIP + skip)
    files = {os.path.abspath(getattr(sys.modules.get(n), "__file__", "") or ""): n for n in _SKIPPED_FILES}
    absolute = os.path.abspath(filename)
    helper = files.get(absolute)
    skipped = (absolute.startswith(_HERE + os.sep) or bool(dirs and absolute.startswith(dirs)) or helper is not None
               or "<frozen" in filename)
    table[filename] = (skipped, helper)
    return skipped, helper


def call_site(skip: tuple[str, ...] = ()) -> tuple[CallSite, Optional[str]]:
    """The first frame outside this package, numpy, torch, ``random``, ``secrets`` and ``skip``
    (package names), and the name of the outermost skipped ``random``/``secrets`` function."""
    frame = sys._getframe(1)
    helper = None
    while frame is not None:
        code = frame.f_code
        skipped, module = _classify(code.co_filename, skip)
        if skipped:
            if module is not None:
                helper = f"{module}.{code.co_name}"
            frame = frame.f_back
            continue
        return CallSite(code.co_filename, frame.f_lineno, code.co_name), helper
    return CallSite("<unknown>", 0, "<unknown>"), helper


def as_array(value: Any) -> Optional[np.ndarray]:
    """A float64 copy of a numeric draw (a torch tensor included), or None."""
    if value is None:
        return None
    detach = getattr(value, "detach", None)
    if detach is not None:
        value = detach().cpu().numpy()
    if isinstance(value, (bytes, bytearray)):
        return np.frombuffer(bytes(value), dtype=np.uint8).astype(np.float64)
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - an object a primitive returned that is no array: not recorded
        return None
    if array.dtype.kind not in "biuf":
        return None
    return np.array(array, dtype=np.float64)


class Tape:
    """Record (``source=None``) or replay one execution's random calls.

    Parameters
    ----------
    source : Trace, optional
        The record a replay answers from; None to record.
    rows : int
        The ``size`` the mechanism is asked for.
    lam : float
        The factor λ applied to the noise of location-scale calls on ``scaled_rows``.
    scaled_rows : slice, optional
        The output rows whose noise is scaled (only calls whose leading dimension is ``rows``).
    slack : int
        Per-record draws a replay may make (or skip) beyond the record's: the records that only
        one of the two datasets holds.
    scale_all : bool
        Scale the noise of every location-scale call by λ (whatever its shape).
    """

    def __init__(self, source: Optional[Trace] = None, *, rows: int = 1, lam: float = 1.0,
                 scaled_rows: Optional[slice] = None, slack: int = 0, scale_all: bool = False) -> None:
        self.source = source
        self.scale_all = scale_all
        self.pointer = 0
        self.slack = slack
        self.rows = rows
        self.lam = lam
        self.scaled_rows = scaled_rows
        self.calls: list[RandomCall] = []
        self.diverged: Optional[int] = None
        self.depth = 0

    @property
    def replaying(self) -> bool:
        return self.source is not None

    def _recorded(self, index: int, primitive: str) -> Optional[RandomCall]:
        if self.source is None or self.diverged is not None:
            return None
        calls, at = self.source.calls, self.pointer
        if at < len(calls) and calls[at].primitive == primitive:
            self.pointer += 1
            return calls[at]
        # a per-record draw of a record that only one side holds (up to `slack` of them)
        if self.slack > 0 and primitive.split(">")[-1] in SAMPLING:
            self.slack -= 1
            return None
        if (self.slack > 0 and at + 1 < len(calls) and calls[at].primitive.split(">")[-1] in SAMPLING
                and calls[at + 1].primitive == primitive):
            self.slack -= 1
            self.pointer += 2
            return calls[at + 1]
        self.diverged = index
        return None

    def factor(self, shape: tuple) -> Optional[np.ndarray]:
        """Per-row multipliers (λ on ``scaled_rows``, 1 elsewhere) for a call of ``shape``, or None;
        λ for every call with ``scale_all``."""
        if self.scale_all and self.lam != 1.0:
            return np.asarray(self.lam)
        if self.lam == 1.0 or self.scaled_rows is None or len(shape) == 0 or shape[0] != self.rows or self.rows < 2:
            return None
        factor = np.ones(self.rows)
        factor[self.scaled_rows] = self.lam
        return factor.reshape((self.rows,) + (1,) * (len(shape) - 1))

    def call(self, primitive: str, params: dict, draw: Callable[[], Any], *,
             get_state: Optional[Callable[[], Any]] = None, set_state: Optional[Callable[[Any], None]] = None,
             rescale: Optional[Callable[[Any, np.ndarray], Any]] = None, skip: tuple[str, ...] = (),
             opaque: bool = False, couple_output: bool = False) -> Any:
        """One intercepted call: record its state and value, or answer it from the record.

        ``get_state``/``set_state`` give the source's state (None for a source replayed by value);
        ``rescale(value, factor)`` returns loc + factor·(value − loc) for a location-scale call.
        ``couple_output``: a replay answers with the recorded output whenever the calibration (every
        parameter but the protected value) is unchanged, so that what follows sees the same release.
        """
        if self.depth:  # a call made inside another intercepted call belongs to it
            return draw()
        site, helper = call_site(skip)
        if helper is not None:
            primitive = f"{helper}>{primitive}"
        index = len(self.calls)
        state = None
        self.depth += 1
        try:
            if self.source is None:
                state = get_state() if get_state is not None else None
                value = draw()
            else:
                record = self._recorded(index, primitive)
                if record is not None and get_state is not None:
                    set_state(record.state)
                    value = draw()
                elif record is not None and couple_output and same_params(_calibration(record.params),
                                                                          _calibration(params)):
                    value = draw()  # the release must fit this call (a batch path sized by the rows)
                    if np.shape(as_array(value)) == record.shape:
                        value = record.state
                    elif self.diverged is None:
                        self.diverged = index
                elif record is not None and same_params(record.params, params):
                    value = record.state  # a value-replayed source answers with what it returned
                else:
                    value = draw()
                    if record is not None and get_state is None and self.diverged is None:
                        self.diverged = index
                if rescale is not None:
                    shape = tuple(np.shape(as_array(value))) if value is not None else ()
                    factor = self.factor(shape)
                    if factor is not None:
                        value = rescale(value, factor)
        finally:
            self.depth -= 1
        if get_state is None and self.source is None:
            state = value
        array = as_array(value)
        self.calls.append(RandomCall(index, primitive, params, tuple(np.shape(array)) if array is not None else (),
                                     site, array, state, opaque, get_state is None))
        return value

    def mark(self, primitive: str, params: dict, skip: tuple[str, ...] = ()) -> None:
        """Record a DP library's noise entry point (no randomness of its own: its draws follow)."""
        if self.depth:
            return
        site, _ = call_site(skip)
        self.calls.append(RandomCall(len(self.calls), primitive, params, (), site, None, None, False))
        if self.source is not None:
            self._recorded(len(self.calls) - 1, primitive)


def _calibration(params: dict) -> dict:
    return {k: v for k, v in params.items() if k not in PROTECTED}


def same_params(a: dict, b: dict) -> bool:
    """Whether two calls' parameters are equal (arrays elementwise, NaN unequal)."""
    if a.keys() != b.keys():
        return False
    for key in a:
        try:
            if not np.array_equal(np.asarray(a[key]), np.asarray(b[key])):
                return False
        except Exception:  # noqa: BLE001 - parameters that are no arrays compare by ==
            if a[key] != b[key]:
                return False
    return True
