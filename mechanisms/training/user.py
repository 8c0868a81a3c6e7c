"""The training code people write, ``train(X, y, seed) -> model``, as a mechanism under audit.

:class:`UserTraining` wraps a user's training function of the common form: it takes the
features ``X`` (n, p) and labels ``y`` (n,) (numpy arrays or torch tensors, of the user's
dtypes), an integer ``seed`` from which it seeds whatever it likes (or nothing: a trainer that
calls ``torch.manual_seed(0)`` is audited as written), builds its own model, trains it with its
own loss (a one-logit BCE or a K-logit cross-entropy) and returns the trained model.  dpaudit
adds the canary row to the user's data, calls the function once per output, and reads one number
from the result:

- the **black-box views** (``view="margin"``, ``"logit"``, ``"loss"`` or ``score=`` the user's
  function of the logits): the final model's output on the canary, in float64 and in forms that
  do not saturate (:mod:`mechanisms.training.scores`).  The canary is the user's ``(x, label)``,
  or by default a *mislabelled outlier*: label c = the largest label, and
  x = x̄ + ``canary_scale``·r·u, where x̄ is the data's mean, r the largest distance of a row from
  it and u the unit vector from the mean of class c to x̄.  Its gradient pulls against the
  gradient of class c's rows, which is where a wrong clipping (the batch's sum, not each example)
  or too little noise shows most (Nasr, Song, Thakurta, Papernot & Carlini 2021, §4: mislabelled
  and crafted input canaries).
- the **white-box view** (``view="updates"``): dpaudit appends one zero column to X, which no
  real row uses, and the canary row is s = ``canary_scale`` on that column and 0 elsewhere, with
  label c.  During the call a Dirac probe (:mod:`mechanisms.training.watch`) makes every
  ``nn.Linear`` that reads p + 1 features output a constant 0 for the canary row, with its
  gradient routed into that layer's weight column of the extra feature only, so the canary
  never saturates; the column moves by the canary and the noise only.  The watch reads every
  write of that column from the model's parameters (at each forward call and each optimizer
  step), u_1, ..., u_T, and outputs the per-step projection Σ_t ⟨u_t, d_t⟩ on the direction d_t a
  descent step on the canary moves it (constant e_c − 1/K for a linear model; the canary's
  descent direction at the parameters before step t for a deeper one).  That works for any loop:
  one that steps a torch optimizer, an Opacus ``PrivacyEngine`` loop, or a ``torch.func``/``vmap``
  loop that writes its parameters back.  The model must take its input width from ``X``
  (``nn.Linear(X.shape[1], ...)``).
- the **trainer's own gradient canary**: a function with a ``grad_canary`` keyword
  (``train(X, y, seed, grad_canary=None)``) is given, in the world with the canary, a function
  ``grad_canary(params) -> list of tensors``: the canary's per-example gradient, zero but for
  −``canary_scale`` on the observed coordinate (a descent step moves it up), which the trainer
  treats as one more example of its batches (sampled, clipped and noised with them); in the
  world without it, ``None``.  The view is the per-step sum on that coordinate (d_t = e_c), and X gains the same zero
  column (no canary row is added, so the probe never fires).

- **crafted data** (``crafted=True``) and the **energy** and **shuffled** views
  (:mod:`mechanisms.training.crafted`): dpaudit replaces the user's n rows by n rows whose probed
  gradients oppose the canary's, so that a batch-level clipping shows its 2C in any view, the
  black-box margin included (the final model's output on the extra-column canary row); adds
  ``noise_columns`` zero columns that only the trainer's noise moves, whose update energy
  (``view="energy"``) exposes a normaliser that adding a row changes; and ``view="shuffled"``
  scores the per-step projections with the likelihood ratio of shuffled fixed-size batches.
- the **virtual** view (``view="virtual"``, ``physical_steps=k``; :mod:`mechanisms.training.virtual`):
  the per-logical-step likelihood ratio of k physical steps, each noised σC/√k and applied, read
  from the T·k writes of the canary column in units of the noise columns' scale (k = 1: the
  Poisson-subsampled Gaussian's per-step ratio, which a correct trainer meets).

The audited ``dataset`` is an ``(m, 1)`` array of 0/1 weights: each row of weight 1 adds one copy
of the canary, a row of weight 0 adds nothing (``scenarios.counting(1, n=0)``'s "add the canary").

**Claim** (exactly one): the user's own (``epsilon``, ``delta``) or ``mu``, labelled as theirs;
or an accountant's (:mod:`mechanisms.training.accountants`) for ``noise_multiplier`` σ, ``steps``
T, ``delta`` and Poisson rate q = ``sample_rate`` as the user states it, or derived from
``batch_size`` B as Opacus does, q = 1/⌈n/B⌉ for the n rows of the user's data.

**Exact truth**: unknown (no exact method: the report shows none).

Seeding: output i calls ``train`` with a seed drawn from ``rng`` (an int below 2³¹); torch uses one
thread inside a call.  The same ``rng`` gives the same outputs for a trainer that seeds itself
from ``seed`` and nothing else, whatever the number of workers.
"""

from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from ..claims import ApproxDP, GaussianDP, Relation
from ..validation import (check_choice, check_dataset, check_finite_positive, check_int, check_open_unit,
                          check_size)
from ._extra import require_torch
from .accountants import ACCOUNTANT_NAMES, ACCOUNTANTS, accountant_claim, opacus_sample_rate
from .crafted import crafted_rows, energy_view, shuffled_pair
from .scores import BLACK_BOX_SCORES, canary_score
from .virtual import virtual_steps_loss
from .watch import ParameterWatch

__all__ = ["UserTraining", "USER_VIEWS", "WHITE_BOX_VIEWS"]

#: The views that read the updates of the model's parameters (:mod:`.watch`, :mod:`.crafted`).
WHITE_BOX_VIEWS = ("updates", "energy", "shuffled", "virtual")
USER_VIEWS = BLACK_BOX_SCORES + WHITE_BOX_VIEWS
#: The noise columns of the views that read them (:mod:`.crafted`).
NOISE_COLUMNS = 1024
#: The views that read the noise columns.
NOISY_VIEWS = ("energy", "shuffled", "virtual")


@dataclass(frozen=True, repr=False)
class UserTraining:
    """A user's ``train(X, y, seed) -> model`` as a mechanism; see the module docstring.

    Parameters
    ----------
    train : the training function ``train(X, y, seed) -> model`` (optionally with a
        ``grad_canary=None`` keyword).
    X, y : the user's features (n, p) and labels (n,), numpy arrays or torch tensors.
    epsilon, delta : the user's own (ε, δ) claim; or ``delta`` alone with an accountant's claim.
    mu : the user's own μ-GDP claim.
    noise_multiplier, steps : σ and T of the accountant's claim.
    sample_rate : the Poisson rate q the accountant is given; or ``batch_size``: q = 1/⌈n/B⌉.
    accountant : "rdp" (Opacus's default), "prv" or "pld".
    view : "margin" (default), "logit", "loss" (black box) or "updates", "energy", "shuffled",
        "virtual" (white box; :mod:`mechanisms.training.crafted` for "energy" and "shuffled",
        :mod:`mechanisms.training.virtual` for "virtual").
    score : a callable ``(logits (k, K) float64, labels (k,)) -> (k,)`` replacing the black-box view.
    canary : ``(x, label)`` for the black-box views (default: the mislabelled outlier).
    canary_scale : the default canary's distance in units of the data's radius (black box, default
        10), or its value s on the extra column (white box, default 1e4: far above any clip norm).
    label : a name for reports (default: the training function's name).
    crafted : replace your n rows by n crafted rows whose gradients oppose the canary's ((K − 1)·B + 1
        rows for the shuffled view, as many batches; :mod:`mechanisms.training.crafted`); the canary
        is then the extra-column row in every view.
    noise_columns : zero columns that only the trainer's noise moves (default 1024 for the
        "energy", "shuffled" and "virtual" views, else 0).
    physical_steps : k, the physical steps (parameter writes) per logical step of
        ``view="virtual"`` (default 1).
    """

    train: Callable
    X: Any
    y: Any
    epsilon: Optional[float] = None
    delta: Optional[float] = None
    mu: Optional[float] = None
    noise_multiplier: Optional[float] = None
    steps: Optional[int] = None
    sample_rate: Optional[float] = None
    batch_size: Optional[int] = None
    accountant: str = "rdp"
    view: str = "margin"
    score: Optional[Callable] = None
    canary: Optional[tuple] = None
    canary_scale: Optional[float] = None
    label: Optional[str] = None
    crafted: bool = False
    noise_columns: Optional[int] = None
    physical_steps: Optional[int] = None

    def __post_init__(self) -> None:
        require_torch("UserTraining")
        if not callable(self.train):
            raise TypeError(f"`train` must be a function train(X, y, seed) -> model, got {self.train!r}")
        check_choice("view", self.view, USER_VIEWS)
        if self.score is not None and (not callable(self.score) or self.view in WHITE_BOX_VIEWS):
            raise ValueError(f"`score` must be a callable (logits, labels) -> scores, with a black-box view, "
                             f"got score={self.score!r}, view={self.view!r}")
        if not isinstance(self.crafted, bool):
            raise TypeError(f"`crafted` must be True or False, got {self.crafted!r}")
        if self.crafted and self.canary is not None:
            raise ValueError(f"crafted data uses dpaudit's extra-column canary; drop `canary`, got {self.canary!r}")
        columns = (NOISE_COLUMNS if self.view in NOISY_VIEWS else 0) if self.noise_columns is None \
            else check_int("noise_columns", self.noise_columns, minimum=0)
        if self.view in NOISY_VIEWS and columns < 1:
            raise ValueError(f"view={self.view!r} reads the noise columns: `noise_columns` must be ≥ 1, got {columns}")
        object.__setattr__(self, "noise_columns", columns)
        object.__setattr__(self, "_probed", self.view in WHITE_BOX_VIEWS or self.crafted)
        scale = (1e4 if self._probed else 10.0) if self.canary_scale is None else self.canary_scale
        object.__setattr__(self, "canary_scale", check_finite_positive("canary_scale", scale))
        check_choice("accountant", self.accountant, ACCOUNTANTS)
        x, y = _as_numpy(self.X, "X"), _as_numpy(self.y, "y")
        if x.ndim != 2 or y.ndim != 1 or y.shape[0] != x.shape[0] or x.shape[0] < 1:
            raise ValueError(f"`X` must be (n, p) and `y` (n,) with n ≥ 1, got shapes {x.shape} and {y.shape}")
        if not np.isfinite(x).all():
            raise ValueError("`X` must be finite")
        labels = np.unique(y)
        if labels.size < 2 or not np.all(labels == np.round(labels)) or labels.min() < 0:
            raise ValueError(f"`y` must hold at least two class labels 0, 1, ..., got {labels.tolist()[:10]!r}")
        object.__setattr__(self, "_numpy", (x, y))
        object.__setattr__(self, "_canary_label", int(labels.max()))
        object.__setattr__(self, "_claim", self._build_claim(x.shape[0]))
        hooked = "grad_canary" in _keywords(self.train)
        object.__setattr__(self, "_hooked", hooked)
        if hooked and (self.view != "updates" or self.crafted):
            raise ValueError(f"{_name(self.train)} takes `grad_canary`, a white-box canary: use view='updates' "
                             f"without crafted data, got view={self.view!r}, crafted={self.crafted!r}")
        if self.view == "shuffled":
            if self.batch_size is None or self.noise_multiplier is None:
                raise ValueError("view='shuffled' needs the accountant's claim with `batch_size` (the loader's B), "
                                 f"`noise_multiplier` and `steps`, got batch_size={self.batch_size!r}, "
                                 f"noise_multiplier={self.noise_multiplier!r}")
            batches = -(-x.shape[0] // check_int("batch_size", self.batch_size, minimum=1))
            if self.crafted and batches > 1:  # the fewest rows cut into as many batches: the last holds one
                object.__setattr__(self, "_crafted_n", (batches - 1) * self.batch_size + 1)
            object.__setattr__(self, "_shuffled", shuffled_pair(getattr(self, "_crafted_n", x.shape[0]), self.batch_size,
                                                                self.steps, self.noise_multiplier, crafted=self.crafted))
        self._check_virtual()
        object.__setattr__(self, "_canary_row", self._canary_row(x, y))

    def _check_virtual(self) -> None:
        """``physical_steps`` only with ``view="virtual"``, which needs the accountant's q, σ and T."""
        if self.view != "virtual":
            if self.physical_steps is not None:
                raise ValueError(f"`physical_steps` is read by view='virtual' only, got physical_steps="
                                 f"{self.physical_steps!r} with view={self.view!r}")
            return
        object.__setattr__(self, "physical_steps", check_int("physical_steps", 1 if self.physical_steps is None
                                                             else self.physical_steps, minimum=1))
        if self.sample_rate_used is None:
            raise ValueError("view='virtual' needs the accountant's claim (`noise_multiplier`, `steps`, `delta` and "
                             f"`sample_rate` or `batch_size`), got epsilon={self.epsilon!r}, mu={self.mu!r}")

    # -- the claim ---------------------------------------------------------------------------------
    def _iterates_note(self) -> str:
        """The white-box view releases every iterate, so your claim is audited as a bound on all of
        them (an accountant's is one by construction); a last-iterate analysis is not audited so."""
        return ", read as a bound on every iterate" if self.view in WHITE_BOX_VIEWS else ""

    def _build_claim(self, n: int):
        own = self.epsilon is not None or self.mu is not None
        accounted = self.noise_multiplier is not None or self.steps is not None
        if own == accounted or (self.epsilon is not None and self.mu is not None):
            raise ValueError("give exactly one claim: `epsilon` and `delta` (yours), `mu` (yours), or "
                             "`noise_multiplier`, `steps`, `delta` and `sample_rate` or `batch_size` (an accountant's); "
                             f"got epsilon={self.epsilon!r}, mu={self.mu!r}, noise_multiplier={self.noise_multiplier!r}, "
                             f"steps={self.steps!r}")
        if self.mu is not None:
            object.__setattr__(self, "_claim_text", f"yours, {check_finite_positive('mu', self.mu):g}-GDP"
                               + self._iterates_note())
            return GaussianDP(self.mu, Relation.ADD_REMOVE)
        if self.epsilon is not None:
            if self.delta is None:
                raise ValueError(f"your claim `epsilon`={self.epsilon!r} needs its `delta`, got None")
            claim = ApproxDP(self.epsilon, self.delta, Relation.ADD_REMOVE)
            object.__setattr__(self, "_claim_text", f"yours, {claim.label}" + self._iterates_note())
            return claim
        if self.noise_multiplier is None or self.steps is None or self.delta is None:
            raise ValueError(f"an accountant's claim needs `noise_multiplier`, `steps` and `delta`, got "
                             f"{self.noise_multiplier!r}, {self.steps!r}, {self.delta!r}")
        if (self.sample_rate is None) == (self.batch_size is None):
            raise ValueError(f"give the accountant's Poisson rate as `sample_rate` (q) or `batch_size` (q = 1/⌈n/B⌉), "
                             f"exactly one, got sample_rate={self.sample_rate!r}, batch_size={self.batch_size!r}")
        if self.sample_rate is not None:
            q = float(self.sample_rate) if self.sample_rate == 1 else check_open_unit("sample_rate", self.sample_rate)
            how = "q given"
        else:
            q = opacus_sample_rate(n, check_int("batch_size", self.batch_size, minimum=1))
            how = f"q = 1/⌈{n}/{self.batch_size}⌉"
        object.__setattr__(self, "_q", q)
        object.__setattr__(self, "_claim_text", f"{ACCOUNTANT_NAMES[self.accountant]} at q={q:g} ({how}), "
                                                f"σ={self.noise_multiplier:g}, T={self.steps}")
        return accountant_claim(self.accountant, q, self.noise_multiplier, check_int("steps", self.steps, minimum=1),
                                check_open_unit("delta", self.delta))

    # -- what the audit engine sees ----------------------------------------------------------------
    relation = Relation.ADD_REMOVE
    d = 1
    row_dim = 1
    output_dim = 1

    @property
    def claim(self):
        """The user's own claim, or the accountant's (module docstring)."""
        return self._claim

    @property
    def claim_source(self) -> str:
        """Whose claim it is: ``"yours, ..."`` or the accountant's name with q, σ and T."""
        return self._claim_text

    @property
    def sample_rate_used(self) -> Optional[float]:
        """The accountant's q (None for the user's own claim)."""
        return getattr(self, "_q", None)

    @property
    def vectorized(self) -> bool:
        """False: each output row is its own training run, so no random call's leading dimension
        stands for the rows (a gray-box replay must not scale noise per row, :mod:`audit.graybox`)."""
        return False

    @property
    def name(self) -> str:
        n, p = self._numpy[0].shape
        view = "score " + _name(self.score) if self.score is not None else self.view
        if self.view == "virtual":
            view += f" k={self.physical_steps}"
        canary = "grad_canary hook" if self._hooked else ("extra-column canary" if self._probed
                                                          else "given canary" if self.canary is not None
                                                          else "mislabelled outlier")
        if self.crafted:
            canary += ", crafted rows against it"
        if self.noise_columns:
            canary += f", {self.noise_columns} noise columns"
        return f"UserTraining[{self.label or _name(self.train)}, n={n}, p={p}, {canary}, {view}](claim: {self._claim_text})"

    def __repr__(self) -> str:
        return self.name

    # -- the canary --------------------------------------------------------------------------------
    def _canary_row(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, int]:
        c = self._canary_label
        if self._probed:
            row = np.zeros(x.shape[1] + self.noise_columns + 1)
            row[-1] = self.canary_scale
            return row, c
        if self.canary is not None:
            try:
                cx, cy = self.canary
            except (TypeError, ValueError):
                raise ValueError(f"`canary` must be a pair (x, label), got {self.canary!r}") from None
            cx = _as_numpy(cx, "canary x").reshape(-1)
            if cx.shape != (x.shape[1],) or not np.isfinite(cx).all():
                raise ValueError(f"`canary` x must be {x.shape[1]} finite numbers, got {cx.tolist()!r}")
            return cx.astype(np.float64), check_int("canary label", int(cy), minimum=0)
        centre = x.mean(axis=0)
        away = centre - x[y == c].mean(axis=0)
        norm = np.linalg.norm(away)
        direction = away / norm if norm > 0 else np.eye(x.shape[1])[0]
        radius = max(float(np.max(np.linalg.norm(x - centre, axis=1))), 1.0)
        return centre + self.canary_scale * radius * direction, c

    # -- outputs -----------------------------------------------------------------------------------
    def __call__(self, dataset: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        weights = check_dataset(dataset, 1)[:, 0]
        size = check_size(size)
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"`rng` must be a numpy.random.Generator, got {type(rng).__name__}")
        if np.any((weights != 0) & (weights != 1)):
            raise ValueError(f"canary weights must be 0 (no row) or 1 (the canary), got {weights.tolist()!r}")
        copies = int(np.sum(weights == 1))
        seeds = rng.integers(0, 2**31 - 1, size=size)
        out = np.empty((size, 1))
        for i in range(size):
            out[i, 0] = self._one_run(copies, int(seeds[i]))
        return out

    def _data(self, copies: int):
        """X and y as the user gave them (type and dtype), with the canary's ``copies`` rows (and
        the extra-column canary's zero columns; or the crafted rows instead of the user's)."""
        x, y = self.X, self.y
        row, label = self._canary_row
        if self._probed:
            x = _concat(x, _zeros_like(x, x.shape[0], self.noise_columns + 1), axis=1)
        if self.crafted:
            rows, labels = crafted_rows(getattr(self, "_crafted_n", x.shape[0]), x.shape[1], self.canary_scale, label)
            x, y = _like(x, rows), _like(y, labels)
        if copies and not self._hooked:
            x = _concat(x, _like(x, np.tile(row, (copies, 1))), axis=0)
            y = _concat(y, _like(y, np.full(copies, label)), axis=0)
        return x, y

    def _one_run(self, copies: int, seed: int) -> float:
        import torch  # optional extra: torch

        torch.set_num_threads(1)
        x, y = self._data(copies)
        kwargs = {}
        if self._hooked:
            kwargs["grad_canary"] = _DiracGradient(x.shape[1] - 1, self._canary_label, -copies * self.canary_scale) \
                if copies else None
        watch = ParameterWatch(x.shape[1], dirac_row=self._canary_label if self._hooked else None,
                               noise_columns=self.noise_columns) if self._probed else None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if watch is not None:
                    with watch:
                        model = self.train(x, y, seed, **kwargs)
                else:
                    model = self.train(x, y, seed, **kwargs)
        except Exception as exc:
            raise RuntimeError(f"training function {_name(self.train)} raised {type(exc).__name__}: {exc}") from exc
        if model is None:
            raise TypeError(f"training function {_name(self.train)} returned None; it must return the trained model")
        row, label = self._canary_row
        if self.view in WHITE_BOX_VIEWS:
            return self._white_box(watch, model, row, label)
        logits = _model_output(model, row, self.X, where=_name(self.train))
        score = self.score if self.score is not None else self.view
        return float(canary_score(logits, [label], score, where=f"{self.name}: the final model")[0])

    def _white_box(self, watch: ParameterWatch, model: Any, row: np.ndarray, label: int) -> float:
        """The white-box views' number from the watch (module docstring, :mod:`.crafted`)."""
        where = _name(self.train)
        if self.view == "updates":
            return watch.step_sum(model, label, row, where=where)
        energies = watch.noise_energy(model, where=where)
        if energies.size == 0 or not np.isfinite(energies).all() or energies.min() <= 0:
            raise ValueError(f"{where}: the noise columns' updates must be finite and nonzero at every step "
                             f"(a noisy trainer), got mean squares {energies.tolist()!r}")
        if self.view == "energy":
            return energy_view(energies)
        if self.view == "virtual":
            return self._virtual(watch, model, energies, row, label)
        steps = watch.projections(model, label, row, where=where)
        if steps.size != self.steps:
            raise ValueError(f"{where}: view='shuffled' needs `steps`={self.steps} updates, the trainer made {steps.size}")
        scale = np.sqrt(np.mean(energies)) / self.noise_multiplier  # C·η/B, from the noise's σ·C·η/B
        return float(self._shuffled.loss(steps[None, :] / scale)[0])

    def _virtual(self, watch: ParameterWatch, model: Any, energies: np.ndarray, row: np.ndarray, label: int) -> float:
        """L of :func:`.virtual.virtual_steps_loss` on the T·k writes, in units of the noise columns' scale."""
        where = _name(self.train)
        steps = watch.projections(model, label, row, where=where)
        writes = self.steps * self.physical_steps
        if steps.size != writes:
            raise ValueError(f"{where}: view='virtual' needs `steps` × `physical_steps` = {self.steps} × "
                             f"{self.physical_steps} = {writes} parameter writes, the trainer made {steps.size}")
        return float(virtual_steps_loss(steps[None, :] / np.sqrt(np.mean(energies)), sample_rate=self._q,
                                        noise_multiplier=self.noise_multiplier, physical_steps=self.physical_steps)[0])


@dataclass(frozen=True)
class _DiracGradient:
    """The canary's per-example gradient for a ``grad_canary`` hook: ``value`` on (row, column) of
    the first parameter whose last axis has ``column + 1`` entries, 0 on every other coordinate."""

    column: int
    row: int
    value: float

    def __call__(self, params) -> list:
        import torch  # optional extra: torch

        params = list(params.values()) if isinstance(params, dict) else list(params)
        out = [torch.zeros_like(p) for p in params]
        for p, g in zip(params, out):
            if p.ndim == 2 and p.shape[-1] == self.column + 1:
                g[self.row if p.shape[0] > 1 else 0, self.column] = self.value
                return out
        raise ValueError(f"grad_canary: no parameter has a last axis of {self.column + 1} entries (the input width "
                         f"with dpaudit's canary column); shapes {[tuple(p.shape) for p in params]}")


def _model_output(model, row: np.ndarray, like: Any, *, where: str) -> np.ndarray:
    """The model's logits on the canary, as a float64 array."""
    import torch  # optional extra: torch

    if isinstance(model, torch.nn.Module):
        params = list(model.parameters())
        dtype = params[0].dtype if params else torch.float32
        if hasattr(model, "eval"):
            model.eval()
        with torch.no_grad():
            out = model(torch.as_tensor(row[None, :], dtype=dtype))
    else:
        arg = torch.as_tensor(row[None, :], dtype=like.dtype) if isinstance(like, torch.Tensor) else row[None, :]
        out = model(arg)
    if isinstance(out, torch.Tensor):
        out = out.detach().cpu().double().numpy()
    out = np.asarray(out, dtype=np.float64)
    if out.size == 0 or out.ndim > 2:
        raise ValueError(f"{where}: the model must output (1,) or (1, K) logits on one row, got shape {out.shape}")
    return out.reshape(1, -1)


def _as_numpy(value: Any, name: str) -> np.ndarray:
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    try:
        return np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"`{name}` must be a numpy array or a torch tensor of numbers, got {type(value).__name__}") \
            from None


def _like(reference: Any, values: np.ndarray):
    """``values`` as the type and dtype of ``reference`` (numpy array or torch tensor)."""
    if hasattr(reference, "detach"):
        import torch  # optional extra: torch

        return torch.as_tensor(values, dtype=reference.dtype)
    return np.asarray(values, dtype=np.asarray(reference).dtype)


def _zeros_like(reference: Any, rows: int, columns: int):
    return _like(reference, np.zeros((rows, columns)))


def _concat(a: Any, b: Any, *, axis: int):
    if hasattr(a, "detach"):
        import torch  # optional extra: torch

        return torch.cat([a, b], dim=axis)
    return np.concatenate([np.asarray(a), b], axis=axis)


def _keywords(function: Callable) -> set:
    try:
        return set(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return set()


def _name(function: Any) -> str:
    return getattr(function, "label", None) or getattr(function, "__qualname__", None) or repr(function)
