"""The tie-breaker within a step (audit/statistics/adaptive.py, TieBreaker) against a second route:
its former formula, which evaluated every branch for every value with nested ``np.where``.  Computing
the end steps' exponentials only where a distance is infinite must not move a single bit, on values
chosen to break it: NaN, ±inf, values on the edges, no edges, edges and values near ±1.8e308 where
``values - left`` overflows, subnormal and infinite scales, and 0-d inputs.  Deterministic: every
input must agree exactly, whichever inputs the seed gives."""

import numpy as np
import pytest

from audit.statistics.adaptive import TieBreaker

BIG = np.finfo(np.float64).max
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308, 5e-324, -5e-324, BIG, -BIG])


def _former(tie: TieBreaker, values, edges, step) -> np.ndarray:
    left = np.concatenate([[-np.inf], edges])[step]
    right = np.concatenate([edges, [np.inf]])[step]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore", under="ignore"):
        from_left = np.where(np.isfinite(left), values - left, np.inf)
        from_right = np.where(np.isfinite(right), right - values, np.inf)
        up = np.where(np.isfinite(from_left) & np.isfinite(from_right),
                      from_left / (from_left + from_right),
                      np.where(np.isfinite(from_left), 1.0 - np.exp(-from_left / tie.scale),
                               np.exp(-from_right / tie.scale)))
    position = np.where(tie.rising[step] > 0, up, 1.0 - up)
    return tie.eta * np.clip(np.nan_to_num(position, nan=0.5), 0.0, 0.999)


def _case(rng):
    k = int(rng.integers(0, 6))
    edges = np.sort([rng.normal(size=k), rng.choice([-BIG, -1e308, -1.0, 0.0, 1.0, 1e308, BIG], size=k),
                     rng.normal(size=k) * 1e300][int(rng.integers(0, 3))])
    n = int(rng.integers(0, 40))
    values = rng.normal(size=n) * 10.0 ** int(rng.integers(0, 300))
    odd = rng.random(n) < 0.3
    values[odd] = rng.choice(np.concatenate([SPECIALS, edges]), size=int(odd.sum()))
    step = (np.searchsorted(edges, np.nan_to_num(values), side="right") if rng.random() < 0.7
            else rng.integers(0, k + 1, size=n))
    tie = TieBreaker(rng.choice([-1, 1], size=k + 1), float(rng.choice([1.0, 0.5, 1e-300, 1e300, 5e-324, np.inf])),
                     float(rng.choice([0.01, 1.0])))
    return tie, values, edges, step


def test_the_tie_breaker_is_bit_identical_to_its_former_formula_on_adversarial_inputs():
    rng = np.random.default_rng(20261128)
    for _ in range(2000):
        tie, values, edges, step = _case(rng)
        with np.errstate(all="ignore"):
            expected, got = _former(tie, values, edges, step), tie(values, edges, step)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        assert got.tobytes() == expected.tobytes(), (values, edges, step, tie)


@pytest.mark.parametrize("value, step", [(3.0, 2), (-3.0, 0), (0.5, 1), (np.nan, 2), (np.inf, 2)])
def test_a_0d_value_is_scored_in_every_step_as_before(value, step):
    tie, edges = TieBreaker(np.array([1, -1, 1]), 1.0, 0.1), np.array([0.0, 1.0])
    with np.errstate(all="ignore"):
        expected = _former(tie, np.float64(value), edges, np.int64(step))
        got = tie(np.float64(value), edges, np.int64(step))
    assert np.shape(got) == () and np.asarray(got).tobytes() == np.asarray(expected).tobytes()
