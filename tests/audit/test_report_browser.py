"""report.html in a real browser: a suite's report, rendered by headless Chromium at 1280 pixels.

The page is opened as a user would open it (a file:// URL) with a measuring script added after its
own: after the load event it opens every ``<details>``, then records on ``<body>``, as JSON, what
overflows its box (the page itself, any table, figure, witness or preformatted block wider than the
window or than its scrolling box), whether a claim or a verdict is broken inside a word (a
``span.word`` laid out on more than one line), which audit sections, witness blocks and figures are
there, and how many figures the browser decoded.  Chromium is Debian's ``chromium`` (``.ci/run``
installs it); without it the test is skipped, saying why.

The audits reproduce what makes the bundled suite's table wide: its longest audit names, a
privacy-profile claim of 107 characters, long mechanism names, both verdicts (20,000 samples each:
the page, not the bounds, is under test).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import warnings
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from audit.cli import main  # noqa: E402

pytestmark = pytest.mark.statistical  # it runs audits (whose pages, not bounds, are checked)

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WIDTH = 1280
#: The widest cells of the bundled suite: its longest audit names, a privacy-profile claim labelled
#: as dp-accounting labels one (107 characters), long mechanism names, both verdicts.
LONG_CLAIM = ("PLD profile of PoissonSampledDpEvent(sampling_probability=0.3, "
              "event=GaussianDpEvent(noise_multiplier=1.0))")
SUITE = {
    "grouped-correlated-gaussian-replace-paper": """
[mechanism]
name = "grouped-correlated-gaussian"
mu = 1.0
groups = 3
d = 4
[scenario]
kind = "grouped"
groups = 3
d = 4
relation = "replace"
""",
    "subsampled-gaussian-with-a-profile-claim": f"""
[mechanism]
name = "gaussian"
epsilon = 1.0
delta = 1e-5
[claim]
type = "profile"
epsilons = [0.5, 1.0, 2.0]
deltas = [0.1, 1e-5, 1e-9]
label = "{LONG_CLAIM}"
[scenario]
kind = "counting"
d = 1
""",
    "gaussian-classical-eps10-limit": """
expected = "violated"
[mechanism]
name = "gaussian"
calibration = "classical"
epsilon = 10.0
delta = 1e-5
[scenario]
kind = "counting"
d = 1
""",
    "correlated-gaussian-alg1-d16-replace": """
expected = "violated"
[mechanism]
name = "correlated-gaussian"
mu = 1.0
d = 16
[claim]
type = "gdp"
mu = 1.0
[scenario]
kind = "counting"
d = 16
relation = "replace"
""",
}
MEASURE = """<script>
window.addEventListener("load", function () {
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  var width = document.documentElement.clientWidth, found = {overflow: [], broken: []};
  if (document.documentElement.scrollWidth > width) {
    found.overflow.push("page " + document.documentElement.scrollWidth + " > " + width);
  }
  document.querySelectorAll("table, pre, figure, img, dl, .scroll, section, p, li").forEach(function (e) {
    var box = e.getBoundingClientRect();
    if (box.right > width + 0.5 || e.scrollWidth > e.clientWidth + 1) {
      found.overflow.push(e.tagName + "." + e.className + " right " + Math.round(box.right) + ", scroll " +
                          e.scrollWidth + " > " + e.clientWidth + ": " + e.textContent.slice(0, 60));
    }
  });
  document.querySelectorAll("span.word").forEach(function (e) {
    if (e.getClientRects().length > 1) { found.broken.push(e.textContent); }
  });
  found.sections = Array.prototype.map.call(document.querySelectorAll("section[id^=audit-]"), function (s) {
    return {id: s.id, witness: s.querySelectorAll("dl.witness").length,
            figures: s.querySelectorAll("img.figure").length};
  });
  var images = document.querySelectorAll("img.figure"), shown = 0;
  for (var i = 0; i < images.length; i++) { if (images[i].complete && images[i].naturalWidth > 0) { shown++; } }
  found.figures = {shown: shown, total: images.length};
  document.body.setAttribute("data-measured", JSON.stringify(found));
});
</script>
</body>"""


def _browser():
    return next((shutil.which(name) for name in BROWSERS if shutil.which(name)), None)


@pytest.fixture(scope="module")
def suite_report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("browser")
    paths = []
    for name, body in SUITE.items():
        paths.append(folder / f"{name}.toml")
        paths[-1].write_text(f'name = "{name}"\n{body}[audit]\nsamples = 20_000\nseed = 3\n')
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the classical calibration outside its proven range
        code = main(["run", *map(str, paths), "--out", str(folder / "out"), "--no-progress"])
    assert code == 1  # the replacement misuse of Algorithm 1 is refuted: both verdicts are on the page
    return folder / "out"


def render(page: Path, profile: Path) -> dict:
    browser = _browser()
    if browser is None:
        pytest.skip("no Chromium/Chrome installed (`apt-get install chromium`, which .ci/run does on Debian); "
                    "report.html was not opened in a browser")
    probe = page.with_name("measured.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", MEASURE), encoding="utf-8")
    command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", "--disable-sync", f"--user-data-dir={profile}",
               f"--window-size={WIDTH},1000", "--virtual-time-budget=10000", "--dump-dom", probe.resolve().as_uri()]
    result = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    found = re.search(r'data-measured="([^"]*)"', result.stdout)
    assert found, result.stdout[:500]
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<")
                      .replace("&gt;", ">").replace("&#39;", "'"))


def test_a_suite_report_fits_1280_pixels_and_shows_every_section_witness_and_figure(suite_report, tmp_path):
    measured = render(suite_report / "report.html", tmp_path / "profile")
    assert measured["overflow"] == [], measured["overflow"]
    assert measured["broken"] == [], f"words broken across lines: {measured['broken']}"
    document = json.loads((suite_report / "report.json").read_text())
    names = [entry["name"] for entry in document["audits"]]
    assert [section["id"] for section in measured["sections"]] == [f"audit-{name}" for name in names]
    assert all(section["witness"] == 1 for section in measured["sections"]), measured["sections"]
    figures = sum(len(entry["figures"]) for entry in document["audits"])
    assert [section["figures"] for section in measured["sections"]] == [len(e["figures"]) for e in document["audits"]]
    assert measured["figures"] == {"shown": figures, "total": figures} and figures >= 2 * len(names)
