"""The claims of the accountants a PyTorch/Opacus user relies on, for DP-SGD's configuration.

A training of T steps with noise multiplier σ and Poisson sampling at rate q is T compositions of
the Poisson-subsampled Gaussian mechanism (Abadi et al. 2016; Mironov, Talwar & Zhang 2019).
Three accountants turn that into a claim, each named in the claim and the report:

- ``"rdp"`` — Opacus's ``RDPAccountant`` (Opacus's default): the Rényi DP of the subsampled
  Gaussian at Opacus's default orders (``opacus.accountants.analysis.rdp.compute_rdp``, Mironov,
  Talwar & Zhang 2019), as a :class:`~mechanisms.claims.RenyiDP` claim;
- ``"prv"`` — Opacus's ``PRVAccountant`` (Gopi, Lee & Wutschitz 2021): the discretised privacy
  random variable, as a :class:`~mechanisms.claims.ProfileClaim` whose δ(ε) is the accountant's
  estimate at ε − ε_err plus δ_err (the error bounds its ``get_epsilon`` applies, so the claim is
  what the accountant guarantees, not its point estimate);
- ``"pld"`` — dp-accounting's PLD accountant (pessimistic estimate), as a
  :class:`~mechanisms.claims.ProfileClaim` (:meth:`~mechanisms.claims.ProfileClaim.from_dp_event`).

The sample rate is Opacus's: ``1 / len(data_loader)`` = 1/⌈n/B⌉ for n examples and batch size B.
"""

from __future__ import annotations

import functools

import numpy as np

from ..claims import ProfileClaim, Relation, RenyiDP
from ..dpsgd.accounting import poisson_gaussian_epsilon
from ..validation import check_choice, check_finite_positive, check_int, check_open_unit

__all__ = ["ACCOUNTANTS", "ACCOUNTANT_NAMES", "accountant_claim", "accountant_epsilon", "opacus_sample_rate"]

ACCOUNTANTS = ("rdp", "prv", "pld")
ACCOUNTANT_NAMES = {"rdp": "Opacus RDP accountant", "prv": "Opacus PRV accountant",
                    "pld": "dp-accounting PLD accountant"}
#: The PRV accountant's ε error (Opacus's default in ``get_epsilon``); its δ error is δ/1000.
PRV_EPS_ERROR = 0.01


def opacus_sample_rate(n: int, batch_size: int) -> float:
    """Opacus's sample rate 1/len(data_loader) for n examples and batch size B: 1/⌈n/B⌉."""
    n = check_int("n", n, minimum=1)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    return 1.0 / -(-n // batch_size)


def _check(q, sigma, steps, delta):
    return (check_open_unit("q", q) if q != 1 else 1.0, check_finite_positive("sigma", sigma),
            check_int("steps", steps, minimum=1), check_open_unit("delta", delta))


def accountant_claim(accountant: str, q: float, sigma: float, steps: int, delta: float):
    """The claim of ``accountant`` for T = ``steps`` subsampled Gaussian steps; its reference δ is
    ``delta``."""
    check_choice("accountant", accountant, ACCOUNTANTS)
    q, sigma, steps, delta = _check(q, sigma, steps, delta)
    if accountant == "rdp":
        orders, epsilons = _rdp(q, sigma, steps)
        return RenyiDP(orders, epsilons, Relation.ADD_REMOVE, reference_delta=delta)
    if accountant == "prv":
        return ProfileClaim(_PrvProfile(q, sigma, steps, delta), Relation.ADD_REMOVE, reference_delta=delta,
                            label=ACCOUNTANT_NAMES["prv"])
    import dp_accounting  # optional extra: the accounting extra

    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), steps)
    claim = ProfileClaim.from_dp_event(event, reference_delta=delta)
    return ProfileClaim(claim.profile, claim.relation, reference_delta=delta, label=ACCOUNTANT_NAMES["pld"],
                        source=claim.source, inverse=claim.inverse)


def accountant_epsilon(accountant: str, q: float, sigma: float, steps: int, delta: float) -> float:
    """ε(δ) as the accountant itself reports it (``get_epsilon`` for Opacus's accountants)."""
    check_choice("accountant", accountant, ACCOUNTANTS)
    q, sigma, steps, delta = _check(q, sigma, steps, delta)
    return _accountant_epsilon(accountant, q, sigma, steps, delta)


@functools.lru_cache(maxsize=256)
def _accountant_epsilon(accountant, q, sigma, steps, delta) -> float:
    if accountant == "pld":
        return poisson_gaussian_epsilon(q, sigma, steps, delta)
    from opacus.accountants import PRVAccountant, RDPAccountant  # optional extra: torch

    engine = RDPAccountant() if accountant == "rdp" else PRVAccountant()
    engine.history = [(sigma, q, steps)]
    return float(engine.get_epsilon(delta))


@functools.lru_cache(maxsize=256)
def _rdp(q, sigma, steps):
    from opacus.accountants import RDPAccountant  # optional extra: torch
    from opacus.accountants.analysis.rdp import compute_rdp

    orders = tuple(float(a) for a in RDPAccountant.DEFAULT_ALPHAS)
    values = compute_rdp(q=q, noise_multiplier=sigma, steps=steps, orders=list(orders))
    return orders, tuple(float(v) for v in np.atleast_1d(values))


class _PrvProfile:
    """δ(ε) of Opacus's PRV accountant with its error bounds: δ̂(ε − ε_err) + δ_err (a picklable
    callable; the discretised PRV is built once, on first use, in each process)."""

    def __init__(self, q: float, sigma: float, steps: int, delta: float):
        self.q, self.sigma, self.steps, self.delta = q, sigma, steps, delta
        self._dprv = None

    def __getstate__(self):
        return {"q": self.q, "sigma": self.sigma, "steps": self.steps, "delta": self.delta, "_dprv": None}

    def _prv(self):
        if self._dprv is None:
            from opacus.accountants import PRVAccountant  # optional extra: torch

            engine = PRVAccountant()
            engine.history = [(self.sigma, self.q, self.steps)]
            self._dprv = engine._get_dprv(eps_error=PRV_EPS_ERROR, delta_error=self.delta / 1000)
        return self._dprv

    def reported_epsilon(self) -> float:
        """ε at the claim's δ as ``PRVAccountant.get_epsilon(delta)`` reports it (its upper bound),
        from the same discretised PRV."""
        return float(self._prv().compute_epsilon(self.delta, self.delta / 1000, PRV_EPS_ERROR)[2])

    def __call__(self, epsilon):
        eps = np.atleast_1d(np.asarray(epsilon, dtype=np.float64))
        dprv = self._prv()
        values = []
        for e in eps.ravel():
            shifted = max(e - PRV_EPS_ERROR, 0.0)
            # beyond the discretised domain the estimate is 0 (and exp(ε) would overflow)
            estimate = 0.0 if shifted >= dprv.domain.t_max else float(dprv.compute_delta_estimate(shifted))
            values.append(min(1.0, estimate + self.delta / 1000))
        return np.asarray(values).reshape(np.shape(epsilon))
