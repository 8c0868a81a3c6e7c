"""RAPPOR's reports: randomized response on the Bloom filter of an integer value.

Each class is one mechanism of the suite shared by StatDP (Ding, Wang, Wang, Zhang & Kifer,
"Detecting Violations of Differential Privacy", CCS 2018) and DP-Sniper (Bichsel, Steffen,
Bogunovic & Vechev, "DP-Sniper: Black-Box Discovery of Differential Privacy Violations using
Classifiers", S&P 2021), at the published parameters.  Inputs are vectors of query answers (see
:mod:`mechanisms.literature.base`); outputs are float64 ``(size, k)`` arrays drawn in one
vectorized call.

Neighbourhood: any two values of the integer domain are neighbours (one-entry).

======================= ============ ============================================================
mechanism               claim        truth (pure ε)
======================= ============ ============================================================
Rappor                  0.4001       0.4001 exact on integers in [-10, 10]
OneTimeRappor           0.8007       0.8007 exact on integers in [-10, 10]
======================= ============ ============================================================
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ..validation import check_int
from .base import LiteratureMechanism, LiteratureTruth, TruthKind

__all__ = ["Rappor", "OneTimeRappor", "murmur3_32"]


def murmur3_32(data: bytes, seed: int = 0) -> int:
    """MurmurHash3 x86_32 of ``data`` as a signed 32-bit int (the value ``mmh3.hash`` returns).

    Written from Appleby's public specification (SMHasher); RAPPOR's Bloom filter in DP-Sniper
    hashes ``str(value)`` with seeds 0, …, h − 1.
    """
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    def scramble(k: int) -> int:
        return (rotl((k * 0xCC9E2D51) & mask, 15) * 0x1B873593) & mask

    h = seed & mask
    blocks = len(data) // 4
    for i in range(blocks):
        h ^= scramble(int.from_bytes(data[4 * i: 4 * i + 4], "little"))
        h = (rotl(h, 13) * 5 + 0xE6546B64) & mask
    tail = data[4 * blocks:]
    if tail:
        h ^= scramble(int.from_bytes(tail, "little"))
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & mask
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & mask
    h ^= h >> 16
    return h - (1 << 32) if h >= 1 << 31 else h


def _check_probability(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise ValueError(f"`{name}` must be in (0, 1), got {value!r}")
    return float(value)


class _BloomResponse(LiteratureMechanism):
    """Randomized response on the Bloom filter of an integer value (RAPPOR's report)."""

    def __init__(self, epsilon: float, hashes: int, filter_size: int, domain: tuple[int, int],
                 relation: Any) -> None:
        self.hashes = check_int("hashes", hashes)
        self.filter_size = check_int("filter_size", filter_size)
        low, high = (check_int("domain[0]", domain[0], minimum=-(2 ** 31)),
                     check_int("domain[1]", domain[1], minimum=-(2 ** 31)))
        if high <= low:
            raise ValueError(f"`domain` must be (low, high) with low < high, got {domain!r}")
        self.domain = (low, high)
        self._init_claim(epsilon, relation)
        self.input_dim = 1
        exact = self.domain_epsilon()
        self.truth = LiteratureTruth(TruthKind.EXACT, exact, exact,
                                     "per-bit losses summed over differing Bloom bits, maximised over the domain")

    def bloom_bits(self, value: int) -> np.ndarray:
        """The Bloom filter of ``value``: bit mmh3(str(value), seed=i) mod m set for i < h."""
        bits = np.zeros(self.filter_size, dtype=bool)
        for i in range(self.hashes):
            bits[murmur3_32(str(int(value)).encode(), i) % self.filter_size] = True
        return bits

    # P(reported bit = 1 | Bloom bit = 1) and (| Bloom bit = 0)
    p_one: float
    p_zero: float

    def pair_epsilon(self, a: Any, b: Any) -> float:
        """Exact pure ε between values a and b (integers or 1-vectors), both orders.

        Bits are independent and each differing bit contributes its largest loss: a bit set only
        in a gives at most ln(p₁/p₀) (reported 1) and one set only in b at most
        ln((1 − p₀)/(1 − p₁)) (reported 0), in the order (a, b); and symmetrically.
        """
        A, B = (self.bloom_bits(int(np.asarray(x, dtype=np.float64).reshape(-1)[0])) for x in (a, b))
        up, down = math.log(self.p_one / self.p_zero), math.log((1 - self.p_zero) / (1 - self.p_one))
        only_a, only_b = int(np.sum(A & ~B)), int(np.sum(B & ~A))
        return max(only_a * up + only_b * down, only_b * up + only_a * down)

    def pair_distributions(self, a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
        """Exact probabilities of every report on the bits where the Bloom filters of a and b
        differ (the other bits have the same law under both, so these carry the whole likelihood ratio)."""
        A, B = (self.bloom_bits(int(np.asarray(x, dtype=np.float64).reshape(-1)[0])) for x in (a, b))
        differ = np.flatnonzero(A != B)
        reports = np.array(list(itertools.product([0, 1], repeat=len(differ))), dtype=bool).reshape(-1, len(differ))
        result = []
        for bits in (A, B):
            p = np.where(bits[differ], self.p_one, self.p_zero)
            result.append(np.prod(np.where(reports, p, 1.0 - p), axis=1))
        return result[0], result[1]

    def domain_epsilon(self) -> float:
        """Exact pure ε over all pairs of integers in ``domain`` (any two values are neighbours)."""
        values = range(self.domain[0], self.domain[1] + 1)
        return max(self.pair_epsilon(a, b) for a, b in itertools.combinations(values, 2))

    def check_input(self, dataset):
        queries = super().check_input(dataset)
        value = queries[0]
        if value != round(value) or not self.domain[0] <= value <= self.domain[1]:
            raise ValueError(f"`dataset` must be an integer value in [{self.domain[0]}, "
                             f"{self.domain[1]}], got {value!r}")
        return queries

    def _sample(self, queries, size, rng):
        probability = np.where(self.bloom_bits(int(queries[0])), self.p_one, self.p_zero)
        return (rng.random((size, self.filter_size)) < probability).astype(np.float64)


class Rappor(_BloomResponse):
    """RAPPOR's report: Bloom filter, permanent then instantaneous randomized response
    (Erlingsson, Pihur & Korolova, CCS 2014, steps 1–3), a fresh permanent response per report.

    With h hashes into m bits, the permanent response keeps a bit with probability 1 − f and
    sets it to 1 or 0 with probability f/2 each; the instantaneous one reports 1 with probability
    q (bit 1) or p (bit 0).  Per bit, P(report 1 | bit 1) = q* = ½f(p + q) + (1 − f)q and
    P(report 1 | bit 0) = p* = ½f(p + q) + (1 − f)p, independently across bits; the sampler draws
    these composite Bernoullis directly (the same distribution).

    Claim: the paper's ε₁ = h ln(q*(1 − p*)/(p*(1 − q*))) = 0.4001 for h = 4, f = 0.75,
    p = 0.45, q = 0.55.  Truth: exact, :meth:`pair_epsilon` maximised over the integer domain
    (DP-Sniper's [−10, 10]); it equals ε₁ when two values have disjoint Bloom filters.
    """

    def __init__(self, hashes: int = 4, filter_size: int = 20, f: float = 0.75, p: float = 0.45,
                 q: float = 0.55, domain: tuple[int, int] = (-10, 10), relation: Any = "add-remove") -> None:
        for name, value in (("f", f), ("p", p), ("q", q)):
            _check_probability(name, value)
        if not p < q:
            raise ValueError(f"`p` must be < `q`, got p={p!r}, q={q!r}")
        self.f, self.p, self.q = float(f), float(p), float(q)
        self.p_one = 0.5 * f * (p + q) + (1 - f) * q
        self.p_zero = 0.5 * f * (p + q) + (1 - f) * p
        claimed = hashes * math.log(self.p_one * (1 - self.p_zero) / (self.p_zero * (1 - self.p_one)))
        super().__init__(claimed, hashes, filter_size, tuple(domain), relation)

    @property
    def parameters(self):
        return f"h={self.hashes}, m={self.filter_size}, f={self.f:g}, p={self.p:g}, q={self.q:g}"


class OneTimeRappor(_BloomResponse):
    """RAPPOR's permanent randomized response alone (Erlingsson et al. 2014, steps 1–2).

    Per bit, P(report 1 | bit 1) = 1 − f/2 and P(report 1 | bit 0) = f/2.  Claim: the paper's
    ε_∞ = 2h ln((1 − f/2)/(f/2)) = 0.8007 for h = 4, f = 0.95.  Truth: exact, as for
    :class:`Rappor`.
    """

    def __init__(self, hashes: int = 4, filter_size: int = 20, f: float = 0.95,
                 domain: tuple[int, int] = (-10, 10), relation: Any = "add-remove") -> None:
        self.f = _check_probability("f", f)
        self.p_one, self.p_zero = 1 - 0.5 * f, 0.5 * f
        claimed = 2 * hashes * math.log(self.p_one / self.p_zero)
        super().__init__(claimed, hashes, filter_size, tuple(domain), relation)

    @property
    def parameters(self):
        return f"h={self.hashes}, m={self.filter_size}, f={self.f:g}"
