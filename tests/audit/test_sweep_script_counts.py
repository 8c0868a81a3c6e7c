"""The count of reproduction scripts that show the excess (benchmarks/sweep_libraries.py): "exceeded"
compares point estimates on a script's fresh draws; a script shows the excess when it is at least
two of its standard errors.

The scripts here release deterministically — the event happens on exactly a given share of every
20 calls — so their frequencies, excess and standard error are known in advance and nothing rests
on draws.
"""

from __future__ import annotations

import math

import numpy as np

from audit.sweep.repro import Event, script_text
from benchmarks.sweep_libraries import SHOWN_ERRORS, excess_in_errors, render_timing, run_scripts

N = 200


def cycling(data, random_state, *, shares):
    """1.0 (the event) on exactly shares[x] of every 20 calls, x the dataset's value (0 or 1)."""
    cycling.calls = getattr(cycling, "calls", 0) + 1
    return [1.0 if cycling.calls % 20 < round(20 * shares[int(np.ravel(data)[0])]) else 0.0]


def _script(folder, name: str, q: float, p: float, epsilon: float) -> None:
    """A script whose event (output[0] >= 0.5, more likely under D′) happens on a share q of D's
    releases and p of D′'s, exactly."""
    event = Event(0, ">=", 0.5, "D'", q, p, p - math.exp(epsilon) * q)
    text = script_text(header="import numpy as np\n", helpers=(), release=cycling, params={"shares": [q, p]},
                       base=np.array([0.0]), neighbour=np.array([1.0]), pair_label="0 vs 1", event=event,
                       draws=N, epsilon=epsilon, delta=0.0, title="t", finding="f", seeded=True, layout="", width=1)
    (folder / "repro").mkdir(exist_ok=True)
    (folder / "repro" / f"{name}.py").write_text(text)


def _errors(q: float, p: float, epsilon: float) -> float:
    """The excess in the standard errors the script prints: each frequency's variance with half a
    release added to its count, (k + 1/2)/(N + 1)."""
    ph, qh = (p * N + 0.5) / (N + 1), (q * N + 0.5) / (N + 1)
    error = math.sqrt(ph * (1 - ph) / N + math.exp(2 * epsilon) * qh * (1 - qh) / N)
    return (p - min(1.0, math.exp(epsilon) * q)) / error


def test_a_script_shows_the_excess_only_at_two_standard_errors_and_the_table_says_so(tmp_path):
    """Four scripts whose point estimates all exceed the claim: a marginal excess (0.35 against
    e^0.1·0.30 = 0.33, 0.4 standard errors), a plain one (0.9 against e·0.1), and an event seen on
    every release of D′ and none of D at ε = 1 (98 standard errors) and at ε = 6, where e^6 times a
    frequency that 200 releases cannot tell from 1/201 allows it all (0.7 standard errors: the
    plug-in standard error, 0 there, would have hidden that)."""
    cases = {"marginal": (0.30, 0.35, 0.1), "plain": (0.10, 0.90, 1.0), "perfect": (0.0, 1.0, 1.0),
             "perfect-at-large-epsilon": (0.0, 1.0, 6.0)}
    for name, case in cases.items():
        _script(tmp_path, name, *case)
    scripts = {s["script"][:-3]: s for s in run_scripts(tmp_path, timeout=120)}
    assert set(scripts) == set(cases)
    for name, case in cases.items():
        found = scripts[name]
        assert found["status"] == 0 and found["shows_frequencies"] and found["exceeded"], found
        assert abs(found["excess_standard_errors"] - _errors(*case)) <= 0.05 + 1e-9  # printed to one decimal
        assert found["shows_excess"] == (_errors(*case) >= SHOWN_ERRORS)
    assert [name for name in cases if scripts[name]["shows_excess"]] == ["plain", "perfect"]
    assert excess_in_errors(["its standard error: 0.0000"]) is None  # an older script's line without it

    row = {"version": "1", "budget": "default", "jobs": 1, "rows": 4, "violated": 4, "wall_s": 60.0, "cpu_s": 60.0,
           "load_before": 1.0, "load_after": 1.0, "date": "2026-11-28", "scripts": 4,
           "scripts_showing_frequencies": 4, "scripts_exceeding": 4,
           "scripts_showing_excess": sum(s["shows_excess"] for s in scripts.values())}
    old = {k: v for k, v in row.items() if k != "scripts_showing_excess"}  # measured before the count was kept
    lines = render_timing({"new": row, "old": old}).splitlines()
    header = [cell.strip() for cell in lines[2].strip("|").split("|")]
    assert "scripts exceeding the claim (point estimates)" in header
    column = header.index("scripts exceeding it by ≥ 2 standard errors")
    cells = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")] for line in lines[4:]}
    assert cells["new"][column] == "2 of 4" and cells["new"][column - 1] == "4 of 4"
    assert cells["old"][column] == "—"
    assert all(len(c) == len(header) for c in cells.values()) and len(lines[3].split("|")) == len(header) + 2
    # a row whose CPU time was not measured (a process tree the sweep's rusage misses) says so, never a number
    unmeasured = {**row, "cpu_s": None}
    cells = [c.strip() for c in render_timing({"u": unmeasured}).splitlines()[4].strip("|").split("|")]
    assert cells[header.index("CPU (min)")] == "unknown" and cells[-1] == "met"
    late = [c.strip() for c in render_timing({"u": {**unmeasured, "wall_s": 3600.0}}).splitlines()[4].strip("|")
            .split("|")]
    assert late[-1] == "not met: wall time over it; CPU unknown"


def test_a_scripts_releases_suffice_for_four_standard_errors_at_a_large_epsilon(tmp_path):
    """An event on 30% of D′'s releases and none of D's at ε = 4: 16/x² asks for only 200 releases,
    at which the excess 0.3 is 1.5 standard errors (e^8 times a frequency 200 releases cannot tell
    from 1/402 weighs as much as 0.3 itself); script_draws given ε asks for the least N (in steps of
    a quarter) at which it is four, and the script then shows the excess (3.5 standard errors or more
    as printed: N is not a multiple of the release's 20-call cycle, so its frequency is near 0.3, not
    exactly).  Without ε, or at ε = 0.1, the count is 16/x² as before."""
    from audit.sweep.repro import script_draws

    event = Event(0, ">=", 0.5, "D'", 0.0, 0.3, 0.3)
    n = script_draws(event, "call", 4.0)
    assert script_draws(event, "call") == script_draws(event, "call", 0.1) == 200
    assert _errors(0.0, 0.3, 4.0) < 2.0 and n > 200
    # At N the excess is four standard errors; at fewer than the step before N it is not (N is the least step).
    for releases, above in ((n, True), (math.ceil(n / 1.25) - 1, False)):
        p, q = (0.3 * releases + 0.5) / (releases + 1), 0.5 / (releases + 1)
        assert (0.3 >= 4 * math.sqrt((p * (1 - p) + math.exp(8.0) * q * (1 - q)) / releases)) == above
    for name, releases in (("few", 200), ("enough", n)):
        text = script_text(header="import numpy as np\n", helpers=(), release=cycling, params={"shares": [0.0, 0.3]},
                           base=np.array([0.0]), neighbour=np.array([1.0]), pair_label="0 vs 1", event=event,
                           draws=releases, epsilon=4.0, delta=0.0, title="t", finding="f", seeded=True, layout="",
                           width=1)
        (tmp_path / "repro").mkdir(exist_ok=True)
        (tmp_path / "repro" / f"{name}.py").write_text(text)
    scripts = {s["script"]: s for s in run_scripts(tmp_path, timeout=120)}
    assert scripts["few.py"]["exceeded"] and not scripts["few.py"]["shows_excess"]
    assert scripts["enough.py"]["shows_excess"] and scripts["enough.py"]["excess_standard_errors"] >= 3.5
