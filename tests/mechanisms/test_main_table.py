"""``python -m mechanisms``: the calibration table flags exactly the claims that fail."""

import subprocess
import sys

import pytest

from mechanisms.__main__ import DEFAULT_DELTAS, DEFAULT_EPSILONS, calibration_table, format_table, main
from mechanisms.calibration import CALIBRATIONS


@pytest.fixture(scope="module")
def rows():
    return calibration_table()


def row(rows, calibration, epsilon, delta):
    (match,) = [r for r in rows if (r.calibration, r.epsilon, r.delta) == (calibration, epsilon, delta)]
    return match


def test_grid(rows):
    assert {0.5, 1, 2, 5, 7, 8, 10} <= set(DEFAULT_EPSILONS)
    assert {1e-5, 1e-2, 0.1} <= set(DEFAULT_DELTAS)
    assert len(rows) == len(CALIBRATIONS) * len(DEFAULT_EPSILONS) * len(DEFAULT_DELTAS)


def test_classical_epsilon_10_is_flagged(rows):
    # docs/ground-truth.md §1: classical ε = 10, δ = 1e-5 has exact ε 10.394 (3 decimals).
    bad = row(rows, "classical", 10.0, 1e-5)
    assert not bad.holds and not bad.proven
    assert bad.exact_epsilon == pytest.approx(10.394, abs=5e-4)
    assert bad.exact_delta == pytest.approx(2.27e-5, abs=5e-8)


def test_analytic_and_zcdp_never_flagged(rows):
    for r in rows:
        if r.calibration in ("analytic", "zcdp"):
            assert r.holds, r
        if r.calibration == "analytic":  # exact calibration: ε(δ) = ε
            assert r.exact_epsilon == pytest.approx(r.epsilon, rel=1e-9)


def test_flags_follow_the_validity_table(rows):
    # docs/ground-truth.md §1: classical breaks at ε ≈ 8.42 / 6.77 / 5.74 and lecture at 9.39 / 7.91 / 7.09
    # for δ = 1e-5 / 1e-2 / 0.1.
    breaks = {("classical", 1e-5): 8.42, ("classical", 1e-2): 6.77, ("classical", 0.1): 5.74,
              ("lecture", 1e-5): 9.39, ("lecture", 1e-2): 7.91, ("lecture", 0.1): 7.09}
    for r in rows:
        if r.calibration in ("classical", "lecture"):
            assert r.holds == (r.epsilon < breaks[r.calibration, r.delta]), r


def test_format_and_main(rows, capsys):
    text = format_table(rows)
    lines = [line for line in text.splitlines() if line.startswith("classical") and "FAILS" in line]
    assert any(line.split()[1:3] == ["1e-05", "10"] for line in lines)
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.strip() == text
    assert "12 of 84 claims do not hold" in out
    assert main(["--epsilons", "0.5,10", "--deltas", "1e-5"]) == 0
    assert "2 of 8 claims do not hold" in capsys.readouterr().out


def test_bad_arguments(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--deltas", "2"])
    assert exit_info.value.code == 2
    assert "`delta` must be in (0, 1), got 2.0" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--epsilons", "a,b"])


def test_module_runs():
    result = subprocess.run([sys.executable, "-W", "error", "-m", "mechanisms", "--deltas", "1e-5"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "FAILS" in result.stdout and result.stderr == ""
