"""The witness of an anytime audit: the rounds, their bets and e-value, and the bound at the stopping time.

An anytime audit refutes a claim through an e-process: the product of its rounds' e-values passes
1/level (Ville's inequality) and the confidence sequence's lower bound at the stopping time exceeds
what the claim allows (audit/sequential.py).  One round's event and its few counts certify nothing
on their own, so the witness must show the rounds, the e-value and the bound, in the terminal,
summary.md and report.html alike.

Statistical content: the mis-sensitised Laplace (true ε 2, claim 1) is refuted by anytime audits
after a median of about 200 draws (benchmarks/anytime.py), so the seeded 20,000-draw budget below
refutes it; the exactly 1-DP Laplace with a 2,000-draw budget is not refuted at this seed (a claim
that holds is refuted with probability ≤ 0.05).  The assertions on the witness do not rest on a
tolerance: the e-value is recomputed exactly from the evidence by a second route.
"""

from __future__ import annotations

import html
import json
import math

import pytest

import scenarios
from audit import Verdict, run_audit
from audit.cli import main
from audit.render.html import audit_section
from audit.render.markdown import summary_markdown
from audit.render.text import refuted_witnesses, summary_text
from audit.sequential import Bet, Family, log_evalue
from mechanisms import LaplaceMechanism, PureDP

pytestmark = pytest.mark.statistical

SEED = 20261126
WORST = [scenarios.counting(1).pairs[0]]
BROKEN = LaplaceMechanism(epsilon=1.0, sensitivity=0.5)  # scale 1/2 on a count: true ε = 2


@pytest.fixture(scope="module")
def refuted():
    return run_audit(BROKEN, WORST, claim=PureDP(1.0), samples=20_000, anytime=True, seed=SEED, progress=False,
                     accuracy=False)


def _entry(report, name="anytime"):
    return {"name": name, "path": "x.toml", "expected": None, "note": "", "warnings": [], "error": None,
            "figures": {}, "noise_density": None, "report": report.to_dict()}


def _views(report) -> dict:
    return {"summary()": report.summary(),
            "terminal": "\n".join(refuted_witnesses([_entry(report)])),
            "summary.md": summary_markdown([_entry(report)], {}),
            "report.html": html.unescape(audit_section(report.to_dict(), figures={}))}


def test_the_report_records_the_refuting_e_process(refuted):
    assert refuted.verdict is Verdict.VIOLATED
    (violation,) = [v for v in refuted.violations if v.slot.key == "epsilon@0.0"]
    record = refuted.witness["refuting"]
    assert record["test"] == "anytime" and record["slot"] == "epsilon@0.0" and record["pair"] == violation.pair
    assert record["bound"] == violation.bound and record["allowed"] == 1.0
    assert record["rounds"] == violation.rounds == refuted.draws["looks"]["anytime"]["rounds"]
    assert record["n"] == violation.n
    # The e-value passed 1/level: Ville's inequality rejects the claim at that level.
    assert record["log_evalue"] >= math.log(1.0 / record["level"])
    # Second route: the rounds recorded as evidence, bet again at the claim's ε, give the same e-value,
    # and the rounds' factors multiply to it (one pair: its e-process is the mean's).
    rounds = [e for e in refuted.evidence if e["slot"] == "epsilon@0.0" and e["pair"] == record["pair"]]
    assert [e["round"] for e in rounds] == list(range(1, record["rounds"] + 1))
    bets = [Bet(e["count_more_likely"], e["count_other"], e["n"], e["bet"], 0.0) for e in rounds]
    assert log_evalue(Family.EPSILON, 0.0, bets, 1.0) == pytest.approx(record["log_evalue"], rel=1e-12)
    assert sum(record["round_log_evalues"]) == pytest.approx(record["log_evalue"], rel=1e-12)
    assert refuted.witness["epsilon"]["bound"] == refuted.epsilon_lower_bound


def test_every_view_shows_the_rounds_the_e_value_and_the_bound_not_one_round(refuted):
    record = refuted.witness["refuting"]
    rounds = [e for e in refuted.evidence if e["slot"] == "epsilon@0.0" and e["pair"] == record["pair"]]
    last = rounds[-1]
    evalue = f"{math.exp(record['log_evalue']):.4g}"
    for view, text in _views(refuted).items():
        assert "≤ unknown" not in text, view  # no unfilled template
        assert "certification draws" not in text, view  # a round's few draws are not the evidence
        assert f"{record['rounds']} rounds" in text, view
        assert f"{record['n']:,} draws per side" in text, view
        assert last["event"] in text, view  # the rounds' events, each with its counts and bet
        assert f"{last['count_more_likely']:,} of {last['n']:,}" in text, view
        assert f"e-value {evalue}" in text, view
        assert f"1/level = {1 / record['level']:.4g}" in text, view
        assert f"ε at δ = 0 ≥ {record['bound']:.4g} at the stopping time" in text, view
        assert "above the 1 the claim allows" in text, view


def test_an_anytime_audit_that_refutes_nothing_shows_its_headline_e_process():
    report = run_audit(LaplaceMechanism(1.0), WORST, claim=PureDP(1.0), samples=2_000, anytime=True, seed=SEED,
                       progress=False, accuracy=False)
    assert report.verdict is Verdict.NOT_REFUTED and report.witness["refuting"] is None
    record = report.witness["epsilon"]
    assert record["test"] == "anytime" and record["bound"] == report.epsilon_lower_bound
    text = report.summary()
    assert "≤ unknown" not in text and "certification draws" not in text
    assert f"e-value {math.exp(record['log_evalue']):.4g}" in text
    assert f"ε at δ = 0 ≥ {record['bound']:.4g} at the stopping time" in text
    assert "the claim allows at most 1" in text


BROKEN_FILE = """
name = "broken-laplace"
[mechanism]
name = "laplace"
epsilon = 1.0
sensitivity = 0.5
[claim]
type = "pure-dp"
epsilon = 1.0
[scenario]
kind = "counting"
d = 1
[audit]
samples = 20_000
seed = 20261126
anytime = true
"""


def test_the_terminal_shows_the_anytime_witness_of_several_pairs(tmp_path, capsys):
    path = tmp_path / "broken.toml"
    path.write_text(BROKEN_FILE)
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--no-plots", "--no-progress"]) == 1
    out = capsys.readouterr().out
    (entry,) = json.loads((tmp_path / "out" / "report.json").read_text())["audits"]
    record = entry["report"]["witness"]["refuting"]
    pairs = record["pairs"]
    assert pairs == len(entry["report"]["pairs"]) > 1
    # The leading pair's rounds multiply to its own e-value; the tested mean of the pairs' e-values
    # lies between that over the number of pairs and it (all e-values are nonnegative).
    assert sum(record["round_log_evalues"]) == pytest.approx(record["pair_log_evalue"], rel=1e-12)
    leader = record["pair_log_evalue"]
    assert leader - math.log(pairs) - 1e-9 <= record["log_evalue"] <= leader + 1e-9
    assert "≤ unknown" not in out and "certification draws" not in out
    assert f"e-value {math.exp(record['log_evalue']):.4g} against the claim's ε at δ = 0 ≤ 1" in out
    assert (f"the mean of the {pairs} pairs' e-processes; that of pair {record['pair']!r}, the product of the "
            f"rounds' factors above, is {math.exp(record['pair_log_evalue']):.4g}") in out
    assert f"{record['n']:,} draws per side of each pair" in out


def test_an_anytime_report_written_before_the_witness_section_renders_from_its_evidence(refuted):
    old = refuted.to_dict()
    record = old.pop("witness")["refuting"]
    text = summary_text(old)
    assert "≤ unknown" not in text and "certification draws" not in text
    assert f"{record['rounds']} rounds" in text
    # Recomputed from the evidence alone: the same e-value and bound.
    assert f"e-value {math.exp(record['log_evalue']):.4g}" in text
    assert f"ε at δ = 0 ≥ {record['bound']:.4g} at the stopping time" in text
