"""Sweeping releases: the release and range specs, environments, and the table across releases.

No release is installed here (CI installs none): the sweep run inside an environment is replaced by
a fake that returns fixed sweep documents, and a release whose interpreter does not exist shows how
a release that cannot be installed is reported.  Deterministic throughout.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit.sweep import releases, versions
from audit.sweep.releases import Environment, parse_release, register_release_rule, select_releases

RELEASES = ["0.1.0", "0.2.0", "0.2.1rc1", "0.3.0", "0.10.0", "1.0"]


def test_a_release_and_a_range_are_read_as_a_user_writes_them():
    assert parse_release("opendp==0.14.0") == ("opendp", "0.14.0") and parse_release("opendp") == ("opendp", None)
    with pytest.raises(ValueError, match="give a release after '=='"):
        parse_release("opendp==")
    assert select_releases("0.2.0..0.10.0", RELEASES) == ["0.2.0", "0.3.0", "0.10.0"]  # no pre-release, 0.10 > 0.3
    assert select_releases("0.3.0..", RELEASES) == ["0.3.0", "0.10.0", "1.0"]
    assert select_releases("..0.2.0", RELEASES) == ["0.1.0", "0.2.0"]
    assert select_releases("last:2", RELEASES) == ["0.10.0", "1.0"]
    for bad, message in (("0.2", "must be A..B"), ("0.2.0..9.9", "'9.9' is not a release"), ("last:0", "positive"),
                         ("1.0..0.1.0", "picks no final release")):
        with pytest.raises(ValueError, match=message):
            select_releases(bad, RELEASES)


def test_releases_get_the_pins_they_need():
    assert "numpy<2" in releases.release_environment("opendp", "0.4.0").pins
    assert "numpy<2" not in releases.release_environment("opendp", "0.14.0").pins
    # the Polars the release's own extra pins, from 0.11 (make_private_lazyframe's entry needs it)
    assert releases.release_environment("opendp", "0.12.1").pins == ("opendp[polars]==0.12.1",)
    assert not any("polars" in pin for v in ("0.4.0", "0.10.0") for pin in releases.release_environment("opendp", v).pins)
    old = releases.release_environment("diffprivlib", "0.4.0")
    assert old.python == "python3.10" and "scikit-learn==1.0.2" in old.pins
    # 0.5.0 and 0.5.1 import scikit-learn's _logistic_loss_and_grad, which 1.1 removed; 0.5.2 its own copy
    assert "scikit-learn==1.0.2" in releases.release_environment("diffprivlib", "0.5.1").pins
    assert "scikit-learn==1.0.2" not in releases.release_environment("diffprivlib", "0.5.2").pins
    assert releases.release_environment("opacus", "1.5.2").system_site
    # diffprivlib 0.4's histograms pass histogramdd(normed=), which numpy 1.24 removed: its pin wins
    # over dpaudit's own numpy floor, and only that requirement is dropped.
    assert "numpy==1.23.5" in old.pins
    kept = releases._unpinned(releases.DPAUDIT_DEPENDENCIES, old.pins)
    assert not any(d.startswith("numpy") for d in kept) and "scipy>=1.12" not in kept
    assert len(kept) == len(releases.DPAUDIT_DEPENDENCIES) - 2
    assert releases._unpinned(["Scikit_Learn>=1.0", "jinja2>=3.1"], ["scikit-learn==1.0.2"]) == ["jinja2>=3.1"]


def _document(version, verdicts):
    rows = []
    for (entry, point), verdict in verdicts.items():
        row = {"entry": entry, "point": point, "key": f"{entry} [{point}]", "known": ""}
        if verdict == "absent":
            row.update(status="absent", reason="not in this release: x")
        elif verdict == "ERROR":
            row.update(status="error", error="boom")
        else:
            row.update(status="done", verdict=verdict, epsilon_lb=2.5 if verdict == "VIOLATED" else 0.1,
                       refutable=True)
        rows.append(row)
    return {"library": "fake", "version": version, "rows": rows, "finished": True}


def test_a_range_writes_one_table_per_entry_across_releases(tmp_path, monkeypatch):
    bug, new = ("make_thing", "p=1"), ("make_new", "p=1")
    runs = {"0.1.0": {bug: "NOT_REFUTED", new: "absent"}, "0.2.0": {bug: "VIOLATED", new: "absent"},
            "0.3.0": {bug: "VIOLATED", new: "NOT_REFUTED"}, "0.10.0": {bug: "NOT_REFUTED", new: "NOT_REFUTED"}}
    seen = []

    def fake_sweep(python, library, arguments, out):
        version = Path(out).name
        seen.append(arguments)
        doc = _document(version, runs[version])
        return (1 if "VIOLATED" in runs[version].values() else 0), doc, ""

    monkeypatch.setattr(versions, "ensure_environment", lambda *a, **k: Path("/fake/python"))
    monkeypatch.setattr(versions, "sweep_in_environment", fake_sweep)
    result = versions.sweep_versions("fake", "fake", list(runs), out=tmp_path, arguments=["--budget", "small"],
                                     confidence=0.95, log=lambda line: None)
    # Bonferroni over the releases: each runs at 1 − 0.05/4.
    assert all(a[a.index("--confidence") + 1] == repr(1 - 0.05 / 4) for a in seen)
    row = result["rows"]["make_thing [p=1]"]
    assert [row["cells"][v] for v in runs] == ["ok", "VIOLATED (ε ≥ 2.5)", "VIOLATED (ε ≥ 2.5)", "ok"]
    assert result["rows"]["make_new [p=1]"]["cells"]["0.1.0"] == "—"
    text = (tmp_path / "versions.md").read_text()
    assert "### make_thing" in text and "VIOLATED from 0.2.0; not refuted from 0.10.0" in text
    assert result["status"] == 1 and json.loads((tmp_path / "versions.json").read_text())["status"] == 1


def test_a_row_that_links_different_known_issues_on_different_releases_lists_each_with_its_releases():
    """A grid point refuted for one bug on old releases and another on newer ones (Opacus's sequence
    ghost-clipping point: opacus#664 on 1.5.2, #751 on 1.5.3) names both, each with its releases."""
    found = {"1.5.2": {"known": "#664"}, "1.5.3": {"known": "#751"}, "1.5.4": {"known": ""}, "1.6.0": None}
    assert versions.known_across(found) == "#664 (on 1.5.2); #751 (on 1.5.3)"
    assert versions.known_across({"0.1": {"known": "#1"}, "0.2": {"known": "#1"}}) == "#1"
    assert versions.known_across({"0.1": None, "0.2": {"known": ""}}) == ""


def test_a_release_that_cannot_be_installed_or_errors_fails_the_range(tmp_path, monkeypatch):
    register_release_rule("fake-uninstallable", lambda version: Environment("python0.1"))
    monkeypatch.setattr(versions, "sweep_in_environment",
                        lambda python, library, arguments, out: (3, _document("0.2.0", {("a", "p"): "ERROR"}), ""))
    result = versions.sweep_versions("fake-uninstallable", "fake-uninstallable", ["0.1.0"], out=tmp_path,
                                     arguments=[], confidence=0.95, log=lambda line: None,
                                     environments=tmp_path / "envs")
    assert result["status"] == 3 and "no python0.1 interpreter" in result["releases"][0]["error"]
    result = versions.sweep_versions("fake", "fake", ["0.2.0"], out=tmp_path, arguments=[], confidence=0.95,
                                     log=lambda line: None, installed="0.2.0")
    assert result["status"] == 3 and result["rows"]["a [p]"]["cells"]["0.2.0"] == "ERROR"


def test_the_cli_refuses_a_release_with_a_range(tmp_path):
    from audit.cli import main

    assert main(["sweep", "opendp==0.14.0", "--versions", "0.1..0.2", "--out", str(tmp_path)]) == 2


def test_an_installed_release_older_than_the_catalogue_gets_the_catalogue_for_older_releases(monkeypatch):
    from scenarios.libraries import registry

    # A library whose newer releases have a module the installed one lacks: the older catalogue is chosen.
    monkeypatch.setitem(registry.OLDER_RELEASES, "fake-old", ("json.no_such_module", "fake_old_catalogue"))
    assert registry._older_release("fake-old") == "fake_old_catalogue"
    # The module exists: the built-in catalogue; the library itself is absent: the built-in one, which
    # says how to install it.
    monkeypatch.setitem(registry.OLDER_RELEASES, "fake-new", ("json.decoder", "fake_old_catalogue"))
    monkeypatch.setitem(registry.OLDER_RELEASES, "fake-absent", ("no_such_library.prelude", "fake_old_catalogue"))
    assert registry._older_release("fake-new") is None and registry._older_release("fake-absent") is None


def test_an_entry_whose_names_the_release_lacks_is_not_in_this_release():
    from scenarios.libraries import missing_api

    assert missing_api(("json.dumps",)) is None
    assert missing_api(("json.no_such_function", "json.dumps")) is None  # one name present: the entry is
    assert missing_api(("json.no_such_function",)) == "not in this release: json.no_such_function not found"
    assert missing_api(("toy.label.only",)) is None  # not a path: nothing decided


def test_a_module_that_is_there_but_needs_a_missing_one_is_not_called_absent(tmp_path, monkeypatch):
    """snsynth 1.0.5's ``snsynth.models`` imports ``sklearn.linear_model.base``, which a new
    scikit-learn lacks: its names are undecided, not "not in this release"."""
    from scenarios.libraries import missing_api

    package = tmp_path / "oldlib"
    (package / "models").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "models" / "__init__.py").write_text("import no_such_dependency_here\nThing = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert missing_api(("oldlib.models.Thing",)) is None
    assert missing_api(("oldlib.gone.Thing",)) == "not in this release: oldlib.gone.Thing not found"


@pytest.mark.statistical
def test_the_installed_release_named_with_its_version_is_swept_in_place(tmp_path, capsys):
    import numpy as np

    import sweep_toy_library as toy
    from audit.cli import main

    # The toy library's distribution is numpy: naming the installed numpy runs no environment.
    status = main(["sweep", f"{toy.NAME}=={np.__version__}", "--budget", "small", "--out", str(tmp_path),
                   "--no-progress", "--entries", "labels.*"])
    assert status == 1 and json.loads((tmp_path / "sweep.json").read_text())["library"] == toy.NAME
    assert "building the environment" not in capsys.readouterr().err


def test_an_interrupted_range_writes_the_releases_done(tmp_path, monkeypatch):
    from audit.sweep.runner import SweepInterrupted

    def fake_sweep(python, library, arguments, out):
        if Path(out).name == "0.2.0":
            raise KeyboardInterrupt
        return 0, _document("0.1.0", {("a", "p"): "NOT_REFUTED"}), ""

    monkeypatch.setattr(versions, "ensure_environment", lambda *a, **k: Path("/fake/python"))
    monkeypatch.setattr(versions, "sweep_in_environment", fake_sweep)
    with pytest.raises(SweepInterrupted, match="1 of 3 releases swept.*--resume"):
        versions.sweep_versions("fake", "fake", ["0.1.0", "0.2.0", "0.3.0"], out=tmp_path, arguments=[],
                                confidence=0.95, log=lambda line: None)
    saved = json.loads((tmp_path / "versions.json").read_text())
    assert saved["finished"] is False and saved["rows"]["a [p]"]["cells"]["0.1.0"] == "ok"
    assert "**Unfinished**" in (tmp_path / "versions.md").read_text()


def test_an_installed_library_whose_catalogue_cannot_import_is_not_called_a_missing_extra(monkeypatch):
    from scenarios.libraries import registry

    # numpy is installed; a catalogue module that fails to import it is not "install the extra".
    monkeypatch.setitem(registry.BUILT_IN, "numpy", "json.no_such_catalogue")
    with pytest.raises(ImportError, match=r"numpy \S+ is installed but its catalogue cannot use it.*numpy==VERSION"):
        registry.library("numpy")


def test_entries_patterns_select_grid_points():
    """``--entries 'ENTRY [POINT]'`` keeps the rows of that entry whose point matches (the brackets
    are not a glob character class); a plain pattern keeps every point, and a whole entry the
    release lacks (point "*") stays wherever its entry is selected."""
    from types import SimpleNamespace

    from audit.sweep.runner import _select_points

    cases = tuple(SimpleNamespace(entry=e, point=p) for e, p in
                  [("make_private", "C=1.0"), ("make_private", "C=0.2, mode=ghost"), ("rdp", "q=0.5")])
    absent = [{"entry": "make_private", "point": "C=0.5, clipping=adaptive"}, {"entry": "gone", "point": "*"}]
    kept, lacking = _select_points(cases, absent, ["make_private [*ghost*]", "gone"])
    assert [c.point for c in kept] == ["C=0.2, mode=ghost"] and lacking == [absent[1]]
    kept, lacking = _select_points(cases, absent, ["make_private"])
    assert len(kept) == 2 and lacking == [absent[0]]
    assert _select_points(cases, absent, None) == (cases, absent)


def _script(version, bound, body="import numpy as np\nprint('same body')\n"):
    return (f'"""Reproduce: fake make_thing [p=1]\n\nThe sweep of fake {version} (dpaudit 0.1.0, 2026-01-01) reported '
            f'VIOLATED for make_thing [p=1]: certified epsilon >= {bound}.\n\nThis script uses the library.\n"""\n{body}')


def test_a_row_refuted_on_several_releases_gets_one_script_that_lists_each_finding(tmp_path):
    bodies = {"0.1.0": None, "0.2.0": None, "0.3.0": "print('another release function')\n"}
    for index, (version, body) in enumerate(bodies.items()):
        document = _document(version, {("make_thing", "p=1"): "VIOLATED", ("make_other", "p=1"): "NOT_REFUTED"})
        document["rows"][0].update(slug="make_thing_p_1-abc", repro={"path": "repro/make_thing_p_1-abc.py"})
        for row in document["rows"]:
            row.update(claim="1-DP", relation="replace", delta_lb=0.0, mu_lb=0.0)
        document.update(date="2026-01-01", dpaudit="0.1.0", budget="small", rows_planned=2, row_confidence=0.975,
                        confidence=0.95, coverage={"public": [], "covered": {}, "excluded": {}, "unaccounted": [],
                                                   "fraction": 1.0})
        (tmp_path / version / "repro").mkdir(parents=True)
        (tmp_path / version / "repro" / "make_thing_p_1-abc.py").write_text(
            _script(version, 2.5 + index, *([body] if body else [])))
        (tmp_path / version / "sweep.json").write_text(json.dumps(document))
    written = versions.merge_scripts(tmp_path, list(bodies))
    # 0.1.0 and 0.2.0 agree but for their findings: one script; 0.3.0's body differs: its own
    assert sorted(w["versions"] for w in written) == [["0.1.0", "0.2.0"], ["0.3.0"]]
    shared = next(w for w in written if len(w["versions"]) == 2)
    text = (tmp_path / shared["path"]).read_text()
    assert "Found on 2 release(s)" in text and ">= 2.5" in text and ">= 3.5" in text and text.endswith("print('same body')\n")
    assert not (tmp_path / "0.1.0" / "repro").exists()
    for version in ("0.1.0", "0.2.0"):
        row = json.loads((tmp_path / version / "sweep.json").read_text())["rows"][0]
        assert row["repro"]["path"] == "../" + shared["path"]
        assert f"](../{shared['path']})" in (tmp_path / version / "sweep.md").read_text()
    # run again (a resumed range): nothing moves, and the shared script keeps both findings
    assert versions.merge_scripts(tmp_path, list(bodies)) == written
    assert (tmp_path / shared["path"]).read_text() == text
