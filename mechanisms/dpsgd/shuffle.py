"""The shuffled DP-SGD trainer's view of one gradient canary: a Gaussian mixture per epoch.

:class:`~mechanisms.dpsgd.DPSGD` with ``sampling="shuffle"`` cuts a random permutation of its
N = n + m examples into K = round(1/q) batches per epoch; example rank r goes to batch ⌊rK/N⌋, so
the batch sizes ``batch_sizes(N, K)`` are fixed (they differ by at most one, the earlier batches
being the larger).  Take the pair "no canary" (D, N = n) and "add the canary" (D', N = n + 1) with
every training example's gradient a known vector g·C·u (``background=g``; g = 0 is the logistic
data set seen along a Dirac canary's coordinate, which no real example touches), and the canary's
clipped gradient c·u.  Along u the update of batch j is

    D :  y_j = g·C·s_j(n) + N(0, σ²)                                   (no randomness but noise)
    D':  y_j = g·C·(s_j(n + 1) − [j = J]) + c·[j = J] + N(0, σ²),  P(J = j) = s_j(n + 1)/(n + 1),

independently over epochs (s the batch sizes, σ the noise standard deviation): the canary is in
exactly one batch per epoch, where it takes a slot a known example would have had, and adding it
changes the batch sizes.  With d_J = E[y | D', J] − E[y | D] the privacy loss of one epoch is the
log-likelihood ratio of a Gaussian mixture against a Gaussian,

    ℓ(y) = log Σ_J P(J) exp((⟨y − E[y | D], d_J⟩ − ‖d_J‖²/2)/σ²),

summed over epochs (an epoch cut short by T keeps its first batches only).  For g = 0 this is the
log-mean-exp ℓ(y) = log Σ_j P(j) exp((c y_j − c²/2)/σ²) of the "one of K coordinates shifted"
pair; for g = −1 it is the setting of Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha & Zhang,
"How Private are DP-SGD Implementations?" (ICML 2024), with the add/remove relation instead of
their zeroing-out one: the canary both displaces a known example (a shift of (1 − g)C = 2C in its
batch) and lengthens batch 0 by one known example.

:class:`ShuffledCanaryPair` holds that law.  It gives

- :meth:`~ShuffledCanaryPair.loss`, the Neyman–Pearson statistic (:class:`ShuffledLikelihoodRatio`
  wraps it for the audit engine);
- :meth:`~ShuffledCanaryPair.epsilon`, a Monte Carlo **estimate** of the pair's ε(δ) with an
  approximate confidence interval (CLT on δ(ε) = E[(1 − e^{ε − L})₊]);
- :meth:`~ShuffledCanaryPair.event_lower_bound`, a **lower bound** on the pair's ε(δ) in closed
  form: threshold events on the largest coordinate of each epoch, whose probabilities are
  products of normal distribution functions (no sampling).

The pair's ε is a lower bound on the trainer's ε (the canary coordinate is a post-processing of
the view); with a crafted data set (g given) nothing but the canary moves any coordinate, so the
two are equal.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
from scipy import optimize, special, stats

from ..validation import check_finite_positive, check_int, check_open_unit

__all__ = ["ShuffledCanaryPair", "ShuffledLikelihoodRatio", "EpsilonEstimate", "batch_sizes"]


def batch_sizes(total: int, batches: int) -> np.ndarray:
    """Sizes of the ``batches`` batches the trainer cuts ``total`` permuted examples into."""
    total = check_int("total", total, minimum=0)
    batches = check_int("batches", batches, minimum=1)
    return np.bincount(np.arange(total) * batches // max(total, 1), minlength=batches)


@dataclass(frozen=True)
class EpsilonEstimate:
    """Monte Carlo estimate of ε(δ) with an approximate two-sided interval (CLT on δ(ε))."""

    delta: float
    estimate: float
    low: float
    high: float
    draws: int
    confidence: float
    direction: str

    def to_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class ShuffledCanaryPair:
    """The canary coordinate's law under D (no canary) and D' (the canary added); module docstring.

    Parameters
    ----------
    steps : T.
    noise : σ, the noise standard deviation of one update coordinate.
    base : the K means E[y_j | D].
    shifts : (K, K) rows d_J = E[y | D', J] − E[y | D].
    weights : the K probabilities P(J = j) (sum 1).
    """

    steps: int
    noise: float
    base: tuple
    shifts: tuple
    weights: tuple

    def __post_init__(self) -> None:
        object.__setattr__(self, "steps", check_int("steps", self.steps, minimum=1))
        object.__setattr__(self, "noise", check_finite_positive("noise", self.noise))
        base = np.asarray(self.base, dtype=np.float64)
        shifts = np.asarray(self.shifts, dtype=np.float64)
        weights = np.asarray(self.weights, dtype=np.float64)
        k = base.size
        if base.ndim != 1 or k < 1 or shifts.shape != (k, k) or weights.shape != (k,):
            raise ValueError(f"`base`, `shifts`, `weights` must have shapes (K,), (K, K), (K,), got "
                             f"{base.shape}, {shifts.shape}, {weights.shape}")
        if not (np.isfinite(base).all() and np.isfinite(shifts).all()):
            raise ValueError("`base` and `shifts` must be finite")
        if (weights < 0).any() or abs(weights.sum() - 1.0) > 1e-9:
            raise ValueError(f"`weights` must be probabilities summing to 1, got {weights.tolist()!r}")
        for name, value in (("base", base), ("shifts", shifts), ("weights", weights)):
            object.__setattr__(self, name, tuple(tuple(map(float, row)) for row in value) if value.ndim == 2
                               else tuple(map(float, value)))

    @classmethod
    def for_trainer(cls, n: int, batches: int, steps: int, *, background: float, shift: float,
                    clip: float, noise: float) -> "ShuffledCanaryPair":
        """The pair of the trainer with n examples of gradient ``background``·C·u, the canary's
        clipped shift c = ``shift``, K = ``batches`` and T = ``steps`` (module docstring)."""
        n = check_int("n", n, minimum=1)
        batches = check_int("batches", batches, minimum=1)
        if not -1.0 <= background <= 1.0:
            raise ValueError(f"`background` must be in [-1, 1], got {background!r}")
        g = background * check_finite_positive("clip", clip)
        without, with_canary = batch_sizes(n, batches), batch_sizes(n + 1, batches)
        base = g * without
        means = g * (with_canary[None, :] - np.eye(batches)) + check_finite_positive("shift", shift) * np.eye(batches)
        return cls(steps, noise, tuple(base), tuple(map(tuple, means - base[None, :])),
                   tuple(with_canary / (n + 1)))

    # -- structure -------------------------------------------------------------------------------
    @property
    def batches(self) -> int:
        return len(self.base)

    def epochs(self) -> list[int]:
        """How many batches of each epoch the T steps observe."""
        k = self.batches
        return [min(k, self.steps - start) for start in range(0, self.steps, k)]

    def _arrays(self):
        return (np.asarray(self.base), np.asarray(self.shifts), np.asarray(self.weights))

    # -- the likelihood ratio ---------------------------------------------------------------------
    def loss(self, y: np.ndarray) -> np.ndarray:
        """log dP_{D'}/dP_D of canary coordinates ``y`` (runs, T): Σ over epochs of ℓ (docstring)."""
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 2 or y.shape[1] != self.steps:
            raise ValueError(f"`y` must have shape (runs, {self.steps}), got {y.shape}")
        base, shifts, weights = self._arrays()
        s2 = self.noise**2
        total = np.zeros(y.shape[0])
        with np.errstate(divide="ignore"):
            log_w = np.log(weights)
        start = 0
        for r in self.epochs():
            d = shifts[:, :r]
            z = ((y[:, start:start + r] - base[:r]) @ d.T - 0.5 * (d**2).sum(axis=1)) / s2 + log_w
            total += special.logsumexp(z, axis=1)
            start += r
        return total

    def sample(self, present: bool, runs: int, rng: np.random.Generator) -> np.ndarray:
        """Canary coordinates (runs, T) under D' (``present``) or D."""
        runs = check_int("runs", runs, minimum=1)
        base, shifts, weights = self._arrays()
        y = self.noise * rng.standard_normal((runs, self.steps))
        start = 0
        for r in self.epochs():
            y[:, start:start + r] += base[:r]
            if present:
                j = rng.choice(self.batches, size=runs, p=weights)
                y[:, start:start + r] += shifts[j, :r]
            start += r
        return y

    # -- ε(δ) by Monte Carlo --------------------------------------------------------------------
    def epsilon(self, delta: float, *, draws: int, seed: int, confidence: float = 0.95,
                block: int = 200_000) -> EpsilonEstimate:
        """Monte Carlo estimate of ε(δ) = max over the two directions, with an approximate interval.

        For each direction (P, Q) ∈ {(D', D), (D, D')} with loss L = log dP/dQ drawn under P,
        δ(ε) = E_P[(1 − e^{ε − L})₊] is the mean of a variable in [0, 1]; the estimate solves
        mean = δ, and the interval ends solve mean ∓ z·SE = δ (z the two-sided normal quantile at
        ``confidence``, pointwise in ε: an approximate interval, not a bound).
        """
        delta = check_open_unit("delta", delta)
        draws = check_int("draws", draws, minimum=100)
        confidence = check_open_unit("confidence", confidence)
        block = check_int("block", block, minimum=1)
        z = float(stats.norm.ppf(0.5 + confidence / 2))
        rng = np.random.default_rng(check_int("seed", seed, minimum=0))
        best: Optional[EpsilonEstimate] = None
        for present, name in ((True, "add"), (False, "remove")):
            parts = []
            for start in range(0, draws, block):
                y = self.sample(present, min(block, draws - start), rng)
                loss = self.loss(y)
                parts.append(loss if present else -loss)
            loss = np.concatenate(parts)

            def gap(eps, k):
                h = np.maximum(0.0, -np.expm1(eps - loss))
                return h.mean() + k * h.std(ddof=1) / np.sqrt(loss.size) - delta

            ends = [_solve(lambda e: gap(e, k), float(loss.max())) for k in (0.0, -z, z)]
            found = EpsilonEstimate(delta, ends[0], ends[1], ends[2], draws, confidence, name)
            if best is None or found.estimate > best.estimate:
                best = found
        return best

    # -- a closed-form lower bound ---------------------------------------------------------------
    def event_lower_bound(self, delta: float, *, thresholds: Optional[np.ndarray] = None) -> float:
        """A lower bound on the pair's ε(δ) from threshold events, in closed form.

        Event A_t: in every epoch some observed coordinate has y_j − E[y_j | D] ≥ t; B_t: in every
        epoch none has.  Coordinates are independent normals given J and epochs are independent, so
        P_D(B_t) = Π_e Φ(t/σ)^{r_e} and P_{D'}(B_t) = Π_e Σ_J P(J) Π_{j<r_e} Φ((t − d_Jj)/σ), and
        likewise for A_t.  Any event E gives ε(δ) ≥ log((P(E) − δ)/Q(E)); the bound is the largest
        over t on a grid (``thresholds``; default 3201 points from 8σ below the lowest mean shift to
        8σ above the highest), both events and both directions.
        """
        delta = check_open_unit("delta", delta)
        _, shifts, weights = self._arrays()
        if thresholds is None:  # from 8σ below the lowest mean to 8σ above the highest
            t = np.linspace(min(0.0, shifts.min()) - 8.0 * self.noise, max(0.0, shifts.max()) + 8.0 * self.noise, 3201)
        else:
            t = np.asarray(thresholds, dtype=np.float64)
            if t.ndim != 1 or t.size == 0 or not np.isfinite(t).all():
                raise ValueError(f"`thresholds` must be a non-empty 1-D array of finite numbers, got {thresholds!r}")
        log_none_d = np.zeros_like(t)   # log P_D(B_t)
        log_none_n = np.zeros_like(t)   # log P_{D'}(B_t)
        log_some_d = np.zeros_like(t)
        log_some_n = np.zeros_like(t)
        for r in self.epochs():
            below_d = r * special.log_ndtr(t / self.noise)
            below_j = special.log_ndtr((t[:, None, None] - shifts[None, :, :r]) / self.noise).sum(axis=2)
            with np.errstate(divide="ignore"):
                below_n = special.logsumexp(below_j, b=weights[None, :], axis=1)
                log_none_d += below_d
                log_none_n += below_n
                log_some_d += np.log(-np.expm1(below_d))
                some_j = np.log(np.maximum(-np.expm1(below_j), 0.0))
                log_some_n += special.logsumexp(some_j, b=weights[None, :], axis=1)
        best = 0.0
        for log_p, log_q in ((log_some_n, log_some_d), (log_none_n, log_none_d),
                             (log_some_d, log_some_n), (log_none_d, log_none_n)):
            p = np.exp(log_p)
            ok = p > delta
            if ok.any():
                with np.errstate(divide="ignore"):
                    values = np.log(p[ok] - delta) - log_q[ok]
                best = max(best, float(values.max()))
        return best


    # -- a quadrature lower bound ----------------------------------------------------------------
    def grid_lower_bound(self, delta: float, *, step: float = 0.02, span: float = 10.0,
                         bins: int = 3000) -> float:
        """A lower bound on the pair's ε(δ) by quadrature: the exact ε of a post-processing.

        Each epoch's observed coordinates are rounded to a grid of cells of side ``step``·σ covering
        ``span``·σ beyond the means (the outer cells reach to ±∞); the cell masses under D and under
        each component of D' are products of differences of Φ, so the rounded epoch is a finite pair
        (p', p) computed without sampling.  Cells are merged by their loss log(p'/p) into ``bins``
        groups, the epochs are composed as product distributions (atoms multiplied out and merged
        again), and δ(ε) = Σ_i (p'_i − e^ε p_i)₊ (and the reverse) is exact for the result.
        Rounding and merging are post-processing, so the ε found is at most the pair's, and it
        converges to it as ``step`` → 0 and ``bins`` → ∞.  Needs (cells per axis)^r ≤ 6·10⁶ for the r
        batches of an epoch (K ≤ 2 at the defaults).
        """
        delta = check_open_unit("delta", delta)
        step = check_finite_positive("step", step)
        span = check_finite_positive("span", span)
        bins = check_int("bins", bins, minimum=2)
        _, shifts, weights = self._arrays()
        sigma = self.noise
        composed = None
        for r in self.epochs():
            d = shifts[:, :r]
            edges = np.arange(min(0.0, d.min()) - span * sigma, max(0.0, d.max()) + span * sigma + step * sigma,
                              step * sigma)
            if (edges.size + 1) ** r > 6_000_000:
                raise ValueError(f"grid_lower_bound: {edges.size + 1}^{r} cells is too many; raise `step` "
                                 f"(got {step!r}) or use a pair with K ≤ 2")
            cuts = np.concatenate([[-np.inf], edges, [np.inf]])

            def cell(mean):  # masses of the 1-D cells under N(mean, σ²)
                return np.diff(special.ndtr((cuts - mean) / sigma))

            base = cell(0.0)
            p = base
            for _ in range(r - 1):
                p = np.multiply.outer(p, base)
            q = 0.0
            for w, row in zip(weights, d):
                term = cell(row[0])
                for j in range(1, r):
                    term = np.multiply.outer(term, cell(row[j]))
                q = q + w * term
            epoch = _merge(q.ravel(), p.ravel(), bins)
            composed = epoch if composed is None else _merge(np.outer(composed[0], epoch[0]).ravel(),
                                                             np.outer(composed[1], epoch[1]).ravel(), bins)
        q, p = composed
        best = 0.0
        for a, b in ((q, p), (p, q)):
            keep = a > 0
            a, b = a[keep], b[keep]
            if a[b == 0].sum() > delta:  # outcomes impossible under the other side carry more than δ
                return float("inf")
            best = max(best, _solve(lambda e: np.maximum(0.0, a - np.exp(e) * b).sum() - delta,
                                    float(np.log(a / np.maximum(b, 1e-300)).max())))
        return best


def _merge(q: np.ndarray, p: np.ndarray, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Group the atoms of a finite pair (q, p) into ``bins`` groups of nearby loss log(q/p), keeping
    atoms where one side is zero apart (a post-processing: each group becomes one outcome)."""
    either = (q > 0) | (p > 0)
    q, p = q[either], p[either]
    with np.errstate(divide="ignore"):
        loss = np.log(q) - np.log(p)
    finite = np.isfinite(loss)
    groups = np.full(loss.shape, bins)  # bins: q > 0 = p, bins + 1: p > 0 = q
    groups[~finite & (q > 0)] = bins
    groups[~finite & (q == 0)] = bins + 1
    if finite.any():
        low, high = loss[finite].min(), loss[finite].max()
        scale = (bins - 1) / max(high - low, 1e-12)
        groups[finite] = np.floor((loss[finite] - low) * scale).astype(np.int64)
    merged_q = np.bincount(groups, weights=q, minlength=bins + 2)
    merged_p = np.bincount(groups, weights=p, minlength=bins + 2)
    keep = (merged_q > 0) | (merged_p > 0)
    return merged_q[keep], merged_p[keep]


def _solve(f, high: float) -> float:
    """The ε ≥ 0 where the decreasing f crosses 0 (0 if f(0) ≤ 0)."""
    if f(0.0) <= 0:
        return 0.0
    high = max(high, 1.0)
    for _ in range(60):
        if f(high) <= 0:
            return float(optimize.brentq(f, 0.0, high, xtol=1e-6))
        high *= 2
    raise ArithmeticError(f"no ε ≤ {high:g} meets δ: the privacy loss is unbounded at this δ")


@dataclass(frozen=True)
class ShuffledLikelihoodRatio:
    """Score of the ``"updates"`` view of the shuffled trainer: :meth:`ShuffledCanaryPair.loss` of
    the projections ⟨update_t, u⟩ (the Neyman–Pearson statistic of that pair; fixed in advance,
    nothing is learned from samples)."""

    direction: tuple
    pair: ShuffledCanaryPair

    def __call__(self, outputs: np.ndarray) -> np.ndarray:
        u = np.asarray(self.direction)
        y = outputs.reshape(outputs.shape[0], self.pair.steps, u.size) @ u
        return self.pair.loss(y)
