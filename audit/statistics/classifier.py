"""The classifier statistic: the log-odds of a probabilistic classifier trained to tell D from D′.

By the Neyman–Pearson lemma the optimal tests threshold the likelihood ratio, and a calibrated
classifier trained on equally many samples of both sides estimates it: logit P(D′ | x) =
ln(q(x)/p(x)).  This is the approach of DP-Sniper (Bichsel et al., S&P 2021) and Delta-Siege
(Lokna et al., USENIX Security 2023).  The classifier is fitted on training-phase samples only and
then frozen, so the certified events are chosen independently of the samples that certify them.

**Cost.**  The default estimator is logistic regression on the features of
:mod:`audit.statistics.features`; its log-odds is linear in them, so the workers score it with no
feature matrix and no scikit-learn call (:class:`~audit.statistics.features.LinearFeatures`: a
product for the values, eight table lookups per column for the 64 bit features), checked against
scikit-learn's own ``decision_function`` on the training rows when it is fitted.  Histogram
gradient boosting (``estimator="boosting"``) sees interactions between features but is scored by
scikit-learn tree by tree, about 50 times slower per output.  Each is fitted on at most
:data:`TRAINING_ROWS` rows per side.  :func:`predicted_seconds` is the cost model ``"auto"`` uses to
decide whether to try a classifier at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
from threadpoolctl import threadpool_limits

from .base import Statistic
from .features import FEATURE_SETS, FeatureMap, LinearFeatures, fit_feature_map

__all__ = ["Classifier", "ClassifierStatistic", "fit_classifier", "ESTIMATORS", "require_sklearn",
           "predicted_seconds", "feature_map", "TRAINING_ROWS", "LARGEST_VALUE"]

ESTIMATORS = ("logistic", "boosting")
#: Outputs scored at a time (bounds the feature matrix's memory).
_BLOCK = 1 << 15
#: Training rows per side a classifier is fitted on (the first ones given).
TRAINING_ROWS = 1 << 16
#: Boosting iterations (at most; early stopping on a held-out tenth).
_BOOSTING_ITERATIONS = 100
#: The cost model (single-core seconds, measured once on an AMD EPYC core with scikit-learn 1.6):
#: scoring one output row costs _SCORE_FEATURE per feature of the linear path, or _SCORE_TREE per
#: boosting iteration; fitting costs _FIT_LOGISTIC or _FIT_BOOSTING per training row and feature.
_SCORE_FEATURE = 2.0e-9
_SCORE_TREE = 2.3e-7
_FIT_LOGISTIC = 1.2e-7
_FIT_BOOSTING = 1.0e-6


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

    ``estimator`` is ``"logistic"`` (logistic regression, the default, scored without
    scikit-learn in the workers), ``"boosting"`` (histogram gradient boosting), or any
    scikit-learn-style estimator with ``fit``/``predict_proba`` (it is cloned, and seeded through
    ``random_state`` when it has one); ``features`` is ``"auto"`` (bit patterns for k ≤ 4), or one
    of :data:`audit.statistics.features.FEATURE_SETS`.
    """

    estimator: Any = "logistic"
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
    linear: Optional[LinearFeatures] = None  # the log-odds as a linear score of the features
    kind = "classifier"

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        if self.linear is not None:
            return self.linear(outputs)
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

        return HistGradientBoostingClassifier(max_iter=_BOOSTING_ITERATIONS, early_stopping=True,
                                              random_state=seed), \
            "histogram gradient boosting"
    if estimator == "logistic":
        from sklearn.linear_model import LogisticRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import StandardScaler

        # Newton–Cholesky: few iterations for many rows and few features (and no L-BFGS).
        return make_pipeline(StandardScaler(), LogisticRegression(solver="newton-cholesky", max_iter=100)), \
            "logistic regression"
    if isinstance(estimator, str):
        raise ValueError(f"`estimator` must be one of {ESTIMATORS} or an estimator with fit/"
                         f"predict_proba, got {estimator!r}")
    if not (hasattr(estimator, "fit") and hasattr(estimator, "predict_proba")):
        raise TypeError(f"`estimator` must have fit and predict_proba methods, got {estimator!r}")
    model = clone(estimator)
    if "random_state" in model.get_params():
        model.set_params(random_state=seed)
    return model, type(estimator).__name__


def _features(base: np.ndarray, features: str) -> str:
    return ("values+bits" if base.shape[1] <= 4 else "values") if features == "auto" else features


def predicted_seconds(estimator: Any, features: FeatureMap, training_rows: int, scored_rows: int) -> Optional[float]:
    """The cost model: predicted single-core seconds to fit ``estimator`` on ``training_rows`` rows
    (both sides) with ``features`` and to score ``scored_rows`` outputs; None for an estimator
    object (its cost is unknown)."""
    width = features.width
    if estimator == "logistic":
        return _FIT_LOGISTIC * training_rows * width + _SCORE_FEATURE * scored_rows * width
    if estimator == "boosting":
        return _FIT_BOOSTING * training_rows * width + _SCORE_TREE * _BOOSTING_ITERATIONS * scored_rows
    return None


def feature_map(base: np.ndarray, neighbour: np.ndarray, features: str = "auto") -> FeatureMap:
    """The feature map a classifier would use on these training rows (sentinels chosen on them)."""
    rows = min(TRAINING_ROWS, base.shape[0]), min(TRAINING_ROWS, neighbour.shape[0])
    return fit_feature_map(np.concatenate([base[:rows[0]], neighbour[:rows[1]]]), _features(base, features))


def fit_classifier(base: np.ndarray, neighbour: np.ndarray, *, seed: int, estimator: Any = "logistic",
                   features: str = "auto", label: str = "") -> ClassifierStatistic:
    """Fit ``estimator`` on the first :data:`TRAINING_ROWS` training outputs of each side (label 1 =
    neighbour) with the chosen features; a logistic regression is scored by its linear form.
    ``label`` names the pair in the error raised for outputs beyond :data:`LARGEST_VALUE`."""
    base, neighbour = base[:TRAINING_ROWS], neighbour[:TRAINING_ROWS]
    pooled = np.concatenate([base, neighbour])
    largest = float(np.max(np.abs(pooled))) if pooled.size else 0.0
    if not largest <= LARGEST_VALUE:
        where = f" on pair {label!r}" if label else ""
        raise ValueError(f"the classifier statistic cannot be fitted{where}: a training output of magnitude "
                         f"{largest:.3g} (beyond {LARGEST_VALUE:.3g}) overflows the squares of scikit-learn's "
                         "standardisation; use 'linear', 'coordinates' or 'flag-value', which scale or bin such values")
    feature_map_ = fit_feature_map(pooled, _features(base, features))
    labels = np.concatenate([np.zeros(base.shape[0]), np.ones(neighbour.shape[0])])
    model, name = _estimator(estimator, seed)
    x = feature_map_(pooled)
    model.fit(x, labels)
    linear = _linear_form(model, feature_map_, pooled, x) if estimator == "logistic" else None
    return ClassifierStatistic(model, feature_map_, name, linear)


#: The largest output magnitude a classifier is fitted on: the standardisation squares the values and
#: sums them over at most 2 × TRAINING_ROWS = 2^17 rows; squares of at most 2^1000 sum below 2^1017,
#: far from the largest double (about 2^1024).
LARGEST_VALUE = 2.0 ** 500

#: The linear form is used only if it reproduces scikit-learn's log-odds to this relative accuracy.
_LINEAR_TOLERANCE = 1e-6


def _linear_form(model, features: FeatureMap, rows: np.ndarray, x: np.ndarray) -> Optional[LinearFeatures]:
    """The pipeline StandardScaler → LogisticRegression as ``intercept + features @ w`` in the raw
    features: w = coef/scale, intercept = b − Σ coef·mean/scale (a constant feature has scale 1).
    Checked against ``decision_function`` on up to 4,096 training rows; None if it differs."""
    scaler, regression = model[0], model[-1]
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    weights = regression.coef_[0] / scale
    intercept = float(regression.intercept_[0] - np.sum(regression.coef_[0] * scaler.mean_ / scale))
    linear = features.linear(weights, intercept)
    check = slice(0, min(rows.shape[0], 4096))
    expected = np.asarray(model.decision_function(x[check]), dtype=np.float64)
    got = linear(rows[check])
    if not np.all(np.abs(got - expected) <= _LINEAR_TOLERANCE * (1.0 + np.abs(expected))):
        return None
    return linear
