"""``dpaudit list``: the reference mechanisms and the bundled scenario files.

Listing reads the scenario files (:mod:`scenarios.outline`) and builds, probes and runs no mechanism:
a trainer would train, and the listing must stay fast (``benchmarks/cli_speed.py``).
"""

from __future__ import annotations

import argparse
import enum
import inspect
from typing import Any

from ..lazy import lazy_module
from .common import COMMAND_HELP, DEBUG_HELP, EXIT_OK

# Imported at first use (audit.lazy): `dpaudit --help` needs none of them.
mechanisms = lazy_module("mechanisms")
scenarios = lazy_module("scenarios")
scenario_files = lazy_module("scenarios.files")
outline = lazy_module("scenarios.outline")
settings_module = lazy_module("audit.settings")

__all__ = ["add_list_parser", "list_command", "parameters_text"]


def add_list_parser(commands: Any) -> None:
    """Add ``dpaudit list`` to ``commands`` (the sub-parsers of :func:`audit.cli.build_parser`)."""
    listing = commands.add_parser("list", help=COMMAND_HELP["list"])
    listing.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)


def list_command(args: argparse.Namespace) -> int:
    """``dpaudit list``: the reference mechanisms with their keys, and the bundled scenario files of
    every suite as the files say (read, never loaded); returns the exit status."""
    print("Reference mechanisms (scenario files: [mechanism] name = ...; `dpaudit theory NAME --param value`):")
    for name, cls in mechanisms.REFERENCE_MECHANISMS.items():
        doc = (inspect.getdoc(cls) or "").splitlines()
        print(f"  {name:<28} {doc[0] if doc else ''}")
        print(f"  {'':<28} keys: {parameters_text(cls)}")
    for suite_name in scenario_files.SUITES:
        paths = scenarios.bundled_suite(suite_name)
        print(f"\nBundled scenario files, suite {suite_name!r} ({len(paths)}; `dpaudit run --suite {suite_name}`):")
        for path in paths:  # read, not loaded: listing runs no mechanism (a trainer would train)
            try:
                file = outline.outline(path)
                samples = f"{settings_module.AuditSettings.from_table(file.audit).samples:>9,}"
            except (ValueError, TypeError) as exc:  # a malformed file: `dpaudit run` says what is wrong
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                print(f"  {path.stem:<44} (malformed: {reason})")
                continue
            print(f"  {file.name:<44} {file.claim_text:<32} expected {file.expected or '—':<9} {samples} samples")
            print(f"  {'':<44} mechanism {file.mechanism}")
    return EXIT_OK


def parameters_text(cls: type) -> str:
    """A reference mechanism's constructor parameters as a scenario file's ``[mechanism]`` keys:
    ``epsilon, d = 1, calibration = "analytic", sigma (optional)`` (required keys bare, defaults in
    TOML's notation, None as "optional")."""
    try:
        parameters = list(inspect.signature(cls.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return "see the class's docstring"
    texts = []
    for parameter in parameters:
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        default = parameter.default
        if parameter.name in ("mechanism", "inner"):  # the wrapped mechanism: scenarios.files' sub-table
            texts.append("[mechanism.inner] (the wrapped mechanism's table)")
        elif default is parameter.empty:
            texts.append(parameter.name)
        elif default is None:
            texts.append(f"{parameter.name} (optional)")
        else:
            texts.append(f"{parameter.name} = {_toml_value(default)}")
    return ", ".join(texts) or "none"


def _toml_value(value: Any) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    return f"{value:g}" if isinstance(value, float) else str(value)
