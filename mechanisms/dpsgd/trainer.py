"""DP-SGD for logistic regression as a mechanism, vectorized over independent training runs.

One run (Abadi et al. 2016, Algorithm 1, with Poisson sampling as analysed by the accountant):
θ₀ = 0 and for t = 1, …, T

    B_t  = each example independently with probability q          (Poisson sampling)
    s_t  = Σ_{i ∈ B_t} clip_C(∇ℓ(θ_{t−1}; x_i, y_i)) + N(0, σ²C²I)  (clip_C(g) = g·min(1, C/‖g‖))
    θ_t  = θ_{t−1} − η s_t / (q n)

with the logistic loss ℓ(θ; x, y) = log(1 + e^{θ·x}) − y θ·x, whose gradient (sigmoid(θ·x) − y)x
has norm |sigmoid(θ·x) − y|·‖x‖, so clipping needs no (runs × n × p) tensor.  The data set is
:func:`mechanisms.dpsgd.data.make_training_data`; the audited ``dataset`` is an ``(m, 1)`` array of
canary weights in [0, 1]: each row adds one copy of the canary scaled by its weight (a weight-0 row
is an example with zero gradient), so ``scenarios.counting(1, n=0)`` gives the pairs "add the
canary" and "add a null example".

**Views** (``view=``): ``"updates"`` outputs s₁, …, s_T (what an adversary who sees every update
sees; equivalent to θ₁, …, θ_T), ``"final-model"`` θ_T, ``"final-loss"`` the final model's loss on
an :class:`~mechanisms.dpsgd.canary.InputCanary` (black-box).

**Claim**: ``ApproxDP(ε, δ)`` with ε the accountant's pessimistic estimate for
(q, σ, ``accountant_steps``, δ) (:mod:`mechanisms.dpsgd.accounting`).

**Exact truth**: with the ``"updates"`` view of a Dirac gradient canary, per-example clipping and
Poisson sampling, the data never touch the canary coordinate and the canary never touches the
data's, so the view is (data part, independent of the canary) × (the canary coordinate of T
subsampled Gaussian steps with sensitivity c = min(‖g‖, C) and noise s); adding the canary is
the worst pair, and the exact ε(δ) is that of the composed Poisson-subsampled Gaussian with noise
multiplier s/c, bracketed by dp-accounting's optimistic and pessimistic estimates
(:meth:`DPSGD.exact_epsilon_bracket`).  Everywhere else the truth is **unknown** and the exact
methods raise ``NotImplementedError`` (the faulty trainers of ``scenarios.faulty_cases`` say more).

The training-process options ``clipping``, ``noise``, ``sampling`` and ``accountant_steps`` exist
to model implementation mistakes (``scenarios.faulty_cases.FAULTY_TRAINERS``); their defaults
are the correct algorithm.

**Crafted training set** (``background=g``, a number in [−1, 1]): the n training examples are
replaced by examples whose gradient is the fixed vector g·C·u (u the canary's direction), whatever
θ, so every batch sum is known to the adversary apart from the canary's contribution.  This is
the white-box adversary who chose the whole training set (Nasr, Song, Thakurta, Papernot &
Carlini 2021), and the kind of dataset behind the lower bounds for shuffled batches of Chua,
Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang (ICML 2024).  Since ‖g·C·u‖ ≤ C, per-example
clipping leaves these gradients unchanged, so the accountant's claim covers this data set as any
other (:mod:`mechanisms.dpsgd.shuffle` has the law of the shuffled trainer's view).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional, Union

import numpy as np
from scipy import special

from ..claims import ApproxDP, Relation
from ..validation import (check_choice, check_dataset, check_finite_positive, check_int,
                         check_open_unit, check_size)
from .accounting import PoissonGaussianTruth, poisson_gaussian_epsilon
from .canary import GradientCanary, InputCanary, LikelihoodRatioSum, ProjectionSum
from .data import TrainingData, make_training_data
from .mlp import OneHiddenLayer
from .shuffle import ShuffledCanaryPair, ShuffledLikelihoodRatio

__all__ = ["DPSGD", "VIEWS", "SMALL_CONFIGURATION"]

VIEWS = ("updates", "final-model", "final-loss")
#: The small configuration of the benchmarks and the faulty trainers: accountant ε(1e-3) = 4.481
#: (δ = 1e-3 < 1/n keeps the claim meaningful and its events certifiable with 10⁵–10⁶ runs).
SMALL_CONFIGURATION = {"q": 0.5, "sigma": 1.0, "steps": 4, "clip": 1.0, "delta": 1e-3, "n": 50}
#: Elements of a (runs × examples) array processed at once: memory stays flat in ``size``.
BLOCK_ELEMENTS = 1 << 18


@dataclass(frozen=True, repr=False)
class DPSGD(PoissonGaussianTruth):
    """DP-SGD on logistic regression; see the module docstring.

    Parameters
    ----------
    q, sigma, steps, clip : sampling rate, noise multiplier, T, clip norm C.
    delta : the δ of the claim.
    learning_rate : η.
    n, features, data_seed : the generated data set (n examples, ``features`` features).
    canary : GradientCanary or InputCanary.
    view : "updates", "final-model" or "final-loss".
    clipping : "per-example" (correct) or "batch" (clip the batch's summed gradient).
    noise : "scaled" (σC, correct) or "unscaled" (σ, whatever C).
    sampling : "poisson" (correct) or "shuffle" (each epoch of round(1/q) steps partitions a random
        permutation into equal batches).
    accountant_steps : steps given to the accountant (default ``steps``).
    background : None (the logistic data set) or g in [−1, 1]: the n training examples all have the
        fixed gradient g·C·u (see the module docstring); needs a gradient canary.
    model : "logreg" (logistic regression) or "mlp" (one hidden layer of ``hidden`` tanh units,
        :mod:`mechanisms.dpsgd.mlp`; a Dirac canary is then the weight of hidden unit 0 on the
        canary input coordinate).
    hidden : hidden units of the "mlp" model.
    """

    q: float = 0.1
    sigma: float = 1.0
    steps: int = 10
    clip: float = 1.0
    delta: float = 1e-5
    learning_rate: float = 0.5
    n: int = 100
    features: int = 4
    data_seed: int = 20261123
    canary: Union[GradientCanary, InputCanary] = field(default_factory=GradientCanary)
    view: str = "updates"
    clipping: str = "per-example"
    noise: str = "scaled"
    sampling: str = "poisson"
    accountant_steps: Optional[int] = None
    background: Optional[float] = None
    model: str = "logreg"
    hidden: int = 8

    def __post_init__(self) -> None:
        object.__setattr__(self, "q", check_open_unit("q", self.q))
        object.__setattr__(self, "sigma", check_finite_positive("sigma", self.sigma))
        object.__setattr__(self, "steps", check_int("steps", self.steps, minimum=1))
        object.__setattr__(self, "clip", check_finite_positive("clip", self.clip))
        object.__setattr__(self, "delta", check_open_unit("delta", self.delta))
        object.__setattr__(self, "learning_rate", check_finite_positive("learning_rate", self.learning_rate))
        check_choice("view", self.view, VIEWS)
        check_choice("clipping", self.clipping, ("per-example", "batch"))
        check_choice("noise", self.noise, ("scaled", "unscaled"))
        check_choice("sampling", self.sampling, ("poisson", "shuffle"))
        check_choice("model", self.model, ("logreg", "mlp"))
        object.__setattr__(self, "hidden", check_int("hidden", self.hidden, minimum=1))
        object.__setattr__(self, "_mlp", OneHiddenLayer(self.hidden) if self.model == "mlp" else None)
        if not isinstance(self.canary, (GradientCanary, InputCanary)):
            raise TypeError(f"`canary` must be a GradientCanary or an InputCanary, got {self.canary!r}")
        if self.view == "final-loss" and not isinstance(self.canary, InputCanary):
            raise ValueError("view='final-loss' needs an InputCanary (a gradient canary has no loss), "
                             f"got {self.canary!r}")
        if self.background is not None:
            if isinstance(self.background, bool) or not isinstance(self.background, (int, float)) \
                    or not -1.0 <= self.background <= 1.0:
                raise ValueError(f"`background` must be None or a number in [-1, 1], got {self.background!r}")
            if not isinstance(self.canary, GradientCanary):
                raise ValueError("`background` (a crafted training set of gradients) needs a GradientCanary, "
                                 f"got {self.canary!r}")
            object.__setattr__(self, "background", float(self.background))
        steps = self.steps if self.accountant_steps is None else self.accountant_steps
        object.__setattr__(self, "accountant_steps", check_int("accountant_steps", steps, minimum=1))
        data = make_training_data(self.n, self.features, seed=self.data_seed)
        object.__setattr__(self, "_data", data)
        unit = np.zeros(self.parameter_count)
        if isinstance(self.canary, GradientCanary):
            unit = self.canary.unit(data.x, data.y) if self._mlp is None else self._mlp_unit(data)
        else:
            object.__setattr__(self, "_canary_x", self.canary.features(data.width))
        object.__setattr__(self, "_unit", unit)
        fixed = None if self.background is None else self.background * self.clip * unit
        object.__setattr__(self, "_layout", _Layout(data.x, data.y, np.linalg.norm(data.x, axis=1),
                                                     unit[None, :], fixed))

    # -- what the audit engine sees --------------------------------------------------------------
    relation = Relation.ADD_REMOVE
    #: Row width of the audited dataset (canary weights), as for the reference mechanisms.
    d = 1
    row_dim = 1

    @property
    def data(self) -> TrainingData:
        return self._data

    @property
    def claim(self) -> ApproxDP:
        """The accountant's (ε, δ) for (q, σ, accountant_steps, δ): a pessimistic estimate."""
        return ApproxDP(self.accountant_epsilon, self.delta, Relation.ADD_REMOVE)

    @property
    def accountant_epsilon(self) -> float:
        return poisson_gaussian_epsilon(self.q, self.sigma, self.accountant_steps, self.delta)

    @property
    def noise_std(self) -> float:
        """s: the standard deviation of the noise added to each coordinate of s_t."""
        return self.sigma * (self.clip if self.noise == "scaled" else 1.0)

    @property
    def canary_shift(self) -> float:
        """c: how far one inclusion of a gradient canary moves the update along its direction
        under per-example clipping (min(‖g‖, C))."""
        if not isinstance(self.canary, GradientCanary):
            raise ValueError("the canary shift is defined for gradient canaries")
        return min(self.canary.norm, self.clip)

    @property
    def parameter_count(self) -> int:
        """P, the number of model parameters (p for logistic regression, h·p + h for the network)."""
        return self.data.width if self._mlp is None else self._mlp.size(self.data.width)

    @property
    def output_dim(self) -> int:
        return {"updates": self.steps * self.parameter_count, "final-model": self.parameter_count,
                "final-loss": 1}[self.view]

    def _mlp_unit(self, data: TrainingData) -> np.ndarray:
        """The gradient canary's unit direction in the network's parameter space."""
        size, direction = self._mlp.size(data.width), self.canary.direction
        if isinstance(direction, str) and direction == "dirac":
            u = np.zeros(size)
            u[self._mlp.dirac_index(data.width)] = 1.0
            return u
        opposing = None
        if isinstance(direction, str):  # "opposing": minus the data's summed gradient at θ₀
            theta = self._mlp.initial(data.width)[None, :]
            opposing = -self._mlp.clipped_sum(theta, data.x, data.y, np.linalg.norm(data.x, axis=1),
                                              np.ones((1, data.n)), None)[0]
        return self.canary.normalised(opposing, size)

    @property
    def name(self) -> str:
        faults = [text for text, on in (("batch clipping", self.clipping == "batch"),
                                        ("noise σ not σC", self.noise == "unscaled"),
                                        ("shuffling", self.sampling == "shuffle"),
                                        (f"accountant T={self.accountant_steps}",
                                         self.accountant_steps != self.steps)) if on]
        tag = f", {'; '.join(faults)}" if faults else ""
        model = "logreg" if self._mlp is None else f"mlp h={self.hidden}"
        data = model if self.background is None else f"{model}, crafted data {self.background:g}·C·u"
        return (f"DPSGD[{data}, {self.view}](q={self.q:g}, σ={self.sigma:g}, T={self.steps}, "
                f"C={self.clip:g}{tag})")

    def __repr__(self) -> str:
        return self.name

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        weights = check_dataset(dataset, 1)[:, 0]
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        out = np.empty((size, self.output_dim))
        block = max(1, BLOCK_ELEMENTS // (self.n + weights.size))
        for start in range(0, size, block):
            stop = min(size, start + block)
            out[start:stop] = self._train(self._layout._replace(units=np.tile(self._unit, (weights.size, 1))),
                                          weights, stop - start, rng, self.view)
        return out

    # -- the scores of the gradient-canary adversary --------------------------------------------
    def projection_score(self) -> ProjectionSum:
        """Σ_t ⟨s_t, u⟩ for the ``"updates"`` view of a gradient canary."""
        return ProjectionSum(tuple(self._gradient_unit()), self.steps)

    def likelihood_ratio_score(self) -> LikelihoodRatioSum:
        """The Dirac canary's log-likelihood ratio (see :class:`LikelihoodRatioSum`)."""
        return LikelihoodRatioSum(tuple(self._gradient_unit()), self.steps, self.q,
                                  self.canary_shift, self.noise_std)

    def shuffled_pair(self) -> ShuffledCanaryPair:
        """The law of the canary coordinate under "no canary" and "add the canary" with shuffled
        batches (:mod:`mechanisms.dpsgd.shuffle`); the data's gradient along u is ``background``·C
        (0 for the logistic data and a Dirac canary)."""
        unit = self._gradient_unit()
        if self.sampling != "shuffle" or self.clipping != "per-example":
            raise ValueError("the shuffled pair needs sampling='shuffle' and per-example clipping, got "
                             f"sampling={self.sampling!r}, clipping={self.clipping!r}")
        dirac = isinstance(self.canary.direction, str) and self.canary.direction == "dirac"
        if self.background is None and not (dirac or (self._mlp is None and np.allclose(self.data.x @ unit, 0.0))):
            raise ValueError("with the logistic data set the shuffled pair is known for the Dirac "
                             f"canary only, got {self.canary.label}")
        return ShuffledCanaryPair.for_trainer(self.n, round(1.0 / self.q), self.steps,
                                              background=self.background or 0.0, shift=self.canary_shift,
                                              clip=self.clip, noise=self.noise_std)

    def shuffled_likelihood_ratio_score(self) -> ShuffledLikelihoodRatio:
        """The log-likelihood ratio of :meth:`shuffled_pair` as a statistic of the updates."""
        return ShuffledLikelihoodRatio(tuple(self._gradient_unit()), self.shuffled_pair())

    def _gradient_unit(self) -> np.ndarray:
        if self.view != "updates" or not isinstance(self.canary, GradientCanary):
            raise ValueError("the projection scores need view='updates' and a gradient canary")
        return self._unit

    # -- exact truth -----------------------------------------------------------------------------
    def _exact_multiplier(self, relation: Any) -> float:
        if relation is not None and str(relation) != Relation.ADD_REMOVE.value:
            raise NotImplementedError(f"{self.name}: only the add-remove relation is modelled")
        known = (self.view == "updates" and isinstance(self.canary, GradientCanary)
                 and isinstance(self.canary.direction, str) and self.canary.direction == "dirac"
                 and self.clipping == "per-example" and self.sampling == "poisson"
                 and self.background is None)
        if not known:
            raise NotImplementedError(f"exact privacy of {self.name} with {self.canary.label} is unknown")
        return self.noise_std / self.canary_shift

    @property
    def exact_sample_rate(self) -> float:
        """q of the composed Poisson-subsampled Gaussian that is this trainer's exact truth."""
        return self.q

    # -- one-run auditing: many Dirac canaries in one training run -------------------------------
    def one_run_scores(self, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """One training run with ``m`` gradient canaries, each included with probability ½.

        Canary i is a Dirac canary on its own extra coordinate (the data set's canary column is
        repeated m times, zero for every real example) with this mechanism's canary norm; its score
        is the projection sum Σ_t s_t[i] on that coordinate (Steinke, Nasr & Jagielski 2023, the
        white-box gradient-space setting).  Returns ``(scores, included)``, both of shape (m,).
        """
        m = check_int("m", m, minimum=1)
        if not isinstance(self.canary, GradientCanary):
            raise ValueError("one-run auditing here uses gradient canaries; the mechanism has "
                             f"{self.canary.label}")
        if self.background is not None or self._mlp is not None:
            raise ValueError("one-run auditing is implemented for logistic regression on the logistic "
                             f"data set only, got model={self.model!r}, background={self.background!r}")
        data = self.data
        x = np.concatenate([data.x[:, :-1], np.zeros((data.n, m))], axis=1)
        units = np.zeros((m, x.shape[1]))
        units[np.arange(m), data.width - 1 + np.arange(m)] = 1.0
        included = rng.random(m) < 0.5
        layout = _Layout(x, data.y, np.linalg.norm(x, axis=1), units)
        updates = self._train(layout, included.astype(np.float64), 1, rng, "updates")
        scores = updates.reshape(self.steps, -1)[:, data.width - 1:].sum(axis=0)
        return scores, included

    # -- one training run per row of the block ---------------------------------------------------
    def _train(self, layout: "_Layout", weights: np.ndarray, runs: int, rng: np.random.Generator,
               view: str) -> np.ndarray:
        x = layout.x
        n = x.shape[0]
        width = x.shape[1] if self._mlp is None else self._mlp.size(x.shape[1])
        m = weights.size
        theta = (np.zeros((runs, width)) if self._mlp is None
                 else np.tile(self._mlp.initial(x.shape[1]), (runs, 1)))
        updates = np.empty((runs, self.steps, width)) if view == "updates" else None
        batches = round(1.0 / self.q)
        batch_of = None
        for t in range(self.steps):
            if self.sampling == "poisson":
                mask = rng.random((runs, n + m)) < self.q
            else:
                if t % batches == 0:  # a new epoch: a random permutation cut into equal batches
                    ranks = np.argsort(np.argsort(rng.random((runs, n + m)), axis=1), axis=1)
                    batch_of = ranks * batches // (n + m)
                mask = batch_of == t % batches
            total = self._gradient_sum(layout, theta, mask, weights)
            total += self.noise_std * rng.standard_normal((runs, width))
            if updates is not None:
                updates[:, t] = total
            theta -= (self.learning_rate / (self.q * n)) * total
        if updates is not None:
            return updates.reshape(runs, -1)
        if view == "final-model":
            return theta
        output = theta @ self._canary_x if self._mlp is None else self._mlp.output(theta, self._canary_x[None, :])[:, 0]
        margin = (2.0 * self.canary.y - 1.0) * output
        return np.logaddexp(0.0, -margin)[:, None]

    def _gradient_sum(self, layout: "_Layout", theta: np.ndarray, mask: np.ndarray,
                      weights: np.ndarray) -> np.ndarray:
        """Σ over the batch of (clipped) gradients of data and canary rows, shape (runs, width)."""
        x, y = layout.x, layout.y
        n = x.shape[0]
        per_example = self.clipping == "per-example"
        if layout.fixed is not None:  # crafted data: every example's gradient is the same vector,
            # of norm ≤ C, so clipping leaves it unchanged
            total = mask[:, :n].sum(axis=1, dtype=np.float64)[:, None] * layout.fixed[None, :]
        elif self._mlp is not None:
            total = self._mlp.clipped_sum(theta, x, y, layout.x_norm, mask[:, :n],
                                          self.clip if per_example else None)
        else:
            residual = special.expit(theta @ x.T) - y  # gradient of example i is residual_i · x_i
            if per_example:
                residual = residual * np.minimum(1.0, self.clip / np.maximum(np.abs(residual) * layout.x_norm, 1e-300))
            total = (residual * mask[:, :n]) @ x
        if weights.size:
            total += self._canary_sum(layout, theta, mask[:, n:], weights, per_example)
        if not per_example:
            norm = np.linalg.norm(total, axis=1, keepdims=True)
            total *= np.minimum(1.0, self.clip / np.maximum(norm, 1e-300))
        return total

    def _canary_sum(self, layout, theta, mask, weights, clipped) -> np.ndarray:
        if isinstance(self.canary, GradientCanary):
            norms = weights * self.canary.norm  # row i's gradient is w_i · norm · units[i]
            scale = np.minimum(norms, self.clip) if clipped else norms
            return (mask * scale) @ layout.units
        xc = self._canary_x
        if self._mlp is not None:  # row i's gradient is w_i · g_r, g_r the canary's gradient in run r
            g = self._mlp.example_gradient(theta, xc, self.canary.y)  # (runs, P)
            coef = np.broadcast_to(weights[None, :], mask.shape)
            if clipped:
                norm = coef * np.linalg.norm(g, axis=1, keepdims=True)
                coef = coef * np.minimum(1.0, self.clip / np.maximum(norm, 1e-300))
            return (coef * mask).sum(axis=1)[:, None] * g
        residual = special.expit(theta @ xc) - self.canary.y  # (runs,)
        coef = weights[None, :] * residual[:, None]  # (runs, m)
        if clipped:
            norm = np.abs(coef) * np.linalg.norm(xc)
            coef = coef * np.minimum(1.0, self.clip / np.maximum(norm, 1e-300))
        return (coef * mask).sum(axis=1)[:, None] * xc


class _Layout(NamedTuple):
    """The training rows: features (n, p), labels, feature norms, the canaries' unit gradients
    (m, p) (row i for canary row i; only gradient canaries use them), and the fixed gradient (p,)
    of every training example of a crafted data set (None: the logistic gradients)."""

    x: np.ndarray
    y: np.ndarray
    x_norm: np.ndarray
    units: np.ndarray
    fixed: Optional[np.ndarray] = None
