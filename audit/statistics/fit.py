"""Fitting the statistic of each pair from its training data: the built-in named statistics.

Each built-in is one :func:`~audit.statistics.registry.register_statistic` call saying what the
training chunks keep for it and how it is fitted; ``"auto"`` chooses among the others per pair
(:mod:`audit.statistics.auto`).  A named statistic is fitted on all its training draws
(:meth:`~audit.statistics.training.TrainingData.with_rows`).  On a 1-D output with fewer than
:data:`MIN_AUTO_TRAINING` training draws per side ``"auto"`` learns nothing and draws no training
samples (:func:`needs_training`).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Union

from threadpoolctl import threadpool_limits

from .additive import fit_additive, fit_flag_value
from .auto import AUTO_ATOMS, MIN_AUTO_TRAINING, binned_of, fit_auto, linear_of
from .base import Statistic
from .categorical import fit_categorical
from .classifier import Classifier, fit_classifier
from .registry import RAW_ROWS, FitContext, register_statistic, resolve_statistic
from .training import TrainingPlan
from .user import UserStatistic

__all__ = ["training_plan", "needs_training", "fit_statistic", "MIN_AUTO_TRAINING", "AUTO_ATOMS",
           "CATEGORICAL_ATOMS", "RAW_ROWS"]

#: Atoms the explicit ``"categorical"`` statistic accepts.
CATEGORICAL_ATOMS = 1 << 16


def needs_training(option, output_dim: int, draws: Optional[int] = None) -> bool:
    """Whether the statistic is learned from ``draws`` training draws per side (any number when
    None): the registered statistic's ``learns`` (:mod:`audit.statistics.registry`).  A callable or a
    fitted statistic is never learned."""
    named = resolve_statistic(option)
    return named is not None and named.learns(output_dim, draws)


def training_plan(option, n_train: int, chunk: int, output_dim: int) -> TrainingPlan:
    """What the training chunks keep for ``option`` (a registered name or spec)."""
    return resolve_statistic(option).training_plan(n_train, chunk, output_dim)


def fit_statistic(option: Union[str, Callable, Statistic], base, neighbour, *, claim: Any, seed: int,
                  label: str, output_dim: int, samples: Optional[int] = None) -> tuple[Statistic, dict]:
    """The frozen statistic of one pair and notes for the report (``label`` names the pair;
    ``samples``: the draws per side it will score, for ``"auto"``'s cost model)."""
    if isinstance(option, Statistic):
        return option, {}
    named = resolve_statistic(option)
    if named is None:  # a callable outputs -> scores
        return UserStatistic(option), {}
    spec = None if isinstance(option, str) else option
    # One BLAS thread, as in the workers: the fits are small, and threads only contend.
    with threadpool_limits(limits=1, user_api="blas"):
        return named.fit(base, neighbour, FitContext(claim, seed, label, output_dim, spec, samples))


# -- the built-in statistics -----------------------------------------------------------------------
def _all(base, neighbour):
    return base.with_rows(), neighbour.with_rows()


def _fit_linear(base, neighbour, context: FitContext):
    if context.output_dim == 1:
        return linear_of((), 1), {}
    base, neighbour = _all(base, neighbour)
    return linear_of((base.moments, neighbour.moments), context.output_dim), {}


def _fit_categorical(base, neighbour, context: FitContext):
    base, neighbour = _all(base, neighbour)
    if base.atoms is None or neighbour.atoms is None:
        raise ValueError(f"statistic='categorical': pair {context.label!r} has more than {CATEGORICAL_ATOMS} "
                         "distinct output rows in training; use 'binned', 'classifier' or 'auto'")
    return fit_categorical(base.atoms, neighbour.atoms), {}


def _fit_binned(base, neighbour, context: FitContext):
    everything0, everything1 = _all(base, neighbour)
    linear = linear_of((everything0.moments, everything1.moments), context.output_dim)
    return binned_of(base.rows, neighbour.rows, linear), {}


def _fit_additive(base, neighbour, context: FitContext):
    base, neighbour = _all(base, neighbour)
    return fit_additive(base.columns, neighbour.columns, base.n, neighbour.n), {}


def _fit_flag_value(base, neighbour, context: FitContext):
    base, neighbour = _all(base, neighbour)
    if base.patterns is None or neighbour.patterns is None:
        raise ValueError(f"statistic='flag-value': pair {context.label!r} has too many distinct ⊤/⊥ "
                         "patterns in training; use 'additive', 'classifier' or 'auto'")
    return fit_flag_value(base.columns, neighbour.columns, base.patterns, neighbour.patterns), {}


def _fit_classifier(base, neighbour, context: FitContext):
    spec = context.spec if isinstance(context.spec, Classifier) else Classifier()
    return fit_classifier(base.rows, neighbour.rows, seed=context.seed, estimator=spec.estimator,
                          features=spec.features, label=context.label), {}


def _fit_auto(base, neighbour, context: FitContext):
    return fit_auto(base, neighbour, claim=context.claim, output_dim=context.output_dim, seed=context.seed,
                    samples=context.samples)


def _vector(output_dim: int, draws: Optional[int] = None) -> bool:
    return output_dim > 1


def _auto_learns(output_dim: int, draws: Optional[int] = None) -> bool:
    """``"auto"`` on a 1-D output given fewer than :data:`MIN_AUTO_TRAINING` draws learns nothing:
    its held-out halves would be too small to compare candidates, so it would keep the linear
    statistic and the draws would be wasted; the audit spends them elsewhere."""
    return not (output_dim == 1 and draws is not None and draws < MIN_AUTO_TRAINING)


register_statistic("auto", _fit_auto, learns=_auto_learns, moments=_vector, atom_limit=AUTO_ATOMS, raw_rows=True,
                   columns=True, summary="chosen per pair on training draws by how much of the claim it uses")
register_statistic("linear", _fit_linear, learns=_vector, moments=_vector,
                   summary="the output (1-D) or Fisher's discriminant <w, output>")
register_statistic("categorical", _fit_categorical, atom_limit=CATEGORICAL_ATOMS,
                   summary="distinct output rows ranked by their trained log-likelihood ratio")
register_statistic("binned", _fit_binned, moments=_vector, raw_rows=True,
                   summary="adaptive-bin log-ratio of the output or of Fisher's projection")
register_statistic("additive", _fit_additive, columns=True,
                   summary="a sum of per-column log-ratio estimates (independent columns)")
register_statistic("flag-value", _fit_flag_value, columns=True,
                   summary="⊤/⊥ patterns scored categorically plus the released values' log-ratios")
register_statistic("classifier", _fit_classifier, raw_rows=True,
                   summary="a scikit-learn classifier's log-odds (needs the learn extra)")
