"""Exact truth of a wrapped mechanism, answered by a reference mechanism with the same law.

A third-party mechanism carries no exact privacy of its own.  Where our ground truth covers it,
an adapter names a *reference*: a mechanism of :mod:`mechanisms` (built with the parameters read
from the library object) whose privacy is exactly that of the wrapped one on the counting query.
The mixin below forwards the optional attributes of the mechanism protocol
(:mod:`mechanisms.base`) to it: the exact-privacy methods raise ``NotImplementedError`` naming
the mechanism where there is no reference or it cannot answer, and the accuracy attributes are
absent where the noise law is unknown.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

__all__ = ["ReferenceTruth"]


class ReferenceTruth:
    """Mixin: exact privacy from ``self.reference``, accuracy from ``self.accuracy_reference``.

    The exact-privacy methods always exist and raise ``NotImplementedError`` when the truth is
    not known (the protocol's convention); the accuracy attributes exist only when the noise
    law is known.  Subclasses provide ``name`` (str) and ``reference`` (a mechanism or
    ``None``).  By default the accuracy reference is the privacy reference; an adapter whose
    output law differs from its privacy reference (a post-processed output, say) overrides
    :attr:`accuracy_reference`.
    """

    name: str
    reference: Optional[Any]

    @property
    def accuracy_reference(self) -> Optional[Any]:
        """The mechanism whose noise law equals this one's (accuracy claims), if known."""
        return self.reference

    def _ask(self, source: Optional[Any], what: str, method: str, *args: Any, **kwargs: Any) -> Any:
        answer = getattr(source, method, None)
        if answer is None:
            raise NotImplementedError(
                f"{self.name}: no exact {what} is known ({method} needs a reference mechanism "
                "with the same law, and there is none)"
            )
        return answer(*args, **kwargs)

    # -- exact privacy (forwarded) ------------------------------------------------------------
    def exact_mu(self, relation: Any = None) -> float:
        """Exact μ of the worst neighbour pair, where the law is Gaussian-shaped."""
        return self._ask(self.reference, "μ", "exact_mu", relation)

    def privacy_profile(self, epsilon: Any, relation: Any = None) -> np.ndarray:
        """Exact δ(ε) over the neighbour pairs of ``relation`` (vectorized in ε)."""
        return self._ask(self.reference, "privacy profile", "privacy_profile", epsilon, relation=relation)

    def epsilon_for_delta(self, delta: float, relation: Any = None) -> float:
        """Exact ε(δ): the smallest ε with δ(ε) ≤ δ."""
        return self._ask(self.reference, "ε(δ)", "epsilon_for_delta", delta, relation=relation)

    def tradeoff(self, alpha: Any, relation: Any = None) -> np.ndarray:
        """Exact trade-off curve of the worst neighbour pair."""
        return self._ask(self.reference, "trade-off curve", "tradeoff", alpha, relation=relation)

    # -- accuracy (forwarded) -----------------------------------------------------------------
    # Properties, not methods: the accuracy audit asks ``callable(getattr(m, "error_bound",
    # None))``, so an adapter whose noise law is unknown must not have these attributes at all.
    def _accuracy_method(self, method: str) -> Any:
        answer = getattr(self.accuracy_reference, method, None)
        if answer is None:
            raise AttributeError(f"{self.name}: no {method} (its noise law is not a reference "
                                 "mechanism's)")
        return answer

    @property
    def noise_variance(self) -> Callable[[], np.ndarray]:
        """``noise_variance()``: variance of each output column's error (if the law is known)."""
        return self._accuracy_method("noise_variance")

    @property
    def error_bound(self) -> Callable[..., float]:
        """``error_bound(alpha, k=1)``: a with P(max over k queries |error| > a) ≤ α."""
        return self._accuracy_method("error_bound")

    @property
    def worst_case_error(self) -> Callable[[], Optional[float]]:
        """``worst_case_error()``: a bound no error exceeds, or ``None`` for unbounded noise."""
        return self._accuracy_method("worst_case_error")
