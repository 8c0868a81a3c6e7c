"""A checkpoint is resumed only by the audit that wrote it: the same mechanism, not just its name.

The two measurements of the review: a user audits a draft of a Laplace count with a checkpoint,
edits the function, and reruns the same call.  Before the mechanism was fingerprinted by its code,
every chunk of the second run was "done" and the report showed the draft's evidence under the new
code: the broken draft (scale 0.25) then the fixed function (scale 1, exactly 1-DP) at 20,000
samples without early stopping gave VIOLATED, ε_lb 3.78; the correct draft then a broken edit (scale
0.94, true ε 1.064) at 200,000 samples gave NOT_REFUTED where a fresh run says VIOLATED.  Now the
second run is refused, naming the mechanism (or, equivalently for the user, gives the fresh run's
report); the tests accept either and fail on the stale report.

The verdicts asserted for the fresh runs are seeded: a VIOLATED on the exactly 1-DP mechanism is a
≤ 5% event (the engine's guarantee), and the broken ones are refuted by margins of 3–4 in ε (the
draft) or were refuted on every one of 8 seeds tried at scales 0.93–0.95 (the edit).
"""

from __future__ import annotations

import functools
import importlib
import os
import subprocess
import sys
import textwrap
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest

import scenarios
from audit import CheckpointError, CheckpointWarning, Verdict, run_audit
from audit.fingerprint import reached_parts, value_digest
from mechanisms import GaussianMechanism, PureDP

pytestmark = pytest.mark.statistical

SEED = 20261125
PAIR = [scenarios.counting(1).pairs[0]]


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """``write(source)`` (re)writes a module ``user_mech`` in tmp_path and returns it freshly
    imported: the user's file, edited between two runs of the same call."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # a reload reads the edited source
    path = tmp_path / "user_mech.py"

    def write(source: str):
        path.write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        if "user_mech" in sys.modules:
            return importlib.reload(sys.modules["user_mech"])
        return importlib.import_module("user_mech")

    yield write
    sys.modules.pop("user_mech", None)


def _fresh_or_refused(mechanism, fresh, **kwargs):
    """The rerun with the old checkpoint: refused naming the mechanism, or the fresh run's report."""
    try:
        resumed = run_audit(mechanism, PAIR, **kwargs)
    except CheckpointError as error:
        assert "the mechanism (its code" in str(error)
        return None
    assert resumed.to_dict(include_runtime=False) == fresh.to_dict(include_runtime=False)
    return resumed


def test_a_fixed_draft_is_not_reported_with_the_drafts_evidence(tmp_path, user_module):
    kwargs = dict(claim=PureDP(1.0), samples=20_000, seed=SEED, progress=False, accuracy=False,
                  early_stopping=False)
    draft = user_module("""
        import numpy as np
        def noisy_count(dataset, size, rng):
            return np.sum(dataset) + rng.laplace(0.0, 0.25, (size, 1))
    """)
    path = tmp_path / "audit.npz"
    stale = run_audit(draft.noisy_count, PAIR, checkpoint=path, **kwargs)
    assert stale.verdict is Verdict.VIOLATED and stale.epsilon_lower_bound > 3.0
    fixed = user_module("""
        import numpy as np
        def noisy_count(dataset, size, rng):
            return np.sum(dataset) + rng.laplace(0.0, 1.0, (size, 1))
    """)
    fresh = run_audit(fixed.noisy_count, PAIR, **kwargs)
    assert fresh.verdict is Verdict.NOT_REFUTED
    _fresh_or_refused(fixed.noisy_count, fresh, checkpoint=path, **kwargs)


def test_a_broken_edit_is_not_reported_with_the_correct_drafts_evidence(tmp_path, user_module):
    kwargs = dict(claim=PureDP(1.0), samples=200_000, seed=SEED, progress=False, accuracy=False)
    source = """
        import numpy as np
        SCALE = {scale}
        def noisy_count(dataset, size, rng):
            return np.sum(dataset) + rng.laplace(0.0, SCALE, (size, 1))
    """
    path = tmp_path / "audit.npz"
    correct = user_module(source.format(scale=1.0))  # the edit is to a module-level constant
    assert run_audit(correct.noisy_count, PAIR, checkpoint=path, **kwargs).verdict is Verdict.NOT_REFUTED
    broken = user_module(source.format(scale=0.94))
    fresh = run_audit(broken.noisy_count, PAIR, **kwargs)
    assert fresh.verdict is Verdict.VIOLATED
    _fresh_or_refused(broken.noisy_count, fresh, checkpoint=path, **kwargs)


def test_the_same_audit_still_resumes_and_other_changes_are_named(tmp_path):
    path = tmp_path / "audit.npz"
    kwargs = dict(samples=10_000, progress=False, accuracy=False, checkpoint=path)
    first = run_audit(GaussianMechanism(1.0, 1e-5), PAIR, seed=1, **kwargs)
    again = run_audit(GaussianMechanism(1.0, 1e-5), PAIR, seed=1, **kwargs)  # an equal, new object
    assert again.to_dict(include_runtime=False) == first.to_dict(include_runtime=False)
    with pytest.raises(CheckpointError, match=r"differs in the seed\.") as error:
        run_audit(GaussianMechanism(1.0, 1e-5), PAIR, seed=2, **kwargs)
    assert "mechanism" not in str(error.value).split("differs in")[1]
    assert error.value.differs == {"seed": ("1", "2")}  # what a resumed sweep names (audit.sweep.resume)
    with pytest.raises(CheckpointError, match=r"differs in the mechanism \(its code"):
        run_audit(GaussianMechanism(1.0, 2e-5), PAIR, seed=1, claim=GaussianMechanism(1.0, 1e-5).claim, **kwargs)


def test_seed_none_adopts_a_checkpoints_seed_only_with_a_warning(tmp_path):
    path = tmp_path / "audit.npz"
    kwargs = dict(samples=10_000, progress=False, accuracy=False, checkpoint=path)
    first = run_audit(GaussianMechanism(1.0, 1e-5), PAIR, seed=None, **kwargs)
    with pytest.warns(CheckpointWarning, match=f"seed={first.seed}"):
        again = run_audit(GaussianMechanism(1.0, 1e-5), PAIR, seed=None, **kwargs)
    assert again.seed == first.seed and again.evidence == first.evidence
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an explicit seed resumes silently
        run_audit(GaussianMechanism(1.0, 1e-5), PAIR, seed=first.seed, **kwargs)


def test_a_mechanism_that_cannot_be_fingerprinted_resumes_only_when_vouched_for(tmp_path):
    log = open(tmp_path / "log.txt", "w")  # a file cannot be pickled: its part is unverified

    def noisy_count(dataset, size, rng):
        log.write(".")
        return np.sum(dataset) + rng.laplace(0.0, 1.0, (size, 1))

    path = tmp_path / "audit.npz"
    kwargs = dict(claim=PureDP(1.0), samples=10_000, seed=1, progress=False, accuracy=False, checkpoint=path)
    try:
        first = run_audit(noisy_count, PAIR, **kwargs)
        with pytest.raises(CheckpointError, match="cannot be fingerprinted .*assume_unchanged=True"):
            run_audit(noisy_count, PAIR, **kwargs)
        again = run_audit(noisy_count, PAIR, assume_unchanged=True, **kwargs)
        assert again.evidence == first.evidence
    finally:
        log.close()


# --- what the digest covers ---------------------------------------------------------------------

def _function(source: str, namespace: dict | None = None):
    namespace = {"np": np, "__name__": "user_code", **(namespace or {})}
    exec(textwrap.dedent(source), namespace)
    return namespace["mechanism"]


def _differ(a, b) -> bool:
    first, second = value_digest(a), value_digest(b)
    assert not first.unverified and not second.unverified
    return first.hexdigest != second.hexdigest


def test_code_constants_nested_code_and_names_are_covered():
    base = "def mechanism(d, size, rng):\n    return rng.laplace(0, 1.0, (size, 1))\n"
    assert not _differ(_function(base), _function(base))  # same source, new objects
    assert _differ(_function(base), _function(base.replace("1.0", "0.5")))
    assert _differ(_function(base), _function(base.replace("laplace", "normal")))
    nested = "def mechanism(d, size, rng):\n    f = lambda: {s}\n    return rng.laplace(0, f(), (size, 1))\n"
    assert _differ(_function(nested.format(s=1.0)), _function(nested.format(s=0.5)))


def test_closures_defaults_globals_partials_and_objects_are_covered():
    closure = "def make(s):\n    def mechanism(d, size, rng):\n        return rng.laplace(0, s, (size, 1))\n    return mechanism\n"
    namespace: dict = {"__name__": "user_code"}
    exec(closure, namespace)
    assert _differ(namespace["make"](1.0), namespace["make"](0.5))
    defaults = "def mechanism(d, size, rng, s={s}, *, t={s}):\n    return rng.laplace(0, s * t, (size, 1))\n"
    assert _differ(_function(defaults.format(s="1.0")), _function(defaults.replace("t={s}", "t=1.0").format(s="0.5")))
    reads = "def mechanism(d, size, rng):\n    return rng.laplace(0, SCALE[0] * WEIGHTS.sum(), (size, 1))\n"
    assert _differ(_function(reads, {"SCALE": [1.0], "WEIGHTS": np.ones(3)}),
                   _function(reads, {"SCALE": [1.0], "WEIGHTS": np.array([1.0, 1.0, 0.5])}))
    helper = "def mechanism(d, size, rng):\n    return helper(size, rng)\n"
    one = _function("def helper(size, rng):\n    return rng.laplace(0, 1.0, (size, 1))\n" + helper)
    other = _function("def helper(size, rng):\n    return rng.laplace(0, 0.5, (size, 1))\n" + helper)
    assert _differ(one, other)  # a global function is read as code, recursively
    base = _function("def mechanism(d, size, rng, scale):\n    return rng.laplace(0, scale, (size, 1))\n")
    assert _differ(functools.partial(base, scale=1.0), functools.partial(base, scale=0.5))
    assert _differ(Noisy(1.0), Noisy(0.5)) and _differ(Noisy(1.0).draw, Noisy(0.5).draw)
    assert not _differ(Noisy(1.0), Noisy(1.0))
    assert _differ(GaussianMechanism(1.0, 1e-5), GaussianMechanism(1.0, 2e-5))


def test_only_what_the_mechanism_reaches_is_digested():
    mechanism = "def mechanism(d, size, rng):\n    return rng.normal(0, helper(), (size, 1))\n"
    module = "def helper():\n    return 1.0\n\ndef normal(x):\n    return {normal}\n\ndef unrelated():\n    return {other}\n"
    base = _function(module.format(normal="x", other=1) + mechanism)
    # Another function of the module, and one named like the method `rng.normal`, are not reached.
    assert not _differ(base, _function(module.format(normal="-x", other=2) + mechanism))
    assert _differ(base, _function(module.replace("return 1.0", "return 2.0").format(normal="x", other=1) + mechanism))


def test_the_parts_reached_say_which_part_changed():
    module = "SCALE = {s}\n\ndef helper():\n    return SCALE\n\ndef mechanism(d, size, rng):\n    return rng.normal(0, helper(), (size, 1))\n"
    one, other = reached_parts(_function(module.format(s=1.0))), reached_parts(_function(module.format(s=2.0)))
    assert sorted(one) == ["mechanism's code", "mechanism: global helper"]
    assert [name for name in one if one[name] != other[name]] == ["mechanism: global helper"]
    one, other = reached_parts(Noisy(1.0)), reached_parts(Noisy(0.5))
    assert {"state", "Noisy.draw's code", "Noisy.__call__'s code", "Noisy.__call__: global np"} <= set(one)
    assert [name for name in one if one[name] != other.get(name)] == ["state"]


def test_a_module_of_the_users_is_read_through_the_attributes_used(user_module):
    module = user_module("SCALE = 1.0\n")
    mechanism = _function("def mechanism(d, size, rng):\n    return rng.laplace(0, helpers.SCALE, (size, 1))\n",
                          {"helpers": module})
    before = value_digest(mechanism).hexdigest
    module.SCALE = 0.5
    assert value_digest(mechanism).hexdigest != before


def test_values_derived_on_demand_and_pickling_caches_leave_the_digest_alone():
    mechanism = GaussianMechanism(1.0, 1e-5)
    before = value_digest(mechanism).hexdigest
    run_audit(mechanism, PAIR, samples=10_000, seed=1, progress=False, accuracy=False)  # pickles, caches
    assert value_digest(mechanism).hexdigest == before


@dataclass
class Noisy:
    """A callable object: its class's code and its constructor's fields are its digest."""

    scale: float
    calls: list = field(default_factory=list, init=True)

    def draw(self, size, rng):
        return rng.laplace(0.0, self.scale, (size, 1))

    def __call__(self, dataset, size, rng):
        return np.sum(dataset) + self.draw(size, rng)


def test_the_digest_does_not_depend_on_the_process(tmp_path):
    # Sets and frozensets (constants of `x in {...}`, global sets) iterate in an order that changes
    # with PYTHONHASHSEED; their members are sorted by digest.
    (tmp_path / "stable_mech.py").write_text(textwrap.dedent("""
        import numpy as np
        KINDS = {"laplace", "gauss", "staircase"}
        TABLE = {"b": 1.0, "a": frozenset({"x", "y", "z"})}
        def mechanism(dataset, size, rng):
            if "laplace" in {"laplace", "other", "third"} and "laplace" in KINDS:
                return np.sum(dataset) + rng.laplace(0.0, TABLE["b"], (size, 1))
            return rng.normal(size=(size, 1))
    """))
    script = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[2]]; import stable_mech; "
              "from audit.fingerprint import reached_parts, value_digest; print(value_digest(stable_mech.mechanism).hexdigest)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    digests = {subprocess.run([sys.executable, "-c", script, str(tmp_path), root], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": str(seed)}, check=True).stdout.strip()
               for seed in (1, 2)}
    assert len(digests) == 1 and len(digests.pop()) == 64
