"""``dpaudit sweep --graybox``: replay each row's pairs, name the line, aim the row's audit at it.

For each planned row (:class:`audit.sweep.plan.PlannedRow`) the pairs are recorded on D and
replayed on D′ (:func:`audit.graybox.check_pairs`, both orders, docs/graybox.md):

- a scenario of pairs (the catalogue's neighbour families: new label, empty group, values at and
  beyond the bounds, huge and NaN values) gives its pairs;
- a pair search (:class:`scenarios.SearchSpec`) gives the search's structured candidates and
  :data:`SEARCH_RANDOM` random ones of its domain (:mod:`scenarios.search`), each checked to be a
  neighbour pair of the domain; replays are cheap, so every candidate is replayed.

A pair the library refuses on both sides (the sweep's preflight) is not replayed; a pair that
cannot be replayed (:class:`audit.graybox.ReplayError`) is listed with its one-line reason.

With a finding that implicates output columns, the row's certified audit runs on the finding's
pair alone with the statistic the finding fixes (:func:`audit.graybox.certify.aimed_statistic`),
at the row's samples and Bonferroni confidence: the pair and the statistic are chosen by the
replay, whose randomness is seeded apart from the audit's, so no selection is paid for.  Otherwise
(no finding, or only control-flow findings, which implicate no column) the row's audit is the
ordinary one, over all its pairs, the finding's among them: measured on diffprivlib's KMeans, an
audit aimed at a control-flow finding's pair alone certified ε ≥ 0.54 where the row's own audit
refutes the claim on another pair.  The row record gains ``graybox``: pairs
replayed, executions, seconds, the findings (kind, ``file:line``, measured against allowed) and
the unreplayable pairs; :func:`graybox_markdown_section` renders them for ``sweep.md``.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from typing import Any, Optional

from scenarios.scenario import NeighborPair
from scenarios.search import SearchSpec

from ..graybox import ReplayError, check_pairs
from ..graybox.audit import SEARCH_RANDOM, pair_of, search_pairs
from ..graybox.certify import aimed_finding, aimed_statistic
from ..render.graybox import site_link
from ..render.text import format_number
from .plan import PlannedRow
from .rows import _preflight, audit_row

__all__ = ["graybox_row", "graybox_pairs", "graybox_markdown_section", "SEARCH_RANDOM", "GRAYBOX_SEED"]

#: Added to a row's seed for its replays, so that they share no stream with the row's audit.
GRAYBOX_SEED = 0x6B0C5


def graybox_pairs(scenario: Any, seed: int) -> list[NeighborPair]:
    """The pairs a row replays: the scenario's, or a pair search's candidates (structured + random)."""
    if isinstance(scenario, SearchSpec):
        return search_pairs(scenario, seed, SEARCH_RANDOM)
    return [pair if isinstance(pair, NeighborPair) else NeighborPair(*pair) for pair in getattr(scenario, "pairs", ())]


def _finding_dict(finding: Any) -> dict:
    data = finding.to_dict()
    return {key: data[key] for key in ("kind", "pair", "site", "measured", "allowed", "quantity", "columns",
                                       "message", "exact")}


def graybox_row(row: PlannedRow, *, library: str, version: Optional[str], out: Any, checkpoints: bool = True) -> dict:
    """Replay the row's pairs, then audit the row (aimed at the first finding); its record with ``graybox``."""
    case = row.case
    started = time.perf_counter()
    scenario, dropped = _preflight(case)
    pairs = graybox_pairs(scenario, row.seed) if scenario is not None else []
    checks, unreplayable = [], []
    seed = (row.seed + GRAYBOX_SEED) % 2**31
    for pair in pairs:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                checks += check_pairs(case.mechanism, [pair], case.claim, seed=seed + len(checks))
        except ReplayError as exc:
            unreplayable.append(f"{pair.label}: {str(exc).strip().splitlines()[0]}")
        except Exception as exc:  # noqa: BLE001 - a replay that fails must not lose the row's audit
            text = str(exc).strip().splitlines()
            unreplayable.append(f"{pair.label}: {type(exc).__name__}: {text[0] if text else ''}")
    findings = [f for check in checks for f in check.findings]
    summary = {"pairs": len(pairs), "replays": len(checks), "executions": float(sum(c.executions for c in checks)),
               "seconds": time.perf_counter() - started, "findings": [_finding_dict(f) for f in findings],
               "unreplayable": unreplayable, "aimed": None,
               "notes": list(dict.fromkeys(note for check in checks for note in check.notes))[:5]}
    first = aimed_finding(findings)
    if first is not None:
        pair = pair_of(first.pair, pairs)  # the finding's ordered pair ("... (reversed)": D′, D)
        statistic = aimed_statistic(first)
        statistic = row.statistic if isinstance(statistic, str) else statistic
        one = dataclasses.replace(scenario, pairs=(pair,)) if hasattr(scenario, "pairs") else [pair]  # vouched as the row's
        aimed_case = dataclasses.replace(case, scenario=one)
        row = dataclasses.replace(row, case=aimed_case, statistic=statistic)
        summary["aimed"] = {"pair": first.pair, "kind": first.kind.value, "site": first.site.to_dict(),
                            "statistic": statistic if isinstance(statistic, str) else type(statistic).__name__}
    record = audit_row(row, library=library, version=version, out=out, checkpoints=checkpoints)
    return dict(record, graybox=summary)


def _number(value: Any) -> str:
    return "—" if value is None or value != value else format_number(value, 4, "—")


def _site_cell(site: dict) -> str:
    text = f"{str(site.get('file', '')).rsplit('/', 1)[-1]}:{site.get('line')} ({site.get('function')})"
    link = site_link(site)
    return f"[{text}]({link})" if link else text


def graybox_markdown_section(records: list[dict]) -> list[str]:
    """The ``sweep.md`` section of a sweep run with ``--graybox`` (empty without one)."""
    replayed = [r for r in records if r.get("graybox")]
    if not replayed:
        return []
    pairs = sum(r["graybox"]["replays"] for r in replayed)
    found = [r for r in replayed if r["graybox"]["findings"]]
    lines = ["", "## Gray-box replays", "",
             f"{pairs} ordered pairs replayed over {len(replayed)} rows (each recorded on D and replayed on D′ "
             f"with identical randomness, docs/graybox.md); {len(found)} rows with a finding. A finding marked "
             "exact is a certain falsification of the claim; the others locate where the proof's premise may "
             "fail (a calibration or label set read from the data, a number of random calls that depends on "
             "the data, which a correct rejection or permutation sampler also shows), and the row's certified "
             "audit settles them. That audit was aimed at the row's first finding that implicates output "
             "columns (its pair, the statistic it fixes). Silence is no proof of privacy.", "",
             "| entry | grid point | pairs replayed | findings | kind | call site | measured | allowed | pair "
             "| aimed audit |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in replayed:
        g = r["graybox"]
        first = g["findings"][0] if g["findings"] else None
        if g.get("aimed"):
            first = next((f for f in g["findings"] if f["pair"] == g["aimed"]["pair"]
                          and f["kind"] == g["aimed"]["kind"]), first)
        verdict = r.get("verdict") or "ERROR"
        bound = f"{verdict}, ε ≥ {format_number(r.get('epsilon_lb'), 4, '—')}"
        bound = bound if g.get("aimed") else (f"not aimed (no column implicated); the row's audit: {bound}"
                                              if g["findings"] else "—")
        cells = [r["entry"], r["point"], str(g["replays"]) + (f" ({len(g['unreplayable'])} unreplayable)"
                                                              if g["unreplayable"] else ""), str(len(g["findings"]))]
        if first is None:
            cells += ["none", "", "", "", "", bound]
        else:
            cells += [first["kind"], _site_cell(first["site"]), _number(first["measured"]),
                      _number(first["allowed"]), first["pair"], bound]
        lines.append("| " + " | ".join(str(c).replace("|", "\\|").replace("\n", " ") for c in cells) + " |")
    return lines
