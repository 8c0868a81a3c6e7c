"""Interception of every random source a Python mechanism reaches, without editing its code.

Inside :func:`intercepting`, each of these is answered through the active
:class:`~audit.graybox.tape.Tape`:

- numpy's ``Generator`` (the ``rng`` given to the mechanism is an :class:`InterceptedGenerator`, a
  subclass, and ``np.random.default_rng``/``np.random.Generator`` build one), the legacy
  ``RandomState`` class and the module functions ``np.random.*`` (the hidden global
  ``RandomState``);
- Python's ``random`` (the core calls ``random()`` and ``getrandbits()`` of ``random.Random``, which
  every other method of the module draws through, and the module's functions) and OS entropy
  (``os.urandom``, ``random.SystemRandom``, hence ``secrets``), replayed by value;
- torch's CPU random functions (``torch.rand``, ``randn``, ``normal``, ``randint``, ``bernoulli``,
  ``poisson``, ``multinomial``, ``randperm``, the ``*_like`` forms) and in-place tensor methods
  (``normal_``, ``uniform_``, ``bernoulli_``, ``exponential_``, ``random_``...), through the state
  of the generator each call uses;
- the noise entry points of diffprivlib, OpenDP and Opacus (:mod:`audit.graybox.libraries`).

What it cannot see: a C or Rust extension that draws from its own generator (OpenDP's samplers,
a compiled sampler seeded from the clock), a generator created before the interception from a
class imported by name (``from numpy.random import Generator`` at import time), and other
processes or threads.  The replay finds their effect (an output that a replay on the same input
does not reproduce), not their call site (:mod:`audit.graybox.execute`).
"""

from __future__ import annotations

import contextlib
import os
import threading
import random as _random_module
from typing import Any, Iterator

import numpy as np

from . import libraries
from .tape import Tape, _set_active, active_tape, clear_site_cache

__all__ = ["InterceptedGenerator", "intercepting", "holding", "reinstall", "GENERATOR_METHODS"]

#: Parameter names of the numpy ``Generator``/``RandomState`` methods that are intercepted.
GENERATOR_METHODS: dict[str, tuple[str, ...]] = {
    "random": ("size", "dtype", "out"), "standard_normal": ("size", "dtype", "out"),
    "normal": ("loc", "scale", "size"), "laplace": ("loc", "scale", "size"), "gumbel": ("loc", "scale", "size"),
    "logistic": ("loc", "scale", "size"), "exponential": ("scale", "size"),
    "standard_exponential": ("size", "dtype", "method", "out"), "uniform": ("low", "high", "size"),
    "integers": ("low", "high", "size", "dtype", "endpoint"), "choice": ("a", "size", "replace", "p", "axis", "shuffle"),
    "binomial": ("n", "p", "size"), "poisson": ("lam", "size"), "geometric": ("p", "size"),
    "permutation": ("x", "axis"), "shuffle": ("x", "axis"), "permuted": ("x", "axis", "out"),
    "gamma": ("shape", "scale", "size"), "standard_gamma": ("shape", "size", "dtype", "out"),
    "beta": ("a", "b", "size"), "multinomial": ("n", "pvals", "size"), "bytes": ("length",),
    "standard_cauchy": ("size",), "lognormal": ("mean", "sigma", "size"), "chisquare": ("df", "size"),
    "dirichlet": ("alpha", "size"), "hypergeometric": ("ngood", "nbad", "nsample", "size"),
    "negative_binomial": ("n", "p", "size"), "rayleigh": ("scale", "size"), "standard_t": ("df", "size"),
    "triangular": ("left", "mode", "right", "size"), "vonmises": ("mu", "kappa", "size"),
    "wald": ("mean", "scale", "size"), "weibull": ("a", "size"), "zipf": ("a", "size"), "pareto": ("a", "size"),
    "power": ("a", "size"), "multivariate_normal": ("mean", "cov", "size"),
}
#: Legacy-only ``RandomState`` methods (beyond those shared with ``Generator``).
LEGACY_METHODS: dict[str, tuple[str, ...]] = {
    "rand": (), "randn": (), "randint": ("low", "high", "size", "dtype"), "random_sample": ("size",),
    "random_integers": ("low", "high", "size"), "tomaxint": ("size",),
}
_NOT_PARAMS = frozenset({"size", "dtype", "out", "method"})


def _bind(names: tuple[str, ...], args: tuple, kwargs: dict) -> dict:
    params = {name: value for name, value in zip(names, args)}
    for extra, value in enumerate(args[len(names):]):
        params[f"arg{len(names) + extra}"] = value
    params.update(kwargs)
    return {k: (np.array(v) if isinstance(v, np.ndarray) else v) for k, v in params.items() if k not in _NOT_PARAMS}


def _rescale(loc_key: str, default: float):
    def rescale(value: Any, factor: np.ndarray, params: dict) -> Any:
        loc = np.asarray(params.get(loc_key, default), dtype=np.float64)
        return loc + factor * (np.asarray(value, dtype=np.float64) - loc)
    return rescale


_LOCATION = {"normal": "loc", "laplace": "loc", "gumbel": "loc", "logistic": "loc", "standard_normal": None,
             "randn": None}


def _method(owner: str, name: str, base: Any, names: tuple[str, ...], state_of) -> Any:
    primitive = f"{owner}.{name}"
    loc_key = _LOCATION.get(name, "")

    def method(self, *args: Any, **kwargs: Any) -> Any:
        tape = active_tape()
        if tape is None:
            return base(self, *args, **kwargs)
        params = _bind(names, args, kwargs) if names or name not in ("rand", "randn") else {}
        get_state, set_state = state_of(self)
        rescale = None
        if loc_key != "":
            scaler = _rescale(loc_key or "loc", 0.0)
            rescale = lambda value, factor: scaler(value, factor, params)  # noqa: E731
        return tape.call(primitive, params, lambda: base(self, *args, **kwargs), get_state=get_state,
                         set_state=set_state, rescale=rescale)

    method.__name__ = name
    method.__qualname__ = f"Intercepted{owner}.{name}"
    method.__doc__ = getattr(base, "__doc__", None)
    return method


def _generator_state(gen: np.random.Generator):
    bitgen = gen.bit_generator
    return (lambda: bitgen.state), (lambda state: setattr(bitgen, "state", state))


def _legacy_state(rs: np.random.RandomState):
    return rs.get_state, rs.set_state


class InterceptedGenerator(np.random.Generator):
    """A numpy ``Generator`` whose every draw goes through the active tape (outside a gray-box run
    it draws exactly as ``numpy.random.Generator`` does)."""


class InterceptedRandomState(np.random.RandomState):
    """A legacy ``RandomState`` whose every draw goes through the active tape."""


for _name, _names in GENERATOR_METHODS.items():
    setattr(InterceptedGenerator, _name,
            _method("Generator", _name, getattr(np.random.Generator, _name), _names, _generator_state))
for _name, _names in {**GENERATOR_METHODS, **LEGACY_METHODS}.items():
    if hasattr(np.random.RandomState, _name):
        setattr(InterceptedRandomState, _name,
                _method("RandomState", _name, getattr(np.random.RandomState, _name), _names, _legacy_state))


# -- installing and removing the patches -------------------------------------------------------------
class _Patches:
    def __init__(self) -> None:
        self.saved: list[tuple[Any, str, Any]] = []

    def set(self, owner: Any, name: str, value: Any) -> None:
        self.saved.append((owner, name, owner.__dict__.get(name, _MISSING) if isinstance(owner, type)
                           else getattr(owner, name, _MISSING)))
        setattr(owner, name, value)

    def undo(self) -> None:
        for owner, name, value in reversed(self.saved):
            if value is _MISSING:
                delattr(owner, name)
            else:
                setattr(owner, name, value)
        self.saved.clear()


_MISSING = object()


def _patch_numpy(patches: _Patches) -> None:
    original_default_rng = np.random.default_rng

    def default_rng(seed: Any = None) -> np.random.Generator:
        if isinstance(seed, np.random.Generator):
            return seed
        return InterceptedGenerator(original_default_rng(seed).bit_generator)

    patches.set(np.random, "default_rng", default_rng)
    patches.set(np.random, "Generator", InterceptedGenerator)
    patches.set(np.random, "RandomState", InterceptedRandomState)
    hidden = np.random.mtrand._rand
    for name, names in {**GENERATOR_METHODS, **LEGACY_METHODS}.items():
        if name in ("bytes",) or not hasattr(np.random, name) or not hasattr(np.random.RandomState, name):
            continue
        unbound = _method("RandomState", name, getattr(np.random.RandomState, name), names, _legacy_state)
        patches.set(np.random, name, unbound.__get__(hidden))
    if hasattr(np.random, "random_sample"):
        patches.set(np.random, "sample", np.random.random_sample)
        patches.set(np.random, "ranf", np.random.random_sample)


def _value_source(primitive: str, base: Any, *, opaque: bool, params_of=lambda *a, **k: {}) -> Any:
    def source(*args: Any, **kwargs: Any) -> Any:
        tape = active_tape()
        if tape is None:
            return base(*args, **kwargs)
        return tape.call(primitive, params_of(*args, **kwargs), lambda: base(*args, **kwargs), opaque=opaque)
    source.__name__ = getattr(base, "__name__", primitive)
    source.__doc__ = getattr(base, "__doc__", None)
    return source


def _patch_python(patches: _Patches) -> None:
    core = _random_module.Random
    c_random = super(core, core).random  # the C core every Python-level method draws through
    c_bits = super(core, core).getrandbits
    patches.set(core, "random", _value_source("random.random", c_random, opaque=False))
    patches.set(core, "getrandbits", _value_source("random.getrandbits", c_bits, opaque=False,
                                                   params_of=lambda self, k: {"k": k}))
    system = _random_module.SystemRandom
    patches.set(system, "random", _value_source("SystemRandom.random", system.__dict__["random"], opaque=True))
    patches.set(system, "getrandbits", _value_source("SystemRandom.getrandbits", system.__dict__["getrandbits"],
                                                     opaque=True, params_of=lambda self, k: {"k": k}))
    instance = _random_module._inst
    patches.set(instance, "gauss_next", instance.gauss_next)  # restored on undo (each run clears it)
    patches.set(_random_module, "random", core.__dict__["random"].__get__(instance))
    patches.set(_random_module, "getrandbits", core.__dict__["getrandbits"].__get__(instance))
    patches.set(os, "urandom", _value_source("os.urandom", os.urandom, opaque=True,
                                             params_of=lambda n: {"n": n}))


def _install(patches: _Patches) -> None:
    clear_site_cache()
    _patch_numpy(patches)
    _patch_python(patches)
    libraries.patch_torch(patches)
    libraries.patch_libraries(patches)


_HELD = threading.local()


@contextlib.contextmanager
def holding() -> Iterator[None]:
    """Keep the patches installed across the runs of the block (one pair's executions), so that
    each run only switches the tape; outside a run every patched source draws as the original."""
    if getattr(_HELD, "patches", None) is not None:
        yield
        return
    patches = _Patches()
    _HELD.patches = patches
    try:
        _install(patches)
        yield
    finally:
        patches.undo()
        _HELD.patches = None


def reinstall() -> None:
    """Patch again (a library imported during a run, e.g. torch or opacus, is patched now)."""
    patches = getattr(_HELD, "patches", None)
    if patches is not None:
        patches.undo()
        _install(patches)


@contextlib.contextmanager
def intercepting(tape: Tape) -> Iterator[Tape]:
    """Answer every random source through ``tape`` inside the block (this thread only draws
    through it; the patches are module-wide and undone on exit, even on an exception, unless
    :func:`holding` keeps them for several runs)."""
    if active_tape() is not None:
        raise RuntimeError("a gray-box run is already active in this thread: runs do not nest")
    own = None if getattr(_HELD, "patches", None) is not None else _Patches()
    _random_module._inst.gauss_next = None  # gauss() caches its second value: start every run afresh
    _set_active(tape)
    try:
        if own is not None:
            _install(own)
        yield tape
    finally:
        if own is not None:
            own.undo()
        _set_active(None)
