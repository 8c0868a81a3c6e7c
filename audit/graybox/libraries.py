"""Interception of torch's CPU random functions and of the noise entry points of DP libraries.

torch: every function and in-place method below draws from a ``torch.Generator`` (the one passed
as ``generator=``, else the default CPU generator); recording keeps that generator's state before
the call and a replay restores it, so the draw is the record's whatever the seeds.

DP libraries, at their Python boundary (the entry the library's own code calls, so that the call
site is the library line that chose the value and the parameters):

- diffprivlib: ``randomise(value)`` of every mechanism class of ``diffprivlib.mechanisms``, with
  ``epsilon``, ``delta``, ``sensitivity`` and the protected ``value``.  A numeric value is coupled
  by its *output*: the replay answers with the released value recorded on D whenever the
  calibration is unchanged, so that whatever the library computes from its earlier noisy releases
  (a class count, a noisy norm) is the same on D′, and a calibration that still differs was read
  from the raw data.  A value that is no number (``Vector``'s objective function) is marked, and its
  draws (``SystemRandom`` or a ``RandomState``) are intercepted below it;
- Opacus: ``DPOptimizer.add_noise``, with the noise multiplier, the clip norm and, under
  ``loss_reduction="mean"``, the divisor ``expected_batch_size`` the noisy sum is scaled by; its
  ``torch.normal`` draws are intercepted below it;
- OpenDP: ``Measurement.__call__``, whose samplers run in Rust and cannot be intercepted: a call
  is answered from the record when its argument is unchanged, and is otherwise *opaque* (a fresh
  draw, reported as not coupled).

Each library is patched only if it is imported when the run starts (the runner records again
when a run imports one for the first time).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .tape import active_tape, as_array

__all__ = ["patch_torch", "patch_libraries", "TORCH_FUNCTIONS", "TENSOR_METHODS", "WATCHED_MODULES"]

#: Modules whose import during a run makes the runner record again (they are patched only if loaded).
WATCHED_MODULES = ("torch", "opacus", "diffprivlib", "opendp")

#: torch functions: parameter names of their positional arguments (sizes are read from the result).
TORCH_FUNCTIONS: dict[str, tuple[str, ...]] = {
    "rand": (), "randn": (), "randint": ("arg0", "arg1", "arg2"), "normal": ("mean", "std"),
    "bernoulli": ("input", "p"), "poisson": ("input",), "multinomial": ("input", "num_samples", "replacement"),
    "randperm": ("n",), "rand_like": ("input",), "randn_like": ("input",), "randint_like": ("input", "arg1", "arg2"),
}
#: In-place tensor methods: parameter names.
TENSOR_METHODS: dict[str, tuple[str, ...]] = {
    "normal_": ("mean", "std"), "uniform_": ("from", "to"), "bernoulli_": ("p",), "exponential_": ("lambd",),
    "random_": ("from", "to"), "geometric_": ("p",), "cauchy_": ("median", "sigma"), "log_normal_": ("mean", "std"),
}
_SIZE_ONLY = ("rand", "randn")


def _plain(value: Any) -> Any:
    if hasattr(value, "detach"):
        return as_array(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, (int, np.integer)) for v in value):
        return tuple(int(v) for v in value)
    return value


def _params(names: tuple[str, ...], args: tuple, kwargs: dict, *, skip_sizes: bool) -> dict:
    params = {}
    if not skip_sizes:
        params.update({name: _plain(value) for name, value in zip(names, args)})
    params.update({k: _plain(v) for k, v in kwargs.items()
                   if k not in ("generator", "size", "out", "dtype", "layout", "device", "requires_grad",
                                "pin_memory", "memory_format")})
    return params


def patch_torch(patches: Any) -> None:
    """Route torch's CPU random functions through the active tape (if torch is imported)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return

    def generator_of(kwargs: dict):
        gen = kwargs.get("generator")
        return gen if gen is not None else torch.default_generator

    def function(name: str, base: Any) -> Any:
        names = TORCH_FUNCTIONS[name]
        primitive = f"torch.{name}"

        def draw(*args: Any, **kwargs: Any) -> Any:
            tape = active_tape()
            if tape is None:
                return base(*args, **kwargs)
            gen = generator_of(kwargs)
            params = _params(names, args, kwargs, skip_sizes=name in _SIZE_ONLY)
            rescale = None
            if name in ("randn", "randn_like"):
                rescale = lambda value, factor: value * torch.from_numpy(factor).to(value.dtype)  # noqa: E731
            elif name == "normal":
                mean = args[0] if args else kwargs.get("mean", 0.0)

                def rescale(value, factor):
                    loc = mean if not hasattr(mean, "detach") else mean.detach()
                    return loc + (value - loc) * torch.from_numpy(factor).to(value.dtype)
            return tape.call(primitive, params, lambda: base(*args, **kwargs), get_state=gen.get_state,
                             set_state=gen.set_state, rescale=rescale, skip=("opacus",))

        draw.__name__ = name
        draw.__doc__ = getattr(base, "__doc__", None)
        return draw

    def method(name: str, base: Any) -> Any:
        names = TENSOR_METHODS[name]
        primitive = f"Tensor.{name}"

        def draw(self: Any, *args: Any, **kwargs: Any) -> Any:
            tape = active_tape()
            if tape is None:
                return base(self, *args, **kwargs)
            gen = generator_of(kwargs)
            params = _params(names, args, kwargs, skip_sizes=False)
            rescale = None
            if name == "normal_":
                mean = float(params.get("mean", 0.0))

                def rescale(value, factor):
                    with torch.no_grad():
                        return value.sub_(mean).mul_(torch.from_numpy(factor).to(value.dtype)).add_(mean)
            return tape.call(primitive, params, lambda: base(self, *args, **kwargs), get_state=gen.get_state,
                             set_state=gen.set_state, rescale=rescale, skip=("opacus",))

        draw.__name__ = name
        return draw

    for name in TORCH_FUNCTIONS:
        if hasattr(torch, name):
            patches.set(torch, name, function(name, getattr(torch, name)))
    for name in TENSOR_METHODS:
        if hasattr(torch.Tensor, name):
            patches.set(torch.Tensor, name, method(name, getattr(torch.Tensor, name)))


def _diffprivlib(patches: Any) -> None:
    mechanisms = sys.modules.get("diffprivlib.mechanisms")
    if mechanisms is None:
        return
    classes = {id(value): value for value in (getattr(mechanisms, name) for name in dir(mechanisms))
               if isinstance(value, type) and "randomise" in value.__dict__}
    for cls in classes.values():

        def wrap(base: Any, label: str) -> Any:
            def randomise(self: Any, value: Any, *args: Any, **kwargs: Any) -> Any:
                tape = active_tape()
                if tape is not None:
                    params = {key: getattr(self, key) for key in ("epsilon", "delta", "sensitivity", "lower",
                                                                 "upper", "bounds", "utility", "candidates")
                              if hasattr(self, key)}
                    params = {k: (_plain(v) if not callable(v) else repr(v)) for k, v in params.items()}
                    params["value"] = _plain(value)
                    primitive = f"diffprivlib.{label}.randomise"
                    if as_array(value) is not None:  # a released value: coupled by its output
                        return tape.call(primitive, params, lambda: base(self, value, *args, **kwargs),
                                         skip=("diffprivlib.mechanisms",), couple_output=True)
                    tape.mark(primitive, params, skip=("diffprivlib.mechanisms",))  # e.g. Vector: its draws follow
                return base(self, value, *args, **kwargs)
            randomise.__doc__ = base.__doc__
            return randomise

        patches.set(cls, "randomise", wrap(cls.__dict__["randomise"], cls.__name__))


def _opacus(patches: Any) -> None:
    module = sys.modules.get("opacus.optimizers.optimizer")
    if module is None:
        return
    cls = module.DPOptimizer
    base = cls.__dict__["add_noise"]

    def add_noise(self: Any) -> Any:
        tape = active_tape()
        if tape is not None:
            params = {"noise_multiplier": float(self.noise_multiplier), "max_grad_norm": float(self.max_grad_norm),
                      "loss_reduction": str(self.loss_reduction)}
            if self.loss_reduction == "mean":
                params["expected_batch_size"] = self.expected_batch_size
            tape.mark("opacus.DPOptimizer.add_noise", params, skip=("opacus",))
        return base(self)

    add_noise.__doc__ = base.__doc__
    patches.set(cls, "add_noise", add_noise)


def _opendp(patches: Any) -> None:
    module = sys.modules.get("opendp.mod")
    if module is None:
        return
    cls = module.Measurement
    base = cls.__call__

    def call(self: Any, arg: Any) -> Any:
        tape = active_tape()
        if tape is None:
            return base(self, arg)
        return tape.call("opendp.Measurement", {"input": _plain(arg) if not isinstance(arg, list) else np.asarray(arg)},
                         lambda: base(self, arg), opaque=True, skip=("opendp",))

    patches.set(cls, "__call__", call)


def patch_libraries(patches: Any) -> None:
    """Mark the noise entry points of diffprivlib, Opacus and OpenDP (those that are imported)."""
    _diffprivlib(patches)
    _opacus(patches)
    _opendp(patches)
