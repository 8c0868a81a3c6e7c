"""The words and numbers of a report: labels, formatted values and the summary lines.

Everything here reads the JSON form of a report (``AuditReport.to_dict()``, as saved in
report.json), never the result objects, so a live report and one read back from report.json are
described by the same code, in the terminal, in summary.md and in report.html alike.
"""

from __future__ import annotations

import math
import re
from typing import Any, Optional

from mechanisms.claims import claim_label as registered_claim_label

__all__ = ["TRADEOFF_MEANING", "format_number", "claim_label", "claim_scope", "statistic_text", "draws_text",
           "accuracy_claim", "error_control_text", "figure_stem", "summary_lines", "summary_text"]

#: What the certified trade-off points bound, in the words every report uses.
TRADEOFF_MEANING = (
    "Each certified point (α_hi, β_hi) is a threshold test whose true type-I error is at most α_hi "
    "and whose true type-II error is at most β_hi, so the pair's true trade-off curve satisfies "
    "T(α_hi) ≤ β_hi: together the points give an upper bound on T (the staircase in the figure; "
    "T lies on or below it). No sampling-based audit can bound T from below. The claim says "
    "T ≥ the claimed curve, so a certified point below the claimed curve refutes it.")


def format_number(value: Any, digits: int = 4, missing: str = "unknown") -> str:
    """``value`` to ``digits`` significant digits; ∞ and −∞ as symbols, ``None`` as ``missing``."""
    if value is None:
        return missing
    number = float(value)
    if math.isinf(number):
        return "∞" if number > 0 else "−∞"
    return f"{number:.{digits}g}"


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
    """The test statistic option and what each pair used, e.g. ``auto → categorical, linear``."""
    if not statistic or "pairs" not in statistic:
        return "unknown"
    used = ", ".join(dict.fromkeys(str(p.get("auto_choice") or p.get("kind")) for p in statistic["pairs"]))
    option = statistic.get("option", "?")
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
                 f"the rest certifying, the failure budget favouring {early['favoured']}")
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


def error_control_text(control: Optional[dict]) -> str:
    """One sentence: how a run controls false VIOLATED verdicts across its audits.

    ``control`` is the ``error_control`` entry of a run's settings (``dpaudit run``): Bonferroni
    runs each of m audits at confidence 1 − γ/m, so a run of correct claims reports some VIOLATED
    with probability ≤ γ (union bound); without control that bound is the sum of the audits' levels.
    """
    if not control:
        return "Error control across audits: not recorded."
    if control["method"] == "bonferroni":
        return (f"Error control across the run's {control['audits']} audits: Bonferroni. Each audit "
                f"runs at confidence {control['per_audit_confidence']:.6g}, so a run in which every "
                f"claim holds reports some VIOLATED with probability ≤ {1 - control['run_confidence']:.3g}.")
    if control["method"] == "none":
        return (f"Error control across the run's {control['audits']} audits: none (each at its own "
                f"confidence); the probability of some false VIOLATED is at most "
                f"{control['run_false_alarm_bound']:.3g} (the sum of the audits' levels).")
    return (f"One audit: a correct claim is reported VIOLATED with probability ≤ "
            f"{control['run_false_alarm_bound']:.3g}.")


def figure_stem(name: str) -> str:
    """A file-name-safe version of an audit's name (figure files, checkpoints, HTML anchors)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.")
    return stem or "audit"


def _value(value: Any) -> str:
    return "unknown" if value is None else f"{float(value):.4g}"


def summary_lines(report: dict) -> list[str]:
    """The lines that describe one audit (an ``AuditReport.to_dict()``): claim, verdict, the certified
    bounds next to the claimed and exact values, the worst pair, the draws, the first three
    violations and the accuracy verdict."""
    claim = report["claim"]
    lines = [
        f"dpaudit: {report['mechanism']}",
        f"  claim          {claim_label(claim)} {claim_scope(claim, report.get('scenario'))}",
        f"  verdict        {report['verdict']} (false-alarm probability ≤ {1 - report['confidence']:.3g})",
        f"  ε lower bound  {_value(report['epsilon_lower_bound'])} at δ = {float(report['reference_delta']):g}"
        f"   (claimed {_value(report['reference_epsilon'])}, exact {_value(report.get('exact_epsilon'))})",
        f"  δ lower bound  {_value(report['delta_lower_bound'])} at ε = {float(report['reference_epsilon']):.4g}"
        f"   (exact {_value(report.get('exact_delta'))})",
        f"  μ lower bound  {_value(report['mu_lower_bound'])}   (exact {_value(report.get('exact_mu'))})",
    ]
    if report.get("audit_tightness") is not None:
        lines.append(f"  audit tightness ε_lb/ε_exact = {float(report['audit_tightness']):.3f}")
    if report.get("claim_slack") is not None:
        lines.append(f"  claim slack     ε_exact/ε_claimed = {float(report['claim_slack']):.3f}")
    lines.append(f"  worst pair     {report['worst_pair']}")
    lines.append(f"  statistic      {statistic_text(report.get('statistic'))}")
    lines.append(f"  samples        {int(report['samples']):,} per pair and side (all phases); seed {report['seed']}")
    lines.append(f"  draws          {draws_text(report.get('draws') or {})}")
    lines += [f"  violation: {v['message']}" for v in report.get("violations", [])[:3]]
    accuracy = report.get("accuracy")
    if accuracy:
        lines.append(f"  accuracy       {accuracy['verdict']} ({accuracy_claim(accuracy)}; "
                     f"{int(accuracy['samples']):,} more draws)")
    return lines


def summary_text(report: dict) -> str:
    """``AuditReport.summary()``: :func:`summary_lines`, and a note when the neighbouring pairs
    were vouched for by the user rather than checked."""
    lines = summary_lines(report)
    if not (report.get("scenario") or {}).get("checked", True):
        lines.append("  note           neighbouring pairs vouched for by the user, not checked")
    return "\n".join(lines)
