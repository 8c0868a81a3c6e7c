"""Neighbouring datasets for audits, and scenario files.

- :mod:`scenarios.relations`: :func:`is_neighbor` for the add-remove and replace relations;
- :mod:`scenarios.scenario`: the frozen :class:`Scenario` / :class:`NeighborPair`,
  :func:`from_pairs` (user datasets, checked) and :func:`custom` (user inputs, vouched for);
- :mod:`scenarios.builders`: :func:`counting`, :func:`bounded`, :func:`grouped` with their
  worst-case (and optionally random) pairs;
- :mod:`scenarios.files`: :func:`load` a TOML scenario file into an :class:`AuditSpec`, and
  :func:`bundled_suite`, the scenario files shipped with the package;
- :mod:`scenarios.domains` and :mod:`scenarios.search`: input domains and :func:`search`, a
  search over neighbouring pairs that ``run_audit`` evaluates and pays for.
"""

from . import domains
from .builders import PAIR_MODES, bounded, counting, grouped
from .files import AuditSpec, ScenarioFileError, bundled_suite, load
from .relations import is_neighbor, multiset_difference, neighbor_mismatch, row_difference
from .scenario import VOUCHED_NOTE, Domain, NeighborPair, Scenario, custom, from_pairs
from .search import SearchedScenario, SearchSpec, search

__all__ = [
    "AuditSpec",
    "Domain",
    "NeighborPair",
    "PAIR_MODES",
    "Scenario",
    "ScenarioFileError",
    "SearchSpec",
    "SearchedScenario",
    "VOUCHED_NOTE",
    "bounded",
    "bundled_suite",
    "counting",
    "custom",
    "from_pairs",
    "grouped",
    "is_neighbor",
    "load",
    "multiset_difference",
    "neighbor_mismatch",
    "row_difference",
    "search",
]
