"""The OpenDP catalogue for releases before ``opendp.prelude`` (0.3-0.7), on a small fake of their
``opendp.mod`` / ``opendp.meas`` / ``opendp.trans`` API.

CI installs none of these releases (the real ones are swept by ``benchmarks/sweep_versions.py``).
The fake has the names the ``make_lipschitz_float_mul`` entry calls, with 0.5's signatures and its
privacy map (|c|·d_in/scale for the chain), and a Laplace whose noise is 0, so what the chain
releases is its transformation's value.  ``clamp`` plants either side of opendp/opendp#582:
``"constant"`` clamps the constant to the bounds (0.5), ``"value"`` the value (0.6).
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import types

import numpy as np
import pytest

from mechanisms.claims import PureDP, Relation


def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    module.__path__ = []  # a package with no submodules on disk: opendp.prelude is absent
    module.__dict__.update(attrs)
    return module


def _fake(clamp: str) -> dict:
    class Measurement:
        def __init__(self, function, privacy_map):
            self.function, self.privacy_map = function, privacy_map

        def __call__(self, arg):
            return self.function(arg)

        def map(self, d_in):
            return self.privacy_map(d_in)

    class Transformation:
        def __init__(self, function, stability):
            self.function, self.stability = function, stability

        def __rshift__(self, other):
            return Measurement(lambda arg: other(self.function(arg)), lambda d_in: other.map(self.stability(d_in)))

    def make_base_laplace(scale, D="AllDomain<T>"):
        return Measurement(lambda value: value + 0.0, lambda d_in: d_in / scale)

    def make_lipschitz_float_mul(constant, bounds, D="AllDomain<T>", M="AbsoluteDistance<T>"):
        lower, upper = bounds

        def function(value):
            if clamp == "constant":
                return min(max(constant, lower), upper) * value
            return min(max(value, lower), upper) * constant
        return Transformation(function, lambda d_in: abs(constant) * d_in)

    mod = _module("opendp.mod", Measurement=Measurement, enable_features=lambda *features: None)
    meas = _module("opendp.meas", make_base_laplace=make_base_laplace)
    trans = _module("opendp.trans", make_lipschitz_float_mul=make_lipschitz_float_mul)
    return {"opendp": _module("opendp", mod=mod, meas=meas, trans=trans), "opendp.mod": mod,
            "opendp.meas": meas, "opendp.trans": trans}


def _install(monkeypatch, clamp: str):
    """The fake in ``sys.modules``, and the legacy catalogue built on it afresh."""
    import scenarios.libraries as package
    from scenarios.libraries import registry

    # Everything the import changes is undone after the test: the registry (the fake catalogue
    # registers itself as "opendp"), the modules and the package's attribute.
    monkeypatch.setattr(registry, "_REGISTRY", {k: v for k, v in registry._REGISTRY.items() if k != "opendp"})
    for name, module in _fake(clamp).items():
        monkeypatch.setitem(sys.modules, name, module)
    for name in ("opendp.prelude", "opendp.measurements", "opendp.transformations", "opendp._lib"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(sys.modules, "scenarios.libraries.opendp_legacy", None)
    del sys.modules["scenarios.libraries.opendp_legacy"]
    monkeypatch.setattr(package, "opendp_legacy", None, raising=False)
    return importlib.import_module("scenarios.libraries.opendp_legacy")


@pytest.mark.parametrize("clamp", ["constant", "value"])
def test_lipschitz_float_mul_rows_claim_the_map_and_release_the_chain(monkeypatch, clamp):
    """Each point claims the chain's map, c·d_in/scale = 1; its pairs are 1 apart at the lower bound,
    at the upper bound and across it; and what the row releases is the chain's value, so the bug of
    0.5 (the constant clamped to [1, 4] is 1: the value comes out unscaled) reaches the row."""
    catalogue = _install(monkeypatch, clamp)
    entry = next(e for e in catalogue.entries() if e.name == "transformations.make_lipschitz_float_mul")
    assert entry.relation is Relation.REPLACE
    for point in entry.grid:
        case = entry.build(point)
        assert case.claim == PureDP(1.0, Relation.REPLACE) and case.cost == "call"
        lower, upper = point["bounds"]
        pairs = [(float(np.ravel(p.base)[0]), float(np.ravel(p.neighbor)[0])) for p in case.scenario.pairs]
        assert pairs == [(lower, lower + 1), (upper - 1, upper), (upper, upper + 1)]
        released = {v: case.release(np.array([v]), None, **case.release_params)[0] for v in (2.0, 5.0)}
        if clamp == "value":  # 0.6: the value clamped, then scaled
            assert released == {2.0: 0.5, 5.0: 1.0}
        elif lower > point["constant"]:  # 0.5 on [1, 4]: clamp(1/4, 1, 4) = 1, the value unscaled
            assert released == {2.0: 2.0, 5.0: 5.0}
        else:  # 0.5 on [0, 4]: the constant inside the bounds scales the (unclamped) value
            assert released == {2.0: 0.5, 5.0: 1.25}
