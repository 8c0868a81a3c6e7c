"""Black-box scores of a trained model on its canaries, in float64 and in forms that do not saturate.

A black-box adversary sees the final model's output on the canary: its logits ``l`` (one logit
for a binary classifier trained with a BCE loss, K ≥ 2 for one trained with cross-entropy) and
scores it.  The score must keep apart models that differ: a float32 cross-entropy is exactly 0.0
for any logit gap above about 17 (log(1 + e^{−17}) rounds to 0 in float32), so a trainer whose
models all classify the canary with confidence outputs one value in both worlds and cannot be
refuted.  Every score here is computed in float64 from the logits, in a stable form:

- ``"logit"``: the canary class's logit l_y (K ≥ 2), or the single logit l (K = 1);
- ``"margin"``: l_y − max_{j≠y} l_j (K ≥ 2), or the signed logit z = (2y − 1)·l (K = 1), which
  is the margin of the logits (0, l) of a BCE model; never saturates;
- ``"loss"``: the cross-entropy logsumexp(l) − l_y, computed as m + log Σ_j exp(l_j − m) − l_y
  with m = max_j l_j (K ≥ 2), or the BCE loss softplus(−z) = max(−z, 0) + log1p(exp(−|z|))
  (K = 1): exact to float64's precision down to losses near 1e-308, i.e. margins below about 700.

For K = 2 the loss is a decreasing function of the margin, so the two views have the same
threshold events; for K > 2 they differ.  A user's own score is any function
``score(logits (k, K) float64, labels (k,) int64) -> (k,)``.
"""

from __future__ import annotations

from typing import Callable, Union

import numpy as np

__all__ = ["BLACK_BOX_SCORES", "canary_score"]

BLACK_BOX_SCORES = ("loss", "logit", "margin")


def canary_score(logits, labels, score: Union[str, Callable], *, where: str = "score") -> np.ndarray:
    """The score of each of k canaries from the model's logits (module docstring).

    Parameters
    ----------
    logits : (k,), (k, 1) or (k, K) array of the model's outputs on the canaries (any float dtype;
        cast to float64 before any arithmetic).
    labels : (k,) integer labels (0/1 for a single logit).
    score : "loss", "logit", "margin" or a callable ``(logits (k, K), labels (k,)) -> (k,)``.
    where : named in the error raised for a non-finite score.
    """
    values = np.asarray(logits, dtype=np.float64)
    labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2 or values.shape[0] != labels.size:
        raise ValueError(f"{where}: the model must output (k,) or (k, K) logits for k = {labels.size} canaries, "
                         f"got shape {np.shape(logits)}")
    if values.shape[1] > 1 and labels.size and (labels.min() < 0 or labels.max() >= values.shape[1]):
        raise ValueError(f"{where}: canary labels must lie in [0, {values.shape[1]}) for {values.shape[1]} logits, "
                         f"got {labels.tolist()!r}")
    if callable(score):
        out = np.asarray(score(values, labels), dtype=np.float64).reshape(-1)
        if out.size != labels.size:
            raise ValueError(f"{where}: the score function {getattr(score, '__name__', score)!r} must return "
                             f"{labels.size} numbers, got shape {np.shape(out)}")
    else:
        out = _BUILT_IN[score](values, labels)
    if not np.isfinite(out).all():
        raise ValueError(f"{where}: the canary's {score if isinstance(score, str) else 'score'} is not finite "
                         f"(logits {values.tolist()!r})")
    return out


def _signed(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    if np.any((labels != 0) & (labels != 1)):
        raise ValueError(f"a one-logit (BCE) model needs labels 0 or 1, got {labels.tolist()!r}")
    return (2.0 * labels - 1.0) * values[:, 0]


def _logit(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    if values.shape[1] == 1:
        return values[:, 0].copy()
    return values[np.arange(labels.size), labels]


def _margin(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    if values.shape[1] == 1:
        return _signed(values, labels)
    rows = np.arange(labels.size)
    others = values.copy()
    others[rows, labels] = -np.inf
    return values[rows, labels] - others.max(axis=1)


def _loss(values: np.ndarray, labels: np.ndarray) -> np.ndarray:
    if values.shape[1] == 1:
        z = _signed(values, labels)
        return np.maximum(-z, 0.0) + np.log1p(np.exp(-np.abs(z)))  # softplus(−z), stable
    top = values.max(axis=1)
    return top + np.log(np.exp(values - top[:, None]).sum(axis=1)) - values[np.arange(labels.size), labels]


_BUILT_IN = {"loss": _loss, "logit": _logit, "margin": _margin}
