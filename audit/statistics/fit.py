"""Fitting the statistic of each pair from its training data, and the ``"auto"`` choice.

``"auto"`` chooses per pair, from the training phase only.  The raw training rows of each side are
split in halves; every candidate is fitted on the first half and scored on the second by the
held-out separation

    S(T) = mean over δ ∈ Δ of max_E ε_lb(E, δ),

the ε lower bound of the best threshold event of T at each δ of a fixed grid Δ, with
Clopper–Pearson bounds at level 5% (μ_lb for a GDP claim).  The candidates are the linear statistic,
the categorical one when every training row falls into at most :data:`AUTO_ATOMS` atoms, and the
binned one (of the output, or of Fisher's projection for vector outputs).  A candidate replaces the
linear statistic only if it separates clearly better (by 3% and 0.005), so on mechanisms where the
linear statistic is optimal ``"auto"`` keeps it.  The winner is refitted on all training data.
None of this touches the selection or certification samples.  On a 1-D output with fewer than
:data:`MIN_AUTO_TRAINING` training draws per side nothing can be compared, so ``"auto"`` is the
linear statistic and draws no training samples at all (:func:`needs_training`).
"""

from __future__ import annotations

import difflib
import math
from typing import Any, Callable, Optional, Union

import numpy as np

from ..bounds import epsilon_lower_bound, mu_lower_bound
from ..intervals import cp_for_choosing, cp_lower, cp_upper
from .atoms import count_atoms
from .base import KINDS, Statistic
from .binned import fit_binned
from .categorical import fit_categorical
from .classifier import Classifier, fit_classifier
from .linear import LinearStatistic, lda_statistic
from .training import TrainingData, TrainingPlan
from .user import UserStatistic

__all__ = ["check_statistic", "training_plan", "needs_training", "fit_statistic", "held_out_separation",
           "MIN_AUTO_TRAINING", "AUTO_ATOMS", "CATEGORICAL_ATOMS", "RAW_ROWS"]

#: Raw rows kept per side for the binned / classifier statistics and the ``"auto"`` comparison.
RAW_ROWS = 1 << 17
_RAW_ELEMENTS = 1 << 22
#: ``"auto"`` treats outputs with at most this many distinct rows as categorical candidates.
AUTO_ATOMS = 4096
#: Atoms the explicit ``"categorical"`` statistic accepts.
CATEGORICAL_ATOMS = 1 << 16
_PROXY_LEVEL = 0.05
_MIN_HELD_OUT = 64
#: ``"auto"`` compares candidates only from this many training draws per side (two held-out halves).
MIN_AUTO_TRAINING = 2 * _MIN_HELD_OUT
_PROXY_DELTAS = (1e-3, 1e-2, 0.05, 0.1)
_MARGIN_RELATIVE, _MARGIN_ABSOLUTE = 0.03, 0.005


def check_statistic(value: Any) -> Any:
    """Validate ``run_audit``'s ``statistic`` argument: a name of :data:`~audit.statistics.base.KINDS`,
    a :class:`~audit.statistics.classifier.Classifier` spec, a fitted :class:`Statistic` or a callable."""
    if isinstance(value, (Statistic, Classifier)) or (callable(value) and not isinstance(value, str)):
        return value
    if isinstance(value, str) and value in KINDS:
        return value
    if isinstance(value, str):
        close = difflib.get_close_matches(value, KINDS, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"`statistic` must be one of {', '.join(map(repr, KINDS))} or a callable "
                         f"outputs -> scores, got {value!r}{hint}")
    raise TypeError(f"`statistic` must be one of {', '.join(map(repr, KINDS))} or a callable "
                    f"outputs -> scores, got {value!r}")


def _name(option) -> str:
    return "classifier" if isinstance(option, Classifier) else option


def needs_training(option, output_dim: int, draws: Optional[int] = None) -> bool:
    """Whether the statistic is learned from ``draws`` training draws per side (any number when
    None).  A 1-D linear statistic and a callable are not learned; nor is ``"auto"`` on a 1-D output
    given fewer than :data:`MIN_AUTO_TRAINING` draws: its held-out halves would be too small to
    compare candidates, so it would keep the linear statistic (:func:`_auto`) and the draws would be
    wasted.  The audit then spends them on the other phases."""
    option = _name(option)
    if not isinstance(option, str) or (option == "linear" and output_dim == 1):
        return False
    return not (option == "auto" and output_dim == 1 and draws is not None and draws < MIN_AUTO_TRAINING)


def training_plan(option, n_train: int, chunk: int, output_dim: int) -> TrainingPlan:
    """What the training chunks keep for ``option`` (a statistic name)."""
    option = _name(option)
    chunks = max(1, math.ceil(n_train / chunk))
    needs_rows = option in ("auto", "binned", "classifier")
    cap = min(RAW_ROWS, max(1024, _RAW_ELEMENTS // output_dim))
    limit = {"auto": AUTO_ATOMS, "categorical": CATEGORICAL_ATOMS}.get(option, 0)
    return TrainingPlan(moments=output_dim > 1 and option in ("auto", "linear", "binned"),
                        atom_limit=limit, rows_per_chunk=math.ceil(cap / chunks) if needs_rows else 0)


def fit_statistic(option: Union[str, Callable, Statistic], base: TrainingData, neighbour: TrainingData,
                  *, claim: Any, seed: int, label: str, output_dim: int) -> tuple[Statistic, dict]:
    """The frozen statistic of one pair and notes for the report (``label`` names the pair)."""
    if isinstance(option, Statistic):
        return option, {}
    if isinstance(option, Classifier) or option == "classifier":
        spec = option if isinstance(option, Classifier) else Classifier()
        return fit_classifier(base.rows, neighbour.rows, seed=seed, estimator=spec.estimator,
                              features=spec.features), {}
    if callable(option) and not isinstance(option, str):
        return UserStatistic(option), {}
    if option == "linear":
        return _linear(base, neighbour, output_dim), {}
    if option == "categorical":
        if base.atoms is None or neighbour.atoms is None:
            raise ValueError(f"statistic='categorical': pair {label!r} has more than {CATEGORICAL_ATOMS} "
                             "distinct output rows in training; use 'binned', 'classifier' or 'auto'")
        return fit_categorical(base.atoms, neighbour.atoms), {}
    if option == "binned":
        return _binned(base.rows, neighbour.rows, _linear(base, neighbour, output_dim)), {}
    if option == "auto":
        return _auto(base, neighbour, claim, output_dim)
    raise ValueError(f"unknown statistic {option!r}")


def _linear(base, neighbour, output_dim) -> LinearStatistic:
    if output_dim == 1:
        return LinearStatistic()
    return lda_statistic(base.moments, neighbour.moments)


def _binned(base_rows, neighbour_rows, linear: LinearStatistic):
    projection = linear if linear.weights is not None else None
    value = (lambda rows: rows[:, 0]) if projection is None else projection
    return fit_binned(value(base_rows), value(neighbour_rows), projection)


def _auto(base: Optional[TrainingData], neighbour: Optional[TrainingData], claim,
          output_dim) -> tuple[Statistic, dict]:
    if base is None or neighbour is None:  # 1-D output, too few draws to train (see needs_training)
        return LinearStatistic(), {"auto_choice": "linear", "held_out_separation": {}}
    linear = _linear(base, neighbour, output_dim)
    half0, half1 = base.rows.shape[0] // 2, neighbour.rows.shape[0] // 2
    fit0, test0 = base.rows[:half0], base.rows[half0:]
    fit1, test1 = neighbour.rows[:half1], neighbour.rows[half1:]
    candidates: dict[str, Statistic] = {"linear": linear}
    if min(half0, half1) < _MIN_HELD_OUT:  # too few draws to compare anything: keep the default
        return linear, {"auto_choice": "linear", "held_out_separation": {}}
    few_atoms = base.atoms is not None and neighbour.atoms is not None
    if few_atoms:
        atoms0, atoms1 = count_atoms(fit0, AUTO_ATOMS), count_atoms(fit1, AUTO_ATOMS)
        if atoms0 is not None and atoms1 is not None:
            candidates["categorical"] = fit_categorical(atoms0, atoms1)
    if min(half0, half1) >= 1024:
        candidates["binned"] = _binned(fit0, fit1, linear)
    scores = {name: held_out_separation(stat, test0, test1, claim) for name, stat in candidates.items()}
    best = "linear"
    for name, score in scores.items():
        if score > scores[best] * (1 + _MARGIN_RELATIVE) + _MARGIN_ABSOLUTE:
            best = name
    if best == "categorical":
        chosen = fit_categorical(base.atoms, neighbour.atoms)
    elif best == "binned":
        chosen = _binned(base.rows, neighbour.rows, linear)
    else:
        chosen = linear
    return chosen, {"auto_choice": best, "held_out_separation": {k: float(v) for k, v in scores.items()}}


def held_out_separation(statistic: Statistic, base_rows: np.ndarray, neighbour_rows: np.ndarray,
                        claim: Any) -> float:
    """S(T) of the module docstring, on held-out rows of both sides."""
    if base_rows.shape[0] == 0 or neighbour_rows.shape[0] == 0:
        return 0.0
    t0, t1 = np.sort(statistic(base_rows)), np.sort(statistic(neighbour_rows))
    pooled = np.concatenate([t0, t1])
    pooled.sort(kind="stable")  # two sorted runs: merged in linear time
    pooled = pooled[np.concatenate([[True], pooled[1:] != pooled[:-1]])]
    if pooled.size > 2048:  # 2048 quantiles of the distinct values (np.quantile's linear rule)
        pooled = np.unique(np.interp(np.linspace(0.0, pooled.size - 1, 2048), np.arange(pooled.size), pooled))
    n0, n1 = t0.size, t1.size
    up0 = n0 - np.searchsorted(t0, pooled, side="left")  # #{T ≥ t} under the base
    up1 = n1 - np.searchsorted(t1, pooled, side="left")
    # Orientation 0: the event is more likely under the neighbour; 1: under the base.
    alpha_hi = np.stack([cp_for_choosing(cp_upper, up0, n0, _PROXY_LEVEL),
                         cp_for_choosing(cp_upper, up1, n1, _PROXY_LEVEL)])
    beta_hi = 1.0 - np.stack([cp_for_choosing(cp_lower, up1, n1, _PROXY_LEVEL),
                              cp_for_choosing(cp_lower, up0, n0, _PROXY_LEVEL)])
    if hasattr(claim, "mu"):
        return float(mu_lower_bound(alpha_hi, beta_hi).max())
    deltas = sorted(set(_PROXY_DELTAS) | ({float(claim.reference_delta)}
                                          if claim.reference_delta >= 1e-4 else set()))
    return float(np.mean([epsilon_lower_bound(alpha_hi, beta_hi, d).max() for d in deltas]))
