"""Whether a sample size can do what an audit is for, and how long it will take: said before drawing.

An audit's settings meet its mechanism in :func:`audit.run_audit`, once for every door
(``run_audit``, scenario files, the command line, the pytest plugin), and that is where these two
checks run, each ending in a :class:`SampleSizeWarning`:

- :func:`unrefutable_message`: ``samples`` so small that no outcome of the draws could refute the
  claim, or that its events are chosen on a handful of draws.  The best any event can do is separate the two datasets perfectly, every certification
  draw of one side in it and none of the other's; the exact joint test (:mod:`audit.joint_bounds`)
  of those counts, at the most favourable level the budget can give the claim's own quantity
  (choosing early included, :meth:`audit.selection.Budget.favouring`), bounds every bound the audit
  could print.  When even that does not exceed what the claim allows, every verdict is
  NOT_REFUTED whatever the mechanism does, and the message says the largest bound the draws could
  ever certify and the smallest ``samples`` whose best case would refute the claim.
  (:func:`audit.engine.run_audit` refuses outright a budget that certifies nothing at all.)
- :func:`duration_message`: ``samples`` so large that the run will take long: one chunk of draws
  is timed (from a stream of its own, which no phase uses) and the whole run's draws, 2 · pairs ·
  ``samples``, are extrapolated from it and shared over the workers.  Only runs of at least
  :data:`LONG_RUN_DRAWS` draws are timed, so the chunk costs under 0.1% of the run.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any, Callable, Optional

from .allocation import MIN_EARLY_CHOICE, MIN_LOOKED
from .joint_bounds import JointTest
from .sampling import Phase, chunk_rng, chunk_size_for, draw_outputs
from .selection import JOINT_FACTOR

__all__ = ["SampleSizeWarning", "best_case_bound", "unrefutable_message", "duration_message",
           "LONG_RUN_DRAWS", "LONG_RUN_SECONDS", "MIN_SELECTION", "ADVISED_SELECTION"]

#: Runs drawing at least this many outputs in total are timed before they start.
LONG_RUN_DRAWS = 10**9
#: ... and announced when the estimate exceeds this many seconds.
LONG_RUN_SECONDS = 600.0
#: Certification draws above which the best-case check is skipped (the exact joint test is checked
#: up to about 10⁹ counts).
_CHECKED_UP_TO = 1 << 30
#: Fewer selection draws per side than this choose events by chance (the smallest first segment
#: that may choose early, :data:`audit.allocation.MIN_EARLY_CHOICE`): the audit says so ...
MIN_SELECTION = MIN_EARLY_CHOICE
#: ... and advises a ``samples`` with at least this many (the size below which an audit has a single
#: look, :data:`audit.allocation.MIN_LOOKED`).
ADVISED_SELECTION = MIN_LOOKED
#: The largest ``samples`` the search for a sufficient one tries.
_LARGEST = 1 << 50


class SampleSizeWarning(UserWarning):
    """``samples`` cannot refute the claim whatever is drawn, or the run will take long."""


def best_case_bound(stage: Any) -> tuple[Any, float, int]:
    """The largest value of the claim's own headline quantity that ``stage`` (the main audit,
    :class:`audit.stages.Stage`) could certify: (slot, bound, certification draws per side)."""
    allocation, budget = stage.allocation, stage.budget
    slot = budget.headline_slots[0]
    n = allocation.early_certification if allocation.early_choice else allocation.certification
    chosen = budget.favouring(slot) if allocation.early_choice else budget
    level = JOINT_FACTOR * chosen.headline_level_of(slot)
    return slot, float(JointTest(slot, n, 0, n, level).lower_bound()), n


def unrefutable_message(samples: int, stage: Any, claim: Any, confidence: float,
                        plan: Callable[[int], Any]) -> Optional[str]:
    """The warning for an absurdly small ``samples``, or None: one whose best case cannot refute
    ``claim`` at all, or one that leaves fewer than :data:`MIN_SELECTION` selection draws per side
    to choose events on (events chosen by chance: bounds are then 0 for most mechanisms).  The
    message gives the largest bound the draws could ever certify and the smallest ``samples`` (by
    doubling) whose best case refutes the claim with at least :data:`ADVISED_SELECTION` selection
    draws per side.

    ``plan(samples)`` gives the main stage of an audit of ``samples``, as for this one.
    """
    if stage.allocation.certification > _CHECKED_UP_TO:
        return None
    slot, bound, n = best_case_bound(stage)
    allowed = slot.allowed_by(claim)
    if allowed is None or not math.isfinite(allowed):
        return None
    refutable = bound > allowed
    chosen_on = stage.allocation.selection
    if refutable and chosen_on >= MIN_SELECTION:
        return None
    needed, advice = samples, None
    while needed < _LARGEST:
        needed *= 2
        try:
            bigger = plan(needed)
        except ValueError:
            continue
        if bigger.allocation.certification > _CHECKED_UP_TO:
            advice = f"more than {needed // 2:,} samples would be needed"
            break
        if best_case_bound(bigger)[1] > allowed and bigger.allocation.selection >= ADVISED_SELECTION:
            advice = f"use at least {needed:,} samples"
            break
    if advice is None:
        return None
    best = (f"even perfectly separated outputs would certify at most {slot.label} ≥ {bound:.3g} at "
            f"confidence {confidence:g} (the claim allows {allowed:.4g})")
    if not refutable:
        return (f"`samples`={samples:,} cannot refute this claim whatever the mechanism does: with {n:,} "
                f"certification draws per side, {best}, so every verdict will be NOT_REFUTED: "
                f"{advice} to give the audit a chance")
    return (f"`samples`={samples:,} leaves {chosen_on:,} selection draw(s) per side to choose events on and "
            f"{n:,} to certify them: {best}, and for most mechanisms every bound will be 0: "
            f"{advice} for bounds that mean something")


def duration_message(mechanism: Any, name: str, dataset: Any, output_dim: int, samples: int, pairs: int,
                     n_jobs: int, entropy: int) -> Optional[str]:
    """The warning for a run whose draws alone are estimated to take longer than
    :data:`LONG_RUN_SECONDS`, or None; times one chunk of draws on ``dataset``."""
    total = 2 * pairs * samples
    if total < LONG_RUN_DRAWS:
        return None
    size = chunk_size_for(output_dim)
    started = time.perf_counter()
    draw_outputs(mechanism, dataset, size, chunk_rng(entropy, 0, 0, Phase.PROBE, 1),
                 "timing one chunk before a long run", name, output_dim)
    per_draw = (time.perf_counter() - started) / size
    workers = (os.cpu_count() or 1) if n_jobs == -1 else max(1, n_jobs)
    seconds = total * per_draw / workers
    if seconds < LONG_RUN_SECONDS:
        return None
    return (f"`samples`={samples:,} means {total:,} draws of mechanism {name!r} ({pairs} pair(s), 2 sides): "
            f"about {_duration(seconds)} of drawing alone on {workers} worker(s), timed on one chunk of "
            f"{size:,} draws ({1.0 / per_draw:,.0f} draws/s); early stopping ends sooner on a clear violation. "
            "Interrupt and lower `samples`, or keep it and let a checkpoint (`checkpoint=`, or `dpaudit run`'s "
            "own) make the run resumable")


def _duration(seconds: float) -> str:
    if seconds >= 2 * 86_400:
        return f"{seconds / 86_400:,.0f} days"
    if seconds >= 7_200:
        return f"{seconds / 3_600:.0f} hours"
    return f"{seconds / 60:.0f} minutes"

