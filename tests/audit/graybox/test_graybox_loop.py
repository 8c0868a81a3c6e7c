"""The replay of a mechanism that calls a library's release once per output row (``LibraryRelease``
without a batch path), such as a synthetic-data generator whose one row is one fit.

Such a release may draw a batch whose leading dimension happens to equal the rows asked for (a
GAN's latent noise for a batch of 4 records, asked for 4 rows).  That batch is not one element per
row: scaling it by λ "on the second half of the rows" would scale it inside every fit, and the
replay on D would not reproduce the unscaled rows, so a replayable mechanism was reported as not
replayable.  Deterministic: the replay reproduces the record bit for bit whatever is drawn.
"""

from __future__ import annotations

import numpy as np

from audit.graybox import check_pair
from audit.graybox.audit import DEFAULT_ROWS
from audit.graybox.execute import LAMBDA, execute
from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import ApproxDP

#: Wide enough that the footprint's rows (2 × (elements + 3)) would exceed the most rows asked for,
#: so the rows stay at DEFAULT_ROWS, the batch's size.
WIDTH = 600


def fit(data, random_state, *, batch):
    """One "fit": a batch of ``batch`` × WIDTH Gaussian draws (as a GAN's latent noise), and the
    data's sum moved by their mean."""
    noise = random_state.normal(0.0, 1.0, (batch, WIDTH))
    return [float(np.sum(data)) + float(noise.mean())]


MECHANISM = LibraryRelease(fit, {"batch": DEFAULT_ROWS}, "toy.fit", ApproxDP(1.0, 1e-5), 2, deterministic=False)
BASE, NEIGHBOUR = np.zeros((3, 1)), np.vstack([np.zeros((3, 1)), np.ones((1, 1))])


def test_a_release_per_row_is_not_scaled_per_row_and_its_replay_on_d_reproduces_the_record():
    assert not MECHANISM.vectorized
    record, _ = execute(MECHANISM, BASE, DEFAULT_ROWS, seed=3)
    replay, diverged = execute(MECHANISM, BASE, DEFAULT_ROWS, seed=4, source=record)
    assert diverged is None and np.array_equal(replay.output, record.output)  # bit for bit
    # The check of the pair replays D with λ-scaled noise on half the rows; it must not scale the
    # batch inside every release (it raised "not replayable" when it did).
    check = check_pair(MECHANISM, BASE, NEIGHBOUR, MECHANISM.claim, label="add one", seed=3)
    assert check.rows == DEFAULT_ROWS and check.executions > 1
    # What the per-row scaling did to such a batch: the unscaled half no longer reproduced.
    scaled, _ = execute(MECHANISM, BASE, DEFAULT_ROWS, seed=5, source=record, lam=LAMBDA,
                        scaled_rows=slice(DEFAULT_ROWS // 2, DEFAULT_ROWS))
    assert not np.array_equal(scaled.output[: DEFAULT_ROWS // 2], record.output[: DEFAULT_ROWS // 2])


def test_a_vectorized_callable_is_a_release_per_row_too():
    """``vectorize`` calls the user's function once per row: its batch of DEFAULT_ROWS draws is not
    scaled per row either (the replay raised "not replayable" when it was)."""
    from mechanisms.adapters.vectorize import vectorize

    def one(data, seed):
        noise = np.random.default_rng(seed).normal(0.0, 1.0, (DEFAULT_ROWS, WIDTH))
        return float(np.sum(data)) + float(noise.mean())

    mechanism = vectorize(one, name="toy.fit", claim=ApproxDP(1.0, 1e-5), seed_keyword="seed")
    assert not mechanism.vectorized
    check = check_pair(mechanism, BASE, NEIGHBOUR, mechanism.claim, label="add one", seed=3)
    assert check.rows == DEFAULT_ROWS and check.executions > 1
