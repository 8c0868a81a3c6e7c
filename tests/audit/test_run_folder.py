"""``dpaudit run`` as a careful user expects: unfinished work is never wiped, a file's confidence is a
floor, the error-control sentence is true, notes say what more samples could do, tables fit.

Statistical content (seeds fixed, so each verdict below is deterministic):

- the analytic Gaussian mechanism meets its (1, 1e-5) claim exactly; audited against ε = 0.99 at
  δ = 1e-5 its claim is false by 1% on the "add all-ones row" pair (exact μ = 1/σ there,
  :meth:`GaussianMechanism.pair_mu`), far below what 20,000 samples resolve, so it is not refuted;
- SVT4 (Lyu, Su & Li 2017, Alg. 4) claims 0.1-DP and is not (docs/literature.md); on the pair
  0⃗ / (0, …, 0, 1) its exact pure ε is 0.075 (``pair_epsilon``, by quadrature), so no number of
  samples refutes the claim on that pair;
- SVT3 releases noisy answers, whose exact ε on its file's pair is unknown.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import scenarios
from audit.cli import main
from audit.render.tables import format_table

pytestmark = pytest.mark.statistical

GAUSSIAN = """name = "{name}"
[mechanism]
name = "gaussian"
epsilon = 1.0
delta = 1e-5
[scenario]
kind = "counting"
d = 1
[audit]
samples = 20_000
seed = 5
{extra}
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / f"{name}.toml"
    path.write_text(text)
    return path


def gaussian(folder: Path, name: str, extra: str = "") -> Path:
    return write(folder, name, GAUSSIAN.format(name=name, extra=extra))


def run(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# A mechanism (a module beside the files) that, while the file "interrupt" exists next to it, sleeps
# and then raises KeyboardInterrupt in its second call (the first is the probe when the file is
# loaded): Ctrl-C half a second into its audit, deterministically.
SLOW_MODULE = '''
import pathlib
import time

import numpy as np
from mechanisms.claims import ApproxDP

FLAG = pathlib.Path(__file__).with_name("interrupt")


class Interruptible:
    name = "interruptible"
    d = 1
    claim = ApproxDP(1.0, 1e-5)

    def __call__(self, dataset, size, rng):
        if FLAG.exists():
            calls = int(FLAG.read_text() or 0) + 1
            FLAG.write_text(str(calls))
            if calls == 2:
                FLAG.unlink()
                time.sleep(0.5)
                raise KeyboardInterrupt
        return np.asarray(dataset, dtype=float).sum() + rng.normal(0.0, 4.0, (size, 1))


mechanism = Interruptible()
'''
INTERRUPTIBLE = """name = "second"
[mechanism]
callable = "ux_interruptible:mechanism"
[scenario]
kind = "counting"
d = 1
[audit]
samples = 20_000
seed = 6
"""


@pytest.fixture
def interrupted(tmp_path, capsys, monkeypatch):
    """Two audits, the run interrupted (Ctrl-C) half a second into the second one."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ux_interruptible", raising=False)  # this test's copy, not another's
    (tmp_path / "ux_interruptible.py").write_text(SLOW_MODULE)
    (tmp_path / "interrupt").write_text("")
    paths = [gaussian(tmp_path, "first"), write(tmp_path, "second", INTERRUPTIBLE)]
    out = tmp_path / "out"
    code, _, err = run(capsys, "run", *paths, "--out", out, "--no-plots", "--no-progress")
    assert code == 130 and "1 of 2 audits finished" in err
    return tmp_path, paths, out


def test_a_rerun_without_resume_refuses_to_wipe_an_unfinished_run(interrupted, capsys):
    folder, paths, out = interrupted
    saved = (out / "report.json").read_text()
    code, _, err = run(capsys, "run", *paths, "--out", out, "--no-plots", "--no-progress")
    assert code == 2
    assert "holds an unfinished run" in err and "--resume" in err and "--overwrite" in err
    assert (out / "report.json").read_text() == saved  # nothing was wiped
    code, _, err = run(capsys, "run", *paths, "--out", out, "--no-plots", "--no-progress", "--overwrite")
    assert code == 0, err
    assert [e["name"] for e in json.loads((out / "report.json").read_text())["audits"]] == ["first", "second"]


def test_resume_takes_finished_audits_from_the_saved_report_and_adds_up_the_time(interrupted, capsys):
    folder, paths, out = interrupted
    first = json.loads((out / "report.json").read_text())["audits"][0]
    code, stdout, err = run(capsys, "run", *paths, "--out", out, "--no-plots", "--no-progress", "--resume")
    assert code == 0, err
    assert "first: finished before the interruption; taken from" in err
    document = json.loads((out / "report.json").read_text())
    assert document["finished"] is True
    assert document["audits"][0] == first  # not run again: the saved entry, runtime included
    second = document["audits"][1]["report"]["runtime"]
    assert second["earlier_runs_s"] >= 0.5  # the interrupted run slept 0.5 s before Ctrl-C
    total = f"{second['wall_time_s'] + second['earlier_runs_s']:.1f}s*"
    assert total in stdout and "time*: the audit was interrupted and resumed" in stdout


def test_a_changed_file_is_audited_again_on_resume(interrupted, capsys):
    folder, paths, out = interrupted
    paths[0].write_text(paths[0].read_text().replace("seed = 5", "seed = 7"))
    code, _, err = run(capsys, "run", *paths, "--out", out, "--no-plots", "--no-progress", "--resume")
    assert code == 0, err
    assert "first: finished before the interruption, but its file and its settings (seed 5 → 7) changed since" in err
    assert json.loads((out / "report.json").read_text())["audits"][0]["report"]["seed"] == 7


def test_each_audit_runs_at_least_at_its_files_confidence(tmp_path, capsys):
    paths = [gaussian(tmp_path, name, "confidence = 0.999") for name in ("a", "b")]
    code, stdout, err = run(capsys, "run", *paths, "--out", tmp_path / "out", "--no-plots", "--no-progress")
    assert code == 0, err
    document = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [entry["report"]["confidence"] for entry in document["audits"]] == [0.999, 0.999]
    levels = document["settings"]["error_control"]["levels"]
    assert [(level["file"], level["run"], level["audit"]) for level in levels] == [(0.999, 0.975, 0.999)] * 2
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert "Confidence 0.999: the file asks 0.999, the run's error control 0.975; the stricter applies." in summary
    assert "or its file's own where that is stricter (a, b)" in stdout


def test_the_error_control_sentence_covers_the_accuracy_column(tmp_path, capsys):
    paths = [gaussian(tmp_path, name) for name in ("a", "b")]
    code, stdout, _ = run(capsys, "run", *paths, "--out", tmp_path / "out", "--no-plots", "--no-progress")
    assert code == 0
    text = " ".join(stdout.split())
    # Σ (1 − c_i) = 2 · 0.025: the privacy verdicts (the exit status) and, on a budget of their own,
    # the accuracy verdicts each have at most this false-alarm probability (union bound).
    assert "reports some VIOLATED verdict (exit status 1) with probability ≤ 0.05" in text
    assert "a run whose accuracy claims all hold shows some accuracy VIOLATED with probability ≤ 0.05" in text
    assert "the exit status ignores accuracy verdicts" in text


SVT = """name = "{name}"
expected = "violated"
[mechanism]
callable = "mechanisms.literature:{cls}"
cutoff = 1
threshold = 1.0
[scenario]
kind = "custom"
relation = "add-remove"
[[scenario.pair]]
base = {base}
neighbor = {neighbor}
[audit]
samples = 20_000
seed = 3
statistic = "{statistic}"
"""


def test_a_false_claim_not_refuted_says_whether_more_samples_could_refute_it(tmp_path, capsys):
    claim = '[claim]\ntype = "approx-dp"\nepsilon = 0.99\ndelta = 1e-5\n[scenario]'
    paths = [
        write(tmp_path, "gaussian", 'expected = "violated"\n' + GAUSSIAN.format(name="gaussian", extra="")
              .replace("[scenario]", claim)),
        write(tmp_path, "svt4", SVT.format(name="svt4", cls="SparseVectorTechnique4", base=[0] * 10,
                                           neighbor=[0] * 9 + [1], statistic="categorical")),
        write(tmp_path, "svt3", SVT.format(name="svt3", cls="SparseVectorTechnique3", base=[1] * 10,
                                           neighbor=[2] * 5 + [0] * 5, statistic="auto")),
    ]
    code, stdout, err = run(capsys, "run", *paths, "--out", tmp_path / "out", "--no-plots", "--no-progress")
    assert code == 0, err
    table = stdout.split("Notes:")[0].splitlines()
    rows = {line.split()[0]: line for line in table if line.split()[:1] in (["gaussian"], ["svt4"], ["svt3"])}
    assert "violated (limit)" in rows["gaussian"] and "violated (pairs)" in rows["svt4"]
    assert "violated (not refuted)" in rows["svt3"]
    notes = " ".join(stdout.split())
    assert ("gaussian: the claim is false on an audited pair (exact ε at δ = 1e-05 1 there, claimed 0.99) but was "
            "not refuted at 20,000 samples: a limit of this sample size, which more samples would overcome") in notes
    assert "svt4: the claim is false" in notes and "but holds on every pair this scenario contains" in notes
    assert "no number of samples refutes it here: search for a pair on which it is false" in notes
    assert "the report cannot tell whether an audited pair is one on which it is false" in notes


def test_the_terminal_table_fits_the_terminal(tmp_path, capsys, monkeypatch):
    paths = [gaussian(tmp_path, "a-rather-long-audit-name-for-a-gaussian"), gaussian(tmp_path, "b")]
    assert run(capsys, "run", *paths, "--out", tmp_path / "out", "--no-plots", "--no-progress")[0] == 0
    entries = json.loads((tmp_path / "out" / "report.json").read_text())["audits"]
    full = format_table(entries, width=10_000).splitlines()
    assert max(map(len, full)) > 140  # every column: wider than a terminal
    fitted = format_table(entries, width=100)
    assert max(map(len, fitted.splitlines())) <= 100
    assert "columns left out to fit 100 columns: mechanism" in " ".join(fitted.split())
    for heading in ("audit", "claim", "ε_lb", "verdict"):
        assert heading in fitted.splitlines()[0]
    monkeypatch.setenv("COLUMNS", "100")
    code, stdout, _ = run(capsys, "run", *paths, "--out", tmp_path / "again", "--no-plots", "--no-progress")
    assert code == 0 and max(map(len, stdout.splitlines())) <= 100


def test_dpaudit_list_prints_scenario_file_keys_not_python_signatures(capsys, monkeypatch):
    monkeypatch.setattr(scenarios, "bundled_suite", lambda name: [])  # the mechanisms only
    code, stdout, _ = run(capsys, "list")
    assert code == 0
    gaussian_keys = next(line for line in stdout.splitlines() if "calibration" in line)
    assert 'calibration = "analytic"' in gaussian_keys and "d = 1" in gaussian_keys
    assert "epsilon (optional)" in gaussian_keys
    assert "Optional[" not in stdout and "'float'" not in stdout and "<Relation." not in stdout


# -- a rerun never drops finished audits silently ------------------------------------------------
def test_a_rerun_of_fewer_files_refuses_to_drop_finished_audits(tmp_path, capsys):
    paths = [gaussian(tmp_path, name) for name in ("a", "c")]
    out = tmp_path / "out"
    assert run(capsys, "run", *paths, "--out", out, "--no-progress")[0] == 0
    saved = {name: (out / name).read_bytes() for name in ("report.json", "report.html", "summary.md")}
    figures = sorted(path.name for path in (out / "figures").iterdir())
    assert any(name.startswith("a") for name in figures)
    code, _, err = run(capsys, "run", paths[1], "--out", out, "--no-progress")
    assert code == 2
    line = " ".join(err.split())
    assert "finished audits that this run does not include ('a')" in line
    assert "--overwrite" in line and "--resume" in line
    assert {name: (out / name).read_bytes() for name in saved} == saved  # nothing replaced
    assert sorted(path.name for path in (out / "figures").iterdir()) == figures
    # With their files again and --resume, the unchanged audits are kept, not run again.
    code, _, err = run(capsys, "run", *paths, "--out", out, "--no-progress", "--resume")
    assert code == 0, err
    assert "a: finished in the earlier run; taken from" in err
    # --overwrite replaces the report and takes the dropped audits' figures with it.
    code, _, err = run(capsys, "run", paths[1], "--out", out, "--no-progress", "--overwrite")
    assert code == 0, err
    assert [e["name"] for e in json.loads((out / "report.json").read_text())["audits"]] == ["c"]
    left = sorted(path.name for path in (out / "figures").iterdir())
    assert left and all(name.startswith("c") for name in left), left


def test_a_rerun_of_the_same_files_still_replaces_their_audits(tmp_path, capsys):
    path = gaussian(tmp_path, "a")
    out = tmp_path / "out"
    assert run(capsys, "run", path, "--out", out, "--no-progress")[0] == 0
    assert any((out / "figures").iterdir())
    path.write_text(path.read_text().replace("seed = 5", "seed = 8"))
    assert run(capsys, "run", path, "--out", out, "--no-plots", "--no-progress")[0] == 0
    entry = json.loads((out / "report.json").read_text())["audits"][0]
    assert entry["report"]["seed"] == 8 and not entry.get("figures")
    assert not any((out / "figures").iterdir())  # no figure of the replaced audit is left behind


# -- messages ------------------------------------------------------------------------------------
MESSAGES_MODULE = '''
import numpy as np
from mechanisms.claims import ApproxDP

SCALE = 4.0


def noisy_count(dataset, size, rng):
    return np.asarray(dataset, dtype=float).sum() + rng.normal(0.0, SCALE, (size, 1))


noisy_count.claim = ApproxDP(1.0, 1e-5)


def normal(x):  # shares its name with rng.normal, which noisy_count calls: not reached by it
    return x


def unrelated():
    return 1


def a_float(dataset, size, rng):
    return float(np.sum(dataset))


a_float.claim = ApproxDP(1.0, 1e-5)


def strict(dataset, size, rng):
    raise ValueError("epsilon must be positive for this release")


strict.claim = ApproxDP(1.0, 1e-5)
'''


def messages_file(folder: Path, name: str, attribute: str) -> Path:
    return write(folder, name, GAUSSIAN.format(name=name, extra="").replace(
        'name = "gaussian"\nepsilon = 1.0\ndelta = 1e-5', f'callable = "ux_messages:{attribute}"'))


@pytest.fixture
def messages(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # an edit within the second must not read a stale .pyc
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ux_messages", raising=False)
    module = tmp_path / "ux_messages.py"
    module.write_text(MESSAGES_MODULE)
    return tmp_path, module


def edit_module(module: Path, old: str, new: str) -> None:
    module.write_text(module.read_text().replace(old, new))
    sys.modules.pop(module.stem, None)


def test_resume_keeps_an_audit_whose_own_code_did_not_change(messages, capsys):
    folder, module = messages
    path, out = messages_file(folder, "count", "noisy_count"), folder / "out"
    assert run(capsys, "run", path, "--out", out, "--no-plots", "--no-progress")[0] == 0
    edit_module(module, "return 1", "return 2")  # another function of the same module
    edit_module(module, "return x", "return -x")  # a function named like a method it calls
    code, _, err = run(capsys, "run", path, "--out", out, "--no-plots", "--no-progress", "--resume")
    assert code == 0, err
    assert "count: finished in the earlier run; taken from" in err and "audited again" not in err
    edit_module(module, "SCALE = 4.0", "SCALE = 5.0")  # a global it reads: audited again, and why
    code, _, err = run(capsys, "run", path, "--out", out, "--no-plots", "--no-progress", "--resume")
    assert code == 0, err
    line = " ".join(err.split())
    assert "count: finished in the earlier run, but its mechanism's code or the values it reads " \
           "(noisy_count: global SCALE) changed since; audited again" in line


def test_resume_names_the_settings_that_changed(messages, capsys):
    folder, module = messages
    path, out = messages_file(folder, "count", "noisy_count"), folder / "out"
    assert run(capsys, "run", path, "--out", out, "--no-plots", "--no-progress")[0] == 0
    code, _, err = run(capsys, "run", path, "--out", out, "--no-plots", "--no-progress", "--resume",
                       "--samples", "30000")
    assert code == 0, err
    assert "but its settings (samples 20000 → 30000) changed since; audited again" in " ".join(err.split())


def test_resume_after_a_run_with_an_error_does_not_speak_of_an_interruption(messages, capsys):
    folder, module = messages
    paths = [gaussian(folder, "good"), messages_file(folder, "bad", "noisy_count")]
    out = folder / "out"
    edit_module(module, "SCALE = 4.0", "SCALE = 4.0\nBROKEN = True")
    edit_module(module, "    return np.asarray(dataset, dtype=float).sum() + rng",
                "    if BROKEN and size > 1:\n        raise RuntimeError('broken')\n"
                "    return np.asarray(dataset, dtype=float).sum() + rng")
    code, _, err = run(capsys, "run", *paths, "--out", out, "--no-plots", "--no-progress")
    assert code == 2 and "broken" in err
    edit_module(module, "BROKEN = True", "BROKEN = False")
    code, _, err = run(capsys, "run", *paths, "--out", out, "--no-plots", "--no-progress", "--resume")
    assert code == 0, err
    assert "interruption" not in err
    assert "good: finished in the earlier run; taken from" in err


def test_a_float_return_names_the_mechanism_the_pair_and_the_fix(messages, capsys):
    folder, _ = messages
    code, _, err = run(capsys, "run", messages_file(folder, "scalar", "a_float"), "--out", folder / "out")
    assert code == 2
    line = " ".join(err.split())
    assert "mechanism 'a_float'" in line and "pair" in line and "return np.asarray(...)" in line
    assert "shape ()" in line


def test_an_error_at_load_time_is_not_blamed_on_the_width_unless_it_is(messages, capsys):
    folder, _ = messages
    code, _, err = run(capsys, "run", messages_file(folder, "strict", "strict"), "--out", folder / "out")
    assert code == 2
    assert "epsilon must be positive for this release" in err and "mechanism 'strict'" in err
    assert "set mechanism.d" not in err and "does not fit" not in err
    wide = write(folder, "wide", GAUSSIAN.format(name="wide", extra="").replace("d = 1", "d = 3"))
    code, _, err = run(capsys, "run", wide, "--out", folder / "out")
    assert code == 2 and "rows of width 3" in err and "d = 1" in err


def test_an_interrupted_resume_keeps_the_audits_it_had_not_reached(tmp_path, capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ux_interruptible", raising=False)
    (tmp_path / "ux_interruptible.py").write_text(SLOW_MODULE)
    paths = [write(tmp_path, "second", INTERRUPTIBLE), gaussian(tmp_path, "first")]
    out = tmp_path / "out"
    assert run(capsys, "run", *paths, "--out", out, "--no-plots", "--no-progress")[0] == 0
    first = json.loads((out / "report.json").read_text())["audits"][1]
    paths[0].write_text(paths[0].read_text().replace("seed = 6", "seed = 9"))  # audited again, then Ctrl-C
    (tmp_path / "interrupt").write_text("")
    code, _, err = run(capsys, "run", *paths, "--out", out, "--no-plots", "--no-progress", "--resume")
    assert code == 130 and "1 of 2 audits finished" in err
    assert json.loads((out / "report.json").read_text())["audits"] == [first]  # not lost
