"""End-to-end tests of the ``dpaudit`` command line, run as a subprocess (``python -m audit``).

Statistical content of the verdicts used here (seeds fixed, so each outcome is deterministic):

- the analytic Gaussian mechanism meets its (1, 1e-5) claim exactly, so a VIOLATED verdict
  would be a false alarm (probability ≤ 1 − confidence = 0.05 over seeds, and the seed is fixed);
- the classical calibration at (ε, δ) = (7, 0.1) has exact ε(0.1) = 8.016 (docs/ground-truth.md §1):
  at 1 000 000 samples the ideal single-threshold test certifies ε_lb ≈ 7.59 ± 0.15 (over seeds),
  3.9 SD above 7 (at 200 000 it was 7.21 ± 0.26 and missed in ~22 % of seeds);
- the "faulty" callable claims (1, 1e-5)-DP but adds N(0, 1) noise to a count, μ = 1,
  exact ε(1e-5) = 4.4: refuted at 20 000 samples (ε_lb ≈ 3).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "pyproject.toml").is_file())
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def dpaudit(*args: str, cwd: Path, extra_path: Path | None = None, timeout: float = 120.0,
            ) -> subprocess.CompletedProcess:
    paths = [str(ROOT)] + ([str(extra_path)] if extra_path else []) + \
        ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else [])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.run([sys.executable, "-m", "audit", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def scenario_file(directory: Path, name: str, mechanism: str, *, samples: int, seed: int = 11,
                  expected: str | None = None, claim: str = "") -> Path:
    path = directory / f"{name}.toml"
    lines = [f'name = "{name}"']
    if expected:
        lines.append(f'expected = "{expected}"')
    lines += ["[mechanism]", mechanism, claim, "[scenario]", 'kind = "counting"', "d = 1",
              "[audit]", f"samples = {samples}", f"seed = {seed}"]
    path.write_text("\n".join(lines) + "\n")
    return path


GAUSSIAN = 'name = "gaussian"\nepsilon = 1.0\ndelta = 1e-5'
CLASSICAL_7 = 'name = "gaussian"\ncalibration = "classical"\nepsilon = 7.0\ndelta = 0.1'
FAULTY_MODULE = '''
import numpy as np
from mechanisms.claims import ApproxDP


class TooLittleNoise:
    """Claims (1, 1e-5)-DP for a count but adds N(0, 1): mu = 1, exact eps(1e-5) = 4.4."""

    name = "too-little-noise"
    d = 1
    claim = ApproxDP(1.0, 1e-5)

    def __call__(self, dataset, size, rng):
        total = np.asarray(dataset, dtype=float).sum()
        return total + rng.standard_normal((size, 1))


mechanism = TooLittleNoise()
'''


def strip_runtime(document: dict) -> dict:
    """The parts of report.json that must be identical for the same seed."""
    audits = []
    for entry in document["audits"]:
        report = dict(entry["report"])
        report.pop("runtime")
        report["accuracy"] = {k: v for k, v in report["accuracy"].items() if k != "runtime"}
        audits.append({**entry, "report": report})
    return audits


@pytest.fixture(scope="module")
def holds_run(tmp_path_factory):
    """One small audit that holds, run once with the table and once with JSON output."""
    directory = tmp_path_factory.mktemp("holds")
    path = scenario_file(directory, "small-gaussian", GAUSSIAN, samples=20_000, expected="holds")
    table = dpaudit("run", path, "--out", directory / "out", "--no-progress", cwd=directory)
    as_json = dpaudit("run", path, "--out", directory / "out-json", "--format", "json", "--no-plots",
                      "--no-progress", cwd=directory)
    return directory, table, as_json


@pytest.mark.statistical
def test_run_prints_table_and_exits_0_when_the_claim_holds(holds_run):
    directory, result, _ = holds_run
    assert result.returncode == 0, result.stderr
    header, rule, row = result.stdout.splitlines()[:3]
    for heading in ("audit", "mechanism", "claim", "exact ε", "ε_lb", "δ_lb", "μ_lb", "tightness",
                    "slack", "accuracy", "verdict", "expected", "time"):
        assert heading in header
    assert set(rule) == {"-"}
    assert row.startswith("small-gaussian") and "NOT_REFUTED" in row and "holds" in row
    assert "(1, 1e-05)-DP" in row
    assert "Traceback" not in result.stderr


@pytest.mark.statistical
def test_run_writes_report_summary_and_figures(holds_run):
    directory, _, _ = holds_run
    out = directory / "out"
    document = json.loads((out / "report.json").read_text())
    (entry,) = document["audits"]
    assert entry["name"] == "small-gaussian" and entry["expected"] == "holds"
    assert Path(entry["path"]).name == "small-gaussian.toml"
    report = entry["report"]
    assert report["verdict"] == "NOT_REFUTED" and report["samples"] == 20_000 and report["seed"] == 11
    summary = (out / "summary.md").read_text()
    assert "| audit | mechanism |" in summary and "small-gaussian" in summary
    assert "ε lower bound" in summary  # the audit's summary() text
    assert set(entry["figures"]) == {"tradeoff", "epsilon", "accuracy"}
    for relative in entry["figures"].values():
        png = (out / relative).read_bytes()
        assert png.startswith(PNG_SIGNATURE) and len(png) > 10_000
        assert f"]({relative})" in summary


@pytest.mark.statistical
def test_json_output_is_the_report(holds_run):
    directory, table, result = holds_run
    assert result.returncode == 0, result.stderr
    printed = json.loads(result.stdout)
    saved = json.loads((directory / "out-json" / "report.json").read_text())
    assert printed == saved
    assert printed["audits"][0]["figures"] == {}  # --no-plots
    # Same file, same seed: the same report as the table run, runtime aside.
    tabled = json.loads((directory / "out" / "report.json").read_text())
    assert strip_runtime(printed)[0]["report"] == strip_runtime(tabled)[0]["report"]


@pytest.mark.statistical
def test_violated_claims_exit_1_and_show_expected(tmp_path):
    (tmp_path / "faulty_mech.py").write_text(FAULTY_MODULE)
    classical = scenario_file(tmp_path, "classical-eps7", CLASSICAL_7, samples=1_000_000,
                              expected="violated")
    faulty = scenario_file(tmp_path, "faulty", 'callable = "faulty_mech:mechanism"', samples=20_000)
    result = dpaudit("run", classical, faulty, "--out", tmp_path / "out", "--no-progress", "--no-plots",
                     cwd=tmp_path, extra_path=tmp_path)
    assert result.returncode == 1, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[2:4]}
    assert "VIOLATED" in rows["classical-eps7"] and "violated" in rows["classical-eps7"]
    assert "8.016" in rows["classical-eps7"]  # exact ε(0.1) of the classical calibration
    assert "VIOLATED" in rows["faulty"]
    document = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [e["report"]["verdict"] for e in document["audits"]] == ["VIOLATED", "VIOLATED"]


def run_main(capsys, *args) -> tuple[int, str, str]:
    """The same command line in-process (cheaper than a subprocess for the remaining cases)."""
    from audit.cli import main

    code = main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.statistical
def test_expected_violation_not_refuted_is_the_limit_case_not_an_error(tmp_path, capsys):
    # The analytic mechanism has exact ε(1e-5) = 1; a claim of ε = 0.99 is false by 1 %, far
    # below what 20 000 samples can resolve (ε_lb ≈ 0.4 at this sample size).
    path = scenario_file(tmp_path, "limit", GAUSSIAN, samples=20_000, expected="violated",
                         claim='[claim]\ntype = "approx-dp"\nepsilon = 0.99\ndelta = 1e-5')
    code, out, err = run_main(capsys, "run", path, "--out", tmp_path / "out", "--no-progress", "--no-plots")
    assert code == 0, err
    assert "NOT_REFUTED" in out and "violated (limit)" in out
    assert "not refuted at 20,000 samples" in out


def test_malformed_file_exits_2_with_one_line_naming_file_and_key(tmp_path, capsys):
    path = scenario_file(tmp_path, "malformed", GAUSSIAN, samples=20_000)
    path.write_text(path.read_text().replace("samples = 20000", 'samples = "many"'))
    result = dpaudit("run", path, "--out", tmp_path / "out", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    (line,) = result.stderr.strip().splitlines()
    assert "malformed.toml" in line and "audit.samples" in line and "Traceback" not in line
    assert not (tmp_path / "out").exists()  # nothing runs before every file is valid
    code, _, err = run_main(capsys, "run", path, "--debug", "--out", tmp_path / "out")
    assert code == 2 and "Traceback" in err and "ScenarioFileError" in err


@pytest.mark.parametrize("args", [
    ("run", "--samples", "0"),
    ("run", "--confidence", "1.5"),
    ("run", "missing.toml"),
    ("run", "--scheduler", "tcp://nowhere:1"),
    ("theory", "no-such-mechanism"),
    ("theory", "gaussian", "--epsilon", "1", "--no-such-parameter", "2"),
    ("plot", "missing.json"),
    ("no-such-command",),
])
def test_bad_usage_exits_2_with_one_line(tmp_path, capsys, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(capsys, *args)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err


def test_bad_usage_through_the_process_exits_2(tmp_path):
    result = dpaudit("run", "--samples", "0", cwd=tmp_path)
    assert result.returncode == 2 and result.stderr.strip() == \
        "dpaudit run: argument --samples: must be a positive integer (e.g. 100000, 100_000, 100,000 or 1e5), got '0'"


@pytest.mark.statistical
def test_resume_after_an_interrupted_run_gives_the_same_report(tmp_path):
    # 4M samples = 4 chunks per pair, side and phase: 36 chunks, checkpointed every 8, so the
    # run is killed with most of its work still to do.
    path = scenario_file(tmp_path, "resumable", GAUSSIAN, samples=4_000_000)
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    process = subprocess.Popen([sys.executable, "-m", "audit", "run", str(path), "--out", str(out),
                                "--no-progress", "--no-plots"], cwd=tmp_path, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    checkpoint = out / "checkpoints" / "resumable.npz"
    deadline = time.monotonic() + 90
    while not checkpoint.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert checkpoint.exists()
    interrupted = not (out / "report.json").exists()

    resumed = dpaudit("run", path, "--out", out, "--resume", "--no-progress", "--no-plots", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert interrupted, "the run finished before it could be interrupted; the test proved nothing"

    # The uninterrupted audit, in-process: the same report, runtime aside.
    from audit import load_spec, run_audit
    from audit.report import dumps

    spec = load_spec(path)
    fresh = run_audit(spec.mechanism, spec.scenario, claim=spec.claim, samples=spec.samples,
                      seed=spec.seed, progress=False)
    (entry,) = strip_runtime(json.loads((out / "report.json").read_text()))
    assert entry["report"] == json.loads(dumps(fresh.to_dict(include_runtime=False)))


@pytest.mark.statistical
def test_resume_with_other_settings_is_refused(tmp_path, capsys):
    path = scenario_file(tmp_path, "small", GAUSSIAN, samples=20_000)
    out = tmp_path / "out"
    assert run_main(capsys, "run", path, "--out", out, "--no-plots", "--no-progress", "--keep-checkpoints")[0] == 0
    # The finished audit's settings changed: --resume audits it again, never mixing in its checkpoint.
    code, _, err = run_main(capsys, "run", path, "--out", out, "--resume", "--samples", "30000", "--no-plots",
                            "--no-progress")
    assert code == 0 and "changed since; audited again" in err
    assert json.loads((out / "report.json").read_text())["audits"][0]["report"]["samples"] == 30_000
    # An unfinished audit's checkpoint of other settings is refused rather than resumed.
    (out / "report.json").write_text(json.dumps({"finished": False, "audits": []}))
    assert run_main(capsys, "run", path, "--out", out, "--no-plots", "--no-progress", "--keep-checkpoints",
                    "--overwrite")[0] == 0
    document = json.loads((out / "report.json").read_text())
    (out / "report.json").write_text(json.dumps(dict(document, finished=False, audits=[])))
    code, _, err = run_main(capsys, "run", path, "--out", out, "--resume", "--samples", "40000", "--no-plots")
    assert code == 2 and "checkpoint" in err and "without --resume" in err


def test_plot_redraws_figures_from_a_saved_report(holds_run, tmp_path):
    directory, _, _ = holds_run
    result = dpaudit("plot", directory / "out" / "report.json", "--out", tmp_path / "figs", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # `plot --out DIR` places figures as `run --out DIR` does: in DIR/figures/.
    assert sorted(p.name for p in (tmp_path / "figs" / "figures").iterdir()) == [
        "small-gaussian-accuracy.png", "small-gaussian-epsilon.png", "small-gaussian-tradeoff.png"]
    (tmp_path / "broken.json").write_text("{not json")
    broken = dpaudit("plot", tmp_path / "broken.json", cwd=tmp_path)
    assert broken.returncode == 2 and "broken.json" in broken.stderr and "not valid JSON" in broken.stderr


def test_list_shows_mechanisms_and_bundled_scenarios(tmp_path):
    import mechanisms
    import scenarios

    result = dpaudit("list", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for name in mechanisms.REFERENCE_MECHANISMS:
        assert f"  {name} " in result.stdout
    for path in scenarios.bundled_suite("default"):
        assert path.stem in result.stdout


def test_theory_prints_exact_privacy_and_accuracy(tmp_path, capsys):
    result = dpaudit("theory", "gaussian", "--epsilon", "1", "--delta", "1e-5", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    # docs/ground-truth.md §1: analytic calibration at (1, 1e-5): σ = 3.7306, μ = 1/σ = 0.268051.
    assert "μ = 0.268051" in result.stdout
    assert "ε(δ = 1e-05) = 1" in result.stdout and "the claim holds" in result.stdout
    assert "noise variance per output column: 13.9176" in result.stdout
    assert "error bound at α = 0.05" in result.stdout
    code, out, _ = run_main(capsys, "theory", "gaussian", "--epsilon", "7", "--delta", "0.1",
                            "--calibration", "classical")
    assert code == 0 and "does NOT hold" in out and "8.01591" in out  # exact ε(0.1), docs/ground-truth.md §1
    code, out, _ = run_main(capsys, "theory", "composition", "--k", "4", "--inner", "gaussian",
                            "--inner.sigma", "2")
    assert code == 0 and "μ = 1 " in out  # √4 · (1/2)
    code, out, _ = run_main(capsys, "theory", "laplace", "--epsilon", "1")
    assert code == 0 and "noise variance per output column: 2 " in out  # 2b², b = 1


# -- a fast command line: `dpaudit list` runs no mechanism, `import audit.cli` imports no heavy module --
LOADED = ("import sys\n{code}\nprint(' '.join(sorted(name for name in sys.modules "
          "if name.split('.')[0] in {{'scipy', 'torch', 'opacus', 'sklearn', 'matplotlib', 'joblib', 'mechanisms', "
          "'scenarios', 'diffprivlib', 'opendp'}} or name in {{'audit.engine', 'audit.suite', 'audit.report'}})))")


def loaded_modules(code: str, tmp_path: Path) -> tuple[set, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    result = subprocess.run([sys.executable, "-c", LOADED.format(code=code)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    *printed, last = result.stdout.splitlines() or [""]
    return set(last.split()), "\n".join(printed)


def test_importing_the_command_line_and_its_help_load_no_heavy_module(tmp_path):
    assert loaded_modules("import audit.cli", tmp_path)[0] == set()
    help_code = "from audit.cli import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass"
    loaded, printed = loaded_modules(help_code, tmp_path)
    assert loaded == set() and "run" in printed and "sweep" in printed


def test_dpaudit_list_runs_no_mechanism(tmp_path):
    loaded, printed = loaded_modules("from audit.cli import main\nassert main(['list']) == 0", tmp_path)
    assert not loaded & {"torch", "opacus", "sklearn", "matplotlib", "diffprivlib", "opendp"}, loaded
    assert not any(name.startswith("mechanisms.training") or name.startswith("mechanisms.zoo") for name in loaded)
    assert "audit.engine" not in loaded
    for path in __import__("scenarios").bundled_suite("torch"):
        assert path.stem in printed  # listed, with what the file says, though nothing was loaded
    assert "cannot load" not in printed


def test_the_light_parser_lists_each_sub_command_as_the_full_one_does():
    import argparse

    from audit.cli import build_parser

    def lines(parser):
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return [(choice.dest, choice.help) for choice in action._choices_actions]

    assert lines(build_parser(commands=())) == lines(build_parser())


def test_each_sub_command_imports_its_own_module_only(tmp_path):
    """audit.commands holds one module per sub-command: `import audit.cli` and `dpaudit --help` import
    none of them, `dpaudit list` and `dpaudit theory` only their own."""
    template = ("import sys\nfrom audit.cli import main\ntry:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
                "print(' '.join(sorted(name for name in sys.modules if name.startswith('audit.commands.'))))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}

    def imported(argv: list) -> set:
        result = subprocess.run([sys.executable, "-c", template.format(argv=argv)], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return set(result.stdout.splitlines()[-1].split()) if result.stdout.strip() else set()

    assert imported([]) == {"audit.commands.common"}  # main([]) prints the help, exit 2
    assert imported(["--help"]) == {"audit.commands.common"}
    assert imported(["list"]) == {"audit.commands.common", "audit.commands.listing"}
    assert imported(["theory", "laplace", "--epsilon", "1"]) == {"audit.commands.common", "audit.commands.theory"}
