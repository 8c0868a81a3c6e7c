"""Standalone reproduction scripts for the VIOLATED rows of a sweep.

A library's maintainer should be able to see a finding with nothing but the library: the script
written for a VIOLATED row imports the library and numpy only, defines the row's ``release``
function exactly as the catalogue audited it (its source, via :func:`inspect.getsource`), the two
neighbouring datasets of the witness pair, and one *readable* event on the released vector, then
releases N times on each dataset and prints how often the event happens on each, next to what the
claim allows (P[E | D′] ≤ e^ε·P[E | D] + δ).

**Which event.**  The audit certifies an event of its test statistic, which may be a learned score
that plain numpy cannot restate.  The script's event is chosen by :func:`readable_event` among
simple events of the released vector — one coordinate above or below a threshold, or equal to a
value — on fresh draws of the witness pair (seeded apart from the audit's), as the one that
exceeds the claim's allowance by the most after a pessimistic correction.  The script's own draws
are fresh again, so what it prints is an honest estimate, not a certified bound; the certified
numbers are the sweep report's.
"""

from __future__ import annotations

import inspect
import math
import textwrap
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

__all__ = ["Event", "readable_event", "script_text", "REPRO_DRAWS", "SCRIPT_DRAWS"]

#: Fresh draws per side for choosing the script's event, by cost of one release.
REPRO_DRAWS = {"batch": 20_000, "call": 4_000, "query": 1_000, "fit": 300}
#: At most this many releases per side in a script, by cost (a script should run in seconds).
SCRIPT_DRAWS = {"batch": 200_000, "call": 20_000, "query": 5_000, "fit": 2_000}
_MAX_THRESHOLDS = 64
_MAX_ATOMS = 16


@dataclass(frozen=True)
class Event:
    """``output[index] <op> value`` with ``op`` in ``>=``, ``<=``, ``==``; more likely under
    ``more_likely`` (``"D"`` or ``"D'"``); ``p_base``/``p_neighbour`` are its frequencies on the
    choosing draws and ``excess`` the estimated P[E | more likely] − e^ε·P[E | other] − δ."""

    index: int
    op: str
    value: float
    more_likely: str
    p_base: float
    p_neighbour: float
    excess: float

    def code(self) -> str:
        return f"output[{self.index}] {self.op} {self.value!r}"


def _candidates(column: np.ndarray) -> list[tuple[str, float]]:
    values, counts = np.unique(column, return_counts=True)
    found: list[tuple[str, float]] = []
    if values.size <= _MAX_ATOMS:
        found += [("==", float(v)) for v in values]
    if values.size > 1:
        qs = np.unique(np.quantile(column, np.linspace(0.0, 1.0, _MAX_THRESHOLDS + 1)))
        found += [(op, float(q)) for q in qs for op in (">=", "<=")]
    return found


def _holds(column: np.ndarray, op: str, value: float) -> np.ndarray:
    if op == "==":
        return column == value
    return column >= value if op == ">=" else column <= value


def readable_event(base: np.ndarray, neighbour: np.ndarray, epsilon: float, delta: float) -> Optional[Event]:
    """The simple event of the module docstring on draws ``base`` (n, k) and ``neighbour`` (n, k).

    Each candidate's frequencies are moved one binomial standard deviation against it before
    scoring, so an event resting on a handful of draws does not win by luck; returns None when
    no candidate exceeds the claim's allowance even before that correction.
    """
    n0, n1 = base.shape[0], neighbour.shape[0]
    pooled = np.concatenate([base, neighbour])
    best, best_score = None, -math.inf
    ratio = math.exp(min(epsilon, 700.0))
    for index in range(pooled.shape[1]):
        if np.all(pooled[:, index] == pooled[0, index]):
            continue
        for op, value in _candidates(pooled[:, index]):
            p0 = float(_holds(base[:, index], op, value).mean())
            p1 = float(_holds(neighbour[:, index], op, value).mean())
            for more, (hi, lo, n_hi, n_lo) in (("D'", (p1, p0, n1, n0)), ("D", (p0, p1, n0, n1))):
                raw = hi - ratio * lo - delta
                if raw <= 0:
                    continue
                score = (hi - math.sqrt(hi * (1 - hi) / n_hi + 1 / n_hi ** 2)) - \
                    ratio * (lo + math.sqrt(lo * (1 - lo) / n_lo + 1 / n_lo ** 2)) - delta
                if score > best_score:
                    best_score = score
                    best = Event(index, op, value, more, p0, p1, raw)
    return best


def script_draws(event: Event, cost: str) -> int:
    """Releases per side for the script: enough for the excess to stand out (about four standard
    deviations of the difference of two frequencies), within :data:`SCRIPT_DRAWS`."""
    need = 16.0 / max(event.excess, 1e-9) ** 2
    return int(min(SCRIPT_DRAWS[cost], max(200, math.ceil(need))))


def _literal(array: np.ndarray) -> str:
    """``np.array([...])`` source that gives back ``array`` exactly (float reprs round-trip)."""
    text = repr(np.asarray(array, dtype=np.float64).tolist()).replace("nan", "np.nan").replace("inf", "np.inf")
    return f"np.array({text})"


def script_text(*, header: str, helpers: Sequence[Any], release: Any, params: dict, base: np.ndarray,
                neighbour: np.ndarray, pair_label: str, event: Event, draws: int, epsilon: float, delta: float,
                title: str, finding: str, seeded: bool, layout: str, width: int) -> str:
    """The reproduction script (see the module docstring); ``width`` is the length of the vector
    ``release`` returns (the sweep's output adds a last entry, 1.0 when the call raised)."""
    sources = "\n\n".join(textwrap.dedent(inspect.getsource(fn)) for fn in (*helpers, release))
    state = "np.random.RandomState(2026)" if seeded else "None  # the library draws from its own generator"
    doc = "\n".join(textwrap.wrap(finding, 96))
    hi, lo = ("D_PRIME", "D") if event.more_likely == "D'" else ("D", "D_PRIME")
    return f'''"""{title}

{doc}

This script uses the library's own API and numpy only.  It releases N times on each of two
neighbouring datasets and prints how often one event of the released vector happens on each.
{layout}
Event: {event.code()}  (chosen by the sweep on draws of its own; these draws are fresh).
"""
{header.rstrip()}


{sources}


release = {release.__name__}
PARAMS = {params!r}
D = {_literal(base)}
D_PRIME = {_literal(neighbour)}  # {pair_label}
N = {draws}
EPSILON, DELTA = {epsilon!r}, {delta!r}  # the library's claim, at its reference delta


def draw(data, random_state):
    """One release as the sweep saw it: the released vector and a last entry, 1.0 if the call raised."""
    try:
        return np.append(np.asarray(release(data, random_state, **PARAMS), dtype=float), 0.0)
    except Exception:  # the library refusing an input is an output too
        return np.append(np.zeros({width}), 1.0)


def event(output):
    return bool({event.code()})


if __name__ == "__main__":
    random_state = {state}
    hits = {{name: sum(event(draw(data, random_state)) for _ in range(N)) for name, data in (("D", D), ("D_PRIME", D_PRIME))}}
    p, q = hits["{hi}"] / N, hits["{lo}"] / N
    print(f"P[event | {hi}] = {{p:.4f}}  ({{hits['{hi}']}} of {{N}} releases)")
    print(f"P[event | {lo}] = {{q:.4f}}  ({{hits['{lo}']}} of {{N}} releases)")
    allowed = min(1.0, float(np.exp(EPSILON)) * q + DELTA)
    print(f"the claim allows P[event | {hi}] <= e^eps * {{q:.4f}} + delta = {{allowed:.4f}}: "
          + ("exceeded" if p > allowed else "not exceeded on these draws"))
'''
