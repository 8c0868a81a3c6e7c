"""report.html: self-contained, written by ``dpaudit run``, and really rendered by a browser.

The browser test runs headless Chromium (``--dump-dom`` after the page's load event, with the
page's own script counting the figures the browser decoded); it is skipped, saying why, when no
Chromium is installed.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

pytest.importorskip("matplotlib")

import scenarios  # noqa: E402
from audit import run_audit  # noqa: E402
from audit.cli import main  # noqa: E402
from audit.render.files import load_report  # noqa: E402
from audit.render.html import audit_section, report_html  # noqa: E402
from mechanisms import GaussianMechanism  # noqa: E402

# Every test rests on seeded audits of true claims being NOT_REFUTED (the run's exit status 0, the
# verdict in the page): each such verdict is a false alarm with probability ≤ 1 − confidence.
pytestmark = pytest.mark.statistical

SCENARIO = """name = "{name}"
[mechanism]
name = "gaussian"
epsilon = {epsilon}
delta = {delta}
calibration = "{calibration}"
[scenario]
kind = "counting"
d = 1
[audit]
samples = 20_000
seed = 5
"""
# Vector output with a non-query column (the noisy size ñ), whose accuracy row has no exceedances.
CORRELATED = """name = "correlated"
[mechanism]
name = "correlated-gaussian"
mu = 1.0
d = 4
[scenario]
kind = "counting"
d = 4
[audit]
samples = 20_000
seed = 5
"""
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


@pytest.fixture(scope="module")
def html_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("html")
    paths = []
    for name, epsilon, delta, calibration in (("analytic", 1.0, 1e-5, "analytic"), ("zcdp", 1.0, 1e-5, "zcdp")):
        path = folder / f"{name}.toml"
        path.write_text(SCENARIO.format(name=name, epsilon=epsilon, delta=delta, calibration=calibration))
        paths.append(path)
    (folder / "correlated.toml").write_text(CORRELATED)
    paths.append(folder / "correlated.toml")
    code = main(["run", *map(str, paths), "--out", str(folder / "out"), "--no-progress"])
    assert code == 0
    return folder / "out"


def test_run_writes_a_self_contained_report_html(html_run):
    page = (html_run / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    # Every figure is embedded; nothing refers to another file or to the network.
    sources = re.findall(r'src="([^"]*)"', page)
    assert len(sources) == 9 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert not re.search(r'(href|src)="(https?:|file:|figures/)', page)
    for name in ("analytic", "zcdp", "correlated"):
        assert f'id="audit-{name}"' in page and f'href="#audit-{name}"' in page
    # claim / exact / certified, at the per-audit confidence that Bonferroni over the run's audits
    # gives (several files: 1 − 0.05/m each)
    assert re.search(r"certified lower bound \(confidence 0\.9\d*, jointly\)", page)
    assert "certified events" in page  # the evidence per audit
    assert "T(α_hi) ≤ β_hi" in page and "upper bound on T" in page


def _browser():
    return next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)


def test_report_html_renders_in_a_headless_browser(html_run, tmp_path):
    browser = _browser()
    if browser is None:
        pytest.skip("no Chromium/Chrome installed (e.g. `apt-get install chromium`); "
                    "report.html was not opened in a browser")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000", "--dump-dom",
               (html_run / "report.html").resolve().as_uri()]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    dom = result.stdout
    # The page's script ran after load and found every figure decoded by the browser.
    assert 'data-figures-total="9"' in dom and 'data-figures-shown="9"' in dom, dom[:500]
    assert "dpaudit report" in dom and "NOT_REFUTED" in dom and "analytic" in dom and "zcdp" in dom


def test_audit_report_shows_itself_as_html_in_a_notebook():
    report = run_audit(GaussianMechanism(1.0, 1e-5), scenarios.counting(1), samples=20_000, seed=5,
                       progress=False)
    page = report._repr_html_()
    assert page.startswith("<section") and page.rstrip().endswith("</section>")
    assert page.count('src="data:image/png;base64,') == 3  # trade-off, ε(δ), accuracy
    assert report.mechanism in page and "NOT_REFUTED" in page
    assert f"{report.epsilon_lower_bound:.4g}" in page
    assert 'src="data:' not in report.to_html(figures=False)


def test_every_value_from_a_report_is_escaped(html_run):
    """Names, notes, warnings and errors come from users' files: the templates escape them all."""
    document = load_report(html_run / "report.json")
    hostile = "<script>alert('x')</script> & \"quoted\""
    entry = dict(document["audits"][0], name=hostile, note=hostile, warnings=[hostile], path=hostile)
    entry["report"] = dict(entry["report"], mechanism=hostile, worst_pair=hostile)
    failed = dict(entry, name="failed " + hostile, report=None, error=hostile)
    for page in (audit_section(entry["report"], name=hostile, entry=entry),
                 report_html([entry, failed], {"note": hostile}, html_run)):
        assert "<script>alert" not in page and "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
        assert "&amp; &#34;quoted&#34;" in page
