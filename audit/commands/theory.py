"""``dpaudit theory``: the exact privacy and accuracy of a reference mechanism, no sampling.

The mechanism is built from ``--param value`` pairs (its constructor's keyword arguments, ``--inner``
and ``--inner.KEY`` for a wrapped one); the exact values are the mechanism's own
(``exact_mu``, ``epsilon_for_delta``, ``privacy_profile``; docs/ground-truth.md).
"""

from __future__ import annotations

import argparse
import math
import warnings
from typing import Any, Optional, Sequence

from ..lazy import lazy_module
from .common import COMMAND_HELP, DEBUG_HELP, EXIT_OK, UsageError

# Imported at first use (audit.lazy): `dpaudit --help` needs none of them.
np = lazy_module("numpy")
mechanisms = lazy_module("mechanisms")

__all__ = ["add_theory_parser", "theory_command", "parse_value", "THEORY_DELTAS", "THEORY_ALPHA"]

#: δ values at which ``dpaudit theory`` prints the exact ε(δ).
THEORY_DELTAS = (1e-10, 1e-8, 1e-6, 1e-5, 1e-3, 1e-2, 0.1)
THEORY_ALPHA = 0.05


def add_theory_parser(commands: Any) -> None:
    """Add ``dpaudit theory`` to ``commands`` (the sub-parsers of :func:`audit.cli.build_parser`)."""
    theory = commands.add_parser(
        "theory", help=COMMAND_HELP["theory"],
        description="Exact privacy and accuracy of a reference mechanism, e.g. `dpaudit theory "
        "gaussian --epsilon 1 --delta 1e-5`; for composition: `dpaudit theory composition --k 10 "
        "--inner gaussian --inner.sigma 2`.  Parameters are the constructor's keyword arguments.")
    theory.add_argument("mechanism", metavar="MECHANISM", help="a reference mechanism (see `dpaudit list`)")
    theory.add_argument("params", nargs=argparse.REMAINDER, metavar="--param value",
                        help="constructor keyword arguments")
    theory.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)


def _theory_params(tokens: Sequence[str]) -> dict:
    """``--key value`` / ``--key=value`` pairs; a flag without a value is ``True``."""
    params: dict[str, Any] = {}
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if not token.startswith("--") or token == "--":
            raise UsageError(f"dpaudit theory: expected --param value, got {token!r}")
        key, equals, value = token[2:].partition("=")
        if not equals:
            if index + 1 < len(tokens) and not tokens[index + 1].startswith("--"):
                value, index = tokens[index + 1], index + 1
            else:
                value = "true"
        params[key.replace("-", "_")] = parse_value(value)
        index += 1
    return params


def _build_reference(name: Any, params: dict, where: str) -> Any:
    known = mechanisms.REFERENCE_MECHANISMS
    if name not in known:
        raise UsageError(f"dpaudit theory: {where} must be one of {', '.join(sorted(known))}, got {name!r}")
    inner_name = params.pop("inner", None)
    inner = {key[len("inner."):]: value for key, value in params.items() if key.startswith("inner.")}
    params = {key: value for key, value in params.items() if not key.startswith("inner.")}
    args = []
    if inner_name is not None or inner:
        args.append(_build_reference(inner_name, inner, "--inner"))
    try:
        return known[name](*args, **params)
    except TypeError as exc:
        raise UsageError(f"dpaudit theory {name}: {exc}") from exc


def _exact(function: Any, *args: Any) -> Optional[float]:
    if not callable(function):
        return None
    try:
        value = function(*args)
    except (NotImplementedError, ValueError):
        return None
    return None if value is None else float(value)


def theory_command(args: argparse.Namespace) -> int:
    """``dpaudit theory``: build the reference mechanism from ``--param value`` pairs and print its claim,
    its exact privacy (μ, ε(δ) on :data:`THEORY_DELTAS`, δ at the claimed ε) and its accuracy; no
    sampling.  Returns the exit status."""
    params = _theory_params(args.params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mechanism = _build_reference(args.mechanism, params, "MECHANISM")
    claim = getattr(mechanism, "claim", None)
    print(f"{getattr(mechanism, 'name', args.mechanism)}")
    for warning in caught:
        print(f"  warning: {warning.message}")
    print(f"  claim: {claim if claim is not None else 'none'}")
    print(f"\nExact privacy ({getattr(mechanism, 'relation', 'add-remove')}):")
    mu = _exact(getattr(mechanism, "exact_mu", None))
    if mu is not None:
        print(f"  μ = {mu:.6g}  (Gaussian-shaped: the worst pair's trade-off curve is G_μ)")
    epsilon_for_delta = getattr(mechanism, "epsilon_for_delta", None)
    deltas = sorted(set(THEORY_DELTAS) | ({float(claim.delta)} if claim is not None and claim.delta > 0 else set()))
    for delta in deltas:
        value = _exact(epsilon_for_delta, delta)
        print(f"  ε(δ = {delta:g}) = {'unknown' if value is None else f'{value:.6g}'}")
    if claim is not None:
        exact_delta = _exact(getattr(mechanism, "privacy_profile", None), claim.epsilon)
        shown = "unknown" if exact_delta is None else f"{exact_delta:.6g}"
        print(f"  δ at the claimed ε = {claim.epsilon:.6g}: {shown}  (claimed δ = {claim.delta:g})")
        exact_eps = _exact(epsilon_for_delta, claim.delta) if claim.delta > 0 else exact_delta
        if exact_delta is None:
            verdict = "unknown (no exact privacy for this mechanism)"
        elif exact_delta <= claim.delta * (1 + 1e-9) + 1e-300:
            verdict = "holds"
        else:
            verdict = "does NOT hold"
        if exact_eps is not None and claim.delta > 0:
            verdict += f" (exact ε at δ = {claim.delta:g} is {exact_eps:.6g} vs claimed {claim.epsilon:.6g})"
        print(f"  the claim {verdict}")
    print("\nAccuracy:")
    variance = getattr(mechanism, "noise_variance", None)
    if callable(variance):
        values = np.atleast_1d(np.asarray(variance(), dtype=np.float64))
        shown = ", ".join(f"{v:.6g}" for v in values[:6]) + (", ..." if values.size > 6 else "")
        print(f"  noise variance per output column: {shown}  ({values.size} columns)")
    bound = getattr(mechanism, "error_bound", None)
    if callable(bound):
        queries = len(getattr(mechanism, "query_columns", (0,)))
        print(f"  error bound at α = {THEORY_ALPHA}: P(|error| > {bound(THEORY_ALPHA, 1):.6g}) ≤ {THEORY_ALPHA} per query")
        if queries > 1:
            print(f"  over all {queries} queries: P(max |error| > {bound(THEORY_ALPHA, queries):.6g}) ≤ {THEORY_ALPHA}")
    worst = _exact(getattr(mechanism, "worst_case_error", None))
    if worst is not None:
        print(f"  worst-case error: {worst:.6g} (the noise is bounded)")
    if not callable(variance) and not callable(bound):
        print("  no accuracy claims declared")
    return EXIT_OK


def parse_value(text: str) -> Any:
    """A command-line parameter value: int, float, bool, None, or the string itself."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for convert in (int, float):
        try:
            value = convert(text.replace("_", "") if convert is int else text)
        except ValueError:
            continue
        if convert is float and not math.isfinite(value):
            return text
        return value
    return text
