"""The classifier statistic: the log-odds of a probabilistic classifier trained to tell D from D′.

By the Neyman–Pearson lemma the optimal tests threshold the likelihood ratio, and a calibrated
classifier trained on equally many samples of both sides estimates it: logit P(D′ | x) =
ln(q(x)/p(x)).  This is the approach of DP-Sniper (Bichsel et al., S&P 2021) and Delta-Siege
(Lokna et al., USENIX Security 2023).  The classifier is fitted on training-phase samples only and
then frozen, so the certified events are chosen independently of the samples that certify them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from .base import Statistic
from .features import FEATURE_SETS, FeatureMap, fit_feature_map

__all__ = ["Classifier", "ClassifierStatistic", "fit_classifier", "ESTIMATORS", "require_sklearn"]

ESTIMATORS = ("boosting", "logistic")
#: Outputs scored at a time (bounds the feature matrix's memory).
_BLOCK = 1 << 15


def require_sklearn():
    """Import scikit-learn or fail in one line naming the extra to install."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise ImportError("statistic='classifier' needs scikit-learn: pip install 'dpaudit[learn]'") from None
    return sklearn


@dataclass(frozen=True)
class Classifier:
    """``statistic=Classifier(estimator=..., features=...)``: the classifier statistic with options.

    ``estimator`` is ``"boosting"`` (histogram gradient boosting, the default), ``"logistic"``, or
    any scikit-learn-style estimator with ``fit``/``predict_proba`` (it is cloned, and seeded through
    ``random_state`` when it has one); ``features`` is ``"auto"`` (bit patterns for k ≤ 4), or one
    of :data:`audit.statistics.features.FEATURE_SETS`.
    """

    estimator: Any = "boosting"
    features: str = "auto"

    def __post_init__(self):
        if isinstance(self.estimator, str) and self.estimator not in ESTIMATORS:
            raise ValueError(f"`estimator` must be one of {ESTIMATORS} or an estimator object, got "
                             f"{self.estimator!r}")
        if self.features != "auto" and self.features not in FEATURE_SETS:
            raise ValueError(f"`features` must be 'auto' or one of {FEATURE_SETS}, got {self.features!r}")

    @property
    def label(self) -> str:
        name = self.estimator if isinstance(self.estimator, str) else type(self.estimator).__name__
        return f"classifier({name}, {self.features})"


@dataclass(frozen=True)
class ClassifierStatistic(Statistic):
    """Score = the fitted classifier's log-odds that the output came from the neighbour."""

    model: Any
    features: FeatureMap
    name: str
    kind = "classifier"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        # In blocks: the feature matrix of a whole chunk (65 columns per output column with bit
        # patterns) would be far larger than the chunk itself.
        # One OpenMP thread: chunks already run in parallel, and scikit-learn's threads on top of
        # the workers oversubscribe the cores.
        scores = np.empty(outputs.shape[0])
        with threadpool_limits(limits=1, user_api="openmp"):
            for start in range(0, outputs.shape[0], _BLOCK):
                scores[start:start + _BLOCK] = self._scores(outputs[start:start + _BLOCK])
        return scores

    def _scores(self, outputs: np.ndarray) -> np.ndarray:
        x = self.features(outputs)
        if hasattr(self.model, "decision_function"):
            return np.asarray(self.model.decision_function(x), dtype=np.float64).reshape(-1)
        proba = np.asarray(self.model.predict_proba(x), dtype=np.float64)
        return np.log(np.maximum(proba[:, 1], 1e-300)) - np.log(np.maximum(proba[:, 0], 1e-300))

    def describe(self, threshold: float) -> str:
        return f"log-odds >= {threshold:.6g} ({self.name} on {self.features.description})"

    def to_dict(self) -> dict:
        return {"kind": self.kind, "estimator": self.name, "features": self.features.description}


def _random_state(seed: int) -> int:
    """scikit-learn's ``random_state`` (an int below 2³²) from the audit's seed, which may be a
    128-bit entropy (``seed=None``, or the quick look's derived seed): kept when it fits, otherwise
    the first word SeedSequence derives from it."""
    seed = int(seed)
    if 0 <= seed < 2**32:
        return seed
    return int(np.random.SeedSequence(abs(seed)).generate_state(1, dtype=np.uint32)[0])


def _estimator(estimator, seed: int):
    require_sklearn()
    from sklearn.base import clone

    seed = _random_state(seed)

    if estimator == "boosting":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(max_iter=100, early_stopping=True, random_state=seed), \
            "histogram gradient boosting"
    if estimator == "logistic":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)), "logistic regression"
    if isinstance(estimator, str):
        raise ValueError(f"`estimator` must be one of {ESTIMATORS} or an estimator with fit/"
                         f"predict_proba, got {estimator!r}")
    if not (hasattr(estimator, "fit") and hasattr(estimator, "predict_proba")):
        raise TypeError(f"`estimator` must have fit and predict_proba methods, got {estimator!r}")
    model = clone(estimator)
    if "random_state" in model.get_params():
        model.set_params(random_state=seed)
    return model, type(estimator).__name__


def fit_classifier(base: np.ndarray, neighbour: np.ndarray, *, seed: int, estimator: Any = "boosting",
                   features: str = "auto") -> ClassifierStatistic:
    """Fit ``estimator`` on the training outputs (label 1 = neighbour) with the chosen features."""
    if features == "auto":
        features = "values+bits" if base.shape[1] <= 4 else "values"
    pooled = np.concatenate([base, neighbour])
    feature_map = fit_feature_map(pooled, features)
    labels = np.concatenate([np.zeros(base.shape[0]), np.ones(neighbour.shape[0])])
    model, name = _estimator(estimator, seed)
    model.fit(feature_map(pooled), labels)
    return ClassifierStatistic(model, feature_map, name)
