"""Extending dpaudit in one file: a claim type and a named statistic registered by a user's module.

The toy claim is total-variation privacy, TV(M(D), M(D')) ≤ η for every pair of neighbours,
which is (0, η)-DP: its trade-off curve is f(α) = max(0, 1 − η − α) (Dong, Roth & Su 2022,
Proposition 2.5 with ε = 0).  The toy statistic thresholds the output at the pooled median of the
training draws.  For Laplace noise of scale 1 on a count, the pair that adds a row has
TV = 1 − e^{−1/2} = 0.3935 (docs/ground-truth.md §2: δ(0) = 1 − e^{−ε₀/2} with ε₀ = 1), and the
event {x ≥ midpoint} attains it.  So a claim η = 0.2 is false by a wide margin and η = 0.45 holds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import uuid

import numpy as np
import pytest

from audit import load_spec, run_audit
from audit.cli import main
from audit.statistics import check_statistic, registry
from mechanisms.claims import base as claims_base
from mechanisms.claims import claim_from_dict, claim_label, claim_types

MODULE = textwrap.dedent('''
    import math
    from dataclasses import dataclass

    import numpy as np

    from audit.statistics import Statistic, register_statistic
    from mechanisms import LaplaceMechanism
    from mechanisms.claims import Claim, Relation, as_relation


    @dataclass(frozen=True)
    class TotalVariation(Claim):
        """TV(M(D), M(D')) <= eta for all neighbours: (0, eta)-DP."""

        eta: float
        relation: Relation = Relation.ADD_REMOVE
        kind = "tv"
        config_keys = ("eta",)
        required_keys = ("eta",)

        def __post_init__(self):
            if not 0 < self.eta < 1:
                raise ValueError(f"`eta` must be in (0, 1), got {self.eta!r}")
            object.__setattr__(self, "relation", as_relation(self.relation))

        reference_delta = property(lambda self: self.eta)
        epsilon = property(lambda self: 0.0)
        delta = property(lambda self: self.eta)
        label = property(lambda self: f"{self.eta:g}-TV")

        def tradeoff(self, alpha):
            return np.maximum(0.0, 1.0 - self.eta - np.clip(np.asarray(alpha, dtype=float), 0.0, 1.0))

        def delta_at(self, epsilon):
            return np.full(np.shape(epsilon), self.eta)

        def epsilon_at(self, delta):
            return 0.0 if delta >= self.eta else math.inf


    @dataclass(frozen=True)
    class MedianSplit(Statistic):
        median: float
        kind = "median-split"

        def __call__(self, outputs):
            return (outputs[:, 0] >= self.median).astype(float)


    def fit_median_split(base, neighbour, context):
        pooled = np.concatenate([base.rows[:, 0], neighbour.rows[:, 0]])
        return MedianSplit(float(np.median(pooled))), {}


    register_statistic("median-split", fit_median_split, raw_rows=True,
                       summary="the pooled median of the training draws as a threshold")


    def laplace(epsilon=1.0):
        return LaplaceMechanism(epsilon)
''')

SCENARIO = textwrap.dedent('''
    [mechanism]
    callable = "{module}:laplace"
    epsilon = 1.0

    [claim]
    type = "tv"
    eta = {eta}

    [scenario]
    kind = "counting"
    d = 1

    [audit]
    samples = 20_000
    seed = 3
    statistic = "median-split"
''')


@pytest.fixture
def toy_module(tmp_path, monkeypatch):
    """A user's module beside its scenario files; the registries are restored afterwards."""
    monkeypatch.setattr(claims_base, "_REGISTRY", dict(claims_base._REGISTRY))
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    name = f"dpaudit_toy_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def scenario_file(folder, module, eta):
    path = folder / f"tv-{eta}.toml"
    path.write_text(SCENARIO.format(module=module, eta=eta))
    return path


def test_a_scenario_file_names_a_claim_and_a_statistic_its_module_registers(tmp_path, toy_module):
    spec = load_spec(scenario_file(tmp_path, toy_module, 0.2))
    assert "tv" in claim_types() and "median-split" in registry.statistic_names()
    assert spec.claim.label == "0.2-TV" and str(spec.claim) == "0.2-TV [add-remove]"
    assert spec.settings.statistic == "median-split" and check_statistic("median-split") == "median-split"
    # The dict form goes through the registry both ways (reports are re-read this way).
    assert claim_from_dict(spec.claim.to_dict()) == spec.claim
    assert claim_label(spec.claim.to_dict()) == "0.2-TV"


@pytest.mark.statistical
def test_the_toy_claim_is_refuted_when_false_and_not_when_true(tmp_path, toy_module):
    false = load_spec(scenario_file(tmp_path, toy_module, 0.2))
    report = run_audit(false.mechanism, false.scenario, claim=false.claim, settings=false.settings, progress=False)
    # The certified δ at ε = 0 is a TV lower bound: above 0.2, and (holding at 95%) below the truth.
    assert report.verdict.value == "VIOLATED"
    assert 0.2 < report.delta_lower_bound <= 1 - np.exp(-0.5)
    assert report.statistic["pairs"][0]["kind"] == "median-split"
    true = load_spec(scenario_file(tmp_path, toy_module, 0.45))
    report = run_audit(true.mechanism, true.scenario, claim=true.claim, settings=true.settings, progress=False)
    assert report.verdict.value == "NOT_REFUTED" and report.delta_lower_bound <= 1 - np.exp(-0.5)


@pytest.mark.statistical
def test_the_cli_runs_the_registered_claim_and_statistic(tmp_path, toy_module, capsys):
    out = tmp_path / "out"
    code = main(["run", str(scenario_file(tmp_path, toy_module, 0.2)), str(scenario_file(tmp_path, toy_module, 0.45)),
                 "--out", str(out), "--no-plots", "--no-progress"])
    printed = capsys.readouterr().out
    assert code == 1  # the false claim is refuted
    assert "0.2-TV" in printed and "0.45-TV" in printed
    audits = json.loads((out / "report.json").read_text())["audits"]
    assert [a["report"]["verdict"] for a in audits] == ["VIOLATED", "NOT_REFUTED"]
    assert "0.2-TV" in (out / "summary.md").read_text()


@pytest.mark.statistical
def test_the_cli_option_takes_a_registered_statistic_and_suggests_the_closest(tmp_path, toy_module, capsys):
    path = scenario_file(tmp_path, toy_module, 0.45)
    assert main(["run", str(path), "--statistic", "median-split", "--out", str(tmp_path / "o"),
                 "--no-plots", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["run", str(path), "--statistic", "median-spilt", "--out", str(tmp_path / "o"),
                 "--no-plots", "--no-progress"]) == 2
    assert "did you mean 'median-split'?" in capsys.readouterr().err


@pytest.mark.statistical
def test_a_fresh_process_finds_them_through_the_file_alone(tmp_path, toy_module):
    result = subprocess.run([sys.executable, "-m", "audit", "run", str(scenario_file(tmp_path, toy_module, 0.2)),
                             "--out", str(tmp_path / "o"), "--no-plots", "--no-progress"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert result.returncode == 1, result.stderr
    assert "0.2-TV" in result.stdout and "VIOLATED" in result.stdout


def test_a_taken_name_is_refused(toy_module):
    with pytest.raises(ValueError, match="already registered"):
        registry.register_statistic("linear", lambda base, neighbour, context: None)
    with pytest.raises(ValueError, match="`name` must be a non-empty string"):
        registry.register_statistic(" padded ", lambda base, neighbour, context: None)
