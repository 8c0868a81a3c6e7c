"""A PyTorch/Opacus training run as a mechanism under audit.

:class:`TorchTraining` is ``mechanism(dataset, size, rng) -> (size, k)``: each of the ``size``
outputs is one independent training of a fresh model (a model factory's output, wrapped by
:func:`~mechanisms.training.probe.probed`) on the training set plus the audited ``dataset``'s
canary rows, by a training function (:mod:`mechanisms.training.loops`: Opacus by default, a
faulty one from :mod:`mechanisms.zoo.trainers`, or the user's own), and k is what the adversary
sees or scores:

- ``view="updates"`` (a :class:`~mechanisms.training.canaries.DiracCanary`, white box): for each
  of the ``observed_steps`` parameter updates, the canary coordinate's update in units of the
  noisy gradient sum, v_t = −(B/η)·Δw_t[0], and the log mean square of the other probe
  coordinates' v_t (pure noise in a correct trainer: the energy that a data-dependent scale of the
  update shows); ``score=`` reduces them to one number fixed in advance: ``"sum"`` Σ_t v_t
  (the projection sum), ``"lr"`` the Dirac canary's log-likelihood ratio
  Σ_t log(1 − q + q·exp((C v_t − C²/2)/(σC)²)), ``"energy"`` the sum of the log mean squares;
- ``view="final-loss"``, ``"final-logit"`` or ``"final-margin"`` (an
  :class:`~mechanisms.training.canaries.InputCanary`, black box): the final model's cross-entropy
  loss, the canary class's logit, or its margin over the next class, in float64 and in forms that
  do not saturate (:mod:`mechanisms.training.scores`); ``score=`` a callable
  ``(logits (k, K), labels (k,)) -> (k,)`` replaces them with the user's own score.

The audited ``dataset`` is an ``(m, 1)`` array of canary weights, as for
:class:`mechanisms.dpsgd.DPSGD`: ``scenarios.counting(1, n=0)`` gives "add the canary" and "add a
null example" (a row with zero gradient).

**Claim**: the named accountant's (:mod:`mechanisms.training.accountants`) for the sample rate q
the user states (``sample_rate_claimed``) or Opacus's 1/⌈n/B⌉ of the training set without
canaries, σ, the configured T and ``delta``.

**Exact truth**: with the ``"updates"`` view of a Dirac canary on the user's data (no crafted
rows), the canary coordinate is touched by nothing but the canary and the noise, so a trainer with
Poisson sampling, per-example clipping and noise σ_x·C per coordinate has the exact ε(δ) of the
composed Poisson-subsampled Gaussian at noise multiplier σ_x; a training function that knows its
σ_x carries it as ``train.exact_multiplier(config)`` (the correct Opacus trainer: σ).  Everywhere
else the truth is **unknown** and the exact methods raise ``NotImplementedError``.

Seeding: run i draws two seeds from ``rng``; the first seeds torch's global generator (model
initialisation), the second the ``torch.Generator`` given to the training function.  torch uses one
thread inside a call.  The same ``rng`` gives the same outputs, whatever the number of workers.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

import numpy as np

from ..claims import Relation
from ..dpsgd.accounting import PoissonGaussianTruth, poisson_gaussian_epsilon
from ..dpsgd.canary import LikelihoodRatioSum, ProjectionSum
from ..validation import check_choice, check_dataset, check_int, check_open_unit, check_size
from ._extra import require_torch
from .accountants import ACCOUNTANT_NAMES, ACCOUNTANTS, accountant_claim, opacus_sample_rate
from .canaries import DiracCanary, InputCanary, canary_from
from .data import TrainingSet, training_set
from .loops import DPConfig, opacus_sgd
from .probe import model_factory, probed
from .scores import canary_score

__all__ = ["TorchTraining", "VIEWS", "SCORES"]

VIEWS = ("updates", "final-loss", "final-logit", "final-margin")
SCORES = ("updates", "sum", "lr", "energy")
#: Added to the mean square before the log, so that an un-noised probe gives a finite energy.
ENERGY_FLOOR = 1e-30


@dataclass(frozen=True, repr=False)
class TorchTraining(PoissonGaussianTruth):
    """A PyTorch/Opacus training as a mechanism; see the module docstring.

    Parameters
    ----------
    noise_multiplier, max_grad_norm, batch_size, steps, learning_rate : the DP-SGD configuration
        (:class:`~mechanisms.training.loops.DPConfig`).
    delta : the δ of the claim.
    accountant : "rdp" (Opacus's default), "prv" (Opacus) or "pld" (dp-accounting).
    data : "synthetic", "digits" or a :class:`~mechanisms.training.data.TrainingSet`; ``n`` and
        ``data_seed`` choose the rows of a named one.
    model : "logreg", "mlp" or a factory ``(features, classes) -> torch.nn.Module``.
    canary : "dirac", "input", a canary object, or a table ``{"kind": "dirac", ...}`` of its options.
    view : "updates" (Dirac canary), or "final-loss", "final-logit", "final-margin" (input canary);
        default "updates" or "final-loss" by canary.
    score : with ``view="updates"``: "updates" (the whole view), "sum", "lr", "energy", or a
        callable mapping the (1, 2·observed_steps) view to one score; with a final view: a
        callable ``(logits (k, K) float64, labels (k,)) -> (k,)`` scoring the final model.
    train : the training function (default :func:`~mechanisms.training.loops.opacus_sgd`).
    observed_steps : how many weight updates the training function makes (default ``steps``;
        a faulty trainer may make more than the accountant is told).
    label : a name for reports (default: the training function's ``label`` or name).
    sample_rate_claimed : the Poisson rate q the accountant is given, as you state it (default:
        Opacus's 1/⌈n/B⌉ for the training set without canaries).
    """

    noise_multiplier: float = 1.0
    max_grad_norm: float = 1.0
    batch_size: int = 25
    steps: int = 4
    learning_rate: float = 0.5
    delta: float = 1e-3
    accountant: str = "rdp"
    data: Union[str, TrainingSet] = "synthetic"
    n: int = 49
    data_seed: int = 0
    model: Union[str, Callable] = "logreg"
    canary: Any = "dirac"
    view: Optional[str] = None
    score: Union[str, Callable] = "updates"
    train: Callable = opacus_sgd
    observed_steps: Optional[int] = None
    label: Optional[str] = None
    sample_rate_claimed: Optional[float] = None

    def __post_init__(self) -> None:
        require_torch("TorchTraining")
        if self.sample_rate_claimed is not None:
            object.__setattr__(self, "sample_rate_claimed", check_open_unit("sample_rate_claimed", self.sample_rate_claimed))
        config = DPConfig(self.noise_multiplier, self.max_grad_norm, self.batch_size, self.steps,
                          self.learning_rate)
        object.__setattr__(self, "_config", config)
        object.__setattr__(self, "delta", check_open_unit("delta", self.delta))
        check_choice("accountant", self.accountant, ACCOUNTANTS)
        canary = self.canary
        if isinstance(canary, dict):
            options = dict(canary)
            kind = options.pop("kind", "dirac")
            canary = {"dirac": DiracCanary, "input": InputCanary}.get(kind)
            if canary is None:
                raise ValueError(f"`canary` table's kind must be 'dirac' or 'input', got {kind!r}")
            canary = canary(**options)
        object.__setattr__(self, "canary", canary_from(canary))
        dirac = isinstance(self.canary, DiracCanary)
        view = self.view or ("updates" if dirac else "final-loss")
        check_choice("view", view, VIEWS)
        if (view == "updates") != dirac:
            raise ValueError(f"view={view!r} needs {'a DiracCanary' if view == 'updates' else 'an InputCanary'}, "
                             f"got {self.canary!r}")
        object.__setattr__(self, "view", view)
        if not callable(self.score):
            check_choice("score", self.score, SCORES)
        if isinstance(self.score, str) and self.score != "updates" and view != "updates":
            raise ValueError(f"score={self.score!r} needs view='updates', got view={view!r}")
        if not callable(self.train):
            raise TypeError(f"`train` must be a training function (model, data, config, *, generator), "
                            f"got {self.train!r}")
        observed = self.steps if self.observed_steps is None else self.observed_steps
        object.__setattr__(self, "observed_steps", check_int("observed_steps", observed, minimum=1))
        object.__setattr__(self, "_factory", model_factory(self.model))
        data = training_set(self.data, check_int("n", self.n, minimum=1), check_int("data_seed", self.data_seed, minimum=0))
        object.__setattr__(self, "_data", data)
        background = dirac and self.canary.background is not None
        rows = data.n
        if background:
            x, y = self.canary.crafted_rows(rows, data.features, data.classes, self.max_grad_norm)
        else:
            width = self.canary.probe + 1 if dirac else 2
            x = np.concatenate([data.x, np.zeros((rows, width), dtype=np.float32)], axis=1)
            y = data.y
        object.__setattr__(self, "_rows", (x, y))

    # -- what the audit engine sees --------------------------------------------------------------
    relation = Relation.ADD_REMOVE
    d = 1
    row_dim = 1

    @property
    def config(self) -> DPConfig:
        return self._config

    @property
    def training_data(self) -> TrainingSet:
        return self._data

    @property
    def sample_rate(self) -> float:
        """The accountant's q: ``sample_rate_claimed``, or Opacus's 1/⌈n/B⌉ for the training set
        without canaries."""
        if self.sample_rate_claimed is not None:
            return self.sample_rate_claimed
        return opacus_sample_rate(self._rows[0].shape[0], self.batch_size)

    @property
    def claim(self):
        """The named accountant's claim for (q, σ, T, δ)."""
        return accountant_claim(self.accountant, self.sample_rate, self.noise_multiplier, self.steps, self.delta)

    @property
    def output_dim(self) -> int:
        if self.view != "updates" or not (isinstance(self.score, str) and self.score == "updates"):
            return 1
        return 2 * self.observed_steps

    @property
    def vectorized(self) -> bool:
        """False: each output row is its own training run, so no random call's leading dimension
        stands for the rows (a gray-box replay must not scale noise per row, :mod:`audit.graybox`)."""
        return False

    @property
    def name(self) -> str:
        trainer = self.label or getattr(self.train, "label", getattr(self.train, "__name__", "train"))
        model = self.model if isinstance(self.model, str) else getattr(self.model, "__name__", "model")
        return (f"TorchTraining[{trainer}, {model}, {self._data.name.split('[')[0]} n={self._rows[0].shape[0]}, "
                f"{self.canary.label}, {self.view}](q={self.sample_rate:g}{' given' if self.sample_rate_claimed else ''}, σ={self.noise_multiplier:g}, "
                f"T={self.steps}, C={self.max_grad_norm:g}; claim: {ACCOUNTANT_NAMES[self.accountant]})")

    def __repr__(self) -> str:
        return self.name

    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        weights = check_dataset(dataset, 1)[:, 0]
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        if np.any((weights < 0) | (weights > 1)):
            raise ValueError(f"canary weights must lie in [0, 1], got {weights.tolist()!r}")
        x, y = self._with_canaries(weights)
        seeds = rng.integers(0, 2**62, size=(size, 2))
        out = np.empty((size, self.output_dim))
        for i in range(size):
            out[i] = self._one_run(x, y, seeds[i])
        return out

    # -- statistics of the "updates" view, fixed before any draw ----------------------------------
    def projection_score(self) -> ProjectionSum:
        """Σ_t v_t on the canary coordinate."""
        self._need_updates()
        return ProjectionSum((1.0, 0.0), self.observed_steps)

    def likelihood_ratio_score(self) -> LikelihoodRatioSum:
        """The Dirac canary's log-likelihood ratio under the configuration's q, C and σC."""
        self._need_updates()
        return LikelihoodRatioSum((1.0, 0.0), self.observed_steps, self.sample_rate, self.max_grad_norm,
                                  self.noise_multiplier * self.max_grad_norm)

    def energy_score(self) -> ProjectionSum:
        """Σ_t log mean square of the noise-only probe coordinates."""
        self._need_updates()
        return ProjectionSum((0.0, 1.0), self.observed_steps)

    def _need_updates(self) -> None:
        if self.view != "updates" or not (isinstance(self.score, str) and self.score == "updates"):
            raise ValueError(f"the update statistics need view='updates' and score='updates', got "
                             f"view={self.view!r}, score={self.score!r}")

    # -- exact truth -----------------------------------------------------------------------------
    def _exact_multiplier(self, relation: Any) -> float:
        if relation is not None and str(relation) != Relation.ADD_REMOVE.value:
            raise NotImplementedError(f"{self.name}: only the add-remove relation is modelled")
        rule = getattr(self.train, "exact_multiplier", None)
        known = (rule is not None and self.view == "updates" and isinstance(self.canary, DiracCanary)
                 and self.canary.background is None and self.canary.norm >= self.max_grad_norm)
        if not known:
            raise NotImplementedError(f"exact privacy of {self.name} is unknown")
        return float(rule(self._config))

    @property
    def exact_sample_rate(self) -> float:
        """q of the composed Poisson-subsampled Gaussian that is this trainer's exact truth: Opacus's
        1/⌈n/B⌉, whatever q the claim is given."""
        return opacus_sample_rate(self._rows[0].shape[0], self.batch_size)

    # -- one-run auditing --------------------------------------------------------------------------
    def one_run_scores(self, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """One training with ``m`` canaries, each included with probability ½; ``(scores, included)``.

        The coins are drawn first.  Canary i enters the training set if its coin says so and is
        replaced by a *null row* (a flagged row of zero gradient) otherwise, so the training set
        has n + m rows whatever the coins: Opacus's sample rate q = 1/⌈(n + m)/B⌉
        (:meth:`one_run_sample_rate`) depends on none of them, and a null row, Poisson-sampled or
        not, adds nothing to any update, so each canary meets the add-remove neighbour at that q.

        - Dirac canaries (white box, Steinke, Nasr & Jagielski 2023, gradient canaries): canary i
          has its own probe coordinate (the probe is widened to m + 1 coordinates); its score is
          Σ_t v_t[i], the sum of its coordinate's updates.  In a trainer with per-example clipping
          and noise independent across coordinates the canaries do not interfere.
        - Input canaries (black box, last iterate): the m examples of
          :meth:`~mechanisms.training.canaries.InputCanary.one_run_examples` drawn from ``rng``
          after the coins; canary i's score is minus the final model's loss on it (``"final-loss"``),
          its logit or margin, or the user's score.  They share the model, so they interfere.

        Returns
        -------
        scores : (m,) float array, higher = more likely included.
        included : (m,) bool array, the coins.
        """
        m = check_int("m", m, minimum=1)
        if isinstance(self.canary, DiracCanary) and self.canary.background is not None:
            raise ValueError(f"one-run auditing needs canaries on the user's data, got {self.canary!r}")
        included = rng.random(m) < 0.5
        data = self._data
        if isinstance(self.canary, DiracCanary):
            wide = type(self)(**{**self._fields(), "canary": DiracCanary(self.canary.norm, m + 1)})
            x, y = wide._with_canaries(included.astype(np.float64), coordinates=np.arange(m))
            updates = wide._train(x, y, rng.integers(0, 2**62, size=2))
            return updates[:, :m].sum(axis=0), included
        examples, labels = self.canary.one_run_examples(m, data.features, data.classes, rng)
        base_x, base_y = self._rows
        cx = np.zeros((m, base_x.shape[1]), dtype=np.float32)
        cx[included, : data.features] = examples[included]
        cx[~included, -1] = 1.0  # null rows: flagged, zero probe input, zero gradient
        cy = np.where(included, labels, 0).astype(np.int64)
        scores = self._train(np.concatenate([base_x, cx]), np.concatenate([base_y, cy]),
                             rng.integers(0, 2**62, size=2), examples=(examples, labels))
        return (-scores if self.view == "final-loss" and not callable(self.score) else scores), included

    def one_run_sample_rate(self, m: int) -> float:
        """Opacus's q in :meth:`one_run_scores` with ``m`` canaries: 1/⌈(n + m)/B⌉."""
        return opacus_sample_rate(self._rows[0].shape[0] + check_int("m", m, minimum=1), self.batch_size)

    def one_run_claim(self, m: int):
        """The accountant's claim for each canary of :meth:`one_run_scores` (q of
        :meth:`one_run_sample_rate`, σ, T, ``delta``)."""
        return accountant_claim(self.accountant, self.one_run_sample_rate(m), self.noise_multiplier, self.steps,
                                self.delta)

    def one_run_epsilon(self, m: int, delta: float) -> float:
        """Exact ε(δ) of each Dirac canary in :meth:`one_run_scores`: the composed
        Poisson-subsampled Gaussian at q of :meth:`one_run_sample_rate` and the trainer's exact
        noise multiplier (dp-accounting's pessimistic PLD); ``NotImplementedError`` where the
        truth is unknown (as :meth:`epsilon_for_delta`)."""
        return poisson_gaussian_epsilon(self.one_run_sample_rate(m), self._exact_multiplier(None), self.steps,
                                        check_open_unit("delta", delta))

    # -- one training ------------------------------------------------------------------------------
    def _fields(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def _with_canaries(self, weights: np.ndarray, coordinates: Optional[np.ndarray] = None):
        data, (x, y) = self._data, self._rows
        if isinstance(self.canary, DiracCanary):
            cx, cy = self.canary.rows(weights, data.features, data.classes, coordinates)
        else:
            if np.any((weights > 0) & (weights < 1)):
                raise ValueError(f"an input canary's weights must be 0 (a null example) or 1, got {weights.tolist()!r}")
            example, label = self.canary.example(data.features, data.classes)
            cx = np.zeros((weights.size, x.shape[1]), dtype=np.float32)
            cy = np.zeros(weights.size, dtype=np.int64)
            real = weights == 1
            cx[real, : data.features] = example
            cy[real] = label
            cx[~real, -1] = 1.0  # a null example: a flagged row with zero probe input has zero gradient
        return np.concatenate([x, cx]), np.concatenate([y, cy])

    def _one_run(self, x: np.ndarray, y: np.ndarray, seeds: np.ndarray) -> np.ndarray:
        if self.view != "updates":
            return self._train(x, y, seeds)
        updates = self._train(x, y, seeds)
        energy = np.log(np.mean(updates[:, 1:] ** 2, axis=1) + ENERGY_FLOOR)
        view = np.stack([updates[:, 0], energy], axis=1).reshape(1, -1)
        if callable(self.score):
            return np.asarray(self.score(view), dtype=np.float64).reshape(1)
        if self.score == "updates":
            return view[0]
        statistics = {"sum": ProjectionSum((1.0, 0.0), self.observed_steps),
                      "energy": ProjectionSum((0.0, 1.0), self.observed_steps),
                      "lr": LikelihoodRatioSum((1.0, 0.0), self.observed_steps, self.sample_rate,
                                               self.max_grad_norm, self.noise_multiplier * self.max_grad_norm)}
        return statistics[self.score](view)

    def _train(self, x: np.ndarray, y: np.ndarray, seeds: np.ndarray, examples=None) -> np.ndarray:
        """One training; the probe's per-step updates v_t (T, P), or the final model's score (loss,
        logit, margin or the user's) on the input canary, or on each of ``examples`` = (x (k, p),
        y (k,)) if given: shape (1,) or (k,)."""
        import torch  # optional extra: torch
        from torch.optim.optimizer import register_optimizer_step_post_hook

        torch.set_num_threads(1)
        torch.manual_seed(int(seeds[0]))
        generator = torch.Generator().manual_seed(int(seeds[1]))
        data = self._data
        width = self.canary.probe if isinstance(self.canary, DiracCanary) else 1
        model = probed(self._factory(data.features, data.classes), data.features, width, data.classes)
        weight = model.probe.weight
        records = [weight.detach().clone().reshape(-1)]

        def record(optimizer, args, kwargs):
            # After every step of an optimizer that updates the probe; an Opacus DPOptimizer is a
            # wrapper whose inner optimizer's step (the actual update) fires this hook itself.
            if hasattr(optimizer, "original_optimizer"):
                return
            if any(p is weight for group in optimizer.param_groups for p in group["params"]):
                records.append(weight.detach().clone().reshape(-1))

        tensors = torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y))
        handle = register_optimizer_step_post_hook(record)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.train(model, tensors, self._config, generator=generator)
        except Exception as exc:
            name = getattr(self.train, "__qualname__", repr(self.train))
            raise RuntimeError(f"training function {name} raised {type(exc).__name__}: {exc}") from exc
        finally:
            handle.remove()
        if self.view != "updates":
            if examples is None:
                example, label = self.canary.example(data.features, data.classes)
                examples = (example[None, :], np.array([label]))
            with torch.no_grad():
                logits = model.base(torch.from_numpy(np.ascontiguousarray(examples[0], dtype=np.float32)))
            score = self.score if callable(self.score) else self.view.removeprefix("final-")
            return canary_score(logits.numpy(), examples[1], score, where=f"{self.name}: the final model")
        if len(records) - 1 != self.observed_steps:
            raise ValueError(f"training function {getattr(self.train, '__qualname__', self.train)!r} made "
                             f"{len(records) - 1} weight updates, expected observed_steps={self.observed_steps}")
        weights = torch.stack(records).numpy().astype(np.float64)
        return -np.diff(weights, axis=0) * (self.batch_size / self.learning_rate)
