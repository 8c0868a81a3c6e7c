"""The witness in every view of a report: which pair, which statistic, which event and its counts.

Statistical content (seeds fixed, so each outcome below is deterministic; none of the assertions
rests on a tolerance):

- ``ExponentialMedian(2, top=5, max_size=4)`` has exact pure ε 1.771 (docs/search.md) and is audited
  against a 1-DP claim after a pair search: the seed used refutes it;
- ``LaplaceMechanism(1.5)`` is exactly 1.5-DP, audited against 1-DP at 5,000 samples with seed 14:
  the refuting headline joint test certifies ε ≥ 1.067 while a curve point of the trade-off band
  certifies ε ≥ 1.090 at δ = 0 — the report's ε_lb — which is the case the witness note explains.
"""

from __future__ import annotations

import dataclasses
import html
import re

import numpy as np
import pytest

import scenarios
from audit import run_audit
from audit.render.html import audit_section
from audit.render.markdown import summary_markdown
from audit.render.text import statistic_text, summary_text
from mechanisms import LaplaceMechanism, PureDP
from mechanisms.zoo.search_examples import ExponentialMedian
from scenarios import domains

pytestmark = pytest.mark.statistical


@pytest.fixture(scope="module")
def searched():
    """A refuted audit whose pairs a search found (the issue's "worst pair searched #3")."""
    spec = scenarios.search(domains.integers(0, 5, n=(0, 3)), "add-remove", budget=30, m=2, explore_samples=2000)
    return run_audit(ExponentialMedian(2.0, top=5, max_size=4), spec, claim=PureDP(1.0), samples=20_000,
                     seed=3, progress=False, accuracy=False)


def _entry(report, name="search"):
    return {"name": name, "path": "x.toml", "expected": None, "note": "", "warnings": [], "error": None,
            "figures": {}, "noise_density": None, "report": report.to_dict()}


def test_the_report_records_which_event_refutes_and_which_attains_each_bound(searched):
    witness = searched.witness
    assert searched.verdict.value == "VIOLATED"
    refuting = searched.evidence[witness["refuting"]["evidence"]]
    assert refuting["test"] == "joint" and refuting["refutes"]
    attained = searched.evidence[witness["epsilon"]["evidence"]]
    assert witness["epsilon"]["bound"] == pytest.approx(searched.epsilon_lower_bound)
    assert attained["pair"] in [pair.label for pair in searched.pairs]


def test_summary_markdown_and_html_show_the_pair_as_data_the_statistic_and_the_event(searched):
    data = searched.to_dict()
    refuting = searched.evidence[searched.witness["refuting"]["evidence"]]
    pair = next(p for p in data["scenario"]["pairs"] if p["label"] == refuting["pair"])
    added = f"D′ is D plus the row [{pair['added'][0][0]:g}]" if pair.get("added") else "D′ is D minus the row"
    counts = f"{refuting['count_more_likely']:,} of {refuting['n']:,} certification draws"
    views = {"summary()": searched.summary(),
             "summary.md": summary_markdown([_entry(searched)], {}),
             "report.html": audit_section(data),  # also the notebook's view (_repr_html_)
             "notebook": searched._repr_html_()}
    for view, text in views.items():
        text = html.unescape(text)
        assert refuting["pair"] in text, view
        assert added in text, view  # the row that differs, as data
        assert refuting["event"] in text, view  # the event in terms of the statistic
        assert counts in text, view
        assert "the output itself" in text, view  # the statistic and why auto chose it
        assert '"auto" chose linear' in text, view
        assert "statistic unknown" not in text, view


def test_html_names_the_statistic_instead_of_unknown(searched):
    page = audit_section(searched.to_dict(), figures={})
    assert "<b>statistic</b> auto → linear" in page


def test_slots_are_labels_rounded_for_people_not_keys(searched):
    text = searched.summary() + audit_section(searched.to_dict(), figures={})
    assert not re.search(r"(epsilon|delta)@\d", text)
    assert "ε at δ = 0" in text


def test_a_pure_dp_claim_allows_delta_zero_at_its_epsilon():
    # (ε, 0)-DP allows δ(ε') = max(0, 1 − (1 + e^ε')/(1 + e^ε)) (docs/ground-truth.md §3): exactly 0 at ε' = ε.
    claim = PureDP(1.0)
    assert float(claim.delta_at(1.0)) == 0.0 and float(claim.delta_at(3.0)) == 0.0
    report = run_audit(LaplaceMechanism(3.0), scenarios.counting(1), claim=claim, samples=5_000, seed=1,
                       progress=False, accuracy=False)
    delta = [v for v in report.to_dict()["violations"] if v["slot"].startswith("delta@")]
    assert delta and delta[0]["claimed"] == 0.0
    assert "but the claim allows at most 0" in report.summary() and "1.11e-16" not in report.summary()


def test_a_larger_table_bound_from_another_event_is_explained():
    report = run_audit(LaplaceMechanism(1.5), scenarios.counting(1), claim=PureDP(1.0), samples=5_000, seed=14,
                       progress=False, accuracy=False)
    witness = report.witness
    refuting = report.evidence[witness["refuting"]["evidence"]]
    assert witness["epsilon"]["evidence"] != witness["refuting"]["evidence"]
    assert refuting["bound"] < report.epsilon_lower_bound  # 1.067 against 1.090: both valid, both shown
    text = report.summary()
    assert f"≥ {refuting['bound']:.4g}" in text and f"{report.epsilon_lower_bound:.4g}" in text
    assert "its largest certified bound, from a certified point" in text
    assert "so both stand and the table shows the larger" in text


@dataclasses.dataclass(frozen=True)
class Projection:
    """A user's statistic with numpy numbers in its fields, as DP-SGD's ProjectionSum has."""

    direction: tuple
    steps: int

    def __call__(self, outputs):
        return outputs @ np.asarray(self.direction)


def test_a_callable_statistic_is_shown_by_its_fields_not_its_repr():
    statistic = Projection(tuple(np.float64(v) for v in np.linspace(0.1, 1.0, 6)), 2)

    def six(dataset, size, rng):
        return np.sum(dataset) + rng.normal(0.0, 1.0, (size, 6))

    report = run_audit(six, scenarios.counting(1), claim=PureDP(1.0), samples=2_000, seed=2, statistic=statistic,
                       progress=False)
    text = statistic_text(report.to_dict()["statistic"])
    assert text == "Projection(direction=<6 numbers>, steps=2)"
    assert "np.float64" not in report.summary() and "np.float64" not in audit_section(report.to_dict(), figures={})


def test_a_report_written_before_the_witness_section_still_renders(searched):
    old = searched.to_dict()
    old.pop("witness")
    old["statistic"].pop("option_text")
    text = summary_text(old)
    assert "witness" in text and old["violations"][0]["pair"] in text


@pytest.mark.parametrize("seed, side", [(2, "complement"), (4, "event")])
def test_the_witness_says_whether_epsilon_comes_from_the_event_or_its_complement(seed, side):
    # Laplace(0.5) on a count, audited against 1-DP: a curve point attains the headline ε at
    # δ = 0.  At seed 2 its ε comes from ln((1 − δ − α_hi)/β_hi), the complement of the printed
    # event; at seed 4 from ln((1 − δ − β_hi)/α_hi), the event itself (both checked below).
    report = run_audit(LaplaceMechanism(0.5), scenarios.counting(1), claim=PureDP(1.0), samples=5_000, seed=seed,
                       progress=False, accuracy=False)
    record = report.witness["epsilon"]
    event = report.evidence[record["evidence"]]
    assert event.get("test") != "joint" and report.witness["refuting"] is None
    alpha, beta, n = event["alpha_hi"], event["beta_hi"], event["n"]
    from_event, from_complement = np.log((1 - beta) / alpha), np.log((1 - alpha) / beta)
    assert record["bound"] == pytest.approx(max(from_event, from_complement), rel=1e-12)
    assert (from_complement > from_event) == (side == "complement")
    more, other = event["count_more_likely"], event["count_other"]
    text = report.summary()
    page = html.unescape(audit_section(report.to_dict(), figures={}))
    for view in (text, page):  # auto's comparison, explained where it is shown
        assert "auto tried" in view and "usage: the share of what the claim allows" in view
        assert "separation: the difference of the statistic's means on D′ and D" in view
    if side == "complement":
        # The counts shown are those of the complement, and their plug-in ratio is at least the
        # certified bound (Clopper–Pearson only lowers it).
        assert f"from the complement not ({event['event']}), more likely on D" in text
        assert f"{n - other:,} of {n:,} on D and {n - more:,} of {n:,} on D′" in text
        assert np.log((n - other) / (n - more)) >= record["bound"]
        assert "ε ≥ ln((1 − δ − α_hi)/β_hi)" in text
    else:
        assert "from the event itself" in text and "ε ≥ ln((1 − δ − β_hi)/α_hi)" in text
        assert np.log(more / other) >= record["bound"]


def test_the_other_searched_pairs_are_shown_as_data(searched):
    data = searched.to_dict()
    witness_pair = searched.evidence[searched.witness["refuting"]["evidence"]]["pair"]
    others = [p for p in data["scenario"]["pairs"] if p["label"] != witness_pair]
    assert others, "the search found more than one pair"
    views = {"summary()": searched.summary(), "summary.md": summary_markdown([_entry(searched)], {}),
             "report.html": html.unescape(audit_section(data, figures={}))}
    for pair in others:
        shown = lambda values: "[" + ", ".join(f"{v:g}" for v in np.ravel(values)) + "]"  # noqa: E731
        for view, text in views.items():
            assert pair["label"] in text, view
            assert f"D = {shown(pair['base'])}" in text, (view, pair["label"])
            assert f"D′ = {shown(pair['neighbor'])}" in text, (view, pair["label"])
