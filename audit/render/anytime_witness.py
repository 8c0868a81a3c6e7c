"""The witness of an anytime audit in words: the rounds, their bets, the e-value and the bound.

An anytime audit (:mod:`audit.anytime`) does not certify through one event counted on fresh draws.
Each round bets on one event, chosen with its bet from the draws before it; the round's counts give
an e-value factor, and the product of the factors is a test supermartingale under the claim.  The
claim is refuted when that e-value passes 1/level (Ville's inequality: a claim that holds reaches it
with probability at most the level, at any time) and the confidence sequence's lower bound at the
stopping time exceeds what the claim allows (:mod:`audit.sequential`).  So the witness shows:

- the test: how many rounds, how many draws per side, that each round was chosen before it was drawn;
- the rounds (the first two and the last four of a long audit), each with its event, its counts on
  both sides, its bet and its e-value factor at what the claim allows;
- the e-value, against 1/level;
- the certified value at the stopping time, against what the claim allows.

:func:`anytime_parts` builds these from the report's ``witness`` section
(:func:`audit.witness.anytime_witness_record`) and its evidence; for a report written before that
section, :func:`anytime_record` rebuilds it from the evidence, which holds every round's counts and bet.
"""

from __future__ import annotations

import math
from typing import Optional

from ..sequential import Bet, Family, log_evalue
from ..slots import Quantity, Slot
from .numbers import format_number

__all__ = ["anytime_parts", "anytime_record", "round_lines"]

#: A long audit's rounds shown in the summaries: the first and the last ones.
_FIRST, _LAST = 2, 4


def _label(key: str) -> str:
    try:
        return Slot.parse(key).label
    except (TypeError, ValueError):
        return str(key)


def _exp(log_value: Optional[float]) -> str:
    """e^``log_value`` to 4 significant digits (as a power of e where a float would overflow)."""
    if log_value is None:
        return "unknown"
    if log_value > 700.0:
        return f"e^{log_value:.4g}"
    return format_number(math.exp(log_value))


def _sides(event: dict) -> tuple[str, str]:
    return ("D′", "D") if event.get("more_likely_under") == "neighbour" else ("D", "D′")


def _rounds(report: dict, record: dict) -> list[dict]:
    """The leading pair's rounds of the record's quantity, each as a dict of text cells."""
    rows = [e for e in report.get("evidence") or []
            if e.get("family") == "anytime" and e.get("slot") == record["slot"] and e.get("pair") == record["pair"]]
    factors = record.get("round_log_evalues") or []
    out = []
    for position, event in enumerate(rows):
        more, other = _sides(event)
        n = int(event["n"])
        factor = factors[position] if position < len(factors) else None
        out.append({"round": str(event.get("round", position + 1)), "event": str(event.get("event")),
                    "more_likely": more,
                    "counts": f"{int(event['count_more_likely']):,} of {n:,} on {more} and "
                              f"{int(event['count_other']):,} of {n:,} on {other}",
                    "bet": format_number(event.get("bet"), 3),
                    "factor": "1 (no bet)" if not event.get("bet") else _exp(factor) if factor is not None else "—"})
    return out


def round_lines(rounds: list[dict]) -> list[str]:
    """The rounds in words, the first :data:`_FIRST` and last :data:`_LAST` of a long audit."""
    def line(row: dict) -> str:
        return (f"round {row['round']}: {row['event']}, more likely on {row['more_likely']}: {row['counts']}; "
                f"bet {row['bet']}, e-value factor {row['factor']}")
    if len(rows := rounds) <= _FIRST + _LAST + 1:
        return [line(row) for row in rows]
    hidden = len(rows) - _FIRST - _LAST
    return ([line(row) for row in rows[:_FIRST]] + [f"… {hidden} rounds more (every round is in the evidence)"]
            + [line(row) for row in rows[-_LAST:]])


def anytime_parts(report: dict, record: dict, refuting: bool) -> dict:
    """The anytime-specific parts of the witness of ``record`` (a quantity's entry of the report's
    ``witness`` section): ``test``, ``rounds`` (cells), ``round_lines``, ``evalue`` and ``certifies``."""
    label = _label(record["slot"])
    rounds = _rounds(report, record)
    count, n = int(record["rounds"]), int(record["n"])
    each = " of each pair" if int(record.get("pairs") or 1) > 1 else ""
    test = (f"anytime: bets on {count} round{'s' if count != 1 else ''} of events ({n:,} draws per side{each}), "
            "each round's event and bet chosen from the draws before it")
    evalue = None
    if record.get("log_evalue") is not None:
        pairs = int(record.get("pairs") or 1)
        source = ("the product of the rounds' factors" if pairs == 1 else
                  f"the mean of the {pairs} pairs' e-processes; that of pair {record['pair']!r}, the product of the "
                  f"rounds' factors above, is {_exp(record.get('pair_log_evalue'))}")
        evalue = (f"e-value {_exp(record['log_evalue'])} against the claim's {label} ≤ "
                  f"{format_number(record['allowed'])} ({source}), "
                  + ("above" if record["log_evalue"] >= record["threshold"] else "below")
                  + f" 1/level = {format_number(1.0 / record['level'])}: a claim that holds reaches 1/level "
                  f"with probability ≤ {format_number(record['level'], 3)} at any time (Ville's inequality)")
    certifies = (f"{label} ≥ {format_number(record['bound'])} at the stopping time, after {count} rounds (a "
                 "lower bound valid at any stopping time, failure probability ≤ "
                 f"{format_number(record['level'], 3)})")
    if record.get("allowed") is not None:
        certifies += (f", above the {format_number(record['allowed'])} the claim allows" if refuting
                      else f"; the claim allows at most {format_number(record['allowed'])}")
    return {"test": test, "rounds": rounds, "round_lines": round_lines(rounds), "evalue": evalue,
            "certifies": certifies}


_FAMILIES = {Quantity.EPSILON: Family.EPSILON, Quantity.DELTA: Family.DELTA, Quantity.MU: Family.MU}


def anytime_record(report: dict) -> Optional[dict]:
    """The witness record of an anytime report without a ``witness`` section, from its evidence:
    the first violation's quantity (else the headline one: μ for a μ-GDP claim, else ε at the
    claim's δ), its pairs' e-values at what the claim allows, recomputed from the rounds' counts and
    bets (:func:`audit.sequential.log_evalue`), and the report's bound.  None when the evidence
    holds no round of that quantity."""
    evidence = [e for e in report.get("evidence") or [] if e.get("family") == "anytime"]
    violation = next(iter(report.get("violations") or []), None)
    claim = report.get("claim") or {}
    if violation is not None:
        key, allowed, bound = str(violation["slot"]), float(violation["claimed"]), float(violation["bound"])
    elif claim.get("type") == "gdp":
        key, allowed, bound = "mu", float(claim["mu"]), float(report["mu_lower_bound"])
    else:
        key = Slot.epsilon_at(float(report["reference_delta"])).key
        allowed, bound = float(report["reference_epsilon"]), float(report["epsilon_lower_bound"])
    rows = [e for e in evidence if e.get("slot") == key]
    if not rows:
        return None
    slot = Slot.parse(key)
    family, at = _FAMILIES[slot.quantity], 0.0 if slot.at is None else float(slot.at)
    per_pair: dict = {}
    for row in rows:
        per_pair.setdefault(row["pair"], []).append(Bet(int(row["count_more_likely"]), int(row["count_other"]),
                                                        int(row["n"]), float(row["bet"]),
                                                        float(row.get("tangent_epsilon", 0.0))))
    wealth = {pair: log_evalue(family, at, bets, allowed) for pair, bets in per_pair.items()}
    leader = violation["pair"] if violation is not None and violation["pair"] in wealth else max(wealth, key=wealth.get)
    top = max(wealth.values())
    mean = top + math.log(sum(math.exp(w - top) for w in wealth.values()) / len(wealth))
    level = float(rows[0]["level"])
    return {"evidence": max(i for i, e in enumerate(report["evidence"]) if e.get("slot") == key
                            and e.get("pair") == leader),
            "bound": bound, "test": "anytime", "slot": key, "pair": leader, "allowed": allowed, "level": level,
            "threshold": math.log(1.0 / level), "log_evalue": mean, "pair_log_evalue": wealth[leader],
            "round_log_evalues": [log_evalue(family, at, [bet], allowed) for bet in per_pair[leader]],
            "rounds": len(per_pair[leader]), "n": sum(bet.m for bet in per_pair[leader]), "pairs": len(wealth)}
