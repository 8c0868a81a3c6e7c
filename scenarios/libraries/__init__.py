"""Catalogues of real DP libraries for ``dpaudit sweep``: every public entry, its claim and grid.

- :mod:`.catalogue`: :class:`Library`, :class:`Entry`, :class:`Case`, :class:`Coverage`;
- :mod:`.registry`: :func:`library` by name, :func:`register_library`, the ``dpaudit.libraries``
  entry-point group;
- :mod:`.families`: neighbour families that find implementation bugs (worst-case rows, a new
  label, a single record, values at and beyond the bounds, huge and tiny magnitudes);
- :mod:`.diffprivlib`, :mod:`.opendp`, :mod:`.opacus`: the built-in catalogues (they need the
  ``thirdparty`` or ``torch`` extra and are imported on first use); :mod:`.opendp_legacy` for
  OpenDP releases before ``opendp.prelude``, :mod:`.snsql_legacy` for SmartNoise SQL's before 1.0
  (``opendp-smartnoise``), :mod:`.opacus_legacy` for Opacus's before 1.0.

A new library is one module: build a :class:`Library` and call :func:`register_library`.  An
entry's ``build`` raises :class:`NotInRelease` for what the installed release lacks, so one
catalogue serves every release (``dpaudit sweep LIB==VERSION``).
"""

from .catalogue import COSTS, KINDS, REASONS, Case, Coverage, Entry, Library, NotInRelease, missing_api
from .registry import BUILT_IN, ENTRY_POINT_GROUP, library, library_names, register_library

__all__ = ["COSTS", "KINDS", "REASONS", "Case", "Coverage", "Entry", "Library", "BUILT_IN",
           "ENTRY_POINT_GROUP", "library", "library_names", "register_library", "NotInRelease", "missing_api"]
