"""Privacy claims: (ε, δ)-DP, pure ε-DP, μ-GDP, ρ-zCDP, Rényi DP and privacy profiles, each under
a neighbour relation, and the registry that finds a claim type by its name.

Every claim is a lower bound on the trade-off curve of every pair of neighbours (Dong, Roth & Su
2022); :mod:`mechanisms.claims.base` says what the audit needs of one and how a new type registers.
"""

# Imported in the order the claim types are listed in messages (registration order).
from .base import Claim, Relation, as_relation, claim_from_config, claim_from_dict, claim_label, claim_types
from .approximate import ApproxDP, PureDP, approx_tradeoff  # noqa: I001
from .gaussian import GaussianDP
from .curves import DEFAULT_REFERENCE_DELTA, ZCDP, ProfileClaim, RenyiDP

__all__ = ["Relation", "Claim", "approx_tradeoff", "ApproxDP", "PureDP", "GaussianDP", "ZCDP", "RenyiDP",
           "ProfileClaim", "as_relation", "claim_from_dict", "claim_from_config", "claim_label", "claim_types",
           "DEFAULT_REFERENCE_DELTA"]
