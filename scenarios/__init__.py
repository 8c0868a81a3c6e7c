"""Neighbouring datasets for audits, and scenario files.

- :mod:`scenarios.relations`: :func:`is_neighbor` for the add-remove and replace relations;
- :mod:`scenarios.scenario`: the frozen :class:`Scenario` / :class:`NeighborPair`,
  :func:`from_pairs` (user datasets, checked) and :func:`custom` (user inputs, vouched for);
- :mod:`scenarios.builders`: :func:`counting`, :func:`bounded`, :func:`grouped` with their
  worst-case (and optionally random) pairs;
- :mod:`scenarios.files`: the TOML scenario files' mechanism, claim and scenario tables, and
  :func:`bundled_suite`, the scenario files shipped with the package (a whole file, with its
  audit settings, is loaded by :func:`audit.load_spec`);
- :mod:`scenarios.domains` and :mod:`scenarios.search`: input domains and :func:`search`, a
  search over neighbouring pairs that ``run_audit`` evaluates and pays for.
"""

from . import domains
from .builders import PAIR_MODES, bounded, counting, grouped
from .files import ScenarioFile, ScenarioFileError, bundled_suite
from .relations import is_neighbor, multiset_difference, neighbor_mismatch, row_difference
from .scenario import VOUCHED_NOTE, Domain, NeighborPair, Scenario, custom, from_pairs
from .search import SearchedScenario, SearchSpec, search

__all__ = [
    "Domain",
    "NeighborPair",
    "PAIR_MODES",
    "Scenario",
    "ScenarioFile",
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
    "multiset_difference",
    "neighbor_mismatch",
    "row_difference",
    "search",
]


#: Names that moved up to the audit layer, which owns the audit's settings.
_MOVED = {"load": "audit.load_spec", "AuditSpec": "audit.AuditSpec"}


def __getattr__(name: str):
    if name in _MOVED:
        raise AttributeError(f"scenarios.{name} moved to {_MOVED[name]} (a scenario file's [audit] table is "
                             "read into the audit's settings there)")
    raise AttributeError(f"module 'scenarios' has no attribute {name!r}")
