"""Report noisy max: the index or the value of the largest noisy answer (four variants).

Each class is one mechanism of the suite shared by StatDP (Ding, Wang, Wang, Zhang & Kifer,
"Detecting Violations of Differential Privacy", CCS 2018) and DP-Sniper (Bichsel, Steffen,
Bogunovic & Vechev, "DP-Sniper: Black-Box Discovery of Differential Privacy Violations using
Classifiers", S&P 2021), at the published parameters.  Inputs are vectors of query answers (see
:mod:`mechanisms.literature.base`); outputs are float64 ``(size, k)`` arrays drawn in one
vectorized call.

Neighbourhood, as in the papers' input patterns: *component-wise* (every answer may differ by at
most 1).

======================= ============ ============================================================
mechanism               claim        truth (pure ε)
======================= ============ ============================================================
ReportNoisyMax1, 2      0.1          ≤ 0.1 (published proofs), exact unknown
ReportNoisyMax3         0.1          kε/2 = 0.25 exact (derivation in its docstring)
ReportNoisyMax4         0.1          ∞ exact (support argument in its docstring)
======================= ============ ============================================================
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import integrate

from ..validation import check_int
from .base import LiteratureMechanism, LiteratureTruth, TruthKind, laplace_noise

__all__ = ["ReportNoisyMax1", "ReportNoisyMax2", "ReportNoisyMax3", "ReportNoisyMax4"]

_DING = "Ding, Wang, Wang, Zhang & Kifer, CCS 2018"


class _ReportNoisyMax(LiteratureMechanism):
    exponential: bool
    report_value: bool

    def __init__(self, epsilon: float = 0.1, queries: int = 5, relation: Any = "add-remove") -> None:
        self._init_claim(epsilon, relation)
        self.input_dim = check_int("queries", queries)
        self.scale = 2.0 / self.epsilon
        self.truth = self._truth()

    def _truth(self) -> LiteratureTruth:
        raise NotImplementedError  # pragma: no cover - every subclass defines it

    def _sample(self, queries, size, rng):
        shape = (size, self.input_dim)
        noise = rng.exponential(self.scale, shape) if self.exponential else laplace_noise(rng, self.scale, shape)
        noisy = noise + queries
        if self.report_value:
            return noisy.max(axis=1, keepdims=True)
        return noisy.argmax(axis=1).astype(np.float64).reshape(size, 1)

    def index_probabilities(self, queries) -> np.ndarray:
        """Exact P(argmax = i) = ∫ f(t − q_i) Π_{j≠i} F(t − q_j) dt, by quadrature between kinks."""
        q = self.check_input(queries)
        s = self.scale
        if self.exponential:
            def pdf(x):
                return np.where(x >= 0, np.exp(-np.maximum(x, 0) / s) / s, 0.0)

            def cdf(x):
                return np.where(x >= 0, -np.expm1(-np.maximum(x, 0) / s), 0.0)
        else:
            def pdf(x):
                return np.exp(-np.abs(x) / s) / (2 * s)

            def cdf(x):
                return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / s), 1 - 0.5 * np.exp(-np.maximum(x, 0) / s))
        points = np.unique(q)
        edges = [points[0] - 80 * s, *points, points[-1] + 80 * s]
        result = np.empty(q.size)
        for i in range(q.size):
            def integrand(t, i=i):
                values = cdf(t - q)
                values[i] = pdf(t - q[i])
                return float(np.prod(values))
            result[i] = math.fsum(integrate.quad(integrand, lo, hi, epsabs=0.0, epsrel=1e-11, limit=200)[0]
                                  for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo)
        return result

    def pair_distributions(self, a, b) -> tuple[np.ndarray, np.ndarray]:
        """Exact index probabilities under inputs a and b (index variants)."""
        if self.report_value:
            raise NotImplementedError(f"pair_distributions of {self.name} is not implemented")
        return self.index_probabilities(a), self.index_probabilities(b)

    def pair_epsilon(self, a, b) -> float:
        """Exact pure ε between inputs a and b (index variants): max_i |ln P_a(i)/P_b(i)|."""
        if self.report_value:
            raise NotImplementedError(f"pair_epsilon of {self.name} is not implemented")
        return float(np.max(np.abs(np.log(self.index_probabilities(a) / self.index_probabilities(b)))))

    @property
    def parameters(self):
        return f"ε={self.epsilon:g}, queries={self.input_dim}"


class ReportNoisyMax1(_ReportNoisyMax):
    """argmax_i (q_i + Lap(2/ε)): the index (Ding et al. 2018, Alg. 5; correct).

    Truth: ε-DP for component-wise neighbours, by the argument of Dwork & Roth 2014, Claim 3.9:
    with the other noises fixed, i wins iff its noise exceeds a cut-off that moves by at most 2
    between neighbours (q_i down by 1, a rival up by 1), and a Lap(b) tail changes by at most
    e^{2/b} = e^ε over a shift of 2.  The exact sup over inputs is unknown.
    """

    exponential, report_value = False, False

    def _truth(self):
        return LiteratureTruth(TruthKind.HOLDS, None, self.epsilon,
                               "report noisy max with Lap(2/ε) (Dwork & Roth 2014, Claim 3.9; docstring)")


class ReportNoisyMax2(_ReportNoisyMax):
    """argmax_i (q_i + Exp(2/ε)): the index (Ding et al. 2018, Alg. 6; correct).

    Truth: ε-DP, by the argument of :class:`ReportNoisyMax1`: the Exp(b) survival function
    changes by at most e^{2/b} = e^ε when its argument moves by 2.  The exact sup is unknown.
    """

    exponential, report_value = True, False

    def _truth(self):
        return LiteratureTruth(TruthKind.HOLDS, None, self.epsilon,
                               f"noisy max with Exp(2/ε) noise is ε-DP ({_DING}, Alg. 6; docstring)")


class ReportNoisyMax3(_ReportNoisyMax):
    """max_i (q_i + Lap(2/ε)): the noisy maximum *value* (Ding et al. 2018, Alg. 7; buggy).

    Truth: exactly kε/2 (= 0.25 for k = 5 queries, b = 2/ε).  Upper: the density of the output
    is f_q(t) = Σ_i f(t − q_i) Π_{j≠i} F(t − q_j) with f, F the Lap(b) density and cdf; when each
    q_j moves by at most 1, f and F each change by a factor at most e^{1/b} (log f and log F are
    1/b-Lipschitz), so every term, hence the sum, changes by at most e^{k/b}.  Attained: for
    q' = q + 1 (all above) and t < min q, F(t − q_j) = ½e^{(t−q_j)/b} and f = F/b, so
    f_q(t) ∝ e^{kt/b} and f_q(t)/f_{q'}(t) = e^{k/b} exactly, on an event of probability 2^{−k}
    under q = 0.
    """

    exponential, report_value = False, True

    def _truth(self):
        value = self.input_dim / self.scale
        return LiteratureTruth(TruthKind.EXACT, value, value,
                               "derivation in ReportNoisyMax3's docstring: k/b with b = 2/ε")


class ReportNoisyMax4(_ReportNoisyMax):
    """max_i (q_i + Exp(2/ε)): the noisy maximum *value* (Ding et al. 2018, Alg. 8; buggy).

    Truth: not ε-DP for any ε.  Exponential noise is ≥ 0, so M(q) ≥ max_i q_i surely, while
    P_q(M < max q + 1) = Π_i (1 − e^{−(max q + 1 − q_i)/b}) > 0; for q' = q + 1 the event
    {M < max q + 1} has probability 0 under q' and positive probability under q.
    """

    exponential, report_value = True, True

    def _truth(self):
        return LiteratureTruth(TruthKind.EXACT, math.inf, None,
                               "support argument in ReportNoisyMax4's docstring")
