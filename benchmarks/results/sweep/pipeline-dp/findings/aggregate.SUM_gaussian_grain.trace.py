"""Trace of the Gaussian SUM's low-bits leak: PyDP's noise, an emulation of its arithmetic, the fix.

PipelineDP's SUM adds noise with ``pydp.algorithms.numerical_mechanisms.GaussianMechanism(eps, delta,
l2_sensitivity).add_noise(sum)``, which is Google's C++ ``GaussianMechanism::AddDoubleNoise``
(cc/algorithms/numerical-mechanisms.cc, differential-privacy at e59bbcf, the commit python-dp 1.1.5
builds):

    g = GetNextPowerOfTwo(2 * sigma / 2**57)          # the granularity; 2**-54 at sigma = 3.73
    k = SampleBinomial(2 * sigma / g)                 # an int64, |k| ~ sigma / g ~ 2**56
    sample = (double) k * g                           # k rounded to 53 bits: not a multiple of g
    return RoundToNearestMultiple(x, g) + sample      # a second rounding, to |result|'s ulp

A double below Z = 2**53 * g in magnitude can be any multiple of g; a larger one is a multiple of 2g
at least.  The noise is therefore an odd multiple of g only when |noise| < Z, and the result is one
only when |result| < Z too: possible when |x| < 2Z, impossible when |x| >= 2Z.  At sigma = 3.73, Z = 0.5:
a sum of 0 or 0.5 can be released as an odd multiple of 2**-54 (grain -54), a sum of 1 or 1.5 never.

This script measures the grain of the released double (1) through PyDP itself and (2) through a numpy
emulation of the arithmetic above (an integer Gaussian k of standard deviation sigma / g, converted to
a double, times g, plus x), and compares them with the probabilities predicted from the arithmetic
(the parity of k is uniform):

    P[grain -54 | x = 0]   = Phi(Z/sigma) - 1/2          P[grain -54 | x >= 2Z] = 0
    P[grain -54 | x = 0.5] = (Phi(Z/sigma) - 1/2) / 2
    P[grain -53 | x = 0.5] = (Phi(Z/sigma) - Phi(-2Z/sigma)) / 4
    P[grain -53 | x = 1.5] = (Phi(-Z/sigma) - Phi(-2Z/sigma)) / 4

(3) It emulates the suggested fix, a binomial bound of 2**47 instead of 2**57: g' = 2**-44 and
|k| < 2**53, so k * g' is exact and x + k * g' is the exact on-grid value rounded once, a
post-processing of the discrete mechanism the noise's proof covers.  Every released value of
magnitude below 2**53 * g' = 512 is then an odd multiple of g' with probability 1/2 whatever x is,
and never finer.

Run with python-dp installed (PipelineDP's dependency); N draws per value (default 200,000).
"""
import math
import sys

import numpy as np
from pydp.algorithms import numerical_mechanisms
from scipy import stats

N = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
EPSILON, DELTA, SENSITIVITY = 1.0, 1e-5, 1.0  # PipelineDP's SUM with bounds [0, 1], one contribution per unit


def grains(values):
    """The exponent of the largest power of two dividing each nonzero finite double."""
    mantissa, exponent = np.frexp(np.asarray(values, dtype=np.float64))
    significand = (np.abs(mantissa) * 2.0 ** 53).astype(np.uint64)
    lowest = significand & (~significand + np.uint64(1))
    return exponent - 53 + np.log2(lowest.astype(np.float64)).astype(np.int64)


def integer_gaussian(rng, scale, n):
    """Integers of standard deviation ``scale`` (~2**56) whose low bits are uniform, like the binomial's."""
    coarse = np.floor(rng.standard_normal(n) * scale / 1024.0).astype(np.int64)
    return coarse * 1024 + rng.integers(0, 1024, n)


if __name__ == "__main__":
    mechanism = numerical_mechanisms.GaussianMechanism(EPSILON, DELTA, SENSITIVITY)
    sigma = mechanism.std
    g = 2.0 ** math.ceil(math.log2(2 * sigma / 2 ** 57))
    z = 2.0 ** 53 * g
    print(f"sigma = {sigma!r}, granularity g = 2**{int(math.log2(g))}, Z = 2**53 * g = {z}")
    assert z == 0.5, "the predictions below are worked out for Z = 0.5"
    phi = stats.norm.cdf
    predicted = {(0.0, -54): phi(z / sigma) - 0.5, (1.0, -54): 0.0,
                 (0.5, -54): (phi(z / sigma) - 0.5) / 2, (1.5, -54): 0.0,
                 (0.5, -53): (phi(z / sigma) - phi(-2 * z / sigma)) / 4,
                 (1.5, -53): (phi(-z / sigma) - phi(-2 * z / sigma)) / 4}
    rng = np.random.default_rng(20261128)
    fixed_g = 2.0 ** math.ceil(math.log2(2 * sigma / 2 ** 47))
    print(f"{N} draws per value; z: (measured - predicted) / binomial standard deviation")
    print("x    grain  predicted  PyDP (z)           emulation (z)")
    fixes = []
    for x in (0.0, 1.0, 0.5, 1.5):
        pydp = grains([mechanism.add_noise(x) for _ in range(N)])
        emulated = grains(x + integer_gaussian(rng, sigma / g, N).astype(np.float64) * g)
        k = integer_gaussian(rng, sigma / fixed_g, N)
        assert np.abs(k).max() < 2 ** 53
        fixes.append((x, grains(x + k.astype(np.float64) * fixed_g)))
        for grain in (-54, -53):
            p = predicted.get((x, grain))
            if p is None:
                continue
            sd = math.sqrt(max(p * (1 - p), 1e-12) / N)
            a, b = ((values == grain).mean() for values in (pydp, emulated))
            print(f"{x:<4} {grain:<6} {p:.5f}    {a:.5f} ({(a - p) / sd:+5.1f})   {b:.5f} ({(b - p) / sd:+5.1f})")
    finest = int(math.log2(fixed_g))
    print(f"the fix emulated (binomial bound 2**47, granularity 2**{finest}): "
          f"P[grain {finest}] predicted 0.5 for every x, P[grain < {finest}] predicted 0")
    for x, values in fixes:
        share = (values == finest).mean()
        print(f"x = {x:<4} P[grain {finest}] = {share:.5f} ({(share - 0.5) / math.sqrt(0.25 / N):+5.1f})   "
              f"P[grain < {finest}] = {(values < finest).mean():.5f}")
