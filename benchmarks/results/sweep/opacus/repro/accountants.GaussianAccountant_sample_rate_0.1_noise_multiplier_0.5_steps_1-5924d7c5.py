"""Reproduce: opacus accountants.GaussianAccountant [sample_rate=0.1, noise_multiplier=0.5, steps=1]

The sweep of opacus 1.6.0 (dpaudit 0.1.0, 2026-11-28) reported VIOLATED for
accountants.GaussianAccountant [sample_rate=0.1, noise_multiplier=0.5, steps=1], which claims
0.732108-GDP under add-remove: certified epsilon >= 2.1 at delta = 1e-05, at confidence 0.997222
(the sweep's Bonferroni share). Witness pair: empty vs one row with clipped gradient −C.

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.

The released vector holds, in order: step 1; each block of capacity c is [size, leading dimension, non-finite count, c values].
The event reads the whole vector through the audit's additive statistic (TABLES).

Event: the audit's statistic T, a sum of 1 per-column log-ratio estimates (TABLES and additive_scores below, exactly as the audit computed it), is at least 3.2034392423335714 (the audit's certified event itself)  (chosen by the sweep on draws of its own; these draws are fresh).
"""
import json
import contextlib
import inspect
import logging

import numpy as np
import torch
from opacus import PrivacyEngine
from opacus.utils.batch_memory_manager import BatchMemoryManager

logging.getLogger('opacus.data_loader').setLevel(logging.ERROR)  # empty Poisson batches


def subsampled_gaussian(data, random_state, *, noise_multiplier, sample_rate, steps):
    """The mechanism Opacus's accountants account for: T = ``steps`` releases of
    Σ_i B_i·g_i + σ·Z with B_i ~ Bernoulli(q) (Poisson sampling), g_i = 2x_i − 1 ∈ [−1, 1] a
    gradient clipped to C = 1, and Z ~ N(0, 1)."""
    g = 2.0 * np.ravel(data) - 1.0
    included = random_state.random_sample((steps, g.size)) < sample_rate
    return included @ g + noise_multiplier * random_state.standard_normal(steps)



release = subsampled_gaussian
PARAMS = {'noise_multiplier': 0.5, 'sample_rate': 0.1, 'steps': 1}
D = np.array([])
D_PRIME = np.array([[0.0]])  # empty vs one row with clipped gradient −C
N = 200000
EPSILON, DELTA = 3.0616050508632657, 1e-05  # the library's claim, at its reference delta


# The audit's additive statistic, one table per column of the released vector (JSON).
TABLES = json.loads('[{"column": 0, "edges": [-1.6874999999999998, -1.4999999999999998, -1.3281249999999998, -1.2031249999999998, -1.0312499999999998, -0.9687499999999999, -0.8046874999999999, -0.6171874999999999, -0.22656249999999997], "scores": [3.1834738978172847, 2.166274331295118, 1.5441050992017988, 1.2041118767133376, 0.8041287644181958, 0.5375669079230931, 0.29359285157224146, 0.13040426317002307, -0.02107496413413834, -0.10080195339933873], "rising": [-1, -1, -1, -1, -1, -1, -1, -1, -1, -1], "scale": 0.5266203703703703, "eta": 0.13328092824755133, "atom_values": [], "atom_scores": [], "atoms_in_pattern": false}]')


def additive_scores(outputs, tables):
    """T(x) = sum over the columns of the column's step score plus its tie-breaker, for each row of
    ``outputs`` (n, k); ``tables`` holds one dict per column: its index, the step edges and scores,
    the tie-breaker's direction per step, scale and height, and the atoms scored apart."""
    outputs = np.asarray(outputs, dtype=np.float64)
    total = np.zeros(outputs.shape[0])
    for table in tables:
        values = outputs[:, table["column"]]
        edges = np.asarray(table["edges"], dtype=np.float64)
        scores = np.asarray(table["scores"], dtype=np.float64)
        rising = np.asarray(table["rising"], dtype=np.int8)
        step = np.searchsorted(edges, values, side="right")
        left = np.concatenate([[-np.inf], edges])[step]
        right = np.concatenate([edges, [np.inf]])[step]
        with np.errstate(invalid="ignore", over="ignore"):
            from_left = np.where(np.isfinite(left), values - left, np.inf)
            from_right = np.where(np.isfinite(right), right - values, np.inf)
            up = np.where(np.isfinite(from_left) & np.isfinite(from_right),
                          from_left / (from_left + from_right),
                          np.where(np.isfinite(from_left), 1.0 - np.exp(-from_left / table["scale"]),
                                   np.exp(-from_right / table["scale"])))
        position = np.where(rising[step] > 0, up, 1.0 - up)
        column = scores[step] + table["eta"] * np.clip(np.nan_to_num(position, nan=0.5), 0.0, 0.999)
        atom_values = np.asarray(table["atom_values"], dtype=np.float64)
        if atom_values.size:
            atom_scores = np.asarray(table["atom_scores"], dtype=np.float64)
            at = np.minimum(np.searchsorted(atom_values, values), atom_values.size - 1)
            column = np.where(atom_values[at] == values, atom_scores[at], column)
        total += column
    return total


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros(1), 1.0)


def event(output):
    return bool(float(additive_scores(output[None, :], TABLES)[0]) >= 3.2034392423335714)


if __name__ == "__main__":
    random_state = np.random.RandomState(2026)
    hits = {name: sum(event(draw(data, random_state)) for _ in range(N)) for name, data in (("D", D), ("D_PRIME", D_PRIME))}
    p, q = hits["D_PRIME"] / N, hits["D"] / N
    print(f"P[event | D_PRIME] = {p:.4f}  ({hits['D_PRIME']} of {N} releases)")
    print(f"P[event | D] = {q:.4f}  ({hits['D']} of {N} releases)")
    allowed = min(1.0, float(np.exp(EPSILON)) * q + DELTA)
    print(f"the claim allows P[event | D_PRIME] <= e^eps * {q:.4f} + delta = {allowed:.4f}: "
          + ("exceeded" if p > allowed else "not exceeded on these draws"))
    print(f"excess over the claim: {p - allowed:+.4f}")
