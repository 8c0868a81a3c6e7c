"""What the sub-commands of the command line share: exit statuses, the usage error, the parser.

Exit status: 0 when no claim is refuted, 1 when at least one audit is VIOLATED, 2 for bad usage or
bad input, 130 when interrupted (:mod:`audit.cli`).
"""

from __future__ import annotations

import argparse
from typing import NoReturn

__all__ = ["EXIT_OK", "EXIT_VIOLATED", "EXIT_USAGE", "EXIT_INTERRUPTED", "COMMAND_HELP", "DEBUG_HELP",
           "CommandParser", "Interrupted", "UsageError"]

EXIT_OK, EXIT_VIOLATED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130

DEBUG_HELP = "show the full traceback of an error (default: a one-line message)"

#: Each sub-command's line in `dpaudit --help` (the sweep's is its own parser's, which a test checks).
COMMAND_HELP = {
    "run": "audit scenario files (default: the bundled suite)",
    "list": "reference mechanisms and bundled scenario files",
    "theory": "exact privacy and accuracy of a reference mechanism",
    "plot": "redraw the figures of a saved report.json",
    "sweep": "audit every public mechanism, query and model of a DP library",
}


class UsageError(Exception):
    """Bad usage or bad input: reported in one line, exit status 2."""


class Interrupted(Exception):
    """Ctrl-C during ``dpaudit run``; the message says what was saved."""


class CommandParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose usage errors raise :class:`UsageError` (one line on
    stderr, exit status 2) instead of printing the usage and exiting."""

    def error(self, message: str) -> NoReturn:  # argparse's own usage errors: one line, exit 2
        raise UsageError(f"{self.prog}: {message}")
