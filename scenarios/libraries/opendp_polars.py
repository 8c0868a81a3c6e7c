"""OpenDP's Polars front end in the OpenDP catalogue: ``make_private_lazyframe`` on a group-by query
whose keys are given explicitly, the case where a key absent from the data is released too.

The query groups records by a key column ``A`` and releases the noisy sum of ``B`` (bounded to
[0, 1], one record contributing to one key) for every key of a public key set, joined on the
right: a key with no record is an empty partition, whose sum (0) OpenDP imputes and noises like
any other.  The claim is the measurement's privacy map at d_in = 1 (symmetric distance, one record
added or removed), read as in :mod:`scenarios.libraries.opendp`.

A record is ``(key,)``; its ``B`` is 1.  The release is the vector of the keys' released sums in
key order, and one more coordinate: how many keys share their released value with another key.
Each key's noise is drawn on its own, so with continuous noise a tie has probability zero, whatever
the data; a tie count that moves with the data is noise shared across rows.  That is how OpenDP
0.11–0.12.1 imputed empty partitions: the fill value was one scalar expression, noised once and
broadcast to every missing key (opendp/opendp#2344, fixed by #2345 in 0.13.0, changelog *Privacy
Impacting*).  Then the keys without a record all release the same value, and which keys tie tells
which keys have a record: on the empty table all four keys tie, with one record in key 0 three do,
an event of probability 1 under one neighbour and 0 under the other, where the claim allows e^ε.

Releases before 0.11 and environments without ``polars`` report the entry "not in this release".

References
----------
The OpenDP Library, ``opendp.measurements.make_private_lazyframe`` and its Polars user guide
(grouping with explicit keys by a right join); opendp/opendp#2344 and pull request #2345.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from mechanisms.adapters._extra import require
from mechanisms.adapters.released import LibraryRelease
from mechanisms.claims import Relation

from .. import scenario as _scenario
from .catalogue import Case, Entry, NotInRelease, point_label

__all__ = ["lazyframe_entry", "group_by_sum", "release_frame"]

dp = require("opendp.prelude", library="opendp")
try:
    import polars as pl
except ImportError:  # the entry is then not in this release; the rest of the catalogue runs
    pl = None

OPENDP_2344 = ("opendp/opendp#2344 (a group-by with explicit keys filled every empty partition with one noisy "
               "value; fixed by #2345 in 0.13.0, changelog: Privacy Impacting)")


# -- builder and release (their source goes into reproduction scripts: names np, dp, pl, _CACHE) ----------
def group_by_sum(keys, scale, max_length):
    """``make_private_lazyframe`` of ``group_by(A).agg(dp.sum(B in [0, 1]))`` right-joined on the key
    set ``0..keys-1``, with Laplace noise of ``scale`` and at most ``max_length`` records a key.
    Builds the margin with whichever API the release has: ``Margin(max_length=)`` (0.15 on),
    ``Margin(max_partition_length=)`` (0.13, 0.14), ``with_margin(by=, ...)`` (0.11, 0.12)."""
    domain = dp.lazyframe_domain([dp.series_domain("A", dp.atom_domain(T=dp.u32)),
                                  dp.series_domain("B", dp.atom_domain(T=float))])
    if "by" in dp.with_margin.__code__.co_varnames:
        domain = dp.with_margin(domain, by=["A"], max_partition_length=max_length)
    else:
        try:
            domain = dp.with_margin(domain, dp.polars.Margin(by=["A"], max_length=max_length))
        except TypeError:
            domain = dp.with_margin(domain, dp.polars.Margin(by=["A"], max_partition_length=max_length))
    frame = pl.LazyFrame({"A": pl.Series([], dtype=pl.UInt32), "B": pl.Series([], dtype=pl.Float64)})
    public = pl.LazyFrame({"A": pl.Series(range(keys), dtype=pl.UInt32)})
    plan = (frame.group_by("A").agg(pl.col("B").fill_nan(0.0).fill_null(0.0).dp.sum((0.0, 1.0)))
            .join(public, on="A", how="right"))
    return dp.m.make_private_lazyframe(domain, dp.symmetric_distance(), dp.max_divergence(), plan,
                                       global_scale=scale)


def release_frame(data, random_state, *, keys, scale, max_length):
    """One release on the records ``data`` (a column of keys, each record's B = 1): the keys' noisy
    sums in key order, then how many keys share their released value with another key.  OpenDP
    draws from its own generator: ``random_state`` is unused."""
    key = ("group_by_sum", keys, scale, max_length)
    if key not in _CACHE:
        _CACHE[key] = group_by_sum(keys, scale, max_length)
    records = [int(v) for v in np.ravel(data)]
    frame = pl.LazyFrame({"A": pl.Series(records, dtype=pl.UInt32), "B": pl.Series([1.0] * len(records), dtype=pl.Float64)})
    out = _CACHE[key](frame).collect().sort("A")
    sums = [float(v) for v in out["B"]]
    _, counts = np.unique(sums, return_counts=True)
    return sums + [float(counts[counts > 1].sum())]


_CACHE: dict = {}


def lazyframe_entry(claim_of: Callable[[Any, Any, Relation], Any], missing: Callable[[Exception], None]) -> Entry:
    """The entry ``measurements.make_private_lazyframe``.  ``claim_of(meas, d_in, relation)`` reads a
    measurement's claim; ``missing(exc)`` raises :class:`NotInRelease` for an API the installed
    release lacks (and re-raises on the release the catalogue follows)."""
    def build(point: Mapping[str, Any]) -> Case:
        keys, scale, max_length = point["keys"], point["scale"], point["max_length"]
        if pl is None:
            raise NotInRelease("make_private_lazyframe: polars is not installed (pip install 'opendp[polars]')")
        try:
            meas = group_by_sum(keys, scale, max_length)
        except Exception as exc:  # noqa: BLE001 - an API, domain or plan this release lacks or refuses
            missing(exc)
            raise
        claim = claim_of(meas, 1, Relation.ADD_REMOVE)
        empty = np.zeros((0, 1))
        pairs = [(empty, np.array([[0.0]]), "empty table vs one record in key 0"),
                 (np.array([[0.0], [1.0]]), np.array([[0.0], [1.0], [2.0]]), "a record in a key without one"),
                 (np.array([[0.0], [1.0]]), np.array([[0.0], [1.0], [1.0]]), "a second record in key 1")]
        params = {"keys": keys, "scale": scale, "max_length": max_length}
        label = point_label(point)
        mechanism = LibraryRelease(release_frame, params, f"opendp.measurements.make_private_lazyframe({label})",
                                   claim, keys + 2, deterministic=False)
        layout = tuple((f"sum of key {k}", None) for k in range(keys)) + (("keys sharing their value", None),)
        return Case("measurements.make_private_lazyframe", label, dict(point, d_in=1), mechanism, claim,
                    _scenario.from_pairs(pairs, Relation.ADD_REMOVE), release_frame, params, "query",
                    statistic="coordinates", layout=layout, known=OPENDP_2344)

    return Entry("measurements.make_private_lazyframe", ("opendp.measurements.make_private_lazyframe",),
                 "measurement", "opendp.measurements.make_private_lazyframe: the privacy map at d_in = 1 (symmetric "
                 "distance) of a group-by sum in [0, 1] over explicit keys (a right join), as the installed release "
                 "computes it", Relation.ADD_REMOVE, ({"keys": 4, "scale": 1.0, "max_length": 2},), build)
