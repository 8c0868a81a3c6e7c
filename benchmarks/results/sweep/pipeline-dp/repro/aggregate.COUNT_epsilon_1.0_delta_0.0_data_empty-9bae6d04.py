"""Reproduce: pipeline-dp aggregate.COUNT [epsilon=1.0, delta=0.0, data=empty]

The sweep of pipeline-dp 0.3.1 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for aggregate.COUNT
[epsilon=1.0, delta=0.0, data=empty], which claims 1-DP under add-remove: certified epsilon >=
4.051 at delta = 0, at confidence 0.998529 (the sweep's Bonferroni share). Witness pair: empty
vs one unit in a.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: released of a, COUNT of a, released of b, COUNT of b, released of c, COUNT of c; each block of capacity c is [size, leading dimension, non-finite count, c values].
output[0] is released of a.

Event: output[0] == 0.0  (chosen by the sweep on draws of its own; these draws are fresh).
How it was chosen: certain: on the sweep's choosing draws the lower confidence bound of its
excess over the claim is positive (at 95%, Bonferroni over every candidate event).
"""
import numpy as np
import pipeline_dp


def records(data):
    """The records ``(privacy_id, partition, value)`` of the units (rows) of ``data``."""
    out = []
    for unit, row in enumerate(np.asarray(data, dtype=float).reshape(-1, 6)):
        for k, v in zip(row[0::2], row[1::2]):
            if k >= 0:
                out.append((unit, "abc"[int(k)], float(v)))
    return out


def engine(epsilon, delta, accountant="naive"):
    """A DPEngine on the local backend with a fresh accountant of total (epsilon, delta)."""
    kind = pipeline_dp.NaiveBudgetAccountant if accountant == "naive" else pipeline_dp.PLDBudgetAccountant
    budget = kind(total_epsilon=epsilon, total_delta=delta)
    return pipeline_dp.DPEngine(budget, pipeline_dp.LocalBackend()), budget


def _metric(name):
    if name.startswith("PERCENTILE"):
        return pipeline_dp.Metrics.PERCENTILE(int(name[len("PERCENTILE("):-1]))
    return getattr(pipeline_dp.Metrics, name)


def aggregate(data, random_state, *, metrics, epsilon, delta, public=True, accountant="naive", noise_kind="LAPLACE",
              strategy=None, **params):
    """DPEngine.aggregate of ``metrics`` over the units' records; for each partition a, b, c: whether it
    is released, then each metric (public partitions a, b, c, or private partition selection)."""
    dp_engine, budget = engine(epsilon, delta, accountant)
    extra = {"partition_selection_strategy": getattr(pipeline_dp.PartitionSelectionStrategy, strategy)} if strategy else {}
    agg = pipeline_dp.AggregateParams(metrics=[_metric(m) for m in metrics],
                                      noise_kind=getattr(pipeline_dp.NoiseKind, noise_kind), **extra, **params)
    extractors = pipeline_dp.DataExtractors(privacy_id_extractor=lambda r: r[0], partition_extractor=lambda r: r[1],
                                            value_extractor=lambda r: r[2])
    result = dp_engine.aggregate(records(data), agg, extractors, public_partitions=list("abc") if public else None)
    budget.compute_budgets()
    found = dict(result)
    out = []
    for key in "abc":
        values = found.get(key)
        out.append(0.0 if values is None else 1.0)
        out += [0.0] * len(metrics) if values is None else [float(v) for v in values]
    return out



release = aggregate
PARAMS = {'max_partitions_contributed': 1, 'max_contributions_per_partition': 1, 'epsilon': 1.0, 'delta': 0.0, 'metrics': ['COUNT']}
D = np.array([])
D_PRIME = np.array([[0.0, 1.0, -1.0, 0.0, -1.0, 0.0]])  # empty vs one unit in a
N = 200
EPSILON, DELTA = 1.0, 0.0  # the library's claim, at its reference delta


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(6), 1.0)


def event(output):
    return bool(output[0] == 0.0)


if __name__ == "__main__":
    random_state = None  # the library draws from its own generator
    hits = {name: sum(event(draw(data, random_state)) for _ in range(N)) for name, data in (("D", D), ("D_PRIME", D_PRIME))}
    p, q = hits["D"] / N, hits["D_PRIME"] / N
    print(f"P[event | D] = {p:.4f}  ({hits['D']} of {N} releases)")
    print(f"P[event | D_PRIME] = {q:.4f}  ({hits['D_PRIME']} of {N} releases)")
    allowed = min(1.0, float(np.exp(EPSILON)) * q + DELTA)
    print(f"the claim allows P[event | D] <= e^eps * {q:.4f} + delta = {allowed:.4f}: "
          + ("exceeded" if p > allowed else "not exceeded on these draws"))
    print(f"excess over the claim: {p - allowed:+.4f}")
    # A point estimate on these draws: its standard error says how far from noise it is.  Each
    # frequency's variance is estimated with half a release added to its count, so that it is not 0
    # when every release or none is in the event.
    p_half, q_half = (hits["D"] + 0.5) / (N + 1), (hits["D_PRIME"] + 0.5) / (N + 1)
    error = float(np.sqrt(p_half * (1 - p_half) / N + float(np.exp(2 * EPSILON)) * q_half * (1 - q_half) / N))
    print(f"its standard error: {error:.4f} ({(p - allowed) / error:+.1f} standard errors)")
