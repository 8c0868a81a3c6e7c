"""The synthcity catalogue on a numpy fake of its API (``sweep_fake_synthcity.py``): CI never installs
synthcity.

The deterministic tests build every case on the fake, release once on both datasets of every pair
(every vector has the declared width, no call raises), check coverage (every public name audited
or left out with a reason), and that a gray-box row (``Case.graybox``) is planned at the draws a
perfectly separating event needs and is replayed by the sweep's runner.

The statistical tests plan one row alone at sweep confidence 0.95 on the fake's seeded noise:

- categories read from the data (synthcity's schema): the new category a = 3 is in the synthetic
  table only when the record that holds it is in the data, an event of probability 0 on one side
  and at least 1 − (1 − 1/(13 + 8 + Σ noise))^20 on the other (its cell has a pseudo-count of 1 at
  least, among 13 records and 8 pseudo-counts): about 0.6, far beyond ε = 1 at the small budget;
- with the domain fixed the fake is ε-DP exactly (Laplace noise of scale 2/ε on a histogram of L1
  sensitivity 2 under replace, 1 under add-remove; Dwork & Roth 2014, Theorem 3.6), so the new
  category row and the rare cell row are refuted with probability at most 0.05 each;
- the default ``random_state = 0`` makes every fit draw the same noise: the table is then a
  deterministic function of the data and a common record added changes it (checked below on the
  two datasets), so that row is refuted;
- the gray-box PATE-GAN row, replayed and then audited at the refutable draws (47 a side) with
  200 synthetic rows, is refuted on the new category: it appears on D′ with probability at least
  1 − (1 − 1/(21 + Σ noise))^200, about 1 − e^{−8} when the noise sums to a few units, and never on D.
"""

from __future__ import annotations

import sys
import types
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
import sweep_fake_synthcity as fake  # noqa: E402

from audit.sweep import runner  # noqa: E402
from audit.sweep.graybox import graybox_row  # noqa: E402
from audit.sweep.plan import BUDGETS, plan_rows, refutable_samples  # noqa: E402
from audit.sweep.rows import audit_row  # noqa: E402


def _library(monkeypatch):
    fake.install(monkeypatch)
    from scenarios.libraries import library

    return library("synthcity")


def _case(lib, entry: str, **wanted):
    return next(c for e in lib.entries() if e.name == entry for c in e.cases()
                if all(c.params.get(k, d) == v for k, (v, d) in wanted.items()))


def test_every_case_releases_on_the_fake_with_its_declared_width(monkeypatch):
    lib = _library(monkeypatch)
    entries = lib.entries()
    cases = [case for entry in entries for case in entry.cases()]
    assert {c.entry for c in cases} == {"plugins.privbayes", "plugins.dpgan", "plugins.pategan"}
    for case in cases:
        for pair in case.scenario.pairs:
            for data in (pair.base, pair.neighbor):
                out = case.mechanism(data, 2, np.random.default_rng(0))
                assert out.shape == (2, case.mechanism.output_dim) and np.isfinite(out).all(), case.key
                assert not out[:, -1].any(), f"{case.key} raised on {pair.label}"
                # 20 synthetic rows (200 in a gray-box row), each in one cell or outside the domain.
                assert out[0, :9].sum() == (200 if case.graybox else 20), case.key
            assert len(case.release(pair.neighbor, np.random.RandomState(0), **case.release_params)) == \
                case.mechanism.output_dim - 1
    known = {c.key: c.known.split(":")[0] for c in cases}
    assert known == {"plugins.privbayes [epsilon=1.0]": "synthcity",  # the schema read from the data
                     "plugins.privbayes [epsilon=1.0, data=rare cell, relation=replace]": "synthcity PrivBayes",
                     "plugins.privbayes [epsilon=1.0, data=common, seeded=False]": "synthcity",  # the seed
                     "plugins.dpgan [epsilon=1.0, delta=1e-05]": "synthcity",
                     "plugins.pategan [epsilon=1.0, delta=1e-05]": "vanderschaarlab/synthcity#278 (PATE-GAN"}, known
    coverage = lib.coverage(entries)
    assert coverage.unaccounted == (), coverage.unaccounted
    assert set(coverage.excluded) == {"synthcity.plugins.privacy.plugin_aim", "synthcity.plugins.privacy.plugin_adsgan"}
    assert coverage.fraction == 0.75  # privbayes, dpgan, pategan of the four DP plugins; aim with its reason


def test_graybox_rows_draw_what_a_perfect_event_needs_and_are_replayed(monkeypatch, tmp_path):
    lib = _library(monkeypatch)
    cases = tuple(c for e in lib.entries() for c in e.cases())
    rows = plan_rows(cases, library="synthcity", budget="default", confidence=0.95, seed=1)
    for row in rows:
        needed = refutable_samples(row.case.claim, row.confidence)
        assert row.samples == (needed if row.case.graybox else max(BUDGETS["default"]["fit"], min(needed, 3000)))
        assert row.refutable
    assert {r.case.entry for r in rows if r.case.graybox} == {"plugins.dpgan", "plugins.pategan"}
    called = []
    monkeypatch.setattr(runner, "graybox_row", lambda row, **kw: called.append(row.case.key) or {"verdict": "x"})
    monkeypatch.setattr(runner, "audit_row", lambda row, **kw: {"verdict": "y"})
    info = {"graybox": False, "repro": False, "name": "synthcity", "version": None}
    verdicts = [runner._run_one(row, info, tmp_path)["verdict"] for row in rows]
    assert verdicts == ["x" if r.case.graybox else "y" for r in rows]
    assert called == [r.case.key for r in rows if r.case.graybox]


def test_the_default_random_state_makes_the_table_a_function_of_the_data(monkeypatch):
    lib = _library(monkeypatch)
    case = _case(lib, "plugins.privbayes", seeded=(False, True))
    pair, = case.scenario.pairs
    first, again = (case.mechanism(pair.base, 3, np.random.default_rng(s)) for s in (1, 2))
    other = case.mechanism(pair.neighbor, 3, np.random.default_rng(1))
    assert (first == first[0]).all() and (first == again).all()  # every fit draws the same noise
    assert (other == other[0]).all() and not np.array_equal(first[0], other[0])


def _audit(lib, tmp_path, case, budget="small"):
    row, = plan_rows((case,), library="synthcity", budget=budget, confidence=0.95, seed=2026)
    record = audit_row(row, library="synthcity", version=None, out=tmp_path, checkpoints=False)
    assert record.get("status") != "error", record.get("error")
    return record


@pytest.mark.statistical
def test_categories_read_from_the_data_are_refuted(monkeypatch, tmp_path):
    lib = _library(monkeypatch)
    record = _audit(lib, tmp_path, _case(lib, "plugins.privbayes", data=("new category", "new category"),
                                         seeded=(True, True)))
    assert record["verdict"] == "VIOLATED" and record["witness"]["pair"].startswith("add a record with a new"), record


@pytest.mark.statistical
@pytest.mark.parametrize("data, relation", [("new category", None), ("rare cell", "replace")])
def test_the_fake_with_a_public_domain_is_not_refuted(monkeypatch, tmp_path, data, relation):
    lib = _library(monkeypatch)
    fake.FLAGS["domain_from_data"] = False
    case = _case(lib, "plugins.privbayes", data=(data, "new category"), relation=(relation, None),
                 seeded=(True, True))
    assert _audit(lib, tmp_path, case)["verdict"] == "NOT_REFUTED"


@pytest.mark.statistical
def test_the_default_random_state_is_refuted(monkeypatch, tmp_path):
    lib = _library(monkeypatch)
    fake.FLAGS["domain_from_data"] = False  # only the seed is at fault
    record = _audit(lib, tmp_path, _case(lib, "plugins.privbayes", seeded=(False, True)))
    assert record["verdict"] == "VIOLATED" and "random_state" in record["known"], record


@pytest.mark.statistical
def test_the_graybox_pategan_row_is_replayed_and_refuted(monkeypatch, tmp_path):
    lib = _library(monkeypatch)
    case = _case(lib, "plugins.pategan")
    row, = plan_rows((case,), library="synthcity", budget="default", confidence=0.95, seed=2026)
    record = graybox_row(row, library="synthcity", version=None, out=tmp_path, checkpoints=False)
    assert record["graybox"]["replays"] == 2 and not record["graybox"]["unreplayable"], record["graybox"]
    assert record["verdict"] == "VIOLATED", record


def test_a_synthcity_release_is_installed_without_its_torch_and_with_the_stand_in(monkeypatch, tmp_path):
    from audit.sweep import releases

    steps = []

    def pip_and_venv(step, **kwargs):
        steps.append(step)
        if "venv" in step:  # what `python -m venv` would make
            (Path(step[-1]) / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
            (Path(step[-1]) / "bin").mkdir()
            (Path(step[-1]) / "bin" / "python").touch()
        return type("Done", (), {"returncode": 0, "stderr": ""})()

    monkeypatch.setattr(releases, "subprocess", types.SimpleNamespace(run=pip_and_venv))  # no process starts
    monkeypatch.setattr(releases, "_interpreter", lambda name: "/usr/bin/python3")
    python = releases.ensure_environment("synthcity", "synthcity", "0.2.12", folder=tmp_path)
    venv, library, own = steps
    assert "--system-site-packages" in venv
    assert "--no-deps" in library and "synthcity==0.2.12" in library and "numpy==1.26.4" in library
    assert not {p.split("=")[0] for p in library} & {"torch", "torchvision"}  # the CPU torch here stays
    assert "--no-deps" not in own and any(p.startswith("scipy") for p in own)
    stand_in = python.parent.parent / "lib" / "python3.11" / "site-packages" / "torchvision" / "__init__.py"
    assert "stand-in" in stand_in.read_text()
    # Built once: a second call finds the stamp and runs nothing.
    assert releases.ensure_environment("synthcity", "synthcity", "0.2.12", folder=tmp_path) == python
    assert len(steps) == 3
