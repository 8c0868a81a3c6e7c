"""The witness in words: which pair, which statistic, which event, and what its counts certify.

A reader of a report must be able to check a verdict without opening report.json: the worst pair as
data (the datasets when small, the row added, removed or replaced, the coordinates that differ), the
statistic the certified event is a threshold of and why ``"auto"`` chose it, and the event itself
with its counts on both datasets and the bound they certify.  :func:`witness_parts` gathers these
from a report's JSON form (its ``witness`` section, :mod:`audit.witness`, names the events; a report
written before that section existed falls back to its first violation or its headline event), and
:func:`witness_lines` writes them as the lines of the text and Markdown summaries; report.html lays
out the same parts.

Numbers are rounded for people (4 significant digits, counts with thousands separators, slots by
:attr:`audit.slots.Slot.label`); the event's own description keeps the statistic's exact threshold,
so that the event can be recounted.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ..slots import Slot
from .anytime_witness import anytime_parts, anytime_record
from .numbers import format_number

__all__ = ["witness_parts", "witness_lines", "pair_data_lines", "pair_data_text", "other_pair_lines",
           "statistic_lines", "slot_text", "number_list", "pair_statistic"]

#: Values of a dataset shown in full; larger datasets are described by their shape.
SMALL_DATASET = 60
#: Pairs besides the witness's shown as data in the summaries.
OTHER_PAIRS = 8
#: Entries of a long list of numbers (weights, scores) shown before "…".
_SHOWN = 4
#: Statistic fields that describe its structure (summarised), not notes about how it was chosen.
_STRUCTURE = frozenset({"kind", "weights", "atoms", "top_atoms", "bins", "edges", "scores", "projection",
                        "estimator", "features", "callable", "alternates", "atom_scores", "tables"})


def slot_text(key: str) -> str:
    """A slot key of a report (``"epsilon@0.08972126509288612"``) for people (``"ε at δ = 0.08972"``)."""
    try:
        return Slot.parse(key).label
    except (TypeError, ValueError):
        return str(key)


def number_list(values: Any, limit: int = SMALL_DATASET) -> Optional[str]:
    """Numbers (nested lists of rows) compactly, e.g. ``[2, 1, 2]`` or ``[[0, 1], [1, 1]]``; None when
    there are more than ``limit`` values."""
    array = np.asarray(values, dtype=np.float64)
    if array.size > limit:
        return None
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]

    def text(part: np.ndarray) -> str:
        if part.ndim == 0:
            return f"{float(part):g}"
        return "[" + ", ".join(text(item) for item in part) + "]"

    return text(array)


def _rows_word(count: int) -> str:
    return f"{count} row{'s' if count != 1 else ''}"


def pair_data_lines(report: dict, label: str) -> list[str]:
    """The pair ``label`` as data: both datasets when small, and what differs between them."""
    pair = next((p for p in (report.get("scenario") or {}).get("pairs") or [] if p.get("label") == label), None)
    if pair is None:
        return []
    lines = []
    for name, key, shape in (("D", "base", "base_shape"), ("D′", "neighbor", "neighbor_shape")):
        shown = number_list(pair[key]) if key in pair else None
        size = pair.get(shape) or []
        what = (f"{_rows_word(size[0])} of width {size[1]}" if len(size) == 2
                else f"{size[0]} values" if len(size) == 1 else "")
        lines.append(f"{name} = {shown} ({what})" if shown is not None else f"{name}: {what} (too large to show here)")
    removed, added = pair.get("removed"), pair.get("added")
    if removed is not None and added is not None:
        lines += _difference_lines(removed, added)
    elif "base" in pair and "neighbor" in pair:
        base, neighbour = np.asarray(pair["base"], dtype=float), np.asarray(pair["neighbor"], dtype=float)
        if base.shape == neighbour.shape and base.ndim == 1:
            changed = np.flatnonzero(base != neighbour)
            lines.append(f"D′ differs from D in {changed.size} of {base.size} coordinates"
                         + (f" ({', '.join(str(int(i)) for i in changed)}; counting from 0)" if changed.size <= 12 else ""))
    return lines


def _row_text(row: Any) -> str:
    """A row of D or D′: in full when short, else its width and first values."""
    shown = number_list(row)
    if shown is not None:
        return f"the row {shown}"
    values = np.asarray(row, dtype=np.float64).ravel()
    if values.size and (values == values[0]).all():
        return f"a row of {values.size} values (all {values[0]:g})"
    return f"a row of {values.size} values [" + ", ".join(f"{v:g}" for v in values[:_SHOWN]) + ", …]"


def _difference_lines(removed: list, added: list) -> list[str]:
    """What D′ changes in D: the rows replaced, added or removed; a wide row by its width, first
    values and, for a replacement, the coordinates where the new row differs."""
    rows = lambda items: ", ".join(_row_text(row) for row in items)  # noqa: E731
    if removed and added:
        if all(number_list(row) is not None for row in removed + added):
            return [f"D′ is D with {rows(removed)} replaced by {', '.join(number_list(r) or '' for r in added)}"]
        if len(removed) == len(added) == 1:
            old, new = (np.asarray(row, dtype=np.float64).ravel() for row in (removed[0], added[0]))
            text = f"D′ is D with {_row_text(removed[0])} replaced by {_row_text(added[0])}"
            if old.shape != new.shape:
                return [text]
            changed = np.flatnonzero(old != new)
            listed = f" ({', '.join(str(int(i)) for i in changed)}; counting from 0)" if changed.size <= 12 else ""
            return [text + f", which differs from it in {changed.size} of {old.size} coordinates{listed}"]
        return [f"D′ is D with {len(removed)} rows replaced by {len(added)} others "
                f"({rows(removed)}; by {rows(added)})"]
    if added:
        return [f"D′ is D plus {rows(added)}"]
    if removed:
        return [f"D′ is D minus {rows(removed)}"]
    return []


def pair_data_text(report: dict, label: str) -> str:
    """:func:`pair_data_lines` on one line (a table cell), "—" when the report holds no data."""
    return "; ".join(pair_data_lines(report, label)) or "—"


def other_pair_lines(report: dict, shown: Optional[str], limit: int = OTHER_PAIRS) -> list[str]:
    """The report's pairs other than ``shown`` (the witness's), each as data on one line: the
    pairs a table names (a search's "searched #3") are then readable without report.json."""
    pairs = [p for p in (report.get("scenario") or {}).get("pairs") or [] if p.get("label") != shown]
    lines = [f"{pair.get('label')!r}: {pair_data_text(report, str(pair.get('label')))}" for pair in pairs[:limit]]
    if len(pairs) > limit:
        lines.append(f"… and {len(pairs) - limit} more (report.json and report.html hold them all)")
    return lines


def _summarise(key: str, value: Any) -> str:
    """A structural field of a statistic in a few words."""
    if key == "weights" and value:
        weights = np.asarray(value, dtype=np.float64)
        top = np.argsort(-np.abs(weights), kind="stable")[:_SHOWN]
        return (f"w has {weights.size} weights, largest |w| at output coordinates "
                + ", ".join(f"{int(i)} ({weights[i]:.3g})" for i in top))
    if key == "top_atoms" and value:
        return "highest-ranked outputs " + ", ".join(
            f"{number_list(atom['row'])} (score {format_number(atom['score'], 3)})" for atom in value[:_SHOWN])
    if key == "projection" and value:
        return f"of Fisher's projection (w of {len(value)} weights)"
    return ""


_KIND_TEXT = {
    "output": "the output itself (linear statistic of a 1-D output)",
    "fisher-discriminant": "Fisher's discriminant <w, output> (linear statistic, w learned on training draws)",
    "categorical": "categorical: distinct outputs ranked by their trained log-likelihood ratio",
    "binned": "binned: a smoothed histogram log-ratio of the output",
    "classifier": "a classifier's log-odds",
    "callable": "your own statistic",
    "additive": "additive: a sum of per-column log-ratio estimates (for independent output columns)",
    "flag-value": "flag-and-value: a score of the ⊤/⊥ pattern plus the log-ratios of the released values",
    "coordinates": "one output coordinate's own statistic",
}
#: What a statistic's notes mean, where their names alone do not say (audit/statistics/*.py).
_USAGE_MEANING = ("the share of what the claim allows (its ε, δ or μ) that the best event of a candidate uses, "
                  "measured on held-out draws from pessimistic to optimistic; 1 or more would refute the claim")
_SEPARATION_MEANING = "the difference of the statistic's means on D′ and D in pooled standard deviations"
_NOTE_MEANING = {
    "columns": "output coordinates, each scored by its own log-ratio estimate",
    "groups": "the groups of alike values each column's histogram was merged into, per column",
    "blocks": "⊤/⊥ pattern columns scored together, as they depend on each other",
    "patterns": "distinct sub-patterns of each block seen in training; an unseen one scores 0",
    "lanes": "the statistics whose events competed on the selection draws, auto's choice first",
    "held_out_usage": ("the share of what the claim allows (its ε, δ or μ) that the best event of each candidate "
                       "reaches on the held-out half of the training draws; 1 or more would refute the claim"),
}


def pair_statistic(report: dict, label: str) -> Optional[dict]:
    """The statistic record of pair ``label`` in a report dict, or None.

    ``statistic["pairs"]`` holds one record per *audited* pair, in the order of the report's
    ``"pairs"``; the scenario's pairs (``scenario["pairs"]``) also list the pairs another covers
    (``also_covers``), so an index among them points at the wrong record once any pair is covered.
    Every reader of a pair's statistic (the witness, the reproduction script's certified sets)
    reads it here."""
    labels = [p.get("label") for p in report.get("pairs") or []]
    records = (report.get("statistic") or {}).get("pairs") or []
    position = labels.index(label) if label in labels else len(records)
    return records[position] if position < len(records) else None


def statistic_lines(report: dict, label: str, lane: int = 0) -> list[str]:
    """The statistic of pair ``label``: what it is, and every note recorded about how it was chosen
    (``"auto"``'s choice and whatever it compared, in any form a statistic records).

    ``lane`` is the position of the event's statistic among the pair's lanes (an evidence record's
    ``"lane"``, :mod:`audit.statistics.lanes`; 0, the primary, when it has none).  An alternate
    lane's event is a threshold of that lane's statistic, not of the one ``"auto"`` chose: the
    first line describes the lane's statistic and says it is one of auto's lanes, and the chosen
    statistic's structure (its bins, weights, atoms) is left out."""
    statistic = report.get("statistic") or {}
    entry = pair_statistic(report, label)
    option = statistic.get("option_text") or _option_fallback(statistic.get("option"))
    if entry is None:
        return [option] if option else []
    names = entry.get("lanes") or []
    alternates = entry.get("alternates") or []
    if lane and lane < len(names):
        own = alternates[lane - 1] if lane - 1 < len(alternates) else {}
        chosen = entry.get("auto_choice") or names[0]
        what = (f"{names[lane]} (one of auto's lanes; auto chose {chosen})"
                + (f": {_kind_text(own, option)}" if own.get("kind") else ""))
        structure = own
    else:
        what, structure = _kind_text(entry, option), entry
    lines = [what]
    details = [_summarise(key, structure.get(key)) for key in ("weights", "projection", "top_atoms")]
    lines += [detail for detail in details if detail]
    kind = str(entry.get("kind", "unknown"))
    choice = entry.get("auto_choice")
    notes = {key: value for key, value in entry.items()
             if key not in _STRUCTURE and key != "auto_choice" and value not in (None, {}, [], "")}
    if choice is not None:
        lines.append(f"\"auto\" chose {choice}" + (" (on training draws, which certify nothing)"
                                                   if statistic.get("training_samples") else ""))
    elif option and option != kind and kind != "callable":
        lines.append(f"statistic option: {option}")
    if isinstance(notes.get("auto"), dict):
        lines += _auto_lines(notes.pop("auto"))
    lines += [_note_line(key, value) for key, value in notes.items()]
    return lines


def _kind_text(entry: dict, option: Optional[str]) -> str:
    """What a statistic's record (its ``to_dict``) is, in words."""
    kind = str(entry.get("kind", "unknown"))
    what = _KIND_TEXT.get(kind, kind)
    if kind == "callable":
        what += f": {option}"
    elif kind == "classifier":
        what += f" ({entry.get('estimator')} on {entry.get('features')})"
    elif kind == "categorical" and entry.get("atoms") is not None:
        what += f" ({int(entry['atoms']):,} distinct outputs in training)"
    elif kind == "binned" and entry.get("bins") is not None:
        what += f" ({int(entry['bins'])} bins)"
    return what


def _note_line(key: str, value: Any) -> str:
    """One note of a statistic, with what it means where its name does not say (blocks as lists)."""
    name = key.replace("_", " ")
    if key == "blocks" and isinstance(value, list):
        text = ", ".join(number_list(block) or f"<{len(block)} columns>" for block in value) or "none"
    else:
        text = _note(value)
    meaning = _NOTE_MEANING.get(key)
    return f"{name} ({meaning}): {text}" if meaning else f"{name}: {text}"


def _auto_lines(auto: dict) -> list[str]:
    """What ``"auto"`` compared (audit/statistics/auto.py): its rule, each candidate's held-out usage
    of the claim (an interval) and separation, and what it skipped and why."""
    lines = [f"auto's rule: {auto['rule']}"] if auto.get("rule") else []
    tried = []
    for name, record in (auto.get("tried") or {}).items():
        usage = [value for value in record.get("usage") or [] if value is not None]
        text = name + (f" usage {format_number(usage[0])}–{format_number(usage[-1])}" if usage else "")
        if record.get("separation") is not None:
            text += f", separation {format_number(record['separation'])}"
        tried.append(text)
    if tried:
        held = auto.get("held_out")
        lines.append("auto tried" + (f" (on {' + '.join(f'{int(n):,}' for n in held)} held-out draws)" if held else "") + ": " + "; ".join(tried))
        lines += [f"usage: {_USAGE_MEANING}", f"separation: {_SEPARATION_MEANING}"]
    if auto.get("skipped"):
        lines.append("auto skipped: " + "; ".join(f"{name}: {why}" for name, why in auto["skipped"].items()))
    return lines


def _note(value: Any) -> str:
    """Any note a statistic records, generically: mappings as ``key value`` pairs, numbers to 4
    significant digits, lists summarised when long."""
    if isinstance(value, dict):
        if not value:
            return "none"
        return ", ".join(f"{key} {_note(item)}" for key, item in value.items())
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if isinstance(value, (int, float)):
        return format_number(value) if isinstance(value, float) else f"{value:,}"
    if isinstance(value, (list, tuple)):
        if len(value) > 2 * _SHOWN:
            return ", ".join(_note(item) for item in value[:_SHOWN]) + f", … ({len(value)} in all)"
        return ", ".join(_note(item) for item in value) or "none"
    return str(value)


def _option_fallback(option: Any) -> Optional[str]:
    """The option of a report written before ``option_text`` was recorded: a callable's label is
    ``callable:<module>.<name>(<fields>)``, shown without its module and fields."""
    if not isinstance(option, str):
        return None
    if option.startswith("callable:"):
        name = option.removeprefix("callable:").split("(", 1)[0].rsplit(".", 1)[-1]
        return f"{name}(…)" if "(" in option else name
    return option


def _event_index(report: dict) -> Optional[int]:
    """The evidence index of the witness event: the refuting one, else the one attaining the
    claim's headline quantity (a report without a witness section: its first violation's event,
    else the first headline event)."""
    evidence = report.get("evidence") or []
    witness = report.get("witness") or {}
    if witness:
        chosen = witness.get("refuting") or witness.get(witness.get("headline", "epsilon"))
        return None if chosen is None else int(chosen["evidence"])
    for violation in report.get("violations") or []:
        for index, event in enumerate(evidence):
            if (event.get("pair"), event.get("slot")) == (violation.get("pair"), violation.get("slot")) and \
                    event.get("count_more_likely") == violation.get("count_more_likely", event.get("count_more_likely")):
                return index
    return next((i for i, e in enumerate(evidence) if e.get("family") == "headline"), 0 if evidence else None)


def _sides(event: dict) -> tuple[str, str]:
    return ("D′", "D") if event.get("more_likely_under") == "neighbour" else ("D", "D′")


def witness_parts(report: dict) -> Optional[dict]:
    """The witness of a report (its JSON form) as parts: ``pair``, ``data`` (lines), ``statistic``
    (lines), ``event``, ``counts``, ``certifies`` and ``note`` (why the table's ε_lb may be another
    event's bound); None when the report has no evidence."""
    index = _event_index(report)
    evidence = report.get("evidence") or []
    if index is None or index >= len(evidence):
        return None
    event = evidence[index]
    label = str(event.get("pair", report.get("worst_pair")))
    more, other = _sides(event)
    witness = report.get("witness") or {}
    if not witness and evidence and all(e.get("family") == "anytime" for e in evidence):
        old = anytime_record(report)  # written before reports recorded the anytime witness
        if old is not None:
            witness = {"mode": "anytime", "refuting": old if report.get("violations") else None, "epsilon": old,
                       "headline": "epsilon"}
            event = evidence[old["evidence"]]
            label, (more, other) = old["pair"], _sides(event)
    if witness.get("mode") == "anytime":
        record = witness.get("refuting") or witness.get(witness.get("headline", "epsilon"))
        refuting = witness.get("refuting") is not None
        return dict({"pair": label, "data": pair_data_lines(report, label), "statistic": statistic_lines(report, label),
                     "event": f"{event.get('event')}, more likely on {more} (the last round's)", "counts": None,
                     "refutes": refuting, "note": None, "mode": "anytime"},
                    **anytime_parts(report, record, refuting))
    n = int(event["n"])
    counts = (f"{int(event['count_more_likely']):,} of {n:,} certification draws on {more} and "
              f"{int(event['count_other']):,} of {n:,} on {other}")
    refuting = witness.get("refuting") is not None and int(witness["refuting"]["evidence"]) == index
    certifies = _certifies(report, event, index, refuting)
    return {"pair": label, "data": pair_data_lines(report, label),
            "statistic": statistic_lines(report, label, int(event.get("lane") or 0)),
            "event": f"{event.get('event')}, more likely on {more}", "counts": counts, "certifies": certifies,
            "refutes": refuting or (not witness and report.get("verdict") == "VIOLATED"),
            "note": _other_event_note(report, index), "mode": "fixed"}


def _certifies(report: dict, event: dict, index: int, refuting: bool) -> str:
    level = format_number(event.get("level"), 3)
    if event.get("test") == "joint":
        quantity = slot_text(event["slot"])
        text = (f"the joint test of both counts (level {level}) certifies {quantity} ≥ "
                f"{format_number(event.get('bound'))}")
        if refuting:
            violation = next((v for v in report.get("violations") or []
                              if v.get("test") == "joint" and v.get("slot") == event.get("slot")), None)
            if violation is not None:
                bound, claimed = event.get("bound"), violation["claimed"]
                if bound is not None and claimed is not None and float(bound) > float(claimed):
                    text += f", above the {format_number(claimed)} the claim allows"
                else:  # the joint test rejects the claim's pair of counts; its one-number bound is weaker
                    text += (f"; the test rejects the claim on both counts together, though this bound alone is "
                             f"not above the {format_number(claimed)} the claim allows")
        else:
            allowed = {"epsilon": report.get("reference_epsilon"), "delta": report.get("reference_delta"),
                       "mu": (report.get("claim") or {}).get("mu")}.get(_slot_quantity(report, str(event["slot"])))
            if allowed is not None:
                text += f" (the claim allows at most {format_number(allowed)})"
        return text
    text = (f"Clopper–Pearson bounds (level {level} each) certify a test with type-I error ≤ "
            f"{format_number(event.get('alpha_hi'))} and type-II error ≤ {format_number(event.get('beta_hi'))}")
    violation = next((v for v in report.get("violations") or [] if v.get("test") != "joint"
                      and v.get("alpha_hi") == event.get("alpha_hi") and v.get("beta_hi") == event.get("beta_hi")), None)
    if refuting and violation is not None:
        return text + f", but the claim requires type-II error ≥ {format_number(violation['claimed_beta'])} there"
    witness = report.get("witness") or {}
    for quantity in ("epsilon", "delta", "mu"):
        chosen = witness.get(quantity)
        if chosen and int(chosen["evidence"]) == index and chosen["bound"] > 0:
            return (text + f": {_quantity_text(report, quantity)} ≥ {format_number(chosen['bound'])}"
                    + _side_text(report, event, quantity))
    return text


def _side_text(report: dict, event: dict, quantity: str) -> str:
    """Which event a curve point's ε or δ comes from.  A point (α_hi, β_hi) of the event E, more
    likely on X, bounds ε at δ by ln((1 − δ − β_hi)/α_hi), the ratio of E's probabilities, and by
    ln((1 − δ − α_hi)/β_hi), that of its complement, more likely on the other side; δ at ε by
    1 − β_hi − e^ε α_hi and 1 − α_hi − e^ε β_hi (docs/ground-truth.md §3).  The counts shown must be
    those of the one that gives the number."""
    if quantity not in ("epsilon", "delta") or event.get("alpha_hi") is None or event.get("beta_hi") is None:
        return ""
    alpha, beta = float(event["alpha_hi"]), float(event["beta_hi"])
    more, other = _sides(event)
    n, c_more, c_other = int(event["n"]), int(event["count_more_likely"]), int(event["count_other"])
    with np.errstate(divide="ignore", invalid="ignore"):
        if quantity == "epsilon":
            delta = float(report["reference_delta"])
            own, complement = np.log((1 - delta - beta) / alpha), np.log((1 - delta - alpha) / beta)
            forms = ("ε ≥ ln((1 − δ − β_hi)/α_hi)", "ε ≥ ln((1 − δ − α_hi)/β_hi)")
        else:
            scale = float(np.exp(min(float(report["reference_epsilon"]), 700.0)))
            own, complement = 1 - beta - scale * alpha, 1 - alpha - scale * beta
            forms = ("δ ≥ 1 − β_hi − e^ε α_hi", "δ ≥ 1 − α_hi − e^ε β_hi")
    if np.nan_to_num(complement, nan=-np.inf) > np.nan_to_num(own, nan=-np.inf):
        return (f", from the complement not ({event.get('event')}), more likely on {other}: "
                f"{n - c_other:,} of {n:,} on {other} and {n - c_more:,} of {n:,} on {more} ({forms[1]}; "
                "Clopper–Pearson bounds make it smaller than the counts' own value)")
    return (f", from the event itself ({c_more:,} of {n:,} on {more} and {c_other:,} of {n:,} on {other}: "
            f"{forms[0]}; Clopper–Pearson bounds make it smaller than the counts' own value)")


def _quantity_text(report: dict, quantity: str) -> str:
    if quantity == "epsilon":
        return f"ε at δ = {format_number(report['reference_delta'])}"
    if quantity == "delta":
        return f"δ at ε = {format_number(report['reference_epsilon'])}"
    return "μ"


def _slot_quantity(report: dict, key: str) -> Optional[str]:
    """Which headline quantity of the report a slot key is (None for the others)."""
    try:
        slot = Slot.parse(key)
    except (TypeError, ValueError):
        return None
    if slot == Slot.epsilon_at(float(report["reference_delta"])):
        return "epsilon"
    if slot == Slot.delta_at(float(report["reference_epsilon"])):
        return "delta"
    return "mu" if slot.key == "mu" else None


def _other_event_note(report: dict, index: int) -> Optional[str]:
    """Why the table's number for the quantity the witness event certifies is larger than the
    event's own bound, when another event attains it (e.g. the refuting joint test certifies
    ε ≥ 1.314 and a curve point of another δ's slot gives ε ≥ 1.414 at the claim's δ)."""
    witness = report.get("witness") or {}
    evidence = report.get("evidence") or []
    event = evidence[index]
    quantity = _slot_quantity(report, str(event.get("slot"))) if event.get("test") == "joint" else None
    chosen = witness.get(quantity) if quantity else None
    if not chosen or int(chosen["evidence"]) == index or chosen["bound"] <= float(event.get("bound") or 0.0):
        return None
    other = evidence[int(chosen["evidence"])]
    source = ("another headline joint test" if other.get("test") == "joint"
              else f"a certified point chosen for {slot_text(str(other.get('slot')))}")
    return (f"the report's bound on {_quantity_text(report, quantity)} is {format_number(chosen['bound'])}, "
            f"its largest certified bound, from {source} ({other.get('event')} on pair {other.get('pair')!r}). "
            "Every bound of a report holds together with the others, so both stand and the table shows the "
            "larger.")


def witness_lines(report: dict, indent: str = "  ") -> list[str]:
    """The witness as lines for the text and Markdown summaries."""
    parts = witness_parts(report)
    if parts is None:
        return []
    head = "witness (refutes the claim)" if parts["refutes"] else "witness"
    lines = [f"{head}: pair {parts['pair']!r}"]
    lines += [f"{indent}{line}" for line in parts["data"]]
    lines += [f"{indent}{'statistic: ' if i == 0 else ''}{line}" for i, line in enumerate(parts["statistic"])]
    if parts.get("mode") == "anytime":
        lines.append(f"{indent}test: {parts['test']}")
        lines += [f"{indent}{'rounds: ' if i == 0 else '        '}{line}"
                  for i, line in enumerate(parts["round_lines"])]
        if parts["evalue"]:
            lines.append(f"{indent}e-value: {parts['evalue']}")
        lines.append(f"{indent}certified: {parts['certifies']}")
        return lines
    lines += [f"{indent}event: {parts['event']}", f"{indent}counts: {parts['counts']}",
              f"{indent}certified: {parts['certifies']}"]
    if parts["note"]:
        lines.append(f"{indent}note: {parts['note']}")
    return lines

