"""What one record can change in a synthetic table of two categorical columns.

The synthetic-data catalogues (``synthcity``, ``smartnoise-synth``) release a table of rows (a, b)
and read it through the same statistics: the count of each cell of the public domain (hence of the
record and of its neighbours), the rows outside the domain (a category read from the data), the
one-way marginals, and each probe record's Hamming distance to the nearest synthetic row.

:func:`cell_statistics` is listed among a catalogue's ``helpers``: its source is copied into the
reproduction scripts, so it uses NumPy (``np``) only and takes the domain as an argument.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cell_statistics"]


def cell_statistics(table, probes, domain):
    """The counts of a table of rows (a, b) over the domain ``range(domain[0]) × range(domain[1])``.

    Returns ``(counts, distances)``: ``counts`` is the count of each cell (row-major), the rows
    outside the domain (not integers, out of range, NaN or inf), the marginals of a, then of b;
    ``distances`` holds each probe's Hamming distance to the nearest row (2 for an empty table).
    Vectorized over the rows: no Python loop per synthetic row.
    """
    rows = np.asarray(table, dtype=float).reshape(-1, 2)
    size = np.asarray(domain)
    inside = np.all((rows >= 0) & (rows < size) & (rows == np.floor(rows)), axis=1)
    cells = np.zeros(tuple(int(d) for d in domain))
    np.add.at(cells, tuple(rows[inside].astype(int).T), 1.0)
    outside = float(len(rows) - np.count_nonzero(inside))
    points = np.asarray(probes, dtype=float).reshape(-1, 2)
    if len(rows):
        distances = [float(d) for d in np.sum(rows[None, :, :] != points[:, None, :], axis=2).min(axis=1)]
    else:
        distances = [2.0] * len(points)
    return list(cells.ravel()) + [outside] + list(cells.sum(axis=1)) + list(cells.sum(axis=0)), distances
