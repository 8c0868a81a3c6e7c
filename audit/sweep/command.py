"""``dpaudit sweep LIBRARY``: the command-line front of :func:`audit.sweep.run_sweep`.

Prints the sweep table (or its JSON) and writes ``sweep.json``, ``sweep.md``, ``rows/`` and the
reproduction scripts of ``repro/`` to ``--out``.  Exit status (:func:`sweep_status`): 0 when every
row was audited and none is VIOLATED, 1 when one is VIOLATED, 3 when a row audited nothing (ERROR)
or none was planned, 2 for bad usage (an unknown library, a missing library package, entries that
match nothing), 130 when interrupted (the rows done are written, ``--resume`` continues).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Optional

from scenarios.libraries import library, library_names

from ..settings import option_type
from .plan import BUDGETS
from .releases import SOURCE_ROOT, available_releases, ensure_environment, parse_release, select_releases
from .runner import DEFAULT_CONFIDENCE, DEFAULT_OUT, DEFAULT_SEED, SWEEP_BACKENDS, SweepInterrupted, run_sweep, sweep_counts
from .table import sweep_markdown
from .versions import sweep_versions, versions_markdown

__all__ = ["add_sweep_parser", "sweep_command", "sweep_status", "EXIT_ERRORED", "EXIT_INTERRUPTED"]

#: Exit status of a sweep in which some row audited nothing (ERROR), or no row was planned.
EXIT_ERRORED = 3
#: Exit status of an interrupted sweep (as ``dpaudit run``).
EXIT_INTERRUPTED = 130


def sweep_status(document: dict) -> int:
    """The exit status of a finished sweep: 3 (:data:`EXIT_ERRORED`) when any row audited nothing or
    no row was audited at all, whatever else happened (CI must not read a sweep with holes as a
    pass or as only a finding); else 1 when a row is VIOLATED; else 0.  Rows "not in this release"
    are neither."""
    counts = sweep_counts(document["rows"])
    if counts["error"] or counts["violated"] + counts["not_refuted"] == 0:
        return EXIT_ERRORED
    return 1 if counts["violated"] else 0


def status_line(document: dict) -> str:
    """One line for the terminal: the verdict counts, how many rows audited nothing, the status."""
    counts = sweep_counts(document["rows"])
    status = sweep_status(document)
    audited = counts["violated"] + counts["not_refuted"]
    absent = f", {counts['absent']} not in this release" if counts["absent"] else ""
    why = {0: "no claim refuted", 1: "a claim is refuted",
           EXIT_ERRORED: "rows audited nothing" if counts["error"] else "no row was audited"}[status]
    return (f"dpaudit sweep: {audited} rows audited ({counts['violated']} VIOLATED), {counts['error']} rows "
            f"audited nothing (ERROR){absent}; exit status {status}: {why}")


def add_sweep_parser(commands, parser_class, debug_help: str) -> argparse.ArgumentParser:
    """Add ``sweep`` to the sub-commands ``commands`` of ``dpaudit``."""
    sweep = commands.add_parser(
        "sweep", help="audit every public mechanism, query and model of a DP library",
        description="Audit every catalogue row (entry × grid point) of an installed DP library against the "
        "privacy the library claims, with Bonferroni error control over the whole sweep; write sweep.md, "
        "sweep.json, one record per row and a reproduction script per VIOLATED row.  Exit status 0: every row "
        "audited, none VIOLATED; 1: some row VIOLATED; 3: some row audited nothing (ERROR), whatever the others "
        "say; 2: bad usage; 130: interrupted (rerun with --resume to continue).")
    sweep.add_argument("library", metavar="LIBRARY", help=f"the library: {', '.join(library_names())}; LIB==VERSION "
                       "sweeps that release in an environment of its own (built once, cached)")
    sweep.add_argument("--versions", metavar="A..B", help="sweep every final release from A to B (A.., ..B, or "
                       "last:N for the newest N), each in an environment of its own, and write OUT/versions.md: "
                       "the verdicts of each entry across releases")
    sweep.add_argument("--budget", choices=tuple(BUDGETS), default="default",
                       help="draws per row by what one release costs (default: %(default)s; small is for CI)")
    sweep.add_argument("--out", type=Path, default=Path(DEFAULT_OUT), help="output directory (default: %(default)s/)")
    sweep.add_argument("--jobs", type=option_type("n_jobs"), default=1,
                       help="rows audited side by side, -1 = all cores (default: %(default)s)")
    sweep.add_argument("--backend", choices=SWEEP_BACKENDS, default="loky",
                       help="where rows run (default: %(default)s; dask: a cluster, see --scheduler)")
    sweep.add_argument("--scheduler", help="Dask scheduler address for --backend dask (default: a local cluster)")
    sweep.add_argument("--resume", action="store_true",
                       help="keep the rows an interrupted sweep with the same plan saved in OUT/rows/ and continue")
    sweep.add_argument("--entries", nargs="+", metavar="PATTERN",
                       help="audit only the entries matching these glob patterns, e.g. 'models.*', or "
                            "only some grid points: 'ENTRY [POINT]', e.g. 'models.PCA [*n_components=1*]' "
                            "(error control then counts only their rows)")
    sweep.add_argument("--confidence", type=option_type("confidence"), default=DEFAULT_CONFIDENCE,
                       help="probability that no claim that holds is reported VIOLATED anywhere in the sweep "
                            "(default: %(default)s)")
    sweep.add_argument("--seed", type=option_type("seed"), default=DEFAULT_SEED, help="the sweep's seed (default: %(default)s)")
    sweep.add_argument("--samples", type=option_type("samples"), help="draws per pair and side for every row "
                       "(overrides the budget)")
    sweep.add_argument("--statistic", metavar="NAME", help="test statistic of every row (default: each row's own)")
    sweep.add_argument("--graybox", action="store_true",
                       help="record and replay each row's pairs first (docs/graybox.md): findings with file:line "
                            "in sweep.md and sweep.json, and the row's audit aimed at the first finding")
    sweep.add_argument("--no-repro", action="store_true", help="do not write reproduction scripts")
    sweep.add_argument("--no-progress", action="store_true", help="no progress bar")
    sweep.add_argument("--format", choices=("table", "json"), default="table",
                       help="what to print on stdout (default: %(default)s)")
    sweep.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=debug_help)
    return sweep


def _distribution(name: str) -> str:
    """The distribution of a library name (the catalogue's, when it imports; else the name)."""
    try:
        return library(name).distribution
    except ImportError:  # e.g. a release older than the catalogue: the name is the distribution
        return name


def _installed(distribution: str) -> Optional[str]:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _forwarded(args: argparse.Namespace, *, confidence: bool) -> list[str]:
    """The options of ``args`` again, for a sweep run in another environment."""
    words = ["--budget", args.budget, "--jobs", str(args.jobs), "--backend", args.backend, "--seed", str(args.seed)]
    words += ["--confidence", repr(args.confidence)] if confidence else []
    for flag, value in (("--scheduler", args.scheduler), ("--samples", args.samples), ("--statistic", args.statistic)):
        words += [flag, str(value)] if value is not None else []
    words += ["--entries", *args.entries] if args.entries else []
    words += [flag for flag, on in (("--resume", args.resume), ("--no-repro", args.no_repro),
                                    ("--graybox", getattr(args, "graybox", False))) if on]
    return words


def _release_command(args: argparse.Namespace, name: str, version: str) -> int:
    """``dpaudit sweep LIB==VERSION`` for a release other than the installed one."""
    python = ensure_environment(name, _distribution(name), version, log=lambda line: print(line, file=sys.stderr))
    words = _forwarded(args, confidence=True) + ["--format", args.format, "--out", str(Path(args.out).resolve())]
    words += ["--no-progress"] if args.no_progress else []
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(SOURCE_ROOT), os.environ.get("PYTHONPATH")])))
    print(f"dpaudit: sweeping {name}=={version} with {python}", file=sys.stderr)
    return subprocess.run([str(python), "-m", "audit", "sweep", name, *words], env=env, cwd=str(SOURCE_ROOT)).returncode


def _versions_command(args: argparse.Namespace, name: str) -> int:
    """``dpaudit sweep LIB --versions A..B``."""
    distribution = _distribution(name)
    chosen = select_releases(args.versions, available_releases(distribution))
    result = sweep_versions(name, distribution, chosen, out=args.out, arguments=_forwarded(args, confidence=False),
                            confidence=args.confidence, installed=_installed(distribution))
    print(json.dumps(result, indent=1, default=str) if args.format == "json" else versions_markdown(result))
    print(f"written to {args.out}/ (versions.md, versions.json, one folder per release)", file=sys.stderr)
    return result["status"]


def sweep_command(args: argparse.Namespace) -> int:
    """Run ``dpaudit sweep``; returns the exit status."""
    name, version = parse_release(args.library)
    if version is not None and args.versions:
        raise ValueError(f"`library` {args.library!r} names one release: drop --versions, or give the name alone")
    if name not in library_names():
        library(name)  # the unknown-name message, with the closest known name
    if args.versions:
        return _versions_command(args, name)
    if version is not None and version != _installed(_distribution(name)):
        return _release_command(args, name, version)
    args.library = name
    try:
        document = run_sweep(args.library, budget=args.budget, out=args.out, n_jobs=args.jobs, backend=args.backend,
                             scheduler=args.scheduler, resume=args.resume, confidence=args.confidence, seed=args.seed,
                             entries=args.entries, samples=args.samples, statistic=args.statistic,
                             progress=not args.no_progress, repro=not args.no_repro,
                             graybox=getattr(args, "graybox", False))
    except SweepInterrupted as exc:
        print(exc, file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.format == "json":
        print(json.dumps(document, indent=1, default=str))
    else:
        print(sweep_markdown(document))
        print(f"written to {args.out}/ (sweep.md, sweep.json, rows/, repro/)", file=sys.stderr)
    print(status_line(document), file=sys.stderr)
    return sweep_status(document)
