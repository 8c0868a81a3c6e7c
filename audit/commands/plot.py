"""``dpaudit plot``: redraw the figures of a saved report.json."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..lazy import lazy_module
from .common import COMMAND_HELP, DEBUG_HELP, EXIT_OK, UsageError

# Imported at first use (audit.lazy): `dpaudit --help` needs none of them.
render_files = lazy_module("audit.render.files")
render_plots = lazy_module("audit.render.plots")

__all__ = ["add_plot_parser", "plot_command"]


def add_plot_parser(commands: Any) -> None:
    """Add ``dpaudit plot`` to ``commands`` (the sub-parsers of :func:`audit.cli.build_parser`)."""
    plot = commands.add_parser("plot", help=COMMAND_HELP["plot"])
    plot.add_argument("report", type=Path, metavar="REPORT.json")
    plot.add_argument("--out", type=Path, metavar="DIR", help="output directory: figures go to OUT/figures/, as with "
                      "`dpaudit run --out OUT` (default: the report's own directory)")
    plot.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)


def plot_command(args: argparse.Namespace) -> int:
    """``dpaudit plot``: redraw the figures of every audit of a saved report.json into
    ``OUT/figures/``; returns the exit status."""
    document = render_files.load_report(args.report)
    out = (args.out if args.out is not None else args.report.parent) / "figures"  # as `run --out`
    drawn = 0
    for entry in document["audits"]:
        if entry.get("report") is None:
            print(f"{entry['name']}: no report (the audit failed: {entry.get('error')})", file=sys.stderr)
            continue
        for kind, path in render_plots.save_figures(entry, out, entry["name"]).items():
            print(f"{entry['name']:<40} {kind:<9} {path}")
            drawn += 1
    if not drawn:
        raise UsageError(f"{args.report}: no audit report to draw")
    return EXIT_OK
