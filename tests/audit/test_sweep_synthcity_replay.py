"""The gray-box replay of a real synthcity GAN fit reproduces it bit for bit (skipped without synthcity).

CI never installs synthcity (it needs torch < 2.3); this test runs in the environment of
docs/libraries/synthcity.md.  It runs in a fresh process, because what broke the replay happened
in a process's first fit only (lazy initialisations that draw random names, which the catalogue now
runs at import), and it asks for as many rows (fits) as PATE-GAN's last batch has records, where
a replay that scaled noise per row broke every fit.  Deterministic: a replay on D answers every
random call from the record, so the table is the record's whatever was drawn.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

if importlib.util.find_spec("synthcity") is None:
    pytest.skip("synthcity is not installed (docs/libraries/synthcity.md builds its environment)",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import sys, warnings
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, {root!r})
from scenarios.libraries import library
from audit.graybox import check_pair
from audit.graybox.execute import execute
lib = library("synthcity")
case = next(e.build(e.grid[0]) for e in lib.entries() if e.name == {entry!r})
base, neighbour = (np.asarray(d) for d in (case.scenario.pairs[0].base, case.scenario.pairs[0].neighbor))
record, _ = execute(case.mechanism, base, 4, seed=7)  # the process's first fit
replay, diverged = execute(case.mechanism, base, 4, seed=8, source=record)
print(len(record.calls), len(replay.calls), diverged, int(np.array_equal(record.output, replay.output)))
check = check_pair(case.mechanism, base, neighbour, case.claim, label="pair", seed=11)
print(check.rows, check.executions)
"""


@pytest.mark.parametrize("entry", ["plugins.pategan"])
def test_a_gan_fit_replayed_on_its_own_data_gives_the_recorded_table_bit_for_bit(entry):
    result = subprocess.run([sys.executable, "-c", SCRIPT.format(root=str(ROOT), entry=entry)], capture_output=True,
                            text=True, timeout=900, cwd=ROOT)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.strip().splitlines()
    calls, replayed, diverged, same = lines[-2].split()
    assert calls == replayed and diverged == "None" and same == "1", lines
    rows, executions = lines[-1].split()
    assert int(rows) == 4 and float(executions) >= 2  # the pair checked (check_pair raises if D is not reproduced)
