"""Data that dpaudit crafts around a user's trainer, and the views that need it.

A black-box or per-step audit on the user's own data sees a fault only as far as that data lets
it show.  Three faults hide there (docs/training.md):

- **batch-level clipping** (the batch's summed gradient clipped to C, not each example's) changes
  the sensitivity from C to at most 2C, and reaches 2C only when the other examples' clipped sum
  points against the canary's gradient;
- **shuffled fixed-size batches** accounted as Poisson sampling leak which batch holds the canary
  only when every other example's gradient is known (Chua, Ghazi, Kamath, Kumar, Manurangsi, Sinha
  & Zhang, "How Private are DP-SGD Implementations?", ICML 2024; docs/dpsgd.md);
- **a data-dependent normaliser** (Opacus's ``loss_reduction="mean"`` divides the noisy sum by
  ⌊n·q⌋, which adding a row changes) scales the whole update, noise included, which shows in the
  energy of coordinates that carry noise only.

**Crafted rows** (``crafted=True``): the user's n rows are replaced by n rows that are 0 on every
feature and s/(4n) on dpaudit's canary column, with a label o ≠ c (o = 0, or 1 when c = 0).  Under
the Dirac probe (:mod:`.watch`) a row of value v and label ℓ on that column has the constant
gradient v·(softmax(0) − e_ℓ) there (v·(½ − ℓ) for one logit), so for two classes or one logit
each crafted row's gradient is −1/(4n) times the canary's, of norm s/(4n·√2) (s/(8n) for one
logit): about 57 (40) at s = 10⁴, n = 31, above any usual clip norm.  Per-example clipping makes
each crafted row −C along the canary's direction d, known; a sum clipped as a whole points along
−d without the canary and along +d with it (the canary's gradient is 4n/k times the k crafted
rows' of its batch, collinear): the 2C of the triangle inequality.  n is kept, so a trainer that
derives its sampling rate from the data's size samples as it does on the user's data (for the
shuffled view only, n becomes (K − 1)·B + 1, the fewest rows that a ``DataLoader`` of batch size B
still cuts into the same K = ⌈n/B⌉ batches, so the same q = 1/K, whose last batch holds one row
without the canary and two with it: the law's ε grows as n falls to it; at σ = 2, T = 4, B = 16,
ε(1e-3) ≥ 3.00 at 17 rows and ≥ 2.26 at 31, :meth:`ShuffledCanaryPair.event_lower_bound`).  For K > 2
classes the crafted gradients are not exactly opposed to the canary's (softmax(0) − e_o against
softmax(0) − e_c), only against its e_c component.  Opacus computes a ``Linear``'s per-example
gradient from its input and output gradient, and so also gives each probed row a bias gradient
(½ for one logit), which clipping shares with the column: the column keeps C·v/√(v² + 1) of it,
within a relative 1/(2v²) of C (2·10⁻⁵ for the crafted rows of the shuffled view).

**Noise columns** (``noise_columns=m``): m more zero columns before the canary column, used by no
row, so that every update of their weights is the trainer's noise (and whatever scales it).

**Views**:

- ``"energy"``: log of the mean square of the noise columns' updates over all steps.  A correct
  trainer's noise does not depend on the data, so the view has one law in both worlds; a
  normaliser that adding the canary changes from N₀ to N₁ moves it by 2·log(N₁/N₀); the noise
  columns alone then have the ε(δ) of :func:`scale_pair_epsilon` (36.7 at δ = 1e-3 for the zoo's
  4,096 coordinates and 16/15), a lower bound on the trainer's.
- ``"shuffled"``: the likelihood ratio of :class:`mechanisms.dpsgd.shuffle.ShuffledCanaryPair`
  for a ``DataLoader`` of batch size B cutting n and n + 1 rows (first batches full), at the
  claim's σ and T, of the per-step projections v_t = σ·⟨u_t, d_t⟩/ŝ, with ŝ the root mean square
  of the noise columns' updates (the noise's scale σ·C·η/B, so that v_t is in units of C·η/B):
  on crafted rows the law of Chua et al.'s construction (background −C), on the user's data the
  "one of K batches shifted" law (background 0).  A statistic fixed before any draw; the
  estimated scale costs power, not validity.

The true ε of shuffled batches on crafted rows at the zoo's configuration (σ = 2, T = 4, batches
of 16, q = ½) is at least 3.00 at δ = 1e-3 on 17 rows and 2.26 on 31
(:meth:`ShuffledCanaryPair.event_lower_bound`, closed form; about 3.7 on 31 by Monte Carlo),
against Opacus's 1.92 (RDP) and dp-accounting's 1.62 (PLD) for Poisson sampling.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, stats

from ..dpsgd.shuffle import ShuffledCanaryPair
from ..validation import check_int, check_open_unit

__all__ = ["crafted_rows", "loader_batch_sizes", "shuffled_pair", "energy_view", "scale_pair_epsilon", "CRAFTED_SHARE"]

#: The crafted rows' value on the canary column, as a share of the canary's s over n rows.
CRAFTED_SHARE = 0.25


def crafted_rows(n: int, width: int, scale: float, label: int) -> tuple[np.ndarray, np.ndarray]:
    """n crafted rows (module docstring): (x (n, width), y (n,)), s/(4n) on the last column and
    the label o ≠ ``label`` (the canary's)."""
    n = check_int("n", n, minimum=1)
    x = np.zeros((n, width))
    x[:, -1] = CRAFTED_SHARE * scale / n
    return x, np.full(n, 1 if label == 0 else 0)


def loader_batch_sizes(total: int, batch_size: int) -> np.ndarray:
    """Sizes of the batches a ``DataLoader(batch_size=B)`` cuts ``total`` rows into (first full)."""
    sizes = np.full(-(-total // batch_size), batch_size)
    sizes[-1] = total - batch_size * (sizes.size - 1)
    return sizes


def shuffled_pair(n: int, batch_size: int, steps: int, noise: float, *, crafted: bool) -> ShuffledCanaryPair:
    """The per-step law of the canary's projections, in units of C·η/B, under shuffled batches of
    ``batch_size`` (module docstring): the canary takes a slot of a known row in one batch of each
    epoch, P(batch J) = s_J(n + 1)/(n + 1)."""
    without, with_canary = loader_batch_sizes(n, batch_size), loader_batch_sizes(n + 1, batch_size)
    if without.size != with_canary.size:
        raise ValueError(f"the shuffled view needs the same number of batches with and without the canary; "
                         f"n={n} is a multiple of batch_size={batch_size}")
    g = -1.0 if crafted else 0.0
    k = without.size
    base = g * without
    means = g * (with_canary[None, :] - np.eye(k)) + np.eye(k)
    return ShuffledCanaryPair(steps, noise, tuple(base), tuple(map(tuple, means - base[None, :])),
                              tuple(with_canary / (n + 1)))


def scale_pair_epsilon(coordinates: int, ratio: float, delta: float) -> float:
    """The exact ε(δ) of the pair N(0, I_N) against N(0, r²·I_N), N = ``coordinates``, r = ``ratio``
    (both directions): the noise columns alone of a trainer whose normaliser the canary changes by
    r, a lower bound on that trainer's ε (post-processing).

    The privacy loss is a function of ‖x‖², a χ²_N variable (times r² under the second law):
    L = log p_r/p_1 = −N·log r − a‖x‖², a = (1/r² − 1)/2, so with r < 1
    δ(ε) = max(P_r[‖x‖² < t] − e^ε·P_1[‖x‖² < t], P_1[‖x‖² > t′] − e^ε·P_r[‖x‖² > t′]) with
    t = (−N·log r − ε)/a and t′ = (ε − N·log r)/a (r > 1 is the same pair reversed); ε(δ) by
    Brent's method on δ(ε) = δ."""
    n = check_int("coordinates", coordinates, minimum=1)
    delta = check_open_unit("delta", delta)
    r = float(ratio)
    if not np.isfinite(r) or r <= 0 or r == 1:
        raise ValueError(f"`ratio` must be a positive number other than 1, got {ratio!r}")
    r = min(r, 1.0 / r)
    a = (1.0 / r**2 - 1.0) / 2.0

    def gap(eps: float) -> float:
        t, t2 = (-n * np.log(r) - eps) / a, (eps - n * np.log(r)) / a
        return max(stats.chi2.cdf(t / r**2, n) - np.exp(eps) * stats.chi2.cdf(t, n),
                   stats.chi2.sf(t2, n) - np.exp(eps) * stats.chi2.sf(t2 / r**2, n)) - delta

    if gap(0.0) <= 0:
        return 0.0
    high = 1.0
    while gap(high) > 0:  # δ(ε) falls to 0 as ε grows: a bracket by doubling
        high *= 2.0
        if high > 700.0:
            raise ArithmeticError(f"ε(δ) of the scale pair exceeds 700 at N={n}, r={r:g}, δ={delta:g}")
    return float(optimize.brentq(gap, 0.0, high))


def energy_view(energies: np.ndarray) -> float:
    """log of the mean square of the noise columns' updates over all steps."""
    return float(np.log(np.mean(energies)))
