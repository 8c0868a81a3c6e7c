"""The Monte Carlo hot path: seeded chunks of mechanism outputs reduced to sufficient statistics.

Every chunk draws its outputs from its own generator, seeded by
``SeedSequence(entropy=seed, spawn_key=(pair, side, phase, chunk))``: a chunk's samples depend only
on what the chunk *is*, never on which worker ran it or in which order, so a report is bit-identical
for any number of workers or backend.  A chunk never returns its samples, only what the estimators
need: the training summaries of :mod:`audit.statistics.training` (to learn the test statistic), minimum and maximum (to place the
histogram), or histogram counts of the 1-D statistic (to choose and certify events).  Memory is
therefore bounded by one chunk per worker, whatever the number of samples.

Each chunk is validated: shape ``(size, k)`` (or ``(size,)``), real values converted exactly to
float64, finite.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Iterator, Optional

import numpy as np
from threadpoolctl import ThreadpoolController

from .errors import MechanismError
from .statistics import LinearStatistic, TrainingPlan, combine_moments, lda_statistic
from .statistics.base import ordered

__all__ = [
    "Phase",
    "BIT_GENERATOR",
    "chunk_rng",
    "draw_outputs",
    "LinearStatistic",
    "Binning",
    "ChunkTask",
    "AuditJob",
    "run_chunk",
    "chunk_plan",
    "single_threaded_blas",
    "combine_moments",
    "lda_statistic",
    "ordered",
    "placing_range",
    "scores_of",
]

#: The bit generator of every chunk.  SFC64 is the fastest of numpy's generators here and passes
#: PractRand and TestU01 BigCrush; streams are independent through SeedSequence's hashing
#: (``benchmarks/`` compares it with PCG64 and Philox).
BIT_GENERATOR = np.random.SFC64

#: Elements (samples × output dimension) drawn per chunk: 8 MiB of float64.
CHUNK_ELEMENTS = 1 << 20
#: Values binned at a time by :meth:`Binning.counts` (512 KiB of float64: fits in L2).
COUNT_BLOCK = 1 << 16
_TWO_52 = float(1 << 52)
_TWO_52_BITS = int(np.float64(_TWO_52).view(np.int64))


class Phase(IntEnum):
    """The stages of an audit; each draws its own, fresh samples."""

    PROBE = 0
    TRAINING = 1  # learns the test statistic (Fisher's direction, atoms, a classifier, ...)
    DIRECTION = 1  # the name of the training phase before learned statistics (an alias)
    PILOT = 2
    SELECTION = 3
    CERTIFICATION = 4
    ACCURACY = 5
    ANYTIME = 6  # the rounds of an anytime audit (audit.anytime)


def chunk_rng(entropy: int, pair: int, side: int, phase: int, chunk: int) -> np.random.Generator:
    """The generator of one work item, independent of who runs it."""
    sequence = np.random.SeedSequence(entropy=entropy, spawn_key=(pair, side, int(phase), chunk))
    return np.random.Generator(BIT_GENERATOR(sequence))


def chunk_plan(samples: int, chunk_size: int) -> list[int]:
    """Sizes of the chunks that make up ``samples`` draws (all full but the last)."""
    full, rest = divmod(samples, chunk_size)
    return [chunk_size] * full + ([rest] if rest else [])


def chunk_size_for(output_dim: int) -> int:
    """Samples per chunk for outputs of dimension k: about CHUNK_ELEMENTS elements."""
    return max(256, CHUNK_ELEMENTS // max(1, output_dim))


def draw_outputs(mechanism: Any, dataset: Any, size: int, rng: np.random.Generator,
                 where: str, name: str, output_dim: Optional[int] = None) -> np.ndarray:
    """Call the mechanism and check the protocol: shape (size, k) or (size,), finite real values.

    Boolean, integer and narrower float outputs are converted to float64 when that is exact
    (integers of magnitude ≤ 2⁵³); anything else is refused rather than silently rounded.
    """
    try:
        out = mechanism(dataset, size, rng)
    except Exception as exc:  # the user's code: report it with context, keep the cause
        raise MechanismError(f"mechanism {name!r} raised {type(exc).__name__}: {exc} ({where})") from exc
    if not isinstance(out, np.ndarray):
        raise MechanismError(
            f"mechanism {name!r} must return a numpy array, got {type(out).__name__} ({where}); "
            f"{_encoding_hint(out)}")
    out = _as_float64(out, name, where)
    if out.ndim == 1:
        out = out.reshape(-1, 1)
    if out.ndim != 2 or out.shape[0] != size or (output_dim is not None and out.shape[1] != output_dim):
        expected = f"({size}, {output_dim if output_dim is not None else 'k'})"
        raise MechanismError(
            f"mechanism {name!r} returned shape {out.shape}, expected {expected} ({where})")
    if not np.isfinite(out).all():
        kind = "NaN" if np.isnan(out).any() else "inf"
        raise MechanismError(f"mechanism {name!r} returned {kind} values ({where})")
    return out


_EXACT_INTEGER = 1 << 53


def _as_float64(out: np.ndarray, name: str, where: str) -> np.ndarray:
    """float64 view of a real array, exactly, or a MechanismError saying why not."""
    if out.dtype == np.float64:
        return out
    if out.dtype == np.bool_ or out.dtype in (np.float16, np.float32):
        return out.astype(np.float64)
    if np.issubdtype(out.dtype, np.integer):
        if out.size and (int(out.max()) > _EXACT_INTEGER or int(out.min()) < -_EXACT_INTEGER):
            raise MechanismError(
                f"mechanism {name!r} returned {out.dtype} values beyond ±2**53, which float64 cannot "
                f"represent exactly ({where})")
        return out.astype(np.float64)
    raise MechanismError(
        f"mechanism {name!r} returned dtype {out.dtype}, expected real numbers (float, integer or "
        f"bool) ({where}); {_encoding_hint(out)}")


def _encoding_hint(out: Any) -> str:
    """How to encode outputs that are not a real array of shape (size, k), by what was returned."""
    if isinstance(out, dict):
        return ("encode a record as columns: one row per draw and one column per key, e.g. "
                "np.column_stack([out[key] for key in sorted(out)])")
    if isinstance(out, (tuple, list)):
        return ("stack several outputs into columns, e.g. np.column_stack(parts) for (size, k), with "
                "categories encoded as integers")
    if isinstance(out, (str, bytes)) or (isinstance(out, np.ndarray) and out.dtype.kind in "USO"):
        return ("encode categories (strings, labels) as integers, e.g. each output's index in a fixed, sorted "
                "array of the possible labels: np.searchsorted(labels, out); the categorical statistic "
                "ranks them")
    if isinstance(out, np.ndarray) and out.dtype.kind == "c":
        return "return the real and imaginary parts as two columns: np.column_stack([out.real, out.imag])"
    return "return np.asarray(...) of float, integer or bool values, shape (size, k) or (size,)"


@dataclass(frozen=True)
class Binning:
    """``bins`` equal bins on [lo, lo + bins·width) plus an underflow (index 0) and an overflow
    (index bins + 1) bin.  Events are unions of bins, so counting is exact; the resolution only
    affects which events can be chosen, never their validity."""

    lo: float
    width: float
    bins: int

    def index(self, values: np.ndarray) -> np.ndarray:
        """Bin index of each value: ⌊(v − lo)/width⌋ + 1 clipped to [0, bins + 1]."""
        scaled = np.subtract(values, self.lo, dtype=np.float64)
        with np.errstate(over="ignore"):
            self._scale(scaled)
        return scaled.astype(np.int64)

    def _scale(self, scaled: np.ndarray) -> None:
        """In place: v − lo ↦ clip(⌊(v − lo)/width⌋, −1, bins) + 1, the bin index as a float."""
        np.divide(scaled, self.width, out=scaled)
        np.floor(scaled, out=scaled)
        np.clip(scaled, -1.0, float(self.bins), out=scaled)
        scaled += 1.0  # exact: an integer of magnitude ≤ bins + 1

    def counts(self, values: np.ndarray) -> np.ndarray:
        """Histogram of ``values`` over the bins (length bins + 2), exactly ``bincount(index)``.

        The values are binned ``COUNT_BLOCK`` at a time through two small buffers reused for every
        block, so the temporaries stay in cache and no chunk-sized array is allocated: on this
        hot path fresh chunk-sized temporaries cost more (page faults, memory traffic) than the
        arithmetic.  The bin of a value is the same as :meth:`index` computes.
        """
        values = np.asarray(values, dtype=np.float64)
        total = np.zeros(self.bins + 2, dtype=np.int64)
        with np.errstate(over="ignore"):  # |v| / width → ∞ is clipped like any large value
            self._count_blocks(values, total)
        return total

    def _count_blocks(self, values: np.ndarray, total: np.ndarray) -> None:
        block = max(1, min(COUNT_BLOCK, values.shape[0]))
        buffer = np.empty(block, dtype=np.float64)
        for start in range(0, values.shape[0], block):
            part = values[start:start + block]
            scaled = buffer[:part.shape[0]]
            np.subtract(part, self.lo, out=scaled)
            self._scale(scaled)
            # Float → int without numpy's slow conversion loop: for an integer 0 ≤ m < 2^52 the
            # float 2^52 + m has the bit pattern of 2^52 plus m.
            scaled += _TWO_52
            index = scaled.view(np.int64)
            index -= _TWO_52_BITS
            total += np.bincount(index, minlength=self.bins + 2)

    def edge(self, j: int) -> float:
        """Value of the lower edge of bin index j (bin j covers [edge(j), edge(j+1)))."""
        return self.lo + (j - 1) * self.width

    @classmethod
    def covering(cls, low: float, high: float, bins: int, widen: float = 2.0) -> "Binning":
        """Bins over the pilot range [low, high] widened by ``widen`` times its width on each side."""
        span = high - low
        if not span > 0:
            span = max(abs(low), 1.0) * 1e-6
        lo = low - widen * span
        return cls(lo=float(lo), width=float(span * (1.0 + 2.0 * widen) / bins), bins=bins)


@dataclass(frozen=True)
class ChunkTask:
    """One work item: which pair, which side (0 = base, 1 = neighbour), phase, chunk and size."""

    pair: int
    side: int
    phase: Phase
    chunk: int
    size: int


@dataclass(frozen=True)
class AuditJob:
    """Everything a worker needs to run any chunk of one audit (small and picklable)."""

    mechanism: Any
    name: str
    datasets: tuple  # datasets[pair] = (base, neighbour)
    labels: tuple
    entropy: int
    output_dim: int
    statistics: tuple = ()  # per pair Statistic, once learned
    binnings: tuple = ()  # per pair Binning, once placed
    training: Optional[TrainingPlan] = None  # what training chunks keep
    #: Per pair, the indices of its lanes' binnings (:class:`~audit.statistics.lanes.Lanes`); empty:
    #: one lane per pair, ``binnings[pair]``.  With lanes a chunk returns one row per lane.
    lanes: tuple = ()

    def where(self, task: ChunkTask) -> str:
        side = "base" if task.side == 0 else "neighbour"
        return (f"pair {self.labels[task.pair]!r}, {side} dataset, "
                f"{task.phase.name.lower()} chunk {task.chunk}")


def run_chunk(job: AuditJob, task: ChunkTask):
    """Draw one chunk and reduce it to the sufficient statistic of its phase.

    OpenBLAS's results depend on its thread count, which differs between the main process and
    joblib's or Dask's workers; a mechanism's own code (a trainer's matrix products) and the
    statistic (the scatter matrix, the projection on the discriminant) go through it.  So every
    chunk runs with BLAS pinned to one thread (:func:`single_threaded_blas`), which makes it
    bit-identical wherever it runs.
    """
    with single_threaded_blas():
        return _run_chunk(job, task)


def _run_chunk(job: AuditJob, task: ChunkTask):
    rng = chunk_rng(job.entropy, task.pair, task.side, task.phase, task.chunk)
    outputs = draw_outputs(job.mechanism, job.datasets[task.pair][task.side], task.size, rng,
                           job.where(task), job.name, job.output_dim)
    if task.phase == Phase.TRAINING:
        return job.training.reduce(outputs)
    if job.lanes:  # several statistics' scores of the same draws (audit.statistics.lanes)
        lanes = zip(job.statistics[task.pair].lanes(), job.lanes[task.pair])
        return np.stack([_reduce(job, task, scores_of(statistic, outputs), lane) if i == 0 else
                         _reduce_alternate(job, task, scores_of(statistic, outputs), lane)
                         for i, (statistic, lane) in enumerate(lanes)])
    return _reduce(job, task, scores_of(job.statistics[task.pair], outputs), task.pair)


def scores_of(statistic, outputs: np.ndarray) -> np.ndarray:
    """The statistic's scores of ``outputs``, computed without floating-point warnings: a score
    that overflows (a projection of 1e308) is ±inf, and NaN where such infinities meet, which the
    lanes map monotonically (:func:`_reduce`, :func:`_reduce_alternate`)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(statistic(outputs), dtype=np.float64)


#: An alternate lane's overflowing scores (±inf, NaN) become ±this (:func:`_finite`).
_BIG = float(np.finfo(np.float64).max / 4)
#: Only scores of magnitude up to this place an alternate lane's histogram (:func:`_reduce_alternate`):
#: bins placed on [−_PILOT_CAP, _PILOT_CAP] and widened (:meth:`Binning.covering`) stay finite.
_PILOT_CAP = _BIG / 4


def _finite(values: np.ndarray) -> np.ndarray:
    """An alternate lane's scores made finite by a fixed monotone map (clipped to ±a quarter of the
    largest float, ±inf included, so that differences of scores stay finite; NaN to the lowest): a
    statistic of huge outputs (a linear projection of 1e300) may overflow where the primary one does
    not, and a fixed map of a statistic is a statistic, so the events stay valid.  Clipping keeps
    the map monotone: a finite score beyond the clip ties with +inf instead of passing it."""
    scores = np.nan_to_num(np.asarray(values, dtype=np.float64), nan=-_BIG, posinf=_BIG, neginf=-_BIG)
    return np.clip(scores, -_BIG, _BIG)


def _reduce_alternate(job: AuditJob, task: ChunkTask, values: np.ndarray, binning: int):
    """:func:`_reduce` for an alternate lane, whose scores may overflow.

    The pilot's range is that of the scores of magnitude at most :data:`_PILOT_CAP` ((inf, −inf)
    when there are none), so the bins are placed on the scores that are finite; the histograms
    count :func:`_finite`'s scores, whose overflowing ones (±a quarter of the largest float) land
    in the underflow or overflow bin.  The map is monotone (−inf and NaN lowest, +inf highest), so
    the lane's threshold events stay as fine as its finite scores allow and comparable with the
    other lanes'.  Placed on a range that held ±inf's image, every finite score shared one bin and
    the lane compared nothing."""
    scores = _finite(values)
    if task.phase == Phase.PILOT:
        return placing_range(scores)
    return job.binnings[binning].counts(scores)


def _reduce(job: AuditJob, task: ChunkTask, values: np.ndarray, binning: int):
    """A pilot's (min, max) or a histogram of the scores ``values`` on ``job.binnings[binning]``.

    Scores that are all finite are reduced as they are.  Otherwise (a statistic of huge outputs
    may overflow) they go through :func:`ordered`, NaN to −inf, ±inf kept, the identity on finite
    scores: the pilot's range is that of :func:`placing_range`, and the histogram counts −inf and
    NaN in the underflow bin and +inf in the overflow bin.  That fixed monotone map of the
    statistic is a statistic, the same for every chunk whether or not it met a non-finite score,
    so the events stay valid; without non-finite scores nothing changes."""
    if task.phase == Phase.PILOT:
        if np.isfinite(values).all():
            return float(values.min()), float(values.max())
        return placing_range(values)
    if not np.isfinite(values).all():
        values = ordered(values)
    return job.binnings[binning].counts(values)


def placing_range(values: np.ndarray) -> tuple[float, float]:
    """(min, max) of the scores of magnitude at most :data:`_PILOT_CAP`, which place a histogram
    whose bins stay finite ((inf, −inf) when there are none): bins placed on a range holding ±inf
    (or the largest floats) would put every finite score in one bin."""
    values = np.asarray(values, dtype=np.float64)
    placed = values[np.abs(values) <= _PILOT_CAP]
    return (float(placed.min()), float(placed.max())) if placed.size else (np.inf, -np.inf)


_BLAS_LOCK = threading.Lock()
_BLAS_STATE: dict = {"holders": 0, "limiter": None, "controller": None}


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the body with BLAS limited to one thread in this process (re-entrant, shared).

    OpenBLAS splits a product differently for different thread counts, and the sums differ in
    the last bits (measured: ``x.T @ x`` and ``x @ w`` for x of shape (10381, 101) differ between
    1 and 2 threads, and dp-accounting's δ(ε) of the DP-SGD suite between 1 and 2 threads in its
    16th digit).  The main process runs BLAS with every core, joblib's and Dask's workers with
    fewer, so without this a statistic fitted in the main process, a mechanism's exact values and
    the draws of a mechanism that multiplies matrices changed with ``n_jobs``, the backend, or
    whether an audit of ``dpaudit run --jobs 2`` ran in a worker.  :func:`audit.run_audit` holds
    it for the whole audit and :func:`run_chunk` for every chunk, wherever it runs.  One thread is
    also the fast choice for chunks: they are already parallel, and on a busy 2-core machine a
    2-thread (101 × 101) scatter product was measured 10–25× slower than a 1-thread one.

    The limit is process-wide, so it is counted rather than scoped: the first holder in a process
    sets one thread, the last to leave restores the previous count.  Bodies never wait for one
    another (chunks under joblib's ``threading`` backend run side by side), and every holder sees
    one thread for as long as it holds it.  Other threads of the process see one thread
    meanwhile too.
    """
    with _BLAS_LOCK:
        if _BLAS_STATE["holders"] == 0:
            if _BLAS_STATE["controller"] is None:
                _BLAS_STATE["controller"] = ThreadpoolController()
            _BLAS_STATE["limiter"] = _BLAS_STATE["controller"].limit(limits=1, user_api="blas")
        _BLAS_STATE["holders"] += 1
    try:
        yield
    finally:
        with _BLAS_LOCK:
            _BLAS_STATE["holders"] -= 1
            if _BLAS_STATE["holders"] == 0:
                limiter, _BLAS_STATE["limiter"] = _BLAS_STATE["limiter"], None
                limiter.restore_original_limits()
