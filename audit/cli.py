"""The ``dpaudit`` command line (also ``python -m audit``).

Sub-commands:

- ``dpaudit run [FILES...]``: audit scenario files (default: the bundled suite), print one table
  row per audit and write report.html, report.json, summary.md and figures to ``--out``;
- ``dpaudit list``: the reference mechanisms and the bundled scenario files;
- ``dpaudit theory MECHANISM --param value ...``: exact privacy and accuracy of a reference
  mechanism, no sampling;
- ``dpaudit plot REPORT.json``: redraw the figures of a saved report;
- ``dpaudit sweep LIBRARY``: audit every catalogue row of a DP library (:mod:`audit.sweep.command`).

Exit status: 0 when no claim is refuted, 1 when at least one audit is VIOLATED, 2 for bad usage
or bad input (a malformed scenario file, a mechanism that raises, an unreadable report), with a
one-line message on stderr (the traceback only with ``--debug``).  Bad input takes precedence:
a run in which some audit could not run exits 2 even if another was refuted.

This module builds the parser and dispatches; each sub-command's options and body are in
:mod:`audit.commands` (``dpaudit sweep``'s in :mod:`audit.sweep.command`), imported when it is used.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from typing import Any, Collection, Optional, Sequence

from .commands.common import (COMMAND_HELP, DEBUG_HELP, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, EXIT_VIOLATED,
                              CommandParser, Interrupted, UsageError)
from .lazy import lazy_module

# Imported at first use (audit.lazy): `dpaudit --help` and `import audit.cli` need none of them.
scenarios = lazy_module("scenarios")
run_folder = lazy_module("audit.run_folder")
settings_module = lazy_module("audit.settings")
suite = lazy_module("audit.suite")
sweep = lazy_module("audit.sweep.command")
run_module = lazy_module("audit.commands.run")
list_module = lazy_module("audit.commands.listing")
theory_module = lazy_module("audit.commands.theory")
plot_module = lazy_module("audit.commands.plot")

__all__ = ["main", "build_parser", "synopsis", "parameters_text", "error_control", "EXIT_OK", "EXIT_VIOLATED",
           "EXIT_USAGE", "parse_value", "exact_integer"]


#: Names this module re-exports from others, imported at first use (PEP 562).
_REEXPORTED = {"error_control": run_folder, "exact_integer": settings_module, "parameters_text": list_module,
               "parse_value": theory_module}


def __getattr__(name: str) -> Any:
    if name in _REEXPORTED:
        return getattr(_REEXPORTED[name], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run_audits(specs: Sequence[Any], options: Any) -> Any:
    """:func:`audit.suite.run_audits`, looked up here by ``dpaudit run`` (a test replaces it)."""
    return suite.run_audits(specs, options)


# -- argument parsing ---------------------------------------------------------------------------
def build_parser(commands: Optional[Collection[str]] = None) -> argparse.ArgumentParser:
    """The ``dpaudit`` parser with the sub-commands ``commands`` in full (default: all) and the
    others as their line in ``dpaudit --help`` only: a sub-command's options may need the engine's
    modules (statistics, backends, suites), which ``dpaudit --help`` and ``dpaudit list`` need not pay for."""
    parser = CommandParser(prog="dpaudit", description="Empirical differential-privacy auditing: certified "
                           "lower bounds on ε, δ and μ against a mechanism's claim.")
    parser.add_argument("--debug", action="store_true", help=DEBUG_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    builders = {"run": _add_run, "list": _add_list, "theory": _add_theory, "plot": _add_plot, "sweep": _add_sweep}
    for name, build in builders.items():
        if commands is None or name in commands:
            build(subparsers)
        else:
            subparsers.add_parser(name, help=COMMAND_HELP[name], add_help=False)
    return parser


def _add_run(commands: Any) -> None:
    run_module.add_run_parser(commands)


def _add_list(commands: Any) -> None:
    list_module.add_list_parser(commands)


def _add_theory(commands: Any) -> None:
    theory_module.add_theory_parser(commands)


def _add_plot(commands: Any) -> None:
    plot_module.add_plot_parser(commands)


def _add_sweep(commands: Any) -> None:
    sweep.add_sweep_parser(commands, CommandParser, DEBUG_HELP)


def synopsis(width: int = 100) -> str:
    """The synopsis of every sub-command, generated from :func:`build_parser` (docs/cli.md shows it,
    and a test keeps the two equal): each option with its metavar, else its choices, wrapped to
    ``width`` columns."""
    parser = build_parser()
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    lines = []
    for name, sub in commands.choices.items():
        words = [f"dpaudit {name}"]
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            if not action.option_strings:
                if action.nargs == argparse.REMAINDER:
                    words.append(f"{action.metavar} ...")
                elif action.nargs in ("*", "+"):
                    words.append(f"[{action.metavar} ...]")
                else:
                    words.append(action.metavar or action.dest.upper())
                continue
            flag = action.option_strings[-1]
            if action.nargs == 0:
                words.append(f"[{flag}]")
            else:
                value = action.metavar or ("|".join(map(str, action.choices)) if action.choices else action.dest.upper())
                words.append(f"[{flag} {value}]")
        indent, line = " " * (len(words[0]) + 1), words[0]
        for word in words[1:]:  # an option and its value never part
            if len(line) + 1 + len(word) > width:
                lines.append(line)
                line = indent + word
            else:
                line += " " + word
        lines.append(line)
    return "\n".join(lines)


# -- main ---------------------------------------------------------------------------------------
def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    parser = build_parser(commands=[word for word in argv if not word.startswith("-")][:1])
    try:
        args = parser.parse_args(argv)
        if args.command is None:
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        return {"run": _run, "list": _list, "theory": _theory, "plot": _plot,
                "sweep": _sweep}[args.command](args)
    except UsageError as exc:
        return _fail(exc, debug)
    except BrokenPipeError:  # e.g. `dpaudit list | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Interrupted as exc:
        print(exc, file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print("dpaudit: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as exc:  # bad input surfacing deeper down: one line unless --debug
        return _fail(exc, debug)


def _fail(exc: BaseException, debug: bool) -> int:
    if debug:
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    # A scenario file's problems are one per line, all worth reading; other errors say it in one.
    lines = str(exc).strip().splitlines()[:1]
    if not isinstance(exc, UsageError) and isinstance(exc, scenarios.ScenarioFileError):
        lines = exc.messages
    for message in lines or [type(exc).__name__]:
        prefix = "" if message.startswith("dpaudit") else "dpaudit: error: "
        print(f"{prefix}{message}", file=sys.stderr)
    return EXIT_USAGE


# -- the sub-commands (audit.commands) ----------------------------------------------------------
def _run(args: argparse.Namespace) -> int:
    return run_module.run_command(args, run_audits=run_audits)


def _list(args: argparse.Namespace) -> int:
    return list_module.list_command(args)


def _theory(args: argparse.Namespace) -> int:
    return theory_module.theory_command(args)


def _plot(args: argparse.Namespace) -> int:
    return plot_module.plot_command(args)


def _sweep(args: argparse.Namespace) -> int:
    return sweep.sweep_command(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
