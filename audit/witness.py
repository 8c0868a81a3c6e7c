"""What a report records about its witness: which certified event gives each headline number.

Every bound of a report holds simultaneously with every other (:mod:`audit.selection`), so the
report's ε_lb is the *largest* certified lower bound on ε at the claim's δ over all its events: the
headline joint test of that slot (:mod:`audit.joint_bounds`) and every curve point (α_hi, β_hi)
(docs/ground-truth.md §3), whichever pair it belongs to.  A reader who sees "one event certifies
ε ≥ 1.31" next to a table saying ε_lb = 1.41 needs to know that both are valid and which event
gives the larger one; :func:`witness_record` says it, as indices into the report's ``evidence``:

- ``epsilon``, ``delta``, ``mu``: the event attaining ε_lb, δ_lb and μ_lb, with that bound;
- ``headline``: the quantity the claim's verdict turns on first (``"mu"`` for a μ-GDP claim,
  ``"epsilon"`` otherwise);
- ``refuting``: the event the first violation of the report rests on (a headline joint test that
  rejects the claim, else the certified point furthest below the claimed trade-off curve), or None.

An anytime audit (:mod:`audit.anytime`) certifies through e-processes, not single events: its
witness (:func:`anytime_witness_record`) records, per headline quantity, the e-process of the pair
that grew most: its rounds' e-value factors at what the claim allows, their product's logarithm
(the mean's over pairs, which is what is tested), the threshold log(1/level) of Ville's inequality and
the confidence sequence's lower bound at the stopping time (:mod:`audit.sequential`).

The renderers (:mod:`audit.render.witness`) turn these into words, with the pair's datasets and the
statistic the event is a threshold of.  This module also gives the readable text of a statistic
option (:func:`statistic_option_text`) and the mechanism's exact truth on the audited pairs where
it can tell (:func:`pair_truth`).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, Optional, Sequence

import numpy as np

from mechanisms.finite_pair import pair_epsilon as finite_pair_epsilon
from mechanisms.gdp import gdp_epsilon

from .sequential import log_evalue
from .slots import states_mu

__all__ = ["witness_record", "anytime_witness_record", "statistic_option_text", "event_text", "pair_truth",
           "WITNESS_QUANTITIES"]

#: The headline quantities whose attaining event a report records.
WITNESS_QUANTITIES = ("epsilon", "delta", "mu")
#: Numbers of a sequence shown in full in :func:`statistic_option_text`.
_SHOWN_NUMBERS = 4


def witness_record(values: dict, refutes: Sequence[bool], below: Sequence[bool],
                   margins: Sequence[float], claim: Any) -> dict:
    """The witness section of a report (see the module docstring).

    Parameters
    ----------
    values : dict
        ``{"epsilon": ε per certified event, "delta": ..., "mu": ...}``: each event's certified
        value of the quantity (0 where it certifies none), in the order of the report's evidence.
    refutes : sequence of bool
        Whether each event is a headline joint test that rejects the claim.
    below : sequence of bool
        Whether each event is a certified curve point below the claimed trade-off curve.
    margins : sequence of float
        β_hi minus the claimed β at α_hi of each event (the most negative is the clearest point
        violation).
    claim : Claim
    """
    record: dict = {"headline": "mu" if states_mu(claim) else "epsilon"}
    for quantity in WITNESS_QUANTITIES:
        column = np.asarray(values[quantity], dtype=np.float64)
        index = int(np.argmax(column)) if column.size else None
        record[quantity] = None if index is None else {"evidence": index, "bound": float(column[index])}
    refuting = None
    joint = [i for i, flag in enumerate(refutes) if flag]
    if joint:
        refuting = {"evidence": joint[0], "test": "joint"}
    else:
        points = [i for i, flag in enumerate(below) if flag]
        if points:
            refuting = {"evidence": min(points, key=lambda i: margins[i]), "test": "clopper-pearson"}
    record["refuting"] = refuting
    return record


def anytime_witness_record(quantities: Sequence[Any], evidence: Sequence[dict], labels: Sequence[str],
                           claim: Any) -> dict:
    """The witness section of an anytime report (see the module docstring).

    Parameters
    ----------
    quantities : sequence
        The audit's headline e-processes (``audit.anytime._Quantity``: ``slot``, ``family``, ``at``,
        ``level``, ``allowed``, ``testable``, per-pair ``bets`` and ``wealth``, ``log_wealth()`` and
        ``bound(pair=None)``).
    evidence : sequence of dict
        The report's evidence: one record per round, quantity and pair (``round``, ``slot``, ``pair``).
    labels : sequence of str
        The pairs' labels, in the order of each quantity's ``bets``.
    claim : Claim

    Returns
    -------
    dict
        ``{"mode": "anytime", "headline": ..., "epsilon"|"delta"|"mu": record or None, "refuting":
        the first quantity's record whose bound exceeds what the claim allows, or None}``.  A record
        holds ``evidence`` (the index of the leading pair's last round), ``bound`` (the lower bound
        at the stopping time, from the mean of the pairs' e-processes), ``slot``, ``pair``,
        ``allowed`` (None when the claim sets no finite value), ``level``, ``threshold`` = log(1/level),
        ``log_evalue`` (log of the mean e-process at ``allowed``; None without one),
        ``pair_log_evalue`` and ``round_log_evalues`` (the leading pair's, round by round),
        ``rounds``, ``n`` (betting draws per side of each pair) and ``pairs``.
    """
    record: dict = {"mode": "anytime", "headline": "mu" if states_mu(claim) else "epsilon"}
    for quantity in WITNESS_QUANTITIES:
        record[quantity] = None
    refuting = None
    for q in quantities:
        rounds = len(q.bets[0])
        if q.testable:
            leader = int(np.argmax(q.wealth))
        else:
            leader = int(np.argmax([q.bound(pair=k) for k in range(len(labels))])) if len(labels) > 1 else 0
        label = labels[leader]
        index = next((i for i in range(len(evidence) - 1, -1, -1)
                      if evidence[i].get("slot") == q.slot.key and evidence[i].get("pair") == label), None)
        steps = [log_evalue(q.family, q.at, [bet], q.allowed) for bet in q.bets[leader]] if q.testable else None
        entry = {"evidence": index, "bound": float(q.bound()), "test": "anytime", "slot": q.slot.key, "pair": label,
                 "allowed": float(q.allowed) if q.testable else None, "level": float(q.level),
                 "threshold": math.log(1.0 / q.level), "log_evalue": float(q.log_wealth()) if q.testable else None,
                 "pair_log_evalue": float(q.wealth[leader]) if q.testable else None,
                 "round_log_evalues": steps, "rounds": rounds, "n": int(sum(b.m for b in q.bets[leader])),
                 "pairs": len(labels)}
        record[q.slot.quantity.value] = entry
        if refuting is None and q.testable and entry["bound"] > q.allowed:
            refuting = entry
    record["refuting"] = refuting
    return record


def statistic_option_text(option: Any) -> str:
    """The statistic option for people: a name as it is; a callable by its name and, for a frozen
    dataclass (e.g. ``ProjectionSum``), its fields with long sequences shown by their length
    ("direction=<24 numbers>") and numbers to 4 significant digits."""
    if isinstance(option, str):
        return option
    label = getattr(option, "label", None)
    if isinstance(label, str) and not callable(option):
        return label
    if dataclasses.is_dataclass(option) and not isinstance(option, type):
        fields = ", ".join(f"{f.name}={_short(getattr(option, f.name))}" for f in dataclasses.fields(option)
                           if f.repr)
        return f"{type(option).__name__}({fields})"
    name = getattr(option, "__qualname__", None) or type(option).__qualname__
    return f"{name}"


def event_text(statistic: Any, threshold: float) -> str:
    """The event {T ≥ threshold} in the statistic's own terms (its ``describe``), a callable's named
    by :func:`statistic_option_text` rather than by its repr."""
    function = getattr(statistic, "function", None)
    if getattr(statistic, "kind", None) == "callable" and function is not None:
        return f"{statistic_option_text(function)}(output) >= {threshold:.9g}"
    return statistic.describe(threshold)


def _short(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, numbers.Real):
        return f"{float(value):.4g}" if not isinstance(value, numbers.Integral) else str(int(value))
    if isinstance(value, str):
        return repr(value)
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return type(value).__name__
    if array.ndim == 0:
        return f"{float(array):.4g}"
    if array.size <= _SHOWN_NUMBERS:
        return "(" + ", ".join(f"{v:.4g}" for v in array.ravel()) + ")"
    return f"<{array.size} numbers>"


def pair_truth(mechanism: Any, datasets: Sequence[tuple[Any, Any]], labels: Sequence[str],
               claim: Any) -> Optional[dict]:
    """The mechanism's exact ε at the claim's δ on each audited pair, where it can tell; None where
    it cannot for some pair.

    A report's "exact" values are over *all* neighbour pairs of the relation.  Whether more samples
    could refute a false claim depends on the pairs audited: on a pair where the claim holds,
    no number of samples refutes it.  A mechanism tells the truth of one pair through

    - ``pair_epsilon(D, D′)``: the exact pure ε between two inputs (used for a claim's δ = 0),
    - ``pair_mu(D, D′)``: the exact μ of a pair whose trade-off curve is G_μ (a Gaussian shift), whose
      ε(δ) is that of μ-GDP (Dong, Roth & Su 2022, Corollary 2.13), or
    - ``pair_distributions(D, D′)``: the exact output probabilities of both inputs on a common finite
      set of outcomes, whose ε(δ) :func:`mechanisms.finite_pair.pair_epsilon` computes (both orders).

    Returns ``{"delta": δ, "pairs": {label: ε}, "source": method name}`` or None.
    """
    delta = float(claim.reference_delta)
    values, source = {}, None
    for (base, neighbour), label in zip(datasets, labels):
        value, source = _one_pair(mechanism, base, neighbour, delta)
        if value is None:
            return None
        values[label] = value
    return {"delta": delta, "pairs": values, "source": source}


def _one_pair(mechanism: Any, base: Any, neighbour: Any, delta: float) -> tuple[Optional[float], Optional[str]]:
    pair_eps, distributions = getattr(mechanism, "pair_epsilon", None), getattr(mechanism, "pair_distributions", None)
    pair_mu = getattr(mechanism, "pair_mu", None)
    try:
        if delta == 0.0 and callable(pair_eps):
            return float(pair_eps(base, neighbour)), "pair_epsilon"
        if callable(pair_mu):
            mu = float(pair_mu(base, neighbour))
            if delta == 0.0:
                return (math.inf if mu > 0 else 0.0), "pair_mu"
            return float(gdp_epsilon(delta, mu)) if mu > 0 else 0.0, "pair_mu"
        if callable(distributions):
            p, q = (np.asarray(side, dtype=np.float64) for side in distributions(base, neighbour))
            with np.errstate(divide="ignore"):
                return float(finite_pair_epsilon(delta, np.log(p), np.log(q))), "pair_distributions"
    except (NotImplementedError, TypeError, ValueError):
        return None, None
    return None, None
