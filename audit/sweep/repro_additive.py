"""The additive statistic restated in numpy, for reproduction scripts.

An additive statistic (:mod:`audit.statistics.additive`) scores a released vector by a sum of
per-column log-ratio estimates, T(x) = Σ_j ĝ_j(x_j): each ĝ_j a step function of the value with a
small tie-breaker inside each step and exact scores for a few atoms.  No threshold on one
coordinate restates an event {T ≥ t} of it once several columns add up, or once a column's
log-ratio is not monotone (a mixture where only one dataset has a shifted component), so a
reproduction script carries the statistic itself: the tables the report stores
(:meth:`~audit.statistics.additive.AdditiveStatistic.to_dict`, ``"tables"``) and
:func:`additive_scores`, which evaluates them with numpy only, operation for operation as
:class:`~audit.statistics.additive.ColumnScore` and
:class:`~audit.statistics.adaptive.TieBreaker` do, so the script's T equals the audit's T
bit for bit.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterator

import numpy as np

from ..render.witness import pair_statistic

__all__ = ["CarriedScore", "additive_scores", "certified_scores", "certified_thresholds"]


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


@dataclass(frozen=True)
class CarriedScore:
    """A certified event {T ≥ ``threshold``} of an additive statistic, with the statistic's
    ``tables`` as JSON text (hashable, and written into the script as it stands), the side it is
    more likely under (``"D'"`` or ``"D"``) and the audit's certification counts of it,
    ``counts`` = (on that side, on the other, draws a side), or () when the report has none."""

    tables: str
    threshold: float
    more_likely: str = "D'"
    counts: tuple = ()

    def scores(self, outputs: np.ndarray) -> np.ndarray:
        return additive_scores(outputs, json.loads(self.tables))

    def holds(self, outputs: np.ndarray) -> np.ndarray:
        return self.scores(outputs) >= self.threshold


def certified_thresholds(report: dict, label: str, kind: str,
                         field: str) -> Iterator[tuple[dict, float, str, tuple]]:
    """Each certified threshold event of pair ``label`` in a report dict whose statistic (any of
    the pair's lanes, :mod:`audit.statistics.lanes`) is of ``kind`` and stores ``field``, as
    (that statistic's dict, the threshold, the side it is more likely under, ``"D'"`` or ``"D"``,
    the audit's certification counts (on that side, on the other, draws a side) or ()); evidence
    without a recorded threshold is skipped."""
    entry = pair_statistic(report, label)
    if entry is None:
        return
    lanes = [entry, *(entry.get("alternates") or [])]
    for item in report.get("evidence") or []:
        lane = int(item.get("lane") or 0)
        if item.get("pair") != label or item.get("threshold") is None or lane >= len(lanes):
            continue
        statistic = lanes[lane]
        if statistic.get("kind") != kind or not statistic.get(field):
            continue
        counts = ()
        if all(item.get(key) is not None for key in ("count_more_likely", "count_other", "n")):
            counts = (int(item["count_more_likely"]), int(item["count_other"]), int(item["n"]))
        more = "D" if item.get("more_likely_under") == "base" else "D'"
        yield statistic, float(item["threshold"]), more, counts


def certified_scores(report: dict, label: str) -> list[CarriedScore]:
    """Every certified event of pair ``label`` in a report dict that is a threshold of an additive
    statistic whose tables the report stores (:func:`certified_thresholds`)."""
    found = {CarriedScore(json.dumps(statistic["tables"]), threshold, more, counts): None
             for statistic, threshold, more, counts in certified_thresholds(report, label, "additive", "tables")}
    return list(found)
