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

from typing import Any, Callable, Optional, Union

import numpy as np

from ..scoring import Spacing, slot_values, threshold_events
from ..slots import MU, Slot, states_mu
from .atoms import count_atoms
from .base import Statistic
from .binned import fit_binned
from .categorical import fit_categorical
from .classifier import Classifier, fit_classifier
from .linear import LinearStatistic, lda_statistic
from .registry import RAW_ROWS, FitContext, register_statistic, resolve_statistic
from .training import TrainingData, TrainingPlan
from .user import UserStatistic

__all__ = ["training_plan", "needs_training", "fit_statistic", "held_out_separation",
           "MIN_AUTO_TRAINING", "AUTO_ATOMS", "CATEGORICAL_ATOMS", "RAW_ROWS"]

#: ``"auto"`` treats outputs with at most this many distinct rows as categorical candidates.
AUTO_ATOMS = 4096
#: Atoms the explicit ``"categorical"`` statistic accepts.
CATEGORICAL_ATOMS = 1 << 16
_PROXY_LEVEL = 0.05
#: Thresholds per held-out comparison (quantiles of the distinct values when there are more).
_PROXY_THRESHOLDS = 2048
_MIN_HELD_OUT = 64
#: ``"auto"`` compares candidates only from this many training draws per side (two held-out halves).
MIN_AUTO_TRAINING = 2 * _MIN_HELD_OUT
_PROXY_DELTAS = (1e-3, 1e-2, 0.05, 0.1)
_MARGIN_RELATIVE, _MARGIN_ABSOLUTE = 0.03, 0.005


def needs_training(option, output_dim: int, draws: Optional[int] = None) -> bool:
    """Whether the statistic is learned from ``draws`` training draws per side (any number when
    None): the registered statistic's ``learns`` (:mod:`audit.statistics.registry`).  A callable or a
    fitted statistic is never learned."""
    named = resolve_statistic(option)
    return named is not None and named.learns(output_dim, draws)


def training_plan(option, n_train: int, chunk: int, output_dim: int) -> TrainingPlan:
    """What the training chunks keep for ``option`` (a registered name or spec)."""
    return resolve_statistic(option).training_plan(n_train, chunk, output_dim)


def fit_statistic(option: Union[str, Callable, Statistic], base: Optional[TrainingData],
                  neighbour: Optional[TrainingData], *, claim: Any, seed: int, label: str,
                  output_dim: int) -> tuple[Statistic, dict]:
    """The frozen statistic of one pair and notes for the report (``label`` names the pair)."""
    if isinstance(option, Statistic):
        return option, {}
    named = resolve_statistic(option)
    if named is None:  # a callable outputs -> scores
        return UserStatistic(option), {}
    spec = None if isinstance(option, str) else option
    return named.fit(base, neighbour, FitContext(claim, seed, label, output_dim, spec))


# -- the built-in statistics -----------------------------------------------------------------------
def _fit_linear(base, neighbour, context: FitContext):
    return _linear(base, neighbour, context.output_dim), {}


def _fit_categorical(base, neighbour, context: FitContext):
    if base.atoms is None or neighbour.atoms is None:
        raise ValueError(f"statistic='categorical': pair {context.label!r} has more than {CATEGORICAL_ATOMS} "
                         "distinct output rows in training; use 'binned', 'classifier' or 'auto'")
    return fit_categorical(base.atoms, neighbour.atoms), {}


def _fit_binned(base, neighbour, context: FitContext):
    return _binned(base.rows, neighbour.rows, _linear(base, neighbour, context.output_dim)), {}


def _fit_classifier(base, neighbour, context: FitContext):
    spec = context.spec if isinstance(context.spec, Classifier) else Classifier()
    return fit_classifier(base.rows, neighbour.rows, seed=context.seed, estimator=spec.estimator,
                          features=spec.features), {}


def _fit_auto(base, neighbour, context: FitContext):
    return _auto(base, neighbour, context.claim, context.output_dim)


def _vector(output_dim: int, draws: Optional[int] = None) -> bool:
    return output_dim > 1


def _auto_learns(output_dim: int, draws: Optional[int] = None) -> bool:
    """``"auto"`` on a 1-D output given fewer than :data:`MIN_AUTO_TRAINING` draws learns nothing:
    its held-out halves would be too small to compare candidates, so it would keep the linear
    statistic (:func:`_auto`) and the draws would be wasted; the audit spends them elsewhere."""
    return not (output_dim == 1 and draws is not None and draws < MIN_AUTO_TRAINING)


register_statistic("auto", _fit_auto, learns=_auto_learns, moments=_vector, atom_limit=AUTO_ATOMS, raw_rows=True,
                   summary="chosen per pair on training draws among linear, categorical and binned")
register_statistic("linear", _fit_linear, learns=_vector, moments=_vector,
                   summary="the output (1-D) or Fisher's discriminant <w, output>")
register_statistic("categorical", _fit_categorical, atom_limit=CATEGORICAL_ATOMS,
                   summary="distinct output rows ranked by their trained log-likelihood ratio")
register_statistic("binned", _fit_binned, moments=_vector, raw_rows=True,
                   summary="a smoothed histogram log-ratio of the output or of Fisher's projection")
register_statistic("classifier", _fit_classifier, raw_rows=True,
                   summary="a scikit-learn classifier's log-odds (needs the learn extra)")


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
    """S(T) of the module docstring, on held-out rows of both sides: the events are those at up
    to 2048 quantiles of T's distinct values (:func:`audit.scoring.threshold_events`), scored at
    interpolated Clopper–Pearson bounds (:meth:`audit.scoring.ThresholdEvents.points`)."""
    if base_rows.shape[0] == 0 or neighbour_rows.shape[0] == 0:
        return 0.0
    events = threshold_events(statistic(base_rows), statistic(neighbour_rows), limit=_PROXY_THRESHOLDS,
                              spacing=Spacing.QUANTILES)
    points = events.points(_PROXY_LEVEL)
    if states_mu(claim):
        return float(slot_values(MU, *points).max())
    deltas = sorted(set(_PROXY_DELTAS) | ({float(claim.reference_delta)}
                                          if claim.reference_delta >= 1e-4 else set()))
    return float(np.mean([slot_values(Slot.epsilon_at(d), *points).max() for d in deltas]))
