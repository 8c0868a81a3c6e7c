"""Auditing with one training run: m canaries, each in the run with probability ½, one run.

The auditor scores every canary after the run, guesses "in" for the highest scores and "out" for
the lowest, and turns the number of correct guesses into a certified lower bound on ε(δ) (and on
μ for the Gaussian family).  :func:`one_run_audit` is the public call; its ``method`` chooses the
bound:

- ``"steinke"`` (default): Steinke, Nasr & Jagielski (NeurIPS 2023), binary guesses against
  (ε, δ)-DP (:mod:`audit.one_run.steinke`);
- ``"fdp"``: Mahloujifar, Melis & Chaudhuri (ICML 2025), guesses against a trade-off curve G_μ or
  f_{ε,δ}, for any mechanism (:mod:`audit.one_run.fdp`);
- ``"order-statistics"``: the exact law of the top-scored guesses when the canaries do not
  interfere (:mod:`audit.one_run.order_statistics`), near the truth when that assumption holds.

Every result prints beside its bound the ceiling (the bound had every guess been right) and the
assumptions it rests on.  docs/one-run.md compares the methods.
"""

from .families import FAMILIES, blow_up_inverse, family_epsilon
from .fdp import fdp_bound, fdp_rejects, greedy_mass
from .game import ASSUMPTIONS, METHODS, GuessCount, OneRunResult, default_guesses, one_run_audit
from .order_statistics import independent_bound, independent_p_value
from .steinke import EPSILON_STEP, one_run_epsilon, one_run_p_value

__all__ = [
    "OneRunResult",
    "GuessCount",
    "one_run_audit",
    "default_guesses",
    "METHODS",
    "FAMILIES",
    "ASSUMPTIONS",
    "one_run_p_value",
    "one_run_epsilon",
    "EPSILON_STEP",
    "fdp_bound",
    "fdp_rejects",
    "greedy_mass",
    "independent_bound",
    "independent_p_value",
    "blow_up_inverse",
    "family_epsilon",
]
