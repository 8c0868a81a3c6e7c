"""What a new user tripped on (issue 15, items 1–12): each case as the user met it.

Verdicts used here (seeds fixed): the analytic Gaussian at (1, 1e-5) meets its claim exactly, so
NOT_REFUTED is expected (a false alarm has probability ≤ 0.05 over seeds, and the seed is fixed).
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np
import pytest

import audit.cli
import scenarios
from audit.spec import load_spec
from audit import run_audit
from audit.cli import exact_integer, main
from mechanisms import ApproxDP, GaussianMechanism


def _scenario_file(name, mechanism, samples=20_000, claim=""):
    return (f'name = "{name}"\n[mechanism]\n{mechanism}\n{claim}\n[scenario]\nkind = "counting"\nd = 1\n'
            f"[audit]\nsamples = {samples}\nseed = 11\n")


GAUSSIAN = 'name = "gaussian"\nepsilon = 1.0\ndelta = 1e-5'
CLAIM = '[claim]\ntype = "approx-dp"\nepsilon = 1.0\ndelta = 1e-5'

USER_MODULE = """
import numpy as np

def noisy_count(dataset, size, rng):
    return np.sum(dataset) + rng.normal(0.0, 3.73, (size, 1))

def broken(dataset, size, rng):
    return {}["x"]
"""


def _user_file(name, module, attribute):
    return _scenario_file(name, f'callable = "{module}:{attribute}"', claim=CLAIM)


def _run(capsys, *args):
    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def isolated_imports(monkeypatch):
    """Restore sys.path and forget user modules imported by a test."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield
    for name in set(sys.modules) - before:
        if name.startswith("user_mech_"):
            del sys.modules[name]


# -- item 1: a mechanism that raises while a scenario file is loaded --------------------------------
def test_a_mechanism_raising_at_load_names_file_mechanism_and_exception(tmp_path, isolated_imports):
    (tmp_path / "user_mech_1.py").write_text(USER_MODULE)
    path = tmp_path / "broken.toml"
    path.write_text(_user_file("broken", "user_mech_1", "broken"))
    with pytest.raises(scenarios.ScenarioFileError) as caught:
        load_spec(path)
    message = str(caught.value)
    assert message.startswith(str(path)) and "'broken'" in message and "KeyError: 'x'" in message


# -- item 3: callable = "module:attr" beside the scenario file ---------------------------------------
def test_a_module_beside_the_scenario_file_is_found(tmp_path, isolated_imports):
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "user_mech_3.py").write_text(USER_MODULE)
    path = folder / "my_count.toml"
    path.write_text(_user_file("mine", "user_mech_3", "noisy_count"))
    assert str(folder) not in sys.path
    spec = load_spec(path)
    assert spec.mechanism.__name__ == "noisy_count"
    # A module that is nowhere says where it was looked for.
    path.write_text(_user_file("mine", "user_mech_missing", "f"))
    with pytest.raises(scenarios.ScenarioFileError, match="scenario file's folder"):
        load_spec(path)


# -- items 2, 4 and 10: a run of two files side by side ---------------------------------------------
@pytest.fixture(scope="module")
def two_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("two")
    paths = []
    for name in ("first", "second"):
        path = folder / f"{name}.toml"
        path.write_text(_scenario_file(name, GAUSSIAN))
        paths.append(path)
    return folder, paths


def _strip_runtime(document):
    for entry in document["audits"]:
        entry["report"].pop("runtime")
        entry["report"]["accuracy"].pop("runtime", None)
    return document["audits"]


@pytest.mark.statistical
def test_jobs_2_runs_audits_side_by_side_with_the_same_reports(two_files, capsys):
    folder, paths = two_files
    one = _run(capsys, "run", *paths, "--out", folder / "one", "--jobs", "1", "--no-plots")
    two = _run(capsys, "run", *paths, "--out", folder / "two", "--jobs", "2", "--no-plots")
    assert one[0] == two[0] == 0, (one[2], two[2])
    assert "2 audits, up to 2 at once" in two[2]
    reports = [_strip_runtime(json.loads((folder / out / "report.json").read_text())) for out in ("one", "two")]
    assert reports[0] == reports[1]


@pytest.mark.statistical
def test_checkpoints_of_completed_audits_are_removed_unless_kept(two_files, capsys):
    folder, paths = two_files
    code, out, _ = _run(capsys, "run", paths[0], "--out", folder / "removed", "--no-plots", "--no-progress")
    assert code == 0 and not (folder / "removed" / "checkpoints").exists()
    assert "removed 1 checkpoint(s)" in out
    code, _, _ = _run(capsys, "run", paths[0], "--out", folder / "kept", "--no-plots", "--no-progress",
                      "--keep-checkpoints")
    assert code == 0 and (folder / "kept" / "checkpoints" / "first.npz").exists()


@pytest.mark.statistical
def test_table_and_summary_use_the_same_accuracy_words_and_name_the_claim(two_files, capsys):
    folder, paths = two_files
    code, out, _ = _run(capsys, "run", paths[0], "--out", folder / "acc", "--no-plots", "--no-progress")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("first"))
    assert row.split().count("NOT_REFUTED") == 2 and " ok " not in row  # accuracy, then verdict
    summary = (folder / "acc" / "summary.md").read_text()
    assert "accuracy       NOT_REFUTED (claimed P(|error| >" in summary


def test_debug_is_in_run_help(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    assert "--debug" in capsys.readouterr().out


# -- items 6 and 7: misspelt keywords and unknown backends ------------------------------------------
def test_a_misspelt_keyword_is_not_called_a_backend_option():
    mechanism = GaussianMechanism(1.0, 1e-5)
    with pytest.raises(TypeError, match=r"`sample`: it is not a parameter of run_audit; did you mean `samples`\?"):
        run_audit(mechanism, scenarios.counting(1), sample=1000)
    with pytest.raises(TypeError, match="option of backend='dask', not of backend='loky'"):
        run_audit(mechanism, scenarios.counting(1), scheduler="tcp://127.0.0.1:1")


def test_dask_options_remain_accepted():
    from audit.dask_backend import DaskExecutor
    from audit.parallelism import DASK_OPTIONS, check_backend_options
    import inspect

    keyword = [p for p in inspect.signature(DaskExecutor.__init__).parameters if p not in ("self", "n_jobs")]
    assert tuple(keyword) == DASK_OPTIONS
    check_backend_options("dask", {name: None for name in DASK_OPTIONS}, "run_audit", ["samples"])


def test_unknown_backend_is_refused_before_anything_runs(tmp_path, capsys):
    path = tmp_path / "g.toml"
    path.write_text(_scenario_file("g", GAUSSIAN))
    code, _, err = _run(capsys, "run", path, "--backend", "foo", "--out", tmp_path / "out")
    assert code == 2 and "'foo'" in err and "dask" in err and "loky" in err
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match="'dask'"):
        run_audit(GaussianMechanism(1.0, 1e-5), scenarios.counting(1), backend="foo")


# -- item 8: exact integers ---------------------------------------------------------------------------
@pytest.mark.parametrize("text, value", [("100000", 100_000), ("100_000", 100_000), ("100,000", 100_000),
                                         ("1e5", 100_000), ("2.5e6", 2_500_000), ("1E7", 10_000_000),
                                         ("1,000,000", 1_000_000)])
def test_samples_accept_exact_integers(text, value):
    assert exact_integer(text) == value


@pytest.mark.parametrize("text", ["1.5", "1e-3", "1.00001e1", "10,00", "1,0000", "1/2", "ten", "nan", "inf"])
def test_samples_refuse_what_is_not_an_exact_integer(text):
    with pytest.raises(ValueError):
        exact_integer(text)


@pytest.mark.statistical
def test_samples_in_scientific_notation_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "g.toml"
    path.write_text(_scenario_file("g", GAUSSIAN, samples=1000))
    code, _, err = _run(capsys, "run", path, "--samples", "2e4", "--out", tmp_path / "o", "--no-plots",
                        "--no-progress")
    assert code == 0, err
    report = json.loads((tmp_path / "o" / "report.json").read_text())["audits"][0]["report"]
    assert report["samples"] == 20_000


# -- item 9: no joblib warnings on resume or interrupt ------------------------------------------------
def _slow(x):
    time.sleep(0.02)
    return x


def test_unfinished_streams_end_without_joblib_warnings():
    import gc

    from audit.executor import ChunkExecutor

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ChunkExecutor("threading", 2) as executor:  # a resumed phase with nothing left to do
            assert list(zip([], executor.map(_slow, []))) == []
        with pytest.raises(KeyboardInterrupt):  # an interrupt while results stream in
            with ChunkExecutor("threading", 2) as executor:
                for _ in executor.map(_slow, [(i,) for i in range(40)]):
                    raise KeyboardInterrupt
        gc.collect()
    assert [str(w.message) for w in caught] == []


@pytest.mark.statistical
def test_an_interrupted_run_says_in_one_line_what_was_saved(tmp_path, capsys, monkeypatch):
    paths = []
    for name in ("a", "b"):
        paths.append(tmp_path / f"{name}.toml")
        paths[-1].write_text(_scenario_file(name, GAUSSIAN))
    real = audit.cli.run_audits  # audit.suite's, where `dpaudit run` looks it up

    def interrupted(specs, settings):
        stream = real(specs, settings)
        yield next(stream)
        raise KeyboardInterrupt

    monkeypatch.setattr(audit.cli, "run_audits", interrupted)
    code, _, err = _run(capsys, "run", *paths, "--out", tmp_path / "out", "--no-plots", "--no-progress")
    assert code == 130
    (line,) = err.strip().splitlines()
    assert "1 of 2 audits finished and saved in" in line and "--resume" in line
    saved = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [entry["name"] for entry in saved["audits"]] == ["a"]
    monkeypatch.setattr(audit.cli, "run_audits", real)
    code, _, err = _run(capsys, "run", *paths, "--out", tmp_path / "out", "--no-plots", "--no-progress",
                        "--resume")
    # The finished audit is taken from the saved report; only the unfinished one runs again.
    assert code == 0 and "a: finished before the interruption; taken from" in err and "Warning" not in err


# -- item 11: query-answer vectors ---------------------------------------------------------------------
def _noisy_first_answer(answers, size, rng):
    return float(np.asarray(answers)[0]) + rng.laplace(0.0, 1.0, (size, 1))


def test_answer_vectors_point_to_scenarios_custom_and_the_claim_says_what_was_vouched():
    a, b = np.zeros(5), np.r_[1.0, np.zeros(4)]
    claim = ApproxDP(1.0, 1e-5)
    with pytest.raises(ValueError, match=r"scenarios\.custom"):
        run_audit(_noisy_first_answer, [(a, b)], claim=claim, samples=1000)
    report = run_audit(_noisy_first_answer, scenarios.custom([(a, b)]), claim=claim, samples=20_000,
                       seed=3, progress=False)
    claim_line = next(line for line in report.summary().splitlines() if "claim" in line)
    assert "[add-remove]" not in claim_line and "vouched for by the user" in claim_line


# -- item 12: total draws per side --------------------------------------------------------------------
@pytest.mark.statistical
def test_report_states_the_total_draws_per_side():
    samples = 20_000
    report = run_audit(GaussianMechanism(1.0, 1e-5), scenarios.counting(1), samples=samples, seed=2,
                       progress=False, accuracy=False)
    draws = report.draws
    phases = draws["per_pair_per_side"]
    # `samples` is the total per pair and side over training, pilot, selection and certification
    # (audit/allocation.py); the probe's 2 draws come on top.  A correct claim runs every look.
    assert phases["probe"] == 2
    assert sum(count for phase, count in phases.items() if phase != "probe") == samples
    assert phases["certification"] > 2 * phases["selection"]
    assert draws["looks"]["look"] == draws["looks"]["of"] and not draws["looks"]["stopped_early"]
    assert draws["pairs"] == len(report.pairs)
    assert draws["per_side"] == len(report.pairs) * sum(phases.values())
    assert f"{draws['per_side']:,} per side in total" in report.summary()
    assert report.to_dict()["draws"] == draws


@pytest.mark.statistical
def test_an_early_stop_says_so_and_counts_only_what_was_drawn():
    # Calibrated for sensitivity ¼ on a count: μ ≈ 1.07, exact ε(1e-5) ≈ 4 against a claimed 1.
    report = run_audit(GaussianMechanism(1.0, 1e-5, sensitivity=0.25),
                       scenarios.counting(1), samples=400_000, seed=2, progress=False, accuracy=False)
    looks = report.draws["looks"]
    assert report.verdict.value == "VIOLATED" and looks["stopped_early"] and looks["look"] < looks["of"]
    phases = report.draws["per_pair_per_side"]
    assert phases["certification"] < looks["planned"]["certification"]
    assert "stopped early at look" in report.summary()
