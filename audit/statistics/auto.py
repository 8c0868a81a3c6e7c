"""``statistic="auto"``: each pair's statistic chosen on training draws by how much of the claim it uses.

**Candidates.**  From one pair's training draws (:mod:`audit.statistics.training`):

* ``linear``: the output, or Fisher's discriminant;
* ``categorical``: when every training output falls into at most :data:`AUTO_ATOMS` atoms;
* ``binned``: adaptive bins of the output or of Fisher's projection (from 1,024 raw rows per side);
* ``additive`` and ``flag-value`` (vector outputs): per-column log-ratios, and ⊤/⊥ patterns with
  their released values (the latter only when the outputs have a pattern: flags or sentinels);
* ``classifier``: a classifier on the values and sentinel flags (logistic regression when the
  outputs have sentinel values — without them it is a linear statistic again —, else gradient
  boosting) when scikit-learn is installed and the cost model
  (:func:`~audit.statistics.classifier.predicted_seconds`) predicts at most
  :data:`CLASSIFIER_BUDGET_SECONDS` of single-core time to fit it and score the audit's draws.
  ``"auto"`` never looks at floating-point bit patterns: every floating-point implementation of
  additive noise leaks through its low-order bits (Mironov, CCS 2012), the reference mechanisms'
  included, whose exact truths are those of the real-valued mechanism; ``statistic="classifier"``
  audits the bits when that is the question.

Every candidate is fitted on the training draws *except* the second half of the raw rows, and
scored on that held-out half.

**The score** (:func:`audit.scoring.held_out_usage`): how much of the claim the candidate's
threshold events use on the held-out draws — ε at the claim's δ and δ at its ε for (ε, δ)-DP, μ
for μ-GDP, and the whole ε(δ) curve for zCDP, Rényi and profile claims.  Each quantity's event is
chosen on one half of the held-out draws and measured on the other, as the audit itself chooses and
certifies, at pessimistic and at optimistic Clopper–Pearson points: an interval [u_lo, u_hi] for
the usage.  A rare event that only one side produces counts with its full evidence, which is why a
statistic that bins it away loses to one that keeps it; a candidate with no real signal has
u_lo ≤ 0 whatever its number of thresholds.

**The choice.**

1. A candidate *clearly uses more of the claim* than linear when its u_lo exceeds linear's u_hi;
   the one with the largest u_lo among those wins.
2. Otherwise the held-out draws cannot rank the candidates by usage — the signal is weak, or the
   candidates are close —, and the candidates that no other clearly beats (whose u_hi is at least
   the largest u_lo) are judged by their held-out separation d (:func:`audit.scoring.separation`),
   which governs the power of threshold tests in the weak-signal limit, and, where d's standard
   error is of the order of the differences between them, by the structure of the outputs: the
   candidate that models it (``flag-value`` for outputs with ⊤/⊥ patterns or sentinels,
   ``additive`` for vector outputs whose columns are uncorrelated — the likelihood ratio of
   independent columns is a sum —, ``categorical`` for discrete outputs, else ``linear``) is chosen
   unless another separates clearly better: by :data:`SEPARATION_Z` standard errors of the paired
   difference.  (A monotone transform of a 1-D output can separate better with the same threshold
   events — the sign of a Laplace output √2 times better than the output — and is then chosen at no
   loss; where the histogram of the transform resolves an extreme tail more finely, as for the
   noisy maximum of exponentials near its support edge, at a gain.)

The winner is refitted on all the training draws (a classifier is kept as fitted, on a quarter of
:data:`~audit.statistics.classifier.TRAINING_ROWS` rows per side).  None of this touches the
selection or certification draws, so the choice costs no confidence; the report lists what was
tried, every candidate's usage and separation, what was skipped and why, and which rule decided.
On a 1-D output with fewer than :data:`MIN_AUTO_TRAINING` training draws per side nothing can be
compared, so ``"auto"`` is the linear statistic and draws no training samples at all.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from ..scoring import USAGE_LEVEL, held_out_usage, separation
from .additive import fit_additive, fit_flag_value
from .base import Statistic, ordered
from .binned import fit_binned
from .categorical import fit_categorical
from .classifier import TRAINING_ROWS, feature_map, fit_classifier, predicted_seconds
from .lanes import Lanes
from .linear import LinearStatistic, lda_statistic, pooled_covariance
from .training import TrainingData

__all__ = ["fit_auto", "AUTO_ATOMS", "MIN_AUTO_TRAINING", "SEPARATION_Z", "UNCORRELATED",
           "CLASSIFIER_BUDGET_SECONDS", "linear_of", "binned_of"]

#: ``"auto"`` treats outputs with at most this many distinct rows as categorical candidates.
AUTO_ATOMS = 4096
_MIN_HELD_OUT = 64
#: ``"auto"`` compares candidates only from this many training draws per side (two held-out halves).
MIN_AUTO_TRAINING = 2 * _MIN_HELD_OUT
#: Raw rows per side the binned candidate needs to be fitted.
_MIN_BINNED = 1024
#: Rule 2: standard errors by which one candidate's separation must exceed another's.
SEPARATION_Z = 2.0
#: Rule 2: columns count as uncorrelated when no pooled correlation exceeds this.
UNCORRELATED = 0.1
#: Predicted single-core seconds a classifier may cost (fit + scoring every draw of the audit).
CLASSIFIER_BUDGET_SECONDS = 1.0
#: The training rows per side ``"auto"`` fits its classifier on (a quarter of a named classifier's).
_AUTO_CLASSIFIER_ROWS = TRAINING_ROWS // 4


def linear_of(moments: tuple, output_dim: int) -> LinearStatistic:
    """The linear statistic from both sides' moments: the output (k = 1) or Fisher's discriminant."""
    if output_dim == 1:
        return LinearStatistic()
    return lda_statistic(*moments)


def binned_of(base_rows: np.ndarray, neighbour_rows: np.ndarray, linear: LinearStatistic):
    """The binned statistic of the output (k = 1) or of the linear projection."""
    projection = linear if linear.weights is not None else None
    value = (lambda rows: rows[:, 0]) if projection is None else projection
    return fit_binned(value(base_rows), value(neighbour_rows), projection)


def _sklearn() -> bool:
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return False
    return True


def fit_auto(base: Optional[TrainingData], neighbour: Optional[TrainingData], *, claim: Any, output_dim: int,
             seed: int, samples: Optional[int] = None) -> tuple[Statistic, dict]:
    """The statistic ``"auto"`` chooses for one pair, and notes for the report (module docstring).
    ``samples``: the draws per side the statistic will score (the cost model's; None: unknown)."""
    if base is None or neighbour is None:  # 1-D output, too few draws to train (see needs_training)
        return LinearStatistic(), {"auto_choice": "linear", "auto": {"rule": "too few training draws"}}
    half0, half1 = base.rows.shape[0] // 2, neighbour.rows.shape[0] // 2
    held0, held1 = base.rows[half0:], neighbour.rows[half1:]
    if min(held0.shape[0], held1.shape[0]) < _MIN_HELD_OUT:  # too few to compare anything
        return _final("linear", base.with_rows(), neighbour.with_rows(), output_dim, None), \
            {"auto_choice": "linear", "auto": {"rule": "too few held-out draws"}}
    fit0, fit1 = base.with_rows(base.rows[:half0]), neighbour.with_rows(neighbour.rows[:half1])
    raw0, raw1 = base.rows[:half0], neighbour.rows[:half1]
    candidates, skipped = _candidates(fit0, fit1, raw0, raw1, output_dim, seed, samples)
    # Scores of huge outputs may overflow: kept in order (NaN lowest), and their usage and
    # separation computed without floating-point warnings (an overflowing separation ranks nothing).
    with np.errstate(over="ignore", invalid="ignore"):
        scores = {name: (ordered(stat(held0)), ordered(stat(held1))) for name, stat in candidates.items()}
        usage = {name: held_out_usage(claim, *s) for name, s in scores.items()}
        structural = _structural(candidates, fit0, fit1, output_dim)
        separations = {name: separation(*s, reference=None if name == "linear" else scores["linear"])
                       for name, s in scores.items()}
        choice, rule = _choose(usage, scores, separations, structural)
    tried = {name: {"usage": [_plain(usage[name].lower), _plain(usage[name].upper)],
                    "separation": _plain(separations[name].value),
                    "separation_se": _plain(separations[name].standard_error)} for name in candidates}
    notes = {"auto_choice": choice,
             "auto": {"rule": rule, "held_out": [int(held0.shape[0]), int(held1.shape[0])],
                      "level": USAGE_LEVEL, "structure": structural, "tried": tried, "skipped": skipped}}
    everything0, everything1 = fit0.with_rows(held0), fit1.with_rows(held1)
    primary = _final(choice, everything0, everything1, output_dim, candidates[choice])
    return _with_alternates(choice, primary, candidates, everything0, everything1, output_dim), notes


def _with_alternates(choice: str, primary: Statistic, candidates: dict, everything0: TrainingData,
                     everything1: TrainingData, output_dim: int) -> Lanes:
    """The chosen statistic with every other candidate as an alternate lane
    (:mod:`audit.statistics.lanes`): the linear one refitted on all the training draws (it costs a
    product), the others as fitted for the choice.  Their events compete with the primary's on the
    selection draws, so a region too rare for the training draws to rank the candidates by — a tail
    only one side reaches with probability 10⁻⁵ — is still found where some candidate resolves it."""
    others = [name for name in candidates if name != choice]
    linear = linear_of((everything0.moments, everything1.moments), output_dim) if output_dim > 1 \
        else LinearStatistic()
    alternates = tuple(linear if name == "linear" else candidates[name] for name in others)
    return Lanes(primary, alternates, (choice, *others))


def _plain(value: float) -> Optional[float]:
    return float(value) if math.isfinite(value) else None


def _candidates(fit0: TrainingData, fit1: TrainingData, raw0, raw1, output_dim: int, seed: int,
                samples: Optional[int]) -> tuple[dict, dict]:
    """The candidates fitted on the fit part, and the skipped ones with the reason."""
    linear = linear_of((fit0.moments, fit1.moments), output_dim) if output_dim > 1 else LinearStatistic()
    candidates: dict[str, Statistic] = {"linear": linear}
    skipped: dict[str, str] = {}
    if fit0.atoms is not None and fit1.atoms is not None and \
            max(fit0.atoms.keys.size, fit1.atoms.keys.size) <= min(fit0.atoms.n, fit1.atoms.n) // 2:
        candidates["categorical"] = fit_categorical(fit0.atoms, fit1.atoms)
    else:
        skipped["categorical"] = f"more than {AUTO_ATOMS} distinct outputs, or most outputs seen once"
    if min(raw0.shape[0], raw1.shape[0]) >= _MIN_BINNED:
        candidates["binned"] = binned_of(raw0, raw1, linear)
    else:
        skipped["binned"] = f"fewer than {_MIN_BINNED} raw training rows per side"
    if output_dim == 1:
        skipped["additive"] = skipped["flag-value"] = "1-D output (the binned statistic covers it)"
    elif fit0.columns is None or fit1.columns is None:
        skipped["additive"] = skipped["flag-value"] = "no column counts"
    else:
        n0, n1 = fit0.summarised + raw0.shape[0], fit1.summarised + raw1.shape[0]
        candidates["additive"] = fit_additive(fit0.columns, fit1.columns, n0, n1)
        if fit0.patterns is None or fit1.patterns is None:
            skipped["flag-value"] = "more distinct ⊤/⊥ patterns than counted"
        else:
            flag_value = fit_flag_value(fit0.columns, fit1.columns, fit0.patterns, fit1.patterns)
            if flag_value.blocks:
                candidates["flag-value"] = flag_value
            else:
                skipped["flag-value"] = "no ⊤/⊥ pattern or sentinel distinguishes the sides"
    try:
        classifier, reason = _classifier(raw0, raw1, seed, samples)
    except _UNFITTABLE as exc:  # e.g. outputs so large that the standardisation overflows
        classifier, reason = None, _could_not_fit(exc)
    if classifier is not None:
        candidates["classifier"] = classifier
    else:
        skipped["classifier"] = reason
    return candidates, skipped


#: What a candidate's fit raises when the training outputs defeat it (overflowing moments, NaN
#: features, a singular system): the candidate is skipped with the reason.
_UNFITTABLE = (ValueError, ArithmeticError, np.linalg.LinAlgError)


def _could_not_fit(exc: BaseException) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first}"


def _classifier(raw0, raw1, seed: int, samples: Optional[int]):
    """The classifier on values and sentinel flags if it is worth its cost (module docstring), or
    None and why not."""
    if not _sklearn():
        return None, "scikit-learn is not installed (the learn extra)"
    if min(raw0.shape[0], raw1.shape[0]) < _MIN_BINNED:
        return None, f"fewer than {_MIN_BINNED} raw training rows per side"
    raw0, raw1 = raw0[:_AUTO_CLASSIFIER_ROWS], raw1[:_AUTO_CLASSIFIER_ROWS]
    features = feature_map(raw0, raw1, "values")
    estimator = "logistic" if any(features.sentinels) else "boosting"
    scored = 2 * (samples if samples is not None else TRAINING_ROWS)
    cost = predicted_seconds(estimator, features, raw0.shape[0] + raw1.shape[0], scored)
    if cost > CLASSIFIER_BUDGET_SECONDS:
        why = "" if estimator == "logistic" else "no sentinel values (logistic regression would be linear); "
        return None, f"{why}{estimator}: predicted cost {cost:.3g} s above the {CLASSIFIER_BUDGET_SECONDS:g} s budget"
    return fit_classifier(raw0, raw1, seed=seed, estimator=estimator, features="values"), ""


def _structural(candidates: dict, fit0: TrainingData, fit1: TrainingData, output_dim: int) -> str:
    """The candidate that models the outputs' structure (rule 3 of the module docstring)."""
    if "flag-value" in candidates:
        return "flag-value"
    if "additive" in candidates and _uncorrelated(fit0.moments, fit1.moments):
        return "additive"
    if "categorical" in candidates:
        return "categorical"
    return "linear"


def _uncorrelated(moments0, moments1) -> bool:
    """Whether no two columns' pooled correlation (within each side, pooled) exceeds UNCORRELATED."""
    if moments0 is None or moments1 is None:
        return False
    covariance = pooled_covariance(moments0, moments1)[0]  # on the columns' common scale if huge
    scale = np.sqrt(np.maximum(np.diag(covariance), 1e-300))
    correlation = covariance / np.outer(scale, scale)
    np.fill_diagonal(correlation, 0.0)
    return bool(np.max(np.abs(correlation)) <= UNCORRELATED)


def _choose(usage: dict, scores: dict, separations: dict, structural: str) -> tuple[str, str]:
    """The rules of the module docstring: (choice, which rule decided).  ``separations`` are each
    candidate's against linear."""
    linear = usage["linear"].upper
    clear = [name for name, u in usage.items() if name != "linear" and u.lower > linear]
    if clear:
        return max(clear, key=lambda name: usage[name].lower), "clearly uses more of the claim than linear"
    best_lower = max(u.lower for u in usage.values())
    open_ = [name for name, u in usage.items() if u.upper >= best_lower]
    why = "usage does not rank the candidates on the held-out draws"
    if structural not in open_:
        behind = structural
        structural = "linear" if "linear" in open_ else max(open_, key=lambda name: usage[name].lower)
        why += f" ({behind} is clearly behind {structural})"
    against = {name: separation(*scores[name], reference=scores[structural]) for name in open_ if name != structural}
    reference = separations[structural].value
    ahead = [name for name, s in against.items()
             if separations[name].value - reference >= SEPARATION_Z * s.standard_error]
    if ahead:
        return max(ahead, key=lambda name: separations[name].value), f"{why}: separates clearly better than {structural}"
    return structural, f"{why}: {structural} fits the outputs' structure" + \
        ("" if structural == "linear" else ", and no candidate separates clearly better")


def _final(choice: str, everything0: TrainingData, everything1: TrainingData, output_dim: int,
           candidate: Optional[Statistic]) -> Statistic:
    """The chosen statistic refitted on all the training draws (``everything``: the summaries of
    every training draw, and the raw rows)."""
    linear = linear_of((everything0.moments, everything1.moments), output_dim) if output_dim > 1 \
        else LinearStatistic()
    if choice == "linear":
        return linear
    if choice == "categorical":  # the held-out rows may add atoms beyond the limit: keep the candidate then
        if everything0.atoms is None or everything1.atoms is None:
            return candidate
        return fit_categorical(everything0.atoms, everything1.atoms)
    if choice == "binned":
        return binned_of(everything0.rows, everything1.rows, linear)
    if choice == "additive":
        return fit_additive(everything0.columns, everything1.columns, everything0.n, everything1.n)
    if choice == "flag-value":
        if everything0.patterns is None or everything1.patterns is None:
            return candidate
        return fit_flag_value(everything0.columns, everything1.columns, everything0.patterns, everything1.patterns)
    if choice == "classifier":  # already fitted on a quarter of TRAINING_ROWS rows per side: kept as it is
        return candidate
    raise ValueError(f"unknown auto candidate {choice!r}")  # pragma: no cover - the candidates are fixed
