"""Test statistics: the 1-D score whose threshold events the engine chooses and certifies.

``run_audit(statistic=...)`` accepts ``"linear"`` (the output, or Fisher's discriminant),
``"categorical"`` (atoms ranked by their trained log-likelihood ratio), ``"binned"`` (a smoothed
histogram log-ratio, for non-monotone ratios), ``"classifier"`` (a scikit-learn classifier's
log-odds, with float bit-pattern features), a callable ``outputs -> scores``, or ``"auto"``, which
chooses per pair on training samples only.  Learned statistics are fitted on a training phase of
fresh samples and frozen before selection, so the accounting of :mod:`audit.selection` is
unchanged.
"""

from .base import KINDS, Statistic, statistic_label
from .binned import BinnedStatistic
from .categorical import CategoricalStatistic
from .classifier import Classifier, ClassifierStatistic
from .fit import MIN_AUTO_TRAINING, check_statistic, fit_statistic, held_out_separation, needs_training, training_plan
from .linear import LinearStatistic, combine_moments, lda_statistic
from .training import TrainingChunk, TrainingData, TrainingPlan
from .user import UserStatistic

__all__ = [
    "KINDS", "Statistic", "check_statistic", "statistic_label", "BinnedStatistic",
    "CategoricalStatistic", "Classifier", "ClassifierStatistic", "LinearStatistic", "UserStatistic",
    "MIN_AUTO_TRAINING", "fit_statistic", "held_out_separation", "needs_training", "training_plan",
    "combine_moments", "lda_statistic", "TrainingChunk", "TrainingData", "TrainingPlan",
]
