"""Minimal reproduction: PipelineDP's Gaussian SUM tells a partition sum of 0 from 1 by the released double's grain.

pipeline_dp and numpy only (scipy, a dependency of pipeline_dp, for the confidence bounds).

D holds one privacy unit with value 0.0 in the public partition "a"; D_PRIME adds a second unit with
value 1.0.  With NaiveBudgetAccountant(total_epsilon=1, total_delta=1e-5), Metrics.SUM,
NoiseKind.GAUSSIAN, bounds [0, 1] and one contribution per unit, the partition's clamped sum is 0 on D
and 1 on D_PRIME, and (1, 1e-5)-DP requires P[E | D] <= e * P[E | D_PRIME] + 1e-5 for every event E.

E: the released sum is an odd multiple of 2**-54 (its grain, the exponent of the largest power of
two dividing it, is -54).  PyDP's Gaussian noise at this scale (sigma = 3.73) is k * 2**-54 for a
64-bit integer k, converted to a double before it is added: every released value on D_PRIME is a
multiple of 2**-53, while on D a release with |noise| < 0.5 and k odd is an odd multiple of 2**-54.
"""
import math
import sys

import numpy as np
import pipeline_dp
from scipy import stats

EPSILON, DELTA = 1.0, 1e-5
N = int(sys.argv[1]) if len(sys.argv) > 1 else 3000  # releases per dataset
D = [(0, "a", 0.0)]
D_PRIME = D + [(1, "a", 1.0)]


def release(records):
    """One DP sum of partition "a" (public partitions) with a fresh accountant of (EPSILON, DELTA)."""
    budget = pipeline_dp.NaiveBudgetAccountant(total_epsilon=EPSILON, total_delta=DELTA)
    engine = pipeline_dp.DPEngine(budget, pipeline_dp.LocalBackend())
    params = pipeline_dp.AggregateParams(metrics=[pipeline_dp.Metrics.SUM], noise_kind=pipeline_dp.NoiseKind.GAUSSIAN,
                                         max_partitions_contributed=1, max_contributions_per_partition=1,
                                         min_value=0.0, max_value=1.0)
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: r[1],
                                            value_extractor=lambda r: r[2])
    result = engine.aggregate(records, params, extractors, public_partitions=["a"])
    budget.compute_budgets()
    (_, metrics), = list(result)
    return float(metrics.sum)


def grain(value):
    """The exponent g of the largest power of two dividing the double ``value`` (value != 0, finite)."""
    mantissa, exponent = math.frexp(value)
    significand = int(abs(mantissa) * 2 ** 53)
    return exponent - 53 + (significand & -significand).bit_length() - 1


if __name__ == "__main__":
    print(f"pipeline_dp {getattr(pipeline_dp, '__version__', '?')}, {N} releases per dataset")
    hits = {}
    for name, data in (("D", D), ("D_PRIME", D_PRIME)):
        grains = [grain(release(data)) for _ in range(N)]
        hits[name] = sum(g == -54 for g in grains)
        print(f"{name}: grain -54 on {hits[name]} of {N} releases; finest grain seen {min(grains)}")
    p, q = hits["D"] / N, hits["D_PRIME"] / N
    print(f"P[E | D] = {p:.4f}, P[E | D_PRIME] = {q:.4f}; the claim allows P[E | D] <= e^1 * {q:.4f} + 1e-5 = "
          f"{math.e * q + DELTA:.4f}: " + ("exceeded" if p > math.e * q + DELTA else "not exceeded"))
    # Clopper-Pearson, 97.5% each (95% jointly): a lower bound on P[E | D], an upper bound on P[E | D_PRIME].
    p_lo = stats.beta.ppf(0.025, hits["D"], N - hits["D"] + 1) if hits["D"] else 0.0
    q_hi = stats.beta.ppf(0.975, hits["D_PRIME"] + 1, N - hits["D_PRIME"]) if hits["D_PRIME"] < N else 1.0
    print(f"at 95%: P[E | D] >= {p_lo:.4f}, P[E | D_PRIME] <= {q_hi:.5f}, so delta(epsilon=1) >= "
          f"{p_lo - math.e * q_hi:.4f} against the claimed 1e-5")
