"""Test statistics: the 1-D score whose threshold events the engine chooses and certifies.

``run_audit(statistic=...)`` accepts ``"linear"`` (the output, or Fisher's discriminant),
``"categorical"`` (atoms ranked by their trained log-likelihood ratio), ``"binned"`` (an
adaptive-bin log-ratio, for non-monotone ratios), ``"additive"`` (a sum of per-column log-ratios,
for independent columns), ``"flag-value"`` (⊤/⊥ patterns and the values released with them),
``"classifier"`` (a scikit-learn classifier's log-odds, with float bit-pattern features), a
callable ``outputs -> scores``, or ``"auto"``, which chooses per pair on training samples only, by
how much of the claim each candidate uses on held-out training draws.  Named statistics are registered
(:mod:`audit.statistics.registry`): a new one is one :func:`register_statistic` call.  Learned
statistics are fitted on a training phase of fresh samples and frozen before selection, so the
accounting of :mod:`audit.selection` is unchanged.
"""

from .additive import AdditiveStatistic, FlagValueStatistic
from .base import Statistic
from .binned import BinnedStatistic
from .categorical import CategoricalStatistic
from .classifier import Classifier, ClassifierStatistic
from .coordinates import CoordinateStatistic
from .fit import MIN_AUTO_TRAINING, fit_statistic, needs_training, training_plan
from .linear import LinearStatistic, combine_moments, lda_statistic
from .registry import (FitContext, NamedStatistic, check_statistic, named_statistic, register_statistic,
                       statistic_label, statistic_names)
from .training import TrainingChunk, TrainingData, TrainingPlan
from .user import UserStatistic

__all__ = [
    "Statistic", "check_statistic", "statistic_label", "FitContext", "NamedStatistic", "named_statistic",
    "register_statistic", "statistic_names", "AdditiveStatistic", "BinnedStatistic",
    "CategoricalStatistic", "Classifier", "ClassifierStatistic", "CoordinateStatistic", "FlagValueStatistic", "LinearStatistic",
    "UserStatistic", "MIN_AUTO_TRAINING", "fit_statistic", "needs_training", "training_plan",
    "combine_moments", "lda_statistic", "TrainingChunk", "TrainingData", "TrainingPlan",
]
