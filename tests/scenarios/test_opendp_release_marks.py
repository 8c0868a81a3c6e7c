"""The OpenDP catalogue names a fixed known issue only on the releases older than its fix
(scenarios/libraries/opendp.py, _before), checked against a second route: PEP 440's ordering as
``packaging.version.Version`` implements it, of the release each string is numbered for (a pre-,
development, post or local release counts as that release, as _before documents)."""

import pytest

from scenarios.libraries import opendp

RELEASES = ["0.14.1", "0.14.2", "0.14.2.post1", "0.14.2+local", "0.14.2.dev20250101", "0.14.2rc1", "0.14.2a1",
            "0.14.2b2", "0.14.3", "0.15", "0.15.0a1", "0.15.0rc1", "0.15.0.dev3", "0.15.0", "0.15.0.post1",
            "0.15.1", "0.16.0", "1.0", "0.9.10", "0.14", "0.14.10"]


@pytest.mark.parametrize("fixed", ["0.14.2", "0.15.0"])
@pytest.mark.parametrize("installed", RELEASES)
def test_a_known_issue_is_marked_exactly_on_the_releases_pep_440_orders_before_its_fix(monkeypatch, installed, fixed):
    Version = pytest.importorskip("packaging.version").Version
    monkeypatch.setattr(opendp, "_installed_release", lambda: installed)
    numbered_for = Version(Version(installed).base_version)
    assert opendp._before(fixed, "issue") == ("issue" if numbered_for < Version(fixed) else "")


@pytest.mark.parametrize("installed", ["", "unknown"])
def test_an_unreadable_release_keeps_the_mark(monkeypatch, installed):
    monkeypatch.setattr(opendp, "_installed_release", lambda: installed)
    assert opendp._before("0.15.0", "issue") == "issue"
