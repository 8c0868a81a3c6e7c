"""``run_sweep`` and ``dpaudit sweep`` on a toy library registered from a test module (numpy only).

The toy library (``sweep_toy_library.py``) has a correct Laplace release, one with half the noise
(true ε = 2ε, docs/ground-truth.md §2), and a query whose label set is read from the data.  The
statistical tests rest on seeded audits: a correct claim is reported VIOLATED with probability at
most 1 − confidence (the sweep's Bonferroni guarantee), and the false claims are refuted with
margins far beyond what the small budgets need (a perfectly separating event for the label query;
ε = 2 against a claimed 1 on 20,000 draws, where the Laplace audit certifies ε ≥ 1.8 in the
third-party suite's runs at that size).  The deterministic tests check the plan, the files, resuming,
the scripts' text and the registry.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

import sweep_toy_library as toy
from audit.cli import main
from audit.sweep import BUDGETS, plan_rows, refutable_samples, run_sweep
from audit.sweep.plan import row_seed
from audit.sweep.repro import CERTAIN
from mechanisms.adapters.released import RAISED, LibraryRelease, encode, released
from mechanisms.claims import ApproxDP, PureDP, Relation
from scenarios.libraries import Coverage, library, library_names, register_library


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    """The toy library swept once at the small budget (about two seconds of CPU)."""
    out = tmp_path_factory.mktemp("sweep")
    document = run_sweep(toy.NAME, budget="small", out=out, progress=False, date="2026-01-01")
    return out, document


def _row(document, entry):
    return next(r for r in document["rows"] if r["entry"] == entry)


# -- the release vector ----------------------------------------------------------------------------
def test_encode_records_size_shape_and_non_finite_values():
    block = encode(np.array([[1.0, np.nan], [np.inf, 4.0]]), 3)
    assert block.tolist() == [4.0, 2.0, 2.0, 1.0, 0.0, 0.0]  # size 4, 2 rows, 2 non-finite, first 3 values
    assert encode(None, 2).tolist() == [-1.0, 0.0, 0.0, 0.0, 0.0]
    assert released((1.5, 1), ([1, 2], 2)).tolist() == [1.0, 1.0, 0.0, 1.5, 2.0, 2.0, 0.0, 1.0, 2.0]


def _raising(data, random_state):
    if np.ravel(data)[0] > 0:
        raise ValueError("refused")
    return [random_state.random()]


def test_library_release_marks_raised_calls_and_is_seeded():
    mech = LibraryRelease(_raising, {}, "raising", PureDP(1.0), 2)
    out = mech(np.array([1.0]), 5, np.random.default_rng(0))
    assert out[:, -1].tolist() == [RAISED] * 5 and not out[:, 0].any()
    a = mech(np.array([0.0]), 5, np.random.default_rng(3))
    b = mech(np.array([0.0]), 5, np.random.default_rng(3))
    assert np.array_equal(a, b) and not a[:, -1].any()
    with pytest.raises(ValueError, match="returned shape"):
        LibraryRelease(_raising, {}, "wrong width", PureDP(1.0), 3)(np.array([0.0]), 2, np.random.default_rng(0))


# -- the plan ----------------------------------------------------------------------------------------
def test_every_row_gets_the_bonferroni_share_and_a_seed_of_its_own():
    cases = tuple(case for entry in toy.entries() for case in entry.cases())
    rows = plan_rows(cases, library=toy.NAME, budget="small", confidence=0.95, seed=7)
    assert [r.confidence for r in rows] == [pytest.approx(1 - 0.05 / 3)] * 3
    assert rows[0].seed == row_seed(7, toy.NAME, cases[0].key)
    reversed_rows = plan_rows(cases[::-1], library=toy.NAME, budget="small", confidence=0.95, seed=7)
    assert {r.case.key: r.seed for r in rows} == {r.case.key: r.seed for r in reversed_rows}
    assert rows[0].samples == BUDGETS["small"]["batch"] and rows[2].samples >= BUDGETS["small"]["query"]


def test_refutable_samples_grow_with_the_claimed_epsilon():
    small, large = (refutable_samples(PureDP(e, Relation.REPLACE), 0.999) for e in (1.0, 5.0))
    assert small < large
    assert refutable_samples(PureDP(5.0, Relation.REPLACE), 0.999) > refutable_samples(PureDP(5.0, Relation.REPLACE), 0.9)


def test_refutable_samples_for_a_rarer_event_grow_as_its_rate_falls():
    claim = ApproxDP(1.0, 1e-9, Relation.ADD_REMOVE)
    counts = [refutable_samples(claim, 0.995, rate) for rate in (1.0, 0.5, 0.25, 0.1)]
    assert counts[0] == refutable_samples(claim, 0.995) and counts == sorted(counts) and len(set(counts)) == 4
    # An event of rate q counted ⌊q·n⌋ of n certifying draws certifies ε ≥ ln((β − δ)/α) (scipy's beta
    # quantiles, not audit.intervals): it exceeds the claim's ε at the returned draws' certifying share.
    from scipy.stats import beta as beta_law

    from audit.sweep.plan import _CERTIFYING_SHARE, _HEADLINE_SHARE

    level = (1 - 0.995) * _HEADLINE_SHARE
    for rate, n in zip((0.5, 0.25, 0.1), counts[1:]):
        certifying = math.ceil(n * _CERTIFYING_SHARE)
        k = math.floor(rate * certifying)
        b, a = beta_law.ppf(level, k, certifying - k + 1), beta_law.ppf(1 - level, 1, certifying)
        assert math.log((b - 1e-9) / a) > 1.0, (rate, n)


@pytest.mark.parametrize("rows, rate", [(11, 0.25), (37, 0.25), (2, 0.5), (1, 0.65), (14, 0.25), (5, 0.1), (14, 1.0)])
def test_refutable_samples_refute_at_every_certifying_count_from_their_share_to_twice_it(rows, rate):
    # β = cp_lower(⌊q·n⌋, n) falls with n while ⌊q·n⌋ stays put, so "n refutes" is not monotone in n:
    # at rate 0.25 and a sweep of 11 rows, 128 certifying draws refute and 129-131 do not.  The count
    # returned must refute at its own certifying share and at every count above it (the certifying
    # share only grows), here up to twice it; checked with scipy's beta quantiles, not audit.intervals.
    from scipy.stats import beta as beta_law

    from audit.sweep.plan import _CERTIFYING_SHARE, _HEADLINE_SHARE

    claim, confidence = ApproxDP(1.0, 1e-9, Relation.ADD_REMOVE), 1 - 0.05 / rows
    level = (1 - confidence) * _HEADLINE_SHARE
    certifying = math.ceil(refutable_samples(claim, confidence, rate) * _CERTIFYING_SHARE)
    n = np.arange(certifying, 2 * certifying + 1)
    k = np.floor(rate * n)
    b, a = beta_law.ppf(level, k, n - k + 1), beta_law.ppf(1 - level, 1, n)
    assert (b - 1e-9 > a * math.e).all(), n[b - 1e-9 <= a * math.e]


@pytest.mark.parametrize("rate", [0.0, 1.5, -0.1, True, "0.5"])
def test_refutable_samples_and_a_case_reject_an_event_rate_outside_the_unit_interval(rate):
    claim = PureDP(1.0, Relation.REPLACE)
    with pytest.raises(ValueError, match="`rate` must be a number in \\(0, 1\\]"):
        refutable_samples(claim, 0.99, rate)
    case = next(case for entry in toy.entries() for case in entry.cases())
    with pytest.raises(ValueError, match="`event_rate` must be a number in \\(0, 1\\]"):
        dataclasses.replace(case, event_rate=rate)


# -- the sweep ---------------------------------------------------------------------------------------
@pytest.mark.statistical
def test_false_claims_are_refuted_and_the_true_one_is_not(swept):
    _, document = swept
    assert _row(document, "noise.laplace")["verdict"] == "NOT_REFUTED"
    halved = _row(document, "noise.halved")
    assert halved["verdict"] == "VIOLATED" and halved["epsilon_lb"] > 1.0
    labels = _row(document, "labels.count_by_label")
    assert labels["verdict"] == "VIOLATED" and labels["witness"]["pair"] == "last label 0 → new label 2"


@pytest.mark.statistical
def test_report_files_table_and_coverage(swept):
    out, document = swept
    saved = json.loads((out / "sweep.json").read_text())
    assert saved["rows"] == json.loads(json.dumps(document["rows"], default=str))
    assert saved["library"] == toy.NAME and saved["date"] == "2026-01-01" and saved["rows_planned"] == 3
    table = (out / "sweep.md").read_text()
    assert sum(line.startswith("| noise.") for line in table.splitlines()) == 2 and "[script](repro/" in table
    assert document["coverage"]["unaccounted"] == [] and document["coverage"]["fraction"] == pytest.approx(3 / 4)
    assert len(list((out / "rows").glob("*.json"))) == 3


@pytest.mark.statistical
def test_each_violated_row_has_a_standalone_script_that_shows_the_event(swept):
    out, document = swept
    for row in document["rows"]:
        if row["verdict"] != "VIOLATED":
            assert "repro" not in row
            continue
        script = out / row["repro"]["path"]
        text = script.read_text()
        assert "dpaudit" not in text.split('"""', 2)[2] and "import audit" not in text and "scenarios" not in text
        # Both violations are far beyond the claim (ε = 2 against 1; a label set read from the data):
        # the chooser's event is certain, and the record and the script's docstring say so.
        assert row["repro"]["event_choice"] == CERTAIN and f"How it was chosen: {CERTAIN}." in " ".join(text.split())
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                                cwd=out)
        assert result.returncode == 0, result.stderr
        lines = result.stdout.splitlines()
        assert lines[0].startswith("P[event | ") and lines[1].startswith("P[event | ")
        # The script's event exceeds the claim's allowance on its own fresh draws: it was chosen on
        # other draws with a one-standard-deviation correction and N gives four more of margin.
        assert lines[2].endswith("exceeded"), result.stdout


@pytest.mark.statistical
def test_resume_keeps_saved_rows_and_gives_the_same_report(swept, tmp_path):
    out, document = swept
    first = run_sweep(toy.NAME, budget="small", out=tmp_path, progress=False, date="2026-01-01",
                      entries=["noise.*"])
    stamps = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "rows").glob("*.json")}
    again = run_sweep(toy.NAME, budget="small", out=tmp_path, progress=False, date="2026-01-01",
                      entries=["noise.*"], resume=True)
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "rows").glob("*.json")} == stamps
    assert again["rows"] == first["rows"]
    # The same rows at the same seed as in the full sweep, at a different Bonferroni share: m = 2.
    assert first["row_confidence"] == pytest.approx(1 - 0.05 / 2)


@pytest.mark.statistical
def test_cli_exit_status_and_table(tmp_path, capsys):
    status = main(["sweep", toy.NAME, "--budget", "small", "--out", str(tmp_path), "--no-progress",
                   "--entries", "labels.*"])
    assert status == 1
    assert "labels.count_by_label" in capsys.readouterr().out


# -- the registry and bad input --------------------------------------------------------------------
def test_registry_finds_plugged_in_and_built_in_libraries():
    assert library(toy.NAME) is toy.LIBRARY
    assert {"diffprivlib", "opendp", toy.NAME} <= set(library_names())
    with pytest.raises(ValueError, match="did you mean 'toy-numpy'"):
        library("toy-nunpy")
    with pytest.raises(ValueError, match="already registered"):
        register_library(type(toy.LIBRARY)(name=toy.NAME, distribution="numpy", entries=toy.entries,
                                           public_api=toy.public_api))


def test_bad_options_are_refused_before_anything_runs(tmp_path):
    with pytest.raises(ValueError, match="`budget` must be one of"):
        run_sweep(toy.NAME, budget="huge", out=tmp_path)
    with pytest.raises(ValueError, match="match no entry"):
        run_sweep(toy.NAME, entries=["nothing.*"], out=tmp_path)
    assert main(["sweep", "no-such-library", "--out", str(tmp_path)]) == 2


def test_an_entry_named_with_brackets_is_selected_by_its_name():
    """``measurements.make_laplace[int]`` read as a glob is a character class that matches
    ``measurements.make_laplacei``; an exact name selects its entry, and globs still work."""
    from types import SimpleNamespace

    from audit.sweep.runner import _select

    entries = tuple(SimpleNamespace(name=n) for n in ("m.laplace", "m.laplace[int]", "m.laplacei"))
    assert [e.name for e in _select(entries, ["m.laplace[int]"])] == ["m.laplace[int]", "m.laplacei"]
    assert [e.name for e in _select(entries, ["m.laplace[[]int]"])] == ["m.laplace[int]"]
    assert [e.name for e in _select(entries, ["m.laplace*"])] == ["m.laplace", "m.laplace[int]", "m.laplacei"]
    assert [e.name for e in _select(entries, ["m.laplace"])] == ["m.laplace"]


def test_coverage_fraction_counts_entries_audited_through_others():
    coverage = Coverage(("a", "b", "c", "d"), {"a": ("x",)}, {"b": "not DP: base", "c": "covered through another "
                                                            "entry: x"}, ("d",))
    assert coverage.fraction == pytest.approx(2 / 3)


# -- exit status, rows not in the release, interruption ----------------------------------------------
@pytest.mark.statistical
def test_a_row_that_audited_nothing_fails_the_sweep_with_its_own_status(tmp_path, capsys):
    status = main(["sweep", toy.BROKEN, "--budget", "small", "--out", str(tmp_path), "--no-progress"])
    captured = capsys.readouterr()
    assert status == 3  # not 0 (a pass) and not 1 (a finding): a row audited nothing
    assert "1 rows audited nothing (ERROR)" in captured.err and "exit status 3" in captured.err
    document = json.loads((tmp_path / "sweep.json").read_text())
    assert document["counts"] == {"violated": 0, "not_refuted": 1, "error": 1, "absent": 2}
    # Rows the release lacks are reported, not planned: the Bonferroni share counts two rows.
    assert document["rows_planned"] == 2 and document["row_confidence"] == pytest.approx(1 - 0.05 / 2)
    absent = {r["entry"]: r for r in document["rows"] if r["status"] == "absent"}
    assert absent["noise.future"]["reason"].startswith("not in this release: numpy.random.no_such_mechanism")
    assert absent["noise.partly"]["point"] == "epsilon=1.0, new_parameter=True"
    table = (tmp_path / "sweep.md").read_text()
    assert "1 of 2 rows audited nothing (ERROR)" in table and table.count("| not in this release |") == 2


def test_only_correct_rows_exit_zero_and_no_row_at_all_is_not_a_pass(tmp_path):
    from audit.sweep.command import sweep_status

    def doc(*rows):
        return {"rows": list(rows)}
    fine, bad = {"status": "done", "verdict": "NOT_REFUTED"}, {"status": "done", "verdict": "VIOLATED"}
    error, absent = {"status": "error", "error": "x"}, {"status": "absent", "reason": "not in this release"}
    assert sweep_status(doc(fine, absent)) == 0 and sweep_status(doc(fine, bad)) == 1
    assert sweep_status(doc(fine, bad, error)) == 3 and sweep_status(doc(absent)) == 3 and sweep_status(doc()) == 3


@pytest.mark.statistical
def test_an_interrupted_sweep_writes_its_rows_and_resume_finishes_it(tmp_path, monkeypatch, capsys):
    from audit.sweep import runner

    reference = run_sweep(toy.NAME, budget="small", out=tmp_path / "whole", progress=False, date="2026-01-01",
                          entries=["noise.*"], repro=False)
    real, calls = runner._run_one, []

    def stop_at_the_second(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "_run_one", stop_at_the_second)
    out = tmp_path / "cut"
    status = main(["sweep", toy.NAME, "--budget", "small", "--out", str(out), "--no-progress", "--entries", "noise.*",
                   "--no-repro"])
    message = capsys.readouterr().err
    assert status == 130
    assert "1 of 2 rows finished" in message and "--resume" in message
    saved = json.loads((out / "sweep.json").read_text())
    assert saved["finished"] is False and len(saved["rows"]) == 1
    assert "interrupted after 1 of 2 rows" in (out / "sweep.md").read_text()
    monkeypatch.setattr(runner, "_run_one", real)
    resumed = run_sweep(toy.NAME, budget="small", out=out, progress=False, date="2026-01-01", entries=["noise.*"],
                        repro=False, resume=True)
    assert resumed["finished"] is True
    strip = lambda rows: [{k: v for k, v in r.items() if k != "wall_time_s"} for r in rows]  # noqa: E731
    assert strip(resumed["rows"]) == strip(reference["rows"])


def _leaky(data, random_state, *, epsilon):
    """x + Lap(1/ε), rounded to a grid of 2^-30 when x > 0.5: the shift is exactly ε-DP, the bits are not."""
    value = float(np.ravel(data)[0]) + random_state.laplace(0.0, 1.0 / epsilon)
    return [round(value * 2**30) / 2**30 if np.ravel(data)[0] > 0.5 else value]


@pytest.mark.statistical
def test_a_leak_in_the_bits_gets_a_script_that_carries_the_view_and_shows_the_excess(tmp_path):
    from audit.sweep.repro import readable_event, script_draws, script_text

    rng = np.random.RandomState(5)
    base, neighbour = np.array([0.0]), np.array([1.0])
    a = np.array([_leaky(base, rng, epsilon=1.0) for _ in range(4000)])
    b = np.array([_leaky(neighbour, rng, epsilon=1.0) for _ in range(4000)])
    event = readable_event(np.c_[a, np.zeros(len(a))], np.c_[b, np.zeros(len(b))], 1.0, 0.0)
    # A value of 1 + Lap(1) on the grid has its 10 low bits 0 always; off it, with probability
    # 2^-10 (the bits of a continuous draw are close to uniform): no threshold comes near that.
    # Both views the script can carry see it: the low bits, and the grain (2^-30 divides every value on
    # D', and about 2^-22 of those on D): each an event of frequency 1 on one side and about 0 on the other.
    assert event.op in ("bits in", "grain >=", "grain <=") and max(event.p_base, event.p_neighbour) == 1.0
    assert min(event.p_base, event.p_neighbour) < 0.01
    text = script_text(header="import numpy as np\n", helpers=(), release=_leaky, params={"epsilon": 1.0}, base=base,
                       neighbour=neighbour, pair_label="0 vs 1", event=event, draws=script_draws(event, "call"),
                       epsilon=1.0, delta=0.0, title="t", finding="f", seeded=True, layout="", width=1)
    (tmp_path / "repro.py").write_text(text)
    result = subprocess.run([sys.executable, str(tmp_path / "repro.py")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    # The script's N (script_draws) is at least 200: off the grid 10 low bits are all 0 with probability
    # about 2^-10, so 6 or more such draws of 200 (q ≥ 0.03, excess ≤ 1 − e·0.03 = 0.92) have probability < 1e-8.
    assert lines[2].endswith(": exceeded") and float(lines[3].split(":")[1]) > 0.9


@pytest.mark.statistical
def test_the_grain_of_a_float_sum_is_a_perfect_event_and_the_script_shows_it(tmp_path):
    """1 + Lap(1) is a multiple of 2^-53 wherever it lands (the sum is rounded to the grid of its
    larger operand when |noise| < 1, and of itself beyond); Lap(1) alone is below that grid when
    |Lap(1)| < 1/2 and its significand's last bit is 1, probability (1 − e^{-1/2})/2 ≈ 0.20 and more.
    With 4,000 draws a side the held-out usage of the grain view is far above the value's."""
    from audit.statistics.coordinates import fit_coordinates, grain
    from audit.sweep.repro import readable_event, script_draws, script_text

    assert grain(np.array([1.0, 0.75, 3 * 2.0 ** -1074, 0.0, -6.0])).tolist() == [0.0, -2.0, -1074.0, -np.inf, 1.0]
    rng = np.random.default_rng(11)
    a, b = rng.laplace(0.0, 1.0, (4000, 1)), 1.0 + rng.laplace(0.0, 1.0, (4000, 1))
    statistic, notes = fit_coordinates(a, b, PureDP(1.0))
    assert notes["coordinates_choice"] == "grain of output[0]"
    event = readable_event(a, b, 1.0, 0.0)
    assert event.op == "grain <=" and event.more_likely == "D" and event.p_neighbour == 0.0

    def shifted(data, random_state):
        return [float(np.ravel(data)[0]) + random_state.laplace(0.0, 1.0)]

    text = script_text(header="import numpy as np\n", helpers=(), release=shifted, params={}, base=np.array([0.0]),
                       neighbour=np.array([1.0]), pair_label="0 vs 1", event=event, draws=script_draws(event, "call"),
                       epsilon=1.0, delta=0.0, title="t", finding="f", seeded=True, layout="", width=1)
    (tmp_path / "repro.py").write_text(text)
    result = subprocess.run([sys.executable, str(tmp_path / "repro.py")], capture_output=True, text=True, timeout=120)
    lines = result.stdout.splitlines()
    # P[event | D'] = 0 exactly, so the script exceeds once one of its N ≥ 200 draws on D is in the
    # event: probability 1 − 0.8^200 > 1 − 1e-19.
    assert result.returncode == 0 and lines[2].endswith(": exceeded"), result.stdout + result.stderr


@pytest.mark.statistical
def test_a_projection_the_audit_trained_is_carried_when_no_single_coordinate_shows_the_excess(tmp_path):
    """Two coordinates x + N(0, 1) and y = s − x + N(0, 1)·0.1 where s is 0 on D and 1 on D′:
    neither coordinate alone moves by more than about one standard deviation, but x + y moves by 1
    with standard deviation √1.01 · 0.1 ≈ 0.1, a shift of ten standard deviations (ε far above 1)."""
    from audit.sweep.repro import readable_event, script_draws, script_text

    def release(data, random_state):
        x = random_state.standard_normal()
        return [x, float(np.ravel(data)[0]) - x + 0.1 * random_state.standard_normal()]

    rng = np.random.RandomState(3)
    a = np.array([release(np.array([0.0]), rng) + [0.0] for _ in range(4000)])
    b = np.array([release(np.array([1.0]), rng) + [0.0] for _ in range(4000)])
    plain = readable_event(a, b, 3.0, 0.0)
    event = readable_event(a, b, 3.0, 0.0, projections=[[1.0, 1.0, 0.0]])
    assert event.op.startswith("projection") and (plain is None or event.excess > plain.excess)
    text = script_text(header="import numpy as np\n", helpers=(), release=release, params={}, base=np.array([0.0]),
                       neighbour=np.array([1.0]), pair_label="0 vs 1", event=event, draws=script_draws(event, "call"),
                       epsilon=3.0, delta=0.0, title="t", finding="f", seeded=True, layout="", width=2)
    (tmp_path / "repro.py").write_text(text)
    result = subprocess.run([sys.executable, str(tmp_path / "repro.py")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.splitlines()[2].endswith(": exceeded"), result.stdout + result.stderr


def _middle_grain(data, random_state):
    """x = 1/2 + (2k + 1)·2^g in [1/2, 1), whose grain is exactly g, with g uniform on −21..−2 on D
    and on the same values but −10 on D′ (data > 1/2): the grain −10 has probability 1/20 on D and 0
    on D′, every other grain 1/20 on D and 1/19 on D′; the values are close to uniform on both sides."""
    grains = [g for g in range(-21, -1) if g != -10 or float(np.ravel(data)[0]) <= 0.5]
    g = grains[random_state.randint(len(grains))]
    return [0.5 + (2 * random_state.randint(2 ** (-2 - g)) + 1) * 2.0 ** g]


class _MiddleGrain:
    claim = PureDP(0.5, "replace")

    def __call__(self, dataset, size, rng):
        state = np.random.RandomState(rng.integers(2**31))
        return np.array([_middle_grain(dataset, state) for _ in range(size)])


@pytest.mark.statistical
def test_a_certified_grain_set_is_carried_when_every_threshold_on_the_grain_is_weaker(tmp_path):
    """The audit certifies the atom set {grain ≠ −10} (or its complement): excess 1/20 − e^0.5·0 = 0.05
    at ε = 0.5.  No threshold sees it: grain ≤ g or ≥ g has frequencies j/20 on D and j/19 or
    (j − 1)/19 on D′, ratio at most 20/19 < e^0.5 (so no excess at all); values and low bits (all 0
    above 2^-21 in [1/2, 1)) neither.  So before the certified set was a candidate no script event was
    found, and now the script carries it and shows the excess."""
    import scenarios
    from audit import run_audit
    from audit.sweep.repro import certified_sets, readable_event, script_draws, script_text

    report = run_audit(_MiddleGrain(), scenarios.custom([([0.0], [1.0])], "replace"), claim=_MiddleGrain.claim,
                       samples=20_000, seed=5, statistic="coordinates", n_jobs=1, progress=False,
                       accuracy=False).to_dict()
    assert report["verdict"] == "VIOLATED" and report["statistic"]["pairs"][0]["view"] == "grain"
    label = report["scenario"]["pairs"][0]["label"]
    sets = certified_sets(report, label)
    assert sets and all(s.view == "grain" and s.index == 0 for s in sets)
    rng = np.random.RandomState(6)
    a = np.array([_middle_grain(np.array([0.0]), rng) for _ in range(4000)])
    b = np.array([_middle_grain(np.array([1.0]), rng) for _ in range(4000)])
    # Fresh draws: no simplified event exceeds the claim in truth (above); on draws one may by luck only
    # where both sides' frequencies are a few in 4,000 (hi > e^0.5·lo needs that), so its excess is at
    # most about 0.005 < 0.02.  The certified set is scored on the last 3,500 of the draws (the first 500
    # propose the simplified events): its frequency on D is Binomial(3500, 1/20), 175 ± 12.9, and 0 on D′,
    # so the tolerance below is 4.7 of its standard deviations (probability < 3e-6 to exceed it, CLT).
    plain = readable_event(a, b, 0.5, 0.0)
    assert plain is None or plain.excess < 0.02
    event = readable_event(a, b, 0.5, 0.0, certified=sets)
    assert event.certified and event.op in ("grain in", "grain not in") and event.more_likely == "D"
    assert abs(event.excess - 0.05) < 5 * math.sqrt(0.05 * 0.95 / 4000)
    text = script_text(header="import numpy as np\n", helpers=(), release=_middle_grain, params={},
                       base=np.array([0.0]), neighbour=np.array([1.0]), pair_label=label, event=event,
                       draws=script_draws(event, "call"), epsilon=0.5, delta=0.0, title="t", finding="f",
                       seeded=True, layout="", width=1)
    assert "EVENT_GRAINS = frozenset([-10])" in text
    (tmp_path / "repro.py").write_text(text)
    result = subprocess.run([sys.executable, str(tmp_path / "repro.py")], capture_output=True, text=True, timeout=120)
    lines = result.stdout.splitlines()
    # N = script_draws ≥ 16/0.05² = 6,400 a side: the event never happens on D′, and on D it happens
    # Binomial(N, 1/20) times, 0 with probability 0.95^6400 < 1e-140.
    assert result.returncode == 0 and lines[2].endswith(": exceeded"), result.stdout + result.stderr


def test_the_script_and_the_witness_read_a_pairs_statistic_from_the_audited_pairs():
    """``statistic["pairs"]`` is aligned with the audited pairs (``"pairs"``), not with the scenario's,
    which also list the pairs another covers: here pair "c" is the second audited pair but the third
    scenario pair, so an index among the scenario's pairs finds no record (or the wrong one)."""
    from audit.render.witness import pair_statistic, statistic_lines
    from audit.sweep.repro import AtomSet, certified_sets

    coordinates = {"kind": "coordinates", "coordinate": 0, "view": "grain", "atom_scores": [[-10.0, 2.0], [3.0, -1.0]]}
    report = {"pairs": [{"label": "a", "also_covers": ["b"]}, {"label": "c"}],
              "scenario": {"pairs": [{"label": "a"}, {"label": "b"}, {"label": "c"}]},
              "statistic": {"option": "coordinates", "pairs": [{"kind": "linear"}, coordinates]},
              "evidence": [{"pair": "c", "threshold": 1.0}]}
    assert pair_statistic(report, "c") is coordinates and pair_statistic(report, "b") is None
    assert certified_sets(report, "c") == [AtomSet(0, "grain", (-10.0,), False)]
    assert statistic_lines(report, "c")[0] == "one output coordinate's own statistic"  # the record of c, not a's linear one


def test_the_rows_witness_statistic_and_the_scripts_projections_read_the_audited_pairs_too():
    """The sweep table's witness statistic and the weights a reproduction script tries are the record
    of the witness pair among the audited pairs: pair "c" (second audited, third in the scenario)."""
    from audit.sweep.rows import witness_summary
    from audit.sweep.runner import _projections

    records = [{"kind": "linear", "auto_choice": "linear", "weights": [1.0, 0.0]},
               {"kind": "linear", "auto_choice": "binned", "weights": [0.0, 1.0]}]
    report = {"pairs": [{"label": "a", "also_covers": ["b"]}, {"label": "c"}],
              "scenario": {"pairs": [{"label": "a"}, {"label": "b"}, {"label": "c"}]},
              "statistic": {"option": "auto", "pairs": records},
              "evidence": [{"pair": "c", "event": "<w, output> >= 1"}],
              "witness": {"headline": "epsilon", "epsilon": {"evidence": 0}}}
    assert witness_summary(report) == {"pair": "c", "event": "<w, output> >= 1", "statistic": "auto: binned"}
    assert _projections({"report": report}, "c") == [[0.0, 1.0]] and _projections({"report": report}, "b") == []


# -- known issues linked by what the witness reads, and the budget of a slow pipeline ---------------
def test_an_issue_is_linked_to_a_violated_row_whose_witness_statistic_names_it():
    from audit.sweep.rows import linked_known
    from scenarios.libraries import Library

    issues = {"grain of ": "lib#94 (rounding)", "bits of ": "lib#94 (rounding)"}
    row = {"verdict": "VIOLATED", "known": "", "witness": {"statistic": "coordinates: grain of output[3]"}}
    assert linked_known(row, issues) == "lib#94 (rounding)"
    # the catalogue's own issue first, the linked one after it, once
    both = dict(row, known="not reported upstream: NaN rows", witness={"statistic": "coordinates: bits of output[0]"})
    assert linked_known(both, issues) == "not reported upstream: NaN rows; lib#94 (rounding)"
    # a row refuted through a value, or not refuted at all, gets nothing from the rule
    assert linked_known(dict(row, witness={"statistic": "coordinates: value of output[0]"}), issues) == ""
    assert linked_known(dict(row, verdict="NOT_REFUTED"), issues) == ""
    with pytest.raises(ValueError, match=r"witness_issues\['grain'\]"):
        Library(name="x", distribution="numpy", entries=tuple, public_api=tuple, witness_issues={"grain": " "})


def test_every_cost_has_a_budget_and_a_pipeline_row_gets_its_own():
    from audit.sweep.plan import CAPS
    from audit.sweep.repro import REPRO_DRAWS, SCRIPT_DRAWS
    from scenarios.libraries import COSTS

    assert all(cost in table for cost in COSTS for table in (*BUDGETS.values(), CAPS, REPRO_DRAWS, SCRIPT_DRAWS))
    case = toy.entries()[0].cases()[0]
    pipeline = type(case)(**{**{f: getattr(case, f) for f in case.__dataclass_fields__}, "cost": "pipeline"})
    row, = plan_rows((pipeline,), library=toy.NAME, budget="default", confidence=0.95, seed=1)
    # a (1, 0) claim at one row needs fewer than 100 draws a side for a perfect event (refutable_samples)
    assert row.samples == BUDGETS["default"]["pipeline"] and row.refutable


def test_a_case_min_samples_raises_its_row_and_the_samples_option_still_wins():
    case = toy.entries()[0].cases()[0]
    fields = {f: getattr(case, f) for f in case.__dataclass_fields__}
    floored = type(case)(**{**fields, "min_samples": 50_000})
    plain, = plan_rows((case,), library=toy.NAME, budget="small", confidence=0.95, seed=1)
    raised, = plan_rows((floored,), library=toy.NAME, budget="small", confidence=0.95, seed=1)
    assert raised.samples == 50_000 > plain.samples and raised.refutable
    # a floor under the budget changes nothing; --samples overrides both
    low = type(case)(**{**fields, "min_samples": 1})
    assert plan_rows((low,), library=toy.NAME, budget="small", confidence=0.95, seed=1)[0].samples == plain.samples
    assert plan_rows((floored,), library=toy.NAME, budget="small", confidence=0.95, seed=1, samples=300)[0].samples == 300
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match=r"`min_samples` must be an integer >= 0, got " + re.escape(repr(bad))):
            type(case)(**{**fields, "min_samples": bad})
