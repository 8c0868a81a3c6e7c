"""The gray-box audit through every front door: run_audit, [audit] tables, the CLI, the pytest
plugin, and every report form (terminal, summary.md, report.json, report.html)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from audit import AuditSettings, graybox_audit, load_spec, run_audit
from audit.cli import main as cli_main
from audit.render.graybox import graybox_html, graybox_lines, graybox_markdown, site_link
from audit.testing import assert_no_graybox_finding
from mechanisms import LaplaceMechanism
from mechanisms.zoo.faulty import PerQueryLaplaceMechanism
from scenarios import counting

FAULTY_FILE = """
name = "laplace-per-query-graybox"
expected = "violated"

[mechanism]
callable = "mechanisms.zoo.faulty:PerQueryLaplaceMechanism"
epsilon = 0.5
d = 4

[scenario]
kind = "counting"
d = 4
n = 10
relation = "add-remove"

[audit]
samples = 20000
seed = 3
graybox = true
"""


def test_graybox_setting_is_validated_and_read_from_a_file(tmp_path):
    with pytest.raises(TypeError, match="`graybox` must be True or False, got 'yes'"):
        AuditSettings(graybox="yes")
    assert AuditSettings.parse("graybox", "true") is True
    path = tmp_path / "s.toml"
    path.write_text(FAULTY_FILE)
    assert load_spec(path).settings.graybox is True
    assert "graybox" not in AuditSettings().to_dict()  # unchanged JSON form when it is off


def test_the_pytest_assertion_is_deterministic_and_names_the_line():
    assert_no_graybox_finding(LaplaceMechanism(1.0, d=2))
    with pytest.raises(AssertionError, match=r"laplace\.py:\d+ .*Σ\|Δᵢ\|/bᵢ \(ε\): 2 against 0.5"):
        assert_no_graybox_finding(PerQueryLaplaceMechanism(0.5, d=4))


def test_renderers_link_the_call_site_and_escape_table_cells():
    finding = {"kind": "sensitivity", "site": {"file": "/x/m.py", "line": 7, "function": "f"}, "measured": 2.0,
               "allowed": 0.5, "quantity": "Σ|Δᵢ|/bᵢ (ε)", "pair": "a|b", "message": "m", "certification": None}
    data = {"checks": [{}], "findings": [finding], "notes": ["n"]}
    assert site_link(finding["site"]) == "file:///x/m.py#L7"
    markdown = graybox_markdown(data)
    assert "[/x/m.py:7](file:///x/m.py#L7)" in markdown and "Σ\\|Δᵢ\\|/bᵢ" in markdown and "a\\|b" in markdown
    assert "<a href='file:///x/m.py#L7'>" in graybox_html(data)
    assert graybox_lines(data)[1].startswith("  [sensitivity] /x/m.py:7 (f)")
    assert graybox_lines({}) == [] and graybox_markdown({}) == "" and graybox_html({}) == ""


@pytest.mark.statistical
def test_run_audit_graybox_aims_the_audit_at_the_finding():
    # Laplace scale 1/ε = 2 on k = 4 counts: the all-ones pair has exact pure ε = kε = 2 > 0.5.
    # The aimed likelihood-ratio statistic certifies it at 20,000 draws (ε_lb = 1.375 at seed 3);
    # a correct mechanism meets its claim and has no finding (the replay draws nothing at random).
    report = run_audit(PerQueryLaplaceMechanism(0.5, d=4), counting(4), samples=20_000, seed=3, graybox=True,
                       progress=False, accuracy=False)
    assert str(report.verdict) == "VIOLATED" and report.epsilon_lower_bound > 0.5
    first = report.graybox["findings"][0]
    assert first["kind"] == "sensitivity" and first["site"]["file"].endswith("laplace.py")
    assert first["certification"]["verdict"] == "VIOLATED"
    assert report.to_dict()["graybox"]["findings"][0]["measured"] == pytest.approx(2.0)
    assert any("aimed at the finding's pair" in note for note in report.graybox["notes"])  # what the verdict covers
    quiet = run_audit(LaplaceMechanism(1.0, d=2), counting(2), samples=2_000, seed=3, graybox=True, progress=False,
                      accuracy=False)
    assert quiet.graybox["silent"] and not quiet.graybox["findings"]


@pytest.mark.statistical
def test_graybox_audit_certifies_each_finding_it_reports():
    report = graybox_audit(PerQueryLaplaceMechanism(0.5, d=4), counting(4), seed=3, samples=20_000, max_certified=1)
    certified = [f for f in report.findings if f.certification is not None]
    assert len(certified) == 1 and certified[0].certification.verdict == "VIOLATED"
    assert "laplace.py" in report.summary()


def test_graybox_audits_of_several_findings_share_the_confidence_by_bonferroni():
    """k certified findings each run at 1 − (1 − C)/k, so a correct mechanism's report shows any
    VIOLATED line with probability at most 1 − C. Its assertions are on levels and counts fixed by
    the replay, not on the audits' draws."""
    report = graybox_audit(PerQueryLaplaceMechanism(0.5, d=4), counting(4), seed=3, samples=2_000, max_certified=3,
                           confidence=0.9)
    certified = [f.certification for f in report.findings if f.certification is not None]
    keys = {(f.pair, f.kind) for f in report.findings}
    assert len(certified) == min(3, len(keys)) >= 1
    assert all(c.confidence == pytest.approx(1 - 0.1 / len(certified)) for c in certified)


@pytest.mark.statistical
def test_cli_graybox_shows_findings_in_every_report_form(tmp_path, capsys):
    path = tmp_path / "faulty.toml"
    path.write_text(FAULTY_FILE.replace("graybox = true\n", ""))
    out = tmp_path / "out"
    status = cli_main(["run", str(path), "--graybox", "--out", str(out), "--no-progress", "--no-plots"])
    assert status == 1
    terminal = capsys.readouterr().out
    assert "gray-box:" in terminal and "laplace.py:" in terminal
    entry = json.loads((out / "report.json").read_text())["audits"][0]
    assert entry["report"]["graybox"]["findings"][0]["kind"] == "sensitivity"
    assert "## Gray-box" in (out / "summary.md").read_text() and "#L" in (out / "summary.md").read_text()
    assert "class='graybox'" in (out / "report.html").read_text()
    assert np.isfinite(entry["report"]["epsilon_lower_bound"])


@pytest.mark.parametrize(("options", "error", "named"), [
    ({"seed": -1}, ValueError, "`seed`"), ({"seed": None}, ValueError, "`seed`"),
    ({"samples": "many"}, TypeError, "`samples`"), ({"samples": 50}, ValueError, "`samples`"),
    ({"confidence": 1.5}, ValueError, "`confidence`")])
def test_graybox_audit_refuses_bad_settings_naming_them_before_any_replay(options, error, named):
    calls = []

    def mechanism(dataset, size, rng):
        calls.append(size)
        return rng.laplace(size=(size, 1))
    with pytest.raises(error, match=named):
        graybox_audit(mechanism, counting(1), claim=LaplaceMechanism(1.0).claim, **options)
    assert calls == []


def test_graybox_audit_takes_the_sample_counts_the_settings_take():
    report = graybox_audit(PerQueryLaplaceMechanism(0.5, d=4), counting(4), seed=3, samples=2e3, max_certified=1)
    assert any(f.certification is not None for f in report.findings)


def test_a_graybox_run_at_seed_none_records_the_seed_its_replays_and_audit_used():
    """seed=None draws fresh entropy once; the ``graybox`` entry records it (not 0), the certified
    audit draws from it too, and a rerun at the recorded seed gives the same report."""
    fresh = run_audit(PerQueryLaplaceMechanism(0.5, d=4), counting(4), samples=2_000, seed=None, graybox=True,
                      progress=False, accuracy=False)
    seed = fresh.graybox["seed"]
    assert seed == fresh.seed and seed >= 2 ** 64  # SeedSequence's 128-bit entropy, as the engine draws
    rerun = run_audit(PerQueryLaplaceMechanism(0.5, d=4), counting(4), samples=2_000, seed=seed, graybox=True,
                      progress=False, accuracy=False)
    assert _timeless(rerun.to_dict(include_runtime=False)) == _timeless(fresh.to_dict(include_runtime=False))


def _timeless(value):
    """``value`` without its timings (keys naming seconds), which differ between runs."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if "seconds" not in k}
    return [_timeless(v) for v in value] if isinstance(value, list) else value
