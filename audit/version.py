"""dpaudit's version, in one place.

The package (``audit.__version__``), the runtime section of every report and report.json read it
from here, and pyproject.toml reads it as the distribution's version, so no module needs to import
the package's ``__init__`` to learn it.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
