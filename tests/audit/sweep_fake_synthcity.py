"""A small numpy fake of the synthcity API the catalogue calls (``Plugins(...).get(name, **kwargs)``,
``fit(frame)``, ``generate(count).dataframe()``, ``list()``, ``get_type(name)``), so that CI, which
never installs synthcity (it needs torch < 2.3), tests the catalogue's plumbing.

Every fake plugin, like synthcity's ``Plugin.fit``, reseeds numpy's global generator with its
``random_state`` (0 unless given) and draws its noise from it.  It releases ``count`` rows sampled
from noisy cell counts of a ∈ {0..3} × b ∈ {0, 1}: Laplace noise of scale 2/ε on each count (the
histogram's L1 sensitivity under replace is 2, so the histogram is ε-DP and the sample, its
post-processing, too; Dwork & Roth 2014, Theorem 3.6), negative counts set to 0 and one
pseudo-count added to every cell.  Two switches
(:data:`FLAGS`) plant synthcity's bug classes:

- ``domain_from_data`` (on by default, as synthcity's schema): only cells whose categories occur
  in the data are counted and sampled, so a category that one record holds appears only with it;
- ``scale_over_n``: the noise scale is divided by n (PrivBayes's noise on counts at the scale of
  noise on probabilities).
"""

from __future__ import annotations

import inspect
import sys
import types

import numpy as np
import pandas as pd
from fake_modules import forget

FLAGS = {"domain_from_data": True, "scale_over_n": False}
NAMES = {"privbayes": "privacy", "dpgan": "privacy", "pategan": "privacy", "aim": "privacy", "adsgan": "privacy",
         "ctgan": "generic"}


def _module(name: str, **attrs) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attrs)
    return module


class _Loader:
    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame

    def dataframe(self) -> pd.DataFrame:
        return self.frame


def _plugin_class(name: str, kind: str) -> type:
    def __init__(self, epsilon=1.0, delta=None, random_state=0, **kwargs):
        self.epsilon, self.delta, self.random_state = epsilon, delta, random_state

    def fit(self, frame):
        np.random.seed(self.random_state)  # synthcity's enable_reproducible_results
        rows = frame[["a", "b"]].to_numpy()
        a_values = sorted(set(rows[:, 0])) if FLAGS["domain_from_data"] else [0, 1, 2, 3]
        b_values = sorted(set(rows[:, 1])) if FLAGS["domain_from_data"] else [0, 1]
        self.cells = [(a, b) for a in a_values for b in b_values]
        counts = np.array([np.sum((rows[:, 0] == a) & (rows[:, 1] == b)) for a, b in self.cells], dtype=float)
        scale = 2.0 / self.epsilon / (len(rows) if FLAGS["scale_over_n"] else 1)
        # Negative noisy counts set to 0, then one pseudo-count in every cell (PrivBayes's crosstab + 1).
        self.weights = np.maximum(counts + np.random.laplace(0.0, scale, size=counts.size), 0.0) + 1.0
        return self

    def generate(self, count):
        chosen = np.random.choice(len(self.cells), size=count, p=self.weights / self.weights.sum())
        return _Loader(pd.DataFrame([self.cells[i] for i in chosen], columns=["a", "b"]))

    def type_():
        return kind

    attrs = {"__init__": __init__, "fit": fit, "generate": generate, "type": staticmethod(type_)}
    if name in ("adsgan", "ctgan"):  # no epsilon: not a DP generator
        def plain_init(self, random_state=0, **kwargs):
            self.epsilon, self.random_state = 1e9, random_state
        attrs["__init__"] = plain_init
    return type(f"{name}Plugin", (), attrs)


def _synthcity() -> dict:
    classes = {name: _plugin_class(name, kind) for name, kind in NAMES.items()}

    class Plugins:
        def __init__(self, categories=None):
            self.names = [n for n, k in NAMES.items() if categories is None or k in categories]

        def list(self):
            return list(self.names)

        def get_type(self, name):
            return classes[name]

        def get(self, name, **kwargs):
            if name not in self.names:
                raise ValueError(f"plugin {name} not found")
            parameters = inspect.signature(classes[name].__init__).parameters
            return classes[name](**{k: v for k, v in kwargs.items() if k in parameters or "kwargs" in parameters})

    privacy = {f"synthcity.plugins.privacy.plugin_{n}": _module(f"synthcity.plugins.privacy.plugin_{n}", plugin=c)
               for n, c in classes.items() if NAMES[n] == "privacy"}
    package = _module("synthcity.plugins.privacy", **{k.rsplit(".", 1)[1]: v for k, v in privacy.items()})
    plugins = _module("synthcity.plugins", Plugins=Plugins, privacy=package)
    root = _module("synthcity", plugins=plugins)
    return {"synthcity": root, "synthcity.plugins": plugins, "synthcity.plugins.privacy": package, **privacy}


def install(monkeypatch) -> None:
    """Put the fake into ``sys.modules`` (undone by ``monkeypatch``) and drop the catalogue module and
    its registration, so that the next ``library("synthcity")`` builds them on the fake."""
    FLAGS.update(domain_from_data=True, scale_over_n=False)
    from scenarios.libraries import registry

    for name, module in _synthcity().items():
        monkeypatch.setitem(sys.modules, name, module)
    forget(monkeypatch, sys.modules, registry.BUILT_IN["synthcity"])
    forget(monkeypatch, registry._REGISTRY, "synthcity")
