"""Scenario files: the bundled suite loads and states the exact truth; malformed files fail clearly."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import mechanisms
import scenarios
from mechanisms.claims import ApproxDP, GaussianDP, Relation
from audit.spec import AuditSpec, load_spec as load
from scenarios import ScenarioFileError, bundled_suite
from scenarios.files import EXPECTED_VALUES

SUITE = bundled_suite()


def exact_verdict(spec: AuditSpec) -> str:
    """"violated" iff the mechanism's exact privacy profile exceeds the claim's anywhere.

    A claim is a lower bound on every pair's trade-off curve, so it implies the profile
    ``claim.delta_at``; the exact profile δ_M(ε') must stay below it for all ε' ≥ 0.  The grid
    contains the claim's own ε (where (ε, δ) claims are decided).  Tolerance: relative 1e-9
    (the exact profiles are closed forms accurate to ~1e-14 relative; tight claims such as the
    analytic calibration meet their bound to ~1e-12), absolute 1e-15 for δ ≈ 0.
    """
    relation = spec.scenario.relation
    grid = np.unique(np.r_[np.linspace(0.0, 3.0 * spec.claim.epsilon + 5.0, 600), spec.claim.epsilon])
    exact = np.asarray(spec.mechanism.privacy_profile(grid, relation=relation), dtype=float)
    allowed = np.asarray(spec.claim.delta_at(grid), dtype=float)
    return "violated" if np.any(exact > allowed * (1 + 1e-9) + 1e-15) else "holds"


def header(path: Path) -> str:
    """The comment block a suite file starts with."""
    lines = path.read_text(encoding="utf-8").splitlines()
    comments = []
    for line in lines:
        if not line.startswith("#"):
            break
        comments.append(line)
    return "\n".join(comments)


# -- the bundled suite -----------------------------------------------------------------------------
def test_suite_is_bundled_and_excludes_thirdparty():
    assert len(SUITE) >= 15
    assert all(path.suffix == ".toml" and path.parent.name == "suite" for path in SUITE)
    assert [p.name for p in SUITE] == sorted(p.name for p in SUITE)
    assert all(path.parent.name == "thirdparty" for path in bundled_suite("thirdparty"))
    with pytest.raises(ValueError, match=r"`name` must be one of \('default', 'thirdparty', 'literature', 'dpsgd', 'torch'\), got 'all'"):
        bundled_suite("all")


@pytest.mark.parametrize("path", SUITE, ids=[p.stem for p in SUITE])
def test_every_bundled_file_loads_and_its_expectation_is_the_exact_truth(path):
    spec = load(path)
    assert spec.name == path.stem
    assert spec.expected in EXPECTED_VALUES
    assert spec.claim is not None and spec.claim.relation is spec.scenario.relation
    assert spec.seed is not None and spec.note
    assert spec.scenario.checked
    assert exact_verdict(spec) == spec.expected
    # the file states the truth in its opening comments
    text = header(path)
    assert "Exact truth" in text or "exact truth" in text
    assert ("VIOLATED" in text) == (spec.expected == "violated")
    assert ("HOLDS" in text) == (spec.expected == "holds")


def test_suite_covers_every_reference_mechanism_and_calibration():
    specs = [load(path) for path in SUITE]
    for cls in mechanisms.REFERENCE_MECHANISMS.values():
        assert any(issubclass(type(spec.mechanism), cls) for spec in specs), cls.__name__
    calibrations = {spec.mechanism.calibration for spec in specs
                    if isinstance(spec.mechanism, mechanisms.GaussianMechanism)}
    assert {"analytic", "classical", "lecture", "zcdp"} <= calibrations
    variants = {spec.mechanism.variant for spec in specs
                if isinstance(spec.mechanism, mechanisms.CorrelatedGaussianMechanism)}
    assert len(variants) == 3, variants  # Algorithm 1, Lemma 3.5 (C), Lemma 3.6 (known n)
    etas = {spec.mechanism.eta for spec in specs
            if isinstance(spec.mechanism, mechanisms.GroupedCorrelatedGaussianMechanism)
            and spec.scenario.relation is Relation.REPLACE}
    assert etas == {"paper", "tight"}


# Exact values from docs/ground-truth.md §1 and §5 (quoted there to 2-3 digits; we check to that precision).
KNOWN_MISUSES = [
    ("gaussian-classical-eps7", 8.02, 0.005),
    ("gaussian-classical-eps8", 8.60, 0.005),
    ("gaussian-classical-eps10-limit", 10.39, 0.005),
]


@pytest.mark.parametrize("stem, exact_epsilon, tolerance", KNOWN_MISUSES)
def test_known_misuses_have_the_documented_exact_epsilon(stem, exact_epsilon, tolerance):
    spec = load(next(p for p in SUITE if p.stem == stem))
    assert spec.expected == "violated"
    assert isinstance(spec.claim, ApproxDP)
    assert spec.mechanism.epsilon_for_delta(spec.claim.delta) == pytest.approx(exact_epsilon, abs=tolerance)
    assert any("CalibrationWarning" in warning for warning in spec.warnings)


def test_algorithm_1_under_replacement_is_flagged_with_mu_1907():
    spec = load(next(p for p in SUITE if p.stem == "correlated-gaussian-alg1-d100-replace"))
    assert spec.scenario.relation is Relation.REPLACE and spec.mechanism.relation is Relation.REPLACE
    assert spec.claim == GaussianDP(1.0, "replace")
    # docs/ground-truth.md §5: μ_rep² = 4μ²√d/(√d + 1) = 40/11 at d = 100, μ_rep = 1.907μ
    assert spec.mechanism.exact_mu("replace") == pytest.approx(np.sqrt(40 / 11), rel=1e-12)
    assert spec.samples == 400_000


def test_suite_sample_budgets():
    for path in SUITE:
        spec = load(path)
        output_dim = spec.mechanism.output_dim
        if path.stem == "gaussian-classical-eps8":
            assert spec.samples == 20_000_000  # the violation needs ~1e7 certification draws per side
        elif output_dim == 1:
            assert spec.samples == 2_000_000
        elif spec.scenario.d == 100:
            assert spec.samples == 400_000
        else:
            assert spec.samples <= 2_000_000


def test_limit_case_says_it_is_undetectable():
    path = next(p for p in SUITE if p.stem == "gaussian-classical-eps10-limit")
    spec = load(path)
    assert "1e9" in spec.note and "undetectable" in spec.note
    assert "more than 1e9 samples per side" in header(path)


# -- malformed files ------------------------------------------------------------------------------
VALID = """\
name = "t"
expected = "holds"

[mechanism]
name = "gaussian"
epsilon = 1.0
delta = 1e-5

[scenario]
kind = "counting"
d = 1

[audit]
samples = 1000
seed = 7
"""


def variant(replace: dict[str, str] = (), append: str = "") -> str:
    text = VALID
    for old, new in dict(replace).items():
        assert old in text, old
        text = text.replace(old, new)
    return text + textwrap.dedent(append)


MALFORMED = [
    # (id, file text, key path, a phrase of the message)
    ("unknown top-level key", 'colour = "red"\n' + VALID,
     "colour", 'is not a known key of a scenario file (known: name, expected, note, mechanism, claim, scenario, audit), got "red"'),
    ("unknown mechanism parameter", variant({"epsilon = 1.0": "epsilom = 1.0"}),
     "mechanism.epsilom", "is not a parameter of 'gaussian' (known:"),
    ("wrong type of a parameter", variant({"epsilon = 1.0": 'epsilon = "one"'}),
     "mechanism.epsilon", "must be a real number, got 'one'"),
    ("parameter out of range", variant({"delta = 1e-5": "delta = 1.5"}),
     "mechanism.delta", "must be in (0, 1), got 1.5"),
    ("unknown mechanism", variant({'name = "gaussian"': 'name = "gausian"'}),
     "mechanism.name", 'must be one of "composition", "correlated-gaussian", '),
    ("mechanism name not a string", variant({'name = "gaussian"': "name = 3"}),
     "mechanism.name", "got 3"),
    ("no mechanism name", variant({'name = "gaussian"\n': ""}),
     "mechanism.name", "is missing (give `name` = a reference mechanism, or `callable`"),
    ("name and callable", variant({'name = "gaussian"': 'name = "gaussian"\ncallable = "a.b:c"'}),
     "mechanism.callable", 'cannot be given together with mechanism.name (choose one), got "a.b:c"'),
    ("bad module:attribute", variant({'name = "gaussian"': 'callable = "no_colon_here"'}),
     "mechanism.callable", 'must be a string "package.module:attribute", got "no_colon_here"'),
    ("unimportable module", variant({'name = "gaussian"': 'callable = "dpaudit_no_such_module:mech"'}),
     "mechanism.callable", "cannot be imported (ModuleNotFoundError: No module named 'dpaudit_no_such_module')"),
    ("missing attribute", variant({'name = "gaussian"': 'callable = "mechanisms:NoSuchMechanism"'}),
     "mechanism.callable", "names no attribute 'NoSuchMechanism' in module 'mechanisms'"),
    ("not callable", variant({'name = "gaussian"\nepsilon = 1.0\ndelta = 1e-5': 'callable = "math:pi"'}),
     "mechanism.callable", 'is not a mechanism (not callable), got "math:pi"'),
    ("mechanism relation differs", variant({"delta = 1e-5": 'delta = 1e-5\nrelation = "replace"'}),
     "mechanism.relation", 'must equal scenario.relation ("add-remove") or be omitted, got "replace"'),
    ("mechanism not a table", 'mechanism = "gaussian"\n' + VALID.split("[mechanism]")[0]
     + "[scenario]" + VALID.split("[scenario]")[1],
     "mechanism", 'must be a table, got "gaussian"'),
    ("missing mechanism", variant({'[mechanism]\nname = "gaussian"\nepsilon = 1.0\ndelta = 1e-5\n': ""}),
     "mechanism", "is missing (a required table)"),
    ("missing scenario", variant({'[scenario]\nkind = "counting"\nd = 1\n': ""}),
     "scenario", "is missing (a required table)"),
    ("missing scenario field", variant({"d = 1\n": ""}),
     "scenario.d", "is missing (required by a counting scenario)"),
    ("unknown scenario kind", variant({'kind = "counting"': 'kind = "tabular"'}),
     "scenario.kind", 'must be one of "counting", "bounded", "grouped", "custom", got "tabular"'),
    ("scenario key of another kind", variant({"d = 1": "d = 1\ngroups = 2"}),
     "scenario.groups", "is not a known key of a counting scenario"),
    ("scenario d wrong type", variant({"d = 1": 'd = "1"'}),
     "scenario.d", 'must be an integer, got "1"'),
    ("scenario n invalid for replace", variant({"d = 1": 'd = 1\nn = 0\nrelation = "replace"'}),
     "scenario.n", "must be an integer >= 1 under the 'replace' relation"),
    ("scenario relation unknown", variant({"d = 1": 'd = 1\nrelation = "swap"'}),
     "scenario.relation", 'must be one of "add-remove", "replace", got "swap"'),
    ("scenario count without random", variant({"d = 1": "d = 1\ncount = 3"}),
     "scenario.count", "is only used with pairs='random', got 3"),
    ("rows do not fit the mechanism", variant({"d = 1": "d = 3"}),
     "scenario does not fit the mechanism", "shape (n, 1)"),
    ("claim type unknown", variant(append="[claim]\ntype = \"renyi\"\n"),
     "claim.type", 'must be one of "approx-dp", "pure-dp", "gdp", "zcdp", "rdp", "profile", got "renyi"'),
    ("claim field missing", variant(append="[claim]\ntype = \"gdp\"\n"),
     "claim.mu", "is missing (required by a gdp claim)"),
    ("claim unknown key", variant(append="[claim]\ntype = \"gdp\"\nmu = 1.0\nepsilon = 1.0\n"),
     "claim.epsilon", "is not a known key of a gdp claim"),
    ("claim value invalid", variant(append="[claim]\ntype = \"gdp\"\nmu = -1.0\n"),
     "claim.mu", "must be a finite number > 0, got -1.0"),
    ("claim relation differs", variant(append="[claim]\ntype = \"gdp\"\nmu = 1.0\nrelation = \"replace\"\n"),
     "claim.relation", 'must equal scenario.relation ("add-remove") or be omitted, got "replace"'),
    ("audit samples not an integer", variant({"samples = 1000": "samples = 2.5"}),
     "audit.samples", "must be a positive integer (e.g. 100000, 100_000, 100,000 or 1e5), got 2.5"),
    ("audit confidence out of range", variant({"samples = 1000": "samples = 1000\nconfidence = 1.5"}),
     "audit.confidence", "must be in (0, 1), got 1.5"),
    ("audit unknown key", variant({"samples = 1000": "samples = 1000\nworkers = 4"}),
     "audit.workers", "is not a known key of [audit]"),
    ("expected unknown", variant({'expected = "holds"': 'expected = "maybe"'}),
     "expected", 'must be one of "holds", "violated", got "maybe"'),
    ("composition inner unknown key", variant(
        {'name = "gaussian"\nepsilon = 1.0\ndelta = 1e-5': 'name = "composition"\nk = 2\n\n[mechanism.inner]\n'
                                                           'name = "gaussian"\nepsilom = 1.0\ndelta = 1e-5'}),
     "mechanism.inner.epsilom", "is not a parameter of 'gaussian'"),
    ("composition missing k", variant(
        {'name = "gaussian"\nepsilon = 1.0\ndelta = 1e-5': 'name = "composition"\n\n[mechanism.inner]\n'
                                                           'name = "gaussian"\nepsilon = 1.0\ndelta = 1e-5'}),
     "mechanism.k", "is missing (a required parameter of 'composition')"),
    ("composition without inner", variant(
        {'name = "gaussian"\nepsilon = 1.0\ndelta = 1e-5': 'name = "composition"\nk = 2'}),
     "mechanism.mechanism", "is missing (a required parameter of 'composition'; give it as [mechanism.inner])"),
    ("inner on a mechanism without one", variant(append="[mechanism.inner]\nname = \"laplace\"\nepsilon = 1.0\n"),
     "mechanism.inner", "cannot be passed: 'gaussian' takes no wrapped mechanism (no `mechanism` or `inner`"),
    ("invalid TOML", variant(append="this is not toml\n"), "is not valid TOML", ""),
]


@pytest.mark.parametrize("case, text, key, phrase", MALFORMED, ids=[m[0] for m in MALFORMED])
def test_malformed_file_names_the_file_and_the_key(tmp_path, case, text, key, phrase):
    path = tmp_path / "bad.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioFileError) as info:
        load(str(path))
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    assert f": {key}" in message or f"{key} " in message, message
    assert phrase in message, message


def test_error_uses_the_path_as_given(tmp_path, monkeypatch):
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "gauss.toml").write_text(variant({"epsilon = 1.0": 'epsilon = "one"'}))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioFileError, match=re.escape(
            "suite/gauss.toml: mechanism.epsilon must be a real number, got 'one'")):
        load("suite/gauss.toml")
    with pytest.raises(ScenarioFileError, match=r"^missing\.toml: cannot be read"):
        load(Path("missing.toml"))


def test_defaults(tmp_path):
    path = tmp_path / "minimal.toml"
    path.write_text('[mechanism]\nname = "laplace"\nepsilon = 2.0\n[scenario]\nkind = "bounded"\nd = 1\n')
    spec = load(path)
    assert (spec.name, spec.samples, spec.confidence, spec.seed) == ("minimal", 2_000_000, 0.95, None)
    assert spec.expected is None and spec.note == "" and spec.warnings == ()
    assert spec.claim == spec.mechanism.claim and spec.scenario.n == 10
    assert spec.scenario.labels == scenarios.bounded(1).labels


def test_relation_is_passed_to_the_mechanism_and_claim(tmp_path):
    path = tmp_path / "replace.toml"
    path.write_text(variant({"d = 1": 'd = 1\nrelation = "replace"\npairs = "random"\ncount = 3\nseed = 5'}))
    spec = load(path)
    assert spec.mechanism.relation is Relation.REPLACE and spec.claim.relation is Relation.REPLACE
    assert len(spec.scenario) == 2 + 3


def test_explicit_claim_overrides_the_mechanisms_own(tmp_path):
    path = tmp_path / "claim.toml"
    path.write_text(variant(append="[claim]\ntype = \"pure-dp\"\nepsilon = 3\n"))
    spec = load(path)
    assert spec.claim == mechanisms.PureDP(3.0, "add-remove")
    assert spec.mechanism.claim == ApproxDP(1.0, 1e-5)


USER_MODULE = """
import numpy as np

def plain(dataset, size, rng):
    return np.asarray(dataset, float).sum() + rng.standard_normal((size, 1))

class Noisy:
    def __init__(self, scale, relation="add-remove"):
        if scale <= 0:
            raise ValueError(f"`scale` must be > 0, got {scale!r}")
        self.scale, self.relation = scale, relation
    def __call__(self, dataset, size, rng):
        return np.asarray(dataset, float).sum() + self.scale * rng.standard_normal((size, 1))

def make(**options):
    return Noisy(**options)
"""


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    name = f"dpaudit_user_{tmp_path.name.replace('-', '_')}"
    (tmp_path / f"{name}.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


@pytest.mark.parametrize("target, extra, scale", [
    ("plain", "", None),                   # the object itself is the mechanism
    ("Noisy", "scale = 2.0", 2.0),         # a class: called with the keys
    ("make", "scale = 0.5", 0.5),          # a factory with **kwargs: keys passed through
])
def test_user_callables(tmp_path, user_module, target, extra, scale):
    path = tmp_path / "user.toml"
    path.write_text(textwrap.dedent(f"""\
        [mechanism]
        callable = "{user_module}:{target}"
        {extra}
        [claim]
        type = "gdp"
        mu = 1.0
        [scenario]
        kind = "counting"
        d = 1
        relation = "replace"
        """))
    spec = load(path)
    assert spec.claim == GaussianDP(1.0, "replace")
    assert getattr(spec.mechanism, "scale", None) == scale
    if target == "Noisy":  # its constructor takes `relation`: the scenario's is passed
        assert spec.mechanism.relation == "replace"
    out = spec.mechanism(spec.scenario.pairs[0].base, 4, np.random.default_rng(1))
    assert out.shape == (4, 1)


def test_user_constructor_errors_are_prefixed(tmp_path, user_module):
    path = tmp_path / "user.toml"
    path.write_text(f'[mechanism]\ncallable = "{user_module}:Noisy"\nscale = -1.0\n'
                    '[scenario]\nkind = "counting"\nd = 1\n')
    with pytest.raises(ScenarioFileError, match=re.escape(f"{path}: mechanism.scale must be > 0, got -1.0")):
        load(path)
    path.write_text(f'[mechanism]\ncallable = "{user_module}:Noisy"\nscales = 1.0\n'
                    '[scenario]\nkind = "counting"\nd = 1\n')
    with pytest.raises(ScenarioFileError, match=r"mechanism\.scales is not a parameter of .*Noisy.* \(known: "
                                                r"relation, scale\), got 1\.0"):
        load(path)


def test_an_outline_reads_a_file_without_importing_or_building_anything(tmp_path):
    from scenarios.outline import outline

    path = tmp_path / "x.toml"
    path.write_text('[mechanism]\ncallable = "no_such_module_xyz:f"\nscale = 2.0\n[claim]\ntype = "profile"\n'
                    'callable = "no_such_module_xyz:delta"\n[scenario]\nkind = "counting"\nd = 1\n'
                    '[audit]\nsamples = 1000\n')
    found = outline(path)
    assert found.name == "x" and found.mechanism == "no_such_module_xyz:f(scale=2.0)" and found.claim is None
    assert found.claim_text == "profile claim of no_such_module_xyz:delta" and found.audit == {"samples": 1000}
    assert "no_such_module_xyz" not in sys.modules
    path.write_text('[mechanism]\nname = "gaussian"\nepsilon = 1.0\ndelta = 1e-5\n[claim]\ntype = "gdp"\nmu = 0.5\n'
                    '[scenario]\nkind = "counting"\nd = 1\n')
    assert outline(path).claim_text == "0.5-GDP [add-remove]"
    assert outline(path).mechanism == "gaussian(epsilon=1.0, delta=1e-05)"
