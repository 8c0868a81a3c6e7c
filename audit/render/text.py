"""The words and numbers of a report: labels, formatted values and the summary lines.

Everything here reads the JSON form of a report (``AuditReport.to_dict()``, as saved in
report.json), never the result objects, so a live report and one read back from report.json are
described by the same code, in the terminal, in summary.md and in report.html alike.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence

from mechanisms.claims import claim_label as registered_claim_label

from .graybox import graybox_lines
from .numbers import format_number
from .witness import _option_fallback, other_pair_lines, slot_text, witness_lines, witness_parts

__all__ = ["TRADEOFF_MEANING", "format_number", "claim_label", "claim_scope", "statistic_text", "draws_text",
           "accuracy_claim", "error_control_text", "figure_stem", "summary_lines", "summary_text",
           "violation_text", "violation_lines", "confidence_text", "refuted_witnesses"]

#: What the certified trade-off points bound, in the words every report uses.
TRADEOFF_MEANING = (
    "Each certified point (α_hi, β_hi) is a threshold test whose true type-I error is at most α_hi "
    "and whose true type-II error is at most β_hi, so the pair's true trade-off curve satisfies "
    "T(α_hi) ≤ β_hi: together the points give an upper bound on T (the staircase in the figure; "
    "T lies on or below it). No sampling-based audit can bound T from below. The claim says "
    "T ≥ the claimed curve, so a certified point below the claimed curve refutes it.")


def claim_label(claim: dict) -> str:
    """A claim dict (``Claim.to_dict()``) without its relation, e.g. ``(1, 1e-05)-DP``: the
    registered claim type's own label (:func:`mechanisms.claims.claim_label`)."""
    return registered_claim_label(claim)


def claim_scope(claim: dict, scenario: Optional[dict]) -> str:
    """What the claim was audited for: the neighbour relation, or the user's vouched-for pairs.

    A relation means nothing for inputs that are not datasets of rows (``scenarios.custom``), so
    there the claim is stated for the pairs the user vouched for.
    """
    if not (scenario or {}).get("checked", True):
        return "[on the input pairs vouched for by the user; no neighbour relation checked]"
    return f"[{claim.get('relation', 'add-remove')}]"


def statistic_text(statistic: Optional[dict]) -> str:
    """The test statistic option and what each pair used, e.g. ``auto → categorical, linear``; a
    callable by its readable text (``ProjectionSum(direction=<24 numbers>, steps=4)``)."""
    if not statistic or "pairs" not in statistic:
        return "unknown"
    used = ", ".join(dict.fromkeys(str(p.get("auto_choice") or p.get("kind")) for p in statistic["pairs"]))
    option = statistic.get("option_text") or _option_fallback(statistic.get("option")) or "?"
    if used == "callable":
        return option
    return used if option == used else f"{option} → {used}"


def draws_text(draws: Optional[dict]) -> str:
    """One line: the total draws per side, how they split over the phases, where it stopped."""
    if not draws:
        return "unknown"
    phases = " + ".join(f"{count:,} {phase}" for phase, count in draws["per_pair_per_side"].items())
    looks = draws.get("looks")
    stop = ""
    if looks and looks.get("stopped_early"):
        quick = " (the quick look, on 1/16 of the budget)" if looks.get("quick_look") == "stopped" else ""
        stop = f"; stopped early at look {looks['look']} of {looks['of']}{quick}, a violation being certified"
    if looks and looks.get("chose_early"):
        early = looks["chose_early"]
        stop += (f"; chose its events early, on {early['selection']:,} of {early['planned']:,} selection draws, "
                 f"the rest certifying, the failure budget favouring {slot_text(early['favoured'])}")
    moved = ""
    if draws.get("certification_per_pair"):
        moved = ("; certification draws moved to the pairs with evidence: "
                 + " / ".join(f"{count:,}" for count in draws["certification_per_pair"]))
    return (f"{int(draws['per_side']):,} per side in total ({draws['pairs']} pair(s) × ({phases}){stop}{moved})")


def accuracy_claim(accuracy: dict) -> str:
    """The accuracy claims an accuracy report (``AccuracyReport.to_dict()``) checked, in words."""
    alpha = float(accuracy["alpha"])
    parts = []
    queries = [c for c in accuracy.get("columns", []) if c.get("is_query")]
    if queries and queries[0].get("claimed_bound") is not None:
        parts.append(f"P(|error| > {float(queries[0]['claimed_bound']):.4g}) ≤ {alpha:g} per query")
    if int(accuracy.get("queries", 1)) > 1 and accuracy.get("max_error_bound") is not None:
        parts.append(f"P(max of {int(accuracy['queries'])} |errors| > "
                     f"{float(accuracy['max_error_bound']):.4g}) ≤ {alpha:g}")
    if queries and queries[0].get("claimed_variance") is not None:
        parts.append(f"noise variance {float(queries[0]['claimed_variance']):.4g}")
    if accuracy.get("worst_case_bound") is not None:
        parts.append(f"|error| ≤ {float(accuracy['worst_case_bound']):.4g} always")
    return "claimed " + "; ".join(parts) if parts else "no accuracy claim"


def error_control_text(control: Optional[dict], accuracy: bool = False) -> str:
    """How a run controls false VIOLATED verdicts across its audits, in a few sentences.

    ``control`` is the ``error_control`` entry of a run's settings (``dpaudit run``): each audit runs
    at the stricter of its file's confidence and the run's level (Bonferroni: 1 − γ/m), so a run of
    correct claims reports some VIOLATED with probability ≤ Σ (1 − c_i) ≤ γ (union bound).  The
    exit status follows the privacy verdicts only; the accuracy audits, which run at each audit's
    confidence on a budget of their own, are bounded by the same sum (``accuracy`` says whether any
    audit had one).
    """
    if not control:
        return "Error control across audits: not recorded."
    levels = control.get("levels") or []
    bound = control.get("run_false_alarm_bound")
    if bound is None and control["method"] == "bonferroni":  # a report written before levels were recorded
        bound = 1 - control["run_confidence"]
    stricter = [level for level in levels if level.get("run") is not None and level["audit"] > level["run"]]
    own = (f" or its file's own where that is stricter ({', '.join(level['name'] for level in stricter)})"
           if stricter else "")
    if control["method"] == "bonferroni":
        text = (f"Error control across the run's {control['audits']} audits: Bonferroni. Each audit runs at "
                f"confidence {control['per_audit_confidence']:.6g} (1 − {1 - control['run_confidence']:.3g}/"
                f"{control['audits']}){own}, so a run in which every privacy claim holds reports some VIOLATED "
                f"verdict (exit status 1) with probability ≤ {bound:.3g}.")
    elif control["method"] == "none":
        text = (f"Error control across the run's {control['audits']} audits: none (each at its own "
                f"confidence); the probability that a run of correct claims reports some VIOLATED verdict "
                f"(exit status 1) is at most {bound:.3g}, the sum of the audits' levels.")
    else:
        text = (f"One audit: a correct claim is reported VIOLATED (exit status 1) with probability ≤ "
                f"{bound:.3g}.")
    if accuracy:
        text += (f" The accuracy column has a budget of its own, spent the same way: a run whose accuracy claims "
                 f"all hold shows some accuracy VIOLATED with probability ≤ {bound:.3g} (the exit status ignores "
                 "accuracy verdicts).")
    return text


def confidence_text(entry: dict) -> Optional[str]:
    """An audit's confidence and where it comes from (its file, the run's error control), from its
    report.json entry; None when the run recorded no levels."""
    level = entry.get("confidence_levels")
    if not level:
        return None
    text = f"confidence {level['audit']:.6g}: the file asks {level['file']:.6g}"
    if level.get("run") is not None:
        text += f", the run's error control {level['run']:.6g}; the stricter applies"
    return text


def refuted_witnesses(entries: Sequence[dict]) -> list[str]:
    """For the terminal, under the table: each refuted audit's witness (pair, statistic, event,
    counts), in a few lines."""
    lines = []
    for entry in entries:
        report = entry.get("report")
        if report is None or report["verdict"] != "VIOLATED":
            continue
        lines.append(f"{entry['name']}: " + "\n  ".join(witness_lines(report, indent="  ")))
    return lines


def figure_stem(name: str) -> str:
    """A file-name-safe version of an audit's name (figure files, checkpoints, HTML anchors)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")
    return stem or "audit"


def _value(value: Any) -> str:
    return format_number(value)


def _ratio(value: Any) -> str:
    """A ratio to three decimals, ∞ as the symbol."""
    number = float(value)
    return f"{number:.3f}" if number != float("inf") else "∞"


def violation_text(violation: dict) -> str:
    """One violation (a ``Violation``/``JointViolation`` dict) in words, built from its fields so
    that a report written earlier reads the same; slots by their label, numbers to 4 digits."""
    pair = violation.get("pair")
    slot = slot_text(str(violation.get("slot", "")))
    if violation.get("test") == "joint":
        return (f"pair {pair!r}: one event ({int(violation['count_more_likely']):,} vs "
                f"{int(violation['count_other']):,} of {int(violation['n']):,} draws) certifies {slot} ≥ "
                f"{format_number(violation['bound'])}, but the claim allows at most "
                f"{format_number(violation['claimed'])}")
    if "alpha_hi" not in violation:
        return str(violation.get("message", ""))
    chosen = "a point of the trade-off band" if violation.get("slot") == "tradeoff" else f"chosen for {slot}"
    return (f"pair {pair!r}: a test with type-I error ≤ {format_number(violation['alpha_hi'])} and type-II "
            f"error ≤ {format_number(violation['beta_hi'])} ({chosen}), but the claim requires "
            f"type-II error ≥ {format_number(violation['claimed_beta'])} at that type-I error")


def violation_lines(violations: Sequence[dict], limit: int = 3) -> list[str]:
    """The first ``limit`` distinct violations in words: certified points that several slots chose
    (the same test, the same pair) are one violation, with the number of slots that chose it."""
    groups: dict = {}
    for violation in violations:
        key = (violation.get("pair"), violation.get("test") == "joint", violation.get("slot")) \
            if violation.get("test") == "joint" else (violation.get("pair"), violation.get("alpha_hi"),
                                                      violation.get("beta_hi"))
        groups.setdefault(key, []).append(violation)
    lines = []
    for members in list(groups.values())[:limit]:
        text = violation_text(members[0])
        if len(members) > 1:
            text += f" (the same test was chosen for {len(members)} slots)"
        lines.append(text)
    if len(groups) > limit:
        lines.append(f"… and {len(groups) - limit} more (the evidence lists every certified event)")
    return lines


def summary_lines(report: dict) -> list[str]:
    """The lines that describe one audit (an ``AuditReport.to_dict()``): claim, verdict, the certified
    bounds next to the claimed and exact values, the witness (pair, statistic, event and counts),
    the draws, the first violations and the accuracy verdict."""
    claim = report["claim"]
    lines = [
        f"dpaudit: {report['mechanism']}",
        f"  claim          {claim_label(claim)} {claim_scope(claim, report.get('scenario'))}",
        f"  verdict        {report['verdict']} (false-alarm probability ≤ {format_number(1 - report['confidence'], 3)})",
        f"  ε lower bound  {_value(report['epsilon_lower_bound'])} at δ = {format_number(report['reference_delta'])}"
        f"   (claimed {_value(report['reference_epsilon'])}, exact {_value(report.get('exact_epsilon'))})",
        f"  δ lower bound  {_value(report['delta_lower_bound'])} at ε = {format_number(report['reference_epsilon'])}"
        f"   (exact {_value(report.get('exact_delta'))})",
        f"  μ lower bound  {_value(report['mu_lower_bound'])}   (exact {_value(report.get('exact_mu'))})",
    ]
    if report.get("audit_tightness") is not None:
        lines.append(f"  audit tightness ε_lb/ε_exact = {_ratio(report['audit_tightness'])}")
    if report.get("claim_slack") is not None:
        lines.append(f"  claim slack     ε_exact/ε_claimed = {_ratio(report['claim_slack'])}")
    witness = witness_lines(report, indent="    ")
    lines += [f"  {line}" for line in witness]
    if not witness or report["worst_pair"] not in witness[0]:
        lines.append(f"  worst pair     {report['worst_pair']}")
    parts = witness_parts(report) if witness else None
    others = other_pair_lines(report, parts["pair"] if parts else None)
    if others:
        lines.append("  other pairs" + (" (besides the witness's)" if parts else ""))
        lines += [f"    {line}" for line in others]
    lines.append(f"  statistic      {statistic_text(report.get('statistic'))}")
    lines.append(f"  samples        {int(report['samples']):,} per pair and side (all phases); seed {report['seed']}")
    lines.append(f"  draws          {draws_text(report.get('draws') or {})}")
    lines += [f"  violation: {text}" for text in violation_lines(report.get("violations", []))]
    accuracy = report.get("accuracy")
    if accuracy:
        lines.append(f"  accuracy       {accuracy['verdict']} ({accuracy_claim(accuracy)}; "
                     f"{int(accuracy['samples']):,} more draws)")
    lines += [f"  {line}" for line in graybox_lines(report.get("graybox") or {})]
    return lines


def summary_text(report: dict) -> str:
    """``AuditReport.summary()``: :func:`summary_lines`, and a note when the neighbouring pairs
    were vouched for by the user rather than checked."""
    lines = summary_lines(report)
    if not (report.get("scenario") or {}).get("checked", True):
        lines.append("  note           neighbouring pairs vouched for by the user, not checked")
    return "\n".join(lines)
