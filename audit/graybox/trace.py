"""What a gray-box run records: every random call, where it was made and what it received.

A :class:`RandomCall` is one call of a random primitive (a numpy ``Generator`` or ``RandomState``
method, a function of Python's ``random``/``secrets``, a torch random function, or a DP library's
noise entry point) with its parameters, the value it protected (where the primitive receives it,
e.g. ``loc`` of ``Generator.laplace`` or ``value`` of a diffprivlib ``randomise``) and its call
site.  A :class:`Trace` is the ordered list of one execution's calls with the execution's output.

The state a call consumed (the bit generator's state before it, or the bytes it returned) is
kept in ``state`` so that a replay can answer the same call from it: identical randomness, in the
sense of the record/replay of Re:cord-play (Cebere et al., PoPETs 2026), without the
mechanism having to honour the ``rng`` it is given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

__all__ = ["CallSite", "RandomCall", "Trace", "LOCATION_SCALE", "SAMPLING", "describe_params"]

#: Primitives whose draw is loc + scale·z with z from a fixed law: family of z by primitive name.
LOCATION_SCALE = {
    "Generator.normal": "gaussian", "Generator.standard_normal": "gaussian",
    "Generator.laplace": "laplace", "Generator.gumbel": "gumbel", "Generator.logistic": "logistic",
    "RandomState.normal": "gaussian", "RandomState.standard_normal": "gaussian", "RandomState.randn": "gaussian",
    "RandomState.laplace": "laplace", "RandomState.gumbel": "gumbel", "RandomState.logistic": "logistic",
    "torch.randn": "gaussian", "torch.normal": "gaussian", "torch.randn_like": "gaussian",
    "Tensor.normal_": "gaussian",
}
#: Primitives that draw one independent value per record (a Poisson sampling coin, a shuffle):
#: their shape may follow the number of records, so a shape that differs by the pair's difference
#: in rows is the neighbouring record's own draw, not a change of control flow.
SAMPLING = frozenset({
    "Generator.random", "Generator.uniform", "Generator.binomial", "Generator.permutation",
    "Generator.shuffle", "Generator.integers", "Generator.choice",
    "RandomState.random", "RandomState.random_sample", "RandomState.rand", "RandomState.uniform",
    "RandomState.binomial", "RandomState.permutation", "RandomState.shuffle", "RandomState.randint",
    "torch.rand", "torch.bernoulli", "torch.randperm", "torch.randint", "Tensor.uniform_", "Tensor.bernoulli_",
})
#: Parameters that carry the protected value (compared by the sensitivity check, not as control flow).
PROTECTED = frozenset({"loc", "mean", "value", "p", "pvals", "lam", "input", "probs"})


@dataclass(frozen=True)
class CallSite:
    """Where a random call was made: the first frame outside the interception, numpy and torch."""

    file: str
    line: int
    function: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line} ({self.function})"

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "function": self.function}


@dataclass(frozen=True, eq=False)
class RandomCall:
    """One call of a random primitive.

    Attributes
    ----------
    index : int
        Position in its trace.
    primitive : str
        ``"Generator.laplace"``, ``"random.random"``, ``"torch.normal"``, ``"diffprivlib.Laplace"``...
    params : dict
        The call's parameters by name (arrays as numpy arrays); ``PROTECTED`` names hold the value the
        noise protects.
    shape : tuple
        Shape of what it returned (``()`` for a scalar).
    site : CallSite
        Where it was made.
    value : numpy.ndarray or None
        What it returned (as float64 where numeric).
    state : Any
        What a replay needs to answer the same call (a generator's state, or the returned bytes).
    opaque : bool
        True for OS entropy (``os.urandom``, ``SystemRandom``, ``secrets``): replayed from the record
        but not reproducible from any seed.
    by_value : bool
        True for a call a replay answers with its recorded value (no generator state to restore).
    """

    index: int
    primitive: str
    params: dict
    shape: tuple
    site: CallSite
    value: Optional[np.ndarray] = None
    state: Any = field(default=None, repr=False)
    opaque: bool = False
    by_value: bool = False

    @property
    def family(self) -> Optional[str]:
        """The law of z when the call draws loc + scale·z, else None."""
        return LOCATION_SCALE.get(self.primitive)

    def protected(self) -> dict:
        """The parameters that carry the protected value."""
        return {k: v for k, v in self.params.items() if k in PROTECTED}

    def calibration(self) -> dict:
        """The parameters that must not depend on the data (scale, std, bounds, size...); the number
        of trials of a binomial draw counts records (a per-record sampling), so it is not one."""
        per_record = self.primitive.split(">")[-1] in SAMPLING
        return {k: v for k, v in self.params.items() if k not in PROTECTED and not (per_record and k == "n")}

    def standardized(self) -> Optional[np.ndarray]:
        """z = (value − loc)/scale of a location-scale call (broadcast to its shape), else None."""
        if self.family is None or self.value is None:
            return None
        loc = np.asarray(self.params.get("loc", self.params.get("mean", 0.0)), dtype=np.float64)
        scale = np.asarray(self.params.get("scale", self.params.get("std", 1.0)), dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.broadcast_to((self.value - loc) / scale, self.value.shape)

    def to_dict(self) -> dict:
        return {"index": self.index, "primitive": self.primitive, "params": describe_params(self.params),
                "shape": list(self.shape), "site": self.site.to_dict(), "opaque": self.opaque}


@dataclass(frozen=True, eq=False)
class Trace:
    """One execution's random calls, in order, and its output.

    ``rows`` is the ``size`` the mechanism was asked for: a call whose leading dimension is
    ``rows`` draws one slice per output row (a vectorized mechanism).
    """

    calls: tuple[RandomCall, ...]
    output: np.ndarray
    rows: int
    seconds: float

    def __len__(self) -> int:
        return len(self.calls)


def _describe(value: Any) -> Any:
    array = np.asarray(value) if not isinstance(value, (str, bytes)) else None
    if array is None or array.dtype == object:
        return repr(value)[:80]
    if array.ndim == 0:
        return array.item() if array.dtype.kind in "biuf" else repr(value)[:80]
    if array.size <= 6:
        return array.tolist()
    return f"array{tuple(array.shape)} in [{float(np.min(array)):.4g}, {float(np.max(array)):.4g}]"


def describe_params(params: dict) -> dict:
    """A short JSON-able form of a call's parameters (arrays summarised by shape and range)."""
    return {k: _describe(v) for k, v in params.items()}
