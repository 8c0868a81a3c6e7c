"""Sweeping a DP library: every catalogue row audited, with suite-wide error control.

- :mod:`.plan`: rows, budgets, seeds, Bonferroni confidence;
- :mod:`.rows`: auditing one row, its record;
- :mod:`.repro`: reproduction scripts for VIOLATED rows;
- :mod:`.table`: the Markdown report;
- :mod:`.runner`: :func:`run_sweep` (parallel, resumable, with progress).

The catalogues themselves are data about mechanisms and scenarios: :mod:`scenarios.libraries`.
"""

from .plan import BUDGETS, PlannedRow, plan_rows, refutable_samples
from .runner import DEFAULT_OUT, SWEEP_BACKENDS, run_sweep
from .table import sweep_markdown

__all__ = ["BUDGETS", "DEFAULT_OUT", "PlannedRow", "SWEEP_BACKENDS", "plan_rows", "refutable_samples", "run_sweep",
           "sweep_markdown"]
