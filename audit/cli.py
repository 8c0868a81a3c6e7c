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
"""

from __future__ import annotations

import argparse
import enum
import inspect
import math
import os
import sys
import textwrap
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Collection, Optional, Sequence

from .errors import CheckpointError
from .lazy import lazy_module

# Imported at first use (audit.lazy): `dpaudit --help` and `import audit.cli` need none of them.
np = lazy_module("numpy")
mechanisms = lazy_module("mechanisms")
scenarios = lazy_module("scenarios")
scenario_files = lazy_module("scenarios.files")
outline = lazy_module("scenarios.outline")
parallelism = lazy_module("audit.parallelism")
render_files = lazy_module("audit.render.files")
render_graybox = lazy_module("audit.render.graybox")
render_plots = lazy_module("audit.render.plots")
render_tables = lazy_module("audit.render.tables")
render_text = lazy_module("audit.render.text")
report_module = lazy_module("audit.report")
settings_module = lazy_module("audit.settings")
spec_module = lazy_module("audit.spec")
statistics = lazy_module("audit.statistics")
run_folder = lazy_module("audit.run_folder")
suite = lazy_module("audit.suite")
sweep = lazy_module("audit.sweep.command")

__all__ = ["main", "build_parser", "synopsis", "parameters_text", "error_control", "EXIT_OK", "EXIT_VIOLATED",
           "EXIT_USAGE", "parse_value", "exact_integer"]

EXIT_OK, EXIT_VIOLATED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130
DEFAULT_OUT = "dpaudit-report"
#: δ values at which ``dpaudit theory`` prints the exact ε(δ).
THEORY_DELTAS = (1e-10, 1e-8, 1e-6, 1e-5, 1e-3, 1e-2, 0.1)
THEORY_ALPHA = 0.05


#: Names this module re-exports from others, imported at first use (PEP 562).
_REEXPORTED = {"error_control": run_folder, "exact_integer": settings_module}


def __getattr__(name: str) -> Any:
    if name in _REEXPORTED:
        return getattr(_REEXPORTED[name], name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def run_audits(specs: Sequence[Any], options: Any) -> Any:
    """:func:`audit.suite.run_audits`, looked up here by ``dpaudit run`` (a test replaces it)."""
    return suite.run_audits(specs, options)


class UsageError(Exception):
    """Bad usage or bad input: reported in one line, exit status 2."""


# -- argument parsing ---------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own usage errors: one line, exit 2
        raise UsageError(f"{self.prog}: {message}")


_DEBUG_HELP = "show the full traceback of an error (default: a one-line message)"


#: Each sub-command's line in `dpaudit --help` (the sweep's is its own parser's, which a test checks).
COMMAND_HELP = {
    "run": "audit scenario files (default: the bundled suite)",
    "list": "reference mechanisms and bundled scenario files",
    "theory": "exact privacy and accuracy of a reference mechanism",
    "plot": "redraw the figures of a saved report.json",
    "sweep": "audit every public mechanism, query and model of a DP library",
}


def build_parser(commands: Optional[Collection[str]] = None) -> argparse.ArgumentParser:
    """The ``dpaudit`` parser with the sub-commands ``commands`` in full (default: all) and the
    others as their line in ``dpaudit --help`` only: a sub-command's options may need the engine's
    modules (statistics, backends, suites), which ``dpaudit --help`` and ``dpaudit list`` need not pay for."""
    parser = _Parser(prog="dpaudit", description="Empirical differential-privacy auditing: certified "
                     "lower bounds on ε, δ and μ against a mechanism's claim.")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    builders = {"run": _add_run, "list": _add_list, "theory": _add_theory, "plot": _add_plot, "sweep": _add_sweep}
    for name, build in builders.items():
        if commands is None or name in commands:
            build(subparsers)
        else:
            subparsers.add_parser(name, help=COMMAND_HELP[name], add_help=False)
    return parser


def _add_run(commands: Any) -> None:
    run = commands.add_parser("run", help=COMMAND_HELP["run"],
                              description="Audit scenario files and write report.html, report.json, "
                              "summary.md and figures.  Exit status 0: no claim refuted; 1: some claim "
                              "VIOLATED; 2: bad usage or input.")
    run.add_argument("files", nargs="*", type=Path, metavar="FILE",
                     help="TOML scenario files (default: the bundled suite, see --suite)")
    run.add_argument("--suite", choices=scenario_files.SUITES, default="default",
                     help="bundled suite run when no FILE is given (default: %(default)s)")
    run.add_argument("--samples", type=settings_module.option_type("samples"), metavar="N", help="samples per pair and side (all phases) "
                     "(overrides the files' [audit] samples)")
    run.add_argument("--confidence", type=settings_module.option_type("confidence"), metavar="C", help="with several files: the probability "
                     "that no correct claim of the run is reported VIOLATED (default 0.95, shared by "
                     "Bonferroni, see --error-control); with one file: that audit's confidence.  It can "
                     "make a file's own [audit] confidence stricter, never weaker")
    run.add_argument("--error-control", choices=("bonferroni", "none"), default="bonferroni",
                     help="bonferroni (default): every audit of a several-file run gets confidence "
                          "1 - (1 - C)/m, or its file's own where that is stricter, so a correct suite "
                          "exits 1 with probability <= 1 - C; none: each file's own confidence (the "
                          "run's false-alarm bound is then the sum of the audits', as the report says)")
    run.add_argument("--seed", type=settings_module.option_type("seed"), metavar="S", help="seed of every audit (overrides the files')")
    run.add_argument("--statistic", metavar="NAME",
                     help="test statistic of every audit (overrides the files' [audit] statistic; "
                          f"default auto): {', '.join(statistics.statistic_names())}, or one a scenario file's "
                          "module registers")
    run.add_argument("--anytime", action="store_true", default=None,
                     help="anytime audits: draw in growing rounds and stop as soon as the evidence decides, "
                          "with --samples (or the files' samples) as the maximum (overrides the files' "
                          "[audit] anytime)")
    run.add_argument("--graybox", action="store_true", default=None,
                     help="record every random call on D and replay it on D' first: a finding names its call "
                          "site and the audit is aimed at it (overrides the files' [audit] graybox; docs/graybox.md)")
    run.add_argument("--jobs", type=settings_module.option_type("n_jobs"), default=1, metavar="J", help="parallel workers, -1 = all cores "
                     "(default: %(default)s)")
    run.add_argument("--backend", default="loky", choices=parallelism.known_backends(), metavar="NAME",
                     help="where chunks run: %(choices)s (default: %(default)s)")
    run.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address for --backend dask "
                     "(default: a local cluster)")
    run.add_argument("--out", type=Path, default=Path(DEFAULT_OUT), metavar="DIR",
                     help="output directory (default: %(default)s/)")
    run.add_argument("--format", choices=("table", "json"), default="table",
                     help="what to print on stdout (default: %(default)s)")
    run.add_argument("--no-progress", action="store_true", help="no progress bars")
    run.add_argument("--no-plots", action="store_true", help="do not draw figures")
    run.add_argument("--resume", action="store_true", help="continue an earlier run in OUT: its finished audits "
                     "whose file, settings and mechanism are unchanged are taken from OUT/report.json, the "
                     "others continue from OUT/checkpoints/ (or run again)")
    run.add_argument("--overwrite", action="store_true", help="discard an unfinished run in OUT, or finished "
                     "audits this run does not include, and start again (without --resume or --overwrite, a "
                     "run refuses to start over unfinished work or to drop finished audits)")
    run.add_argument("--keep-checkpoints", action="store_true", help="keep OUT/checkpoints/ after "
                     "a finished run (by default the checkpoints of completed audits are removed)")
    run.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)



def _add_list(commands: Any) -> None:
    listing = commands.add_parser("list", help=COMMAND_HELP["list"])
    listing.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)



def _add_theory(commands: Any) -> None:
    theory = commands.add_parser(
        "theory", help=COMMAND_HELP["theory"],
        description="Exact privacy and accuracy of a reference mechanism, e.g. `dpaudit theory "
        "gaussian --epsilon 1 --delta 1e-5`; for composition: `dpaudit theory composition --k 10 "
        "--inner gaussian --inner.sigma 2`.  Parameters are the constructor's keyword arguments.")
    theory.add_argument("mechanism", metavar="MECHANISM", help="a reference mechanism (see `dpaudit list`)")
    theory.add_argument("params", nargs=argparse.REMAINDER, metavar="--param value",
                        help="constructor keyword arguments")
    theory.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)



def _add_plot(commands: Any) -> None:
    plot = commands.add_parser("plot", help=COMMAND_HELP["plot"])
    plot.add_argument("report", type=Path, metavar="REPORT.json")
    plot.add_argument("--out", type=Path, metavar="DIR", help="output directory: figures go to OUT/figures/, as with "
                      "`dpaudit run --out OUT` (default: the report's own directory)")
    plot.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)


def _add_sweep(commands: Any) -> None:
    sweep.add_sweep_parser(commands, _Parser, _DEBUG_HELP)


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


# -- dpaudit run --------------------------------------------------------------------------------
def _load_specs(files: Sequence[Path]) -> list:
    """Load and check every file before anything runs; every problem of every file is reported
    together (each line names the file and the key)."""
    specs, problems = [], []
    for path in files:
        try:
            specs.append(spec_module.load_spec(path))
        except scenarios.ScenarioFileError as exc:
            problems += exc.messages
    if problems:
        raise scenarios.ScenarioFileError(problems)
    seen: dict[str, Path] = {}
    for spec in specs:
        if spec.claim is None:
            raise UsageError(f"{spec.path}: the mechanism declares no claim; add a [claim] table")
        stem = render_text.figure_stem(spec.name)
        if stem in seen:
            raise UsageError(f"{spec.path}: name {spec.name!r} is also the name of {seen[stem]}; "
                             "audit names must be distinct (set `name` in one file)")
        seen[stem] = spec.path
    return specs


def _check_output_folder(out: Path, specs: Sequence[Any], resume: bool, overwrite: bool) -> None:
    """Refuse to start over an unfinished run unless told to resume it or to overwrite it, and to drop
    the finished audits of an earlier run unless told to overwrite them."""
    if resume and overwrite:
        raise UsageError("dpaudit run: --resume and --overwrite exclude each other (continue the unfinished "
                         "run, or discard it)")
    unfinished = run_folder.unfinished_run(out, specs)
    if unfinished is not None and not (resume or overwrite):
        raise UsageError(f"dpaudit run: {out} holds an unfinished run ({unfinished}); rerun with --resume to "
                         "continue it, or with --overwrite to discard it and start again")
    dropped = run_folder.dropped_audits(out, specs)
    if dropped and not overwrite:  # finished work is never replaced silently
        raise UsageError(f"dpaudit run: {out / 'report.json'} holds finished audits that this run does not "
                         f"include ({', '.join(map(repr, dropped))}), which it would drop from report.json, "
                         "report.html and summary.md; give their files too (with --resume, those unchanged are "
                         "kept without running again), choose another --out, or rerun with --overwrite to "
                         "replace the report")


def _run(args: argparse.Namespace) -> int:
    files = list(args.files) or scenarios.bundled_suite(args.suite)
    if not files:
        raise UsageError(f"dpaudit run: the bundled {args.suite!r} suite has no scenario files")
    if args.scheduler is not None and args.backend != "dask":
        raise UsageError("dpaudit run: --scheduler needs --backend dask")
    if args.out.exists() and not args.out.is_dir():
        raise UsageError(f"dpaudit run: --out {str(args.out)!r} exists and is not a directory")
    specs = _load_specs(files)
    out = args.out
    _check_output_folder(out, specs, args.resume, args.overwrite)
    control = run_folder.error_control(specs, args.confidence, args.error_control)
    settings = {"files": [str(spec.path) for spec in specs], "samples": args.samples,
                "confidence": args.confidence, "seed": args.seed, "statistic": args.statistic,
                "jobs": args.jobs, "error_control": control, "anytime": bool(args.anytime),
                **({"graybox": True} if args.graybox else {}),
                "backend": args.backend, "resume": args.resume}
    overrides = {"samples": args.samples, "seed": args.seed, "statistic": args.statistic,
                 "anytime": args.anytime, "graybox": args.graybox}
    overrides = {name: value for name, value in overrides.items() if value is not None}
    settings_module.AuditSettings().replace(**overrides)  # e.g. an unknown --statistic: refused before anything runs
    options = suite.RunSettings(out=out, overrides=overrides,
                          confidences={level["name"]: level["audit"] for level in control["levels"]},
                          n_jobs=args.jobs, backend=args.backend,
                          backend_options={} if args.scheduler is None else {"scheduler": args.scheduler},
                          plots=not args.no_plots, progress=not args.no_progress,
                          debug=getattr(args, "debug", False))
    levels = {level["name"]: level for level in control["levels"]}
    earlier = run_folder.saved_entries(out, specs, options) if args.resume else run_folder.SavedRun()
    saved, when = earlier.kept, earlier.when
    replaced = run_folder.replaced_files(out, specs)  # the saved report's figures, dropped audits' checkpoints
    for spec in specs:
        checkpoint, timing = suite.checkpoint_path(out, spec), suite.timing_path(out, spec)
        if spec.name in earlier.changed:
            print(f"dpaudit: {spec.name}: finished {when}, but {earlier.changed[spec.name]} changed since; "
                  "audited again", file=sys.stderr)
        if spec.name in earlier.failed:
            print(f"dpaudit: {spec.name}: ended with an error in the earlier run; audited again", file=sys.stderr)
        if not args.resume or spec.name in saved or spec.name in earlier.changed:
            for path in (checkpoint, timing):  # a fresh audit never mixes in an older one
                if path.exists():
                    path.unlink()
        elif checkpoint.exists():
            print(f"dpaudit: {spec.name}: resuming from {checkpoint}", file=sys.stderr)
        if spec.name in saved:
            print(f"dpaudit: {spec.name}: finished {when}; taken from {out / 'report.json'}", file=sys.stderr)
        for warning in spec.warnings:  # e.g. a calibration used outside its proven range, on purpose
            print(f"dpaudit: {spec.name}: {warning}", file=sys.stderr)
    entries: list[dict] = []
    entries_without_plots = 0  # matplotlib missing: say so once
    to_run = [spec for spec in specs if spec.name not in saved]
    side_by_side = suite.side_by_side(to_run, options)
    if side_by_side and options.progress:
        print(f"dpaudit: running {len(to_run)} audits, up to {args.jobs if args.jobs > 0 else 'all-core'} "
              "at once (one worker each)", file=sys.stderr)
    try:
        audits = run_audits(to_run, options)
        for index, spec in enumerate(specs, 1):
            if spec.name in saved:
                entries.append(saved[spec.name])
                render_files.write_reports(out, entries, settings, finished=False)
                continue
            if options.progress and not side_by_side:
                print(f"[{index}/{len(specs)}] {spec.name} ({spec.path})", file=sys.stderr)
            entry = next(audits)
            entry["confidence_levels"] = levels[spec.name]
            _report_entry(entry, index, len(specs), options, side_by_side)
            reason = entry.pop("_plots_unavailable", None)
            if reason is not None and not entries_without_plots:
                print(f"dpaudit: warning: {reason}; figures skipped", file=sys.stderr)
            entries_without_plots += reason is not None
            entries.append(entry)
            render_files.write_reports(out, entries, settings, finished=False)
    except CheckpointError as exc:
        raise UsageError(f"{exc} (or run without --resume)") from exc
    except KeyboardInterrupt:
        now = time.time()
        reached = {entry["name"] for entry in entries}  # audits taken from the saved report stay in it
        entries += [saved[spec.name] for spec in specs if spec.name in saved and spec.name not in reached]
        done = {entry["name"] for entry in entries}
        for spec in specs:
            if spec.name not in done:
                suite.close_timing(out, spec, now)
        render_files.write_reports(out, entries, settings, finished=False)
        run_folder.remove_replaced(out, replaced, entries)
        raise Interrupted(run_folder.saved_message(out, specs, entries)) from None
    written = render_files.write_reports(out, entries, settings)
    run_folder.remove_replaced(out, replaced, entries)
    removed = 0 if args.keep_checkpoints else run_folder.remove_checkpoints(out, specs, entries)
    accuracy = any((entry.get("report") or {}).get("accuracy") for entry in entries)
    if args.format == "json":
        print(report_module.dumps(render_files.report_document(entries, settings)))
        where = sys.stderr
    else:
        print(render_tables.format_table(entries))
        witnesses = render_text.refuted_witnesses(entries)
        if witnesses:
            print("\n" + "\n".join(line for text in witnesses for line in _fit_lines(text.splitlines())))
        for entry in entries:  # the gray-box findings, each with its call site (file:line)
            graybox = (entry.get("report") or {}).get("graybox")
            if graybox:
                print(f"\n{entry['name']}: " + "\n".join(render_graybox.graybox_lines(graybox)))
        print("\n" + "\n".join(_fit(render_text.error_control_text(control, accuracy=accuracy))))
        where = sys.stdout
    where_line = (f"report: {written['html']}  (also {written['report'].name}, {written['summary'].name}"
                  + (f", figures in {out / 'figures'}" if any(e.get("figures") for e in entries) else "") + ")"
                  + (f"; removed {removed} checkpoint(s) of completed audits (keep them with --keep-checkpoints)"
                     if removed else ""))
    print("\n" + "\n".join(_fit(where_line) if where is sys.stdout else [where_line]), file=where)
    if any(entry.get("error") for entry in entries):
        return EXIT_USAGE
    if any(entry["report"]["verdict"] == "VIOLATED" for entry in entries):
        return EXIT_VIOLATED
    return EXIT_OK


def _fit(text: str) -> list[str]:
    """A paragraph for the terminal, wrapped to :func:`audit.render.tables.terminal_width` (as is
    when the output is not a terminal)."""
    width = render_tables.terminal_width()
    return [text] if width is None else textwrap.wrap(text, width=max(width, 40), break_on_hyphens=False)


def _fit_lines(lines: Sequence[str]) -> list[str]:
    """Indented lines for the terminal, each wrapped to its width under its own indentation."""
    width = render_tables.terminal_width()
    if width is None:
        return list(lines)
    fitted = []
    for line in lines:
        indent = " " * (len(line) - len(line.lstrip()))
        fitted += textwrap.wrap(line, width=max(width, 40), subsequent_indent=indent + "  ",
                                break_on_hyphens=False) or [line]
    return fitted


class Interrupted(Exception):
    """Ctrl-C during ``dpaudit run``; the message says what was saved."""


def _report_entry(entry: dict, index: int, count: int, options: Any, side_by_side: bool) -> None:
    """Print an audit's error (and traceback with --debug) or, in side-by-side runs, its outcome."""
    trace = entry.pop("_traceback", None)
    if trace:
        print(trace, file=sys.stderr, end="")
    if entry.get("error"):
        print(f"dpaudit: error: {entry['error']}", file=sys.stderr)
    elif side_by_side and options.progress:
        wall = (entry["report"].get("runtime") or {}).get("wall_time_s")
        print(f"[{index}/{count}] {entry['name']}: {entry['report']['verdict']}"
              + (f" ({float(wall):.1f}s)" if wall is not None else ""), file=sys.stderr)


def _sweep(args: argparse.Namespace) -> int:
    return sweep.sweep_command(args)


# -- dpaudit list -------------------------------------------------------------------------------
def _list(args: argparse.Namespace) -> int:
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


# -- dpaudit theory -----------------------------------------------------------------------------
def _theory_params(tokens: Sequence[str]) -> dict:
    """``--key value`` / ``--key=value`` pairs; a flag without a value is ``True``."""
    params: dict[str, Any] = {}
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if not token.startswith("--") or token == "--":
            raise UsageError(f"dpaudit theory: expected --param value, got {token!r}")
        key, equals, value = token[2:].partition("=")
        if not equals:
            if index + 1 < len(tokens) and not tokens[index + 1].startswith("--"):
                value, index = tokens[index + 1], index + 1
            else:
                value = "true"
        params[key.replace("-", "_")] = parse_value(value)
        index += 1
    return params


def _build_reference(name: Any, params: dict, where: str) -> Any:
    known = mechanisms.REFERENCE_MECHANISMS
    if name not in known:
        raise UsageError(f"dpaudit theory: {where} must be one of {', '.join(sorted(known))}, got {name!r}")
    inner_name = params.pop("inner", None)
    inner = {key[len("inner."):]: value for key, value in params.items() if key.startswith("inner.")}
    params = {key: value for key, value in params.items() if not key.startswith("inner.")}
    args = []
    if inner_name is not None or inner:
        args.append(_build_reference(inner_name, inner, "--inner"))
    try:
        return known[name](*args, **params)
    except TypeError as exc:
        raise UsageError(f"dpaudit theory {name}: {exc}") from exc


def _exact(function: Any, *args: Any) -> Optional[float]:
    if not callable(function):
        return None
    try:
        value = function(*args)
    except (NotImplementedError, ValueError):
        return None
    return None if value is None else float(value)


def _theory(args: argparse.Namespace) -> int:
    params = _theory_params(args.params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        mechanism = _build_reference(args.mechanism, params, "MECHANISM")
    claim = getattr(mechanism, "claim", None)
    print(f"{getattr(mechanism, 'name', args.mechanism)}")
    for warning in caught:
        print(f"  warning: {warning.message}")
    print(f"  claim: {claim if claim is not None else 'none'}")
    print(f"\nExact privacy ({getattr(mechanism, 'relation', 'add-remove')}):")
    mu = _exact(getattr(mechanism, "exact_mu", None))
    if mu is not None:
        print(f"  μ = {mu:.6g}  (Gaussian-shaped: the worst pair's trade-off curve is G_μ)")
    epsilon_for_delta = getattr(mechanism, "epsilon_for_delta", None)
    deltas = sorted(set(THEORY_DELTAS) | ({float(claim.delta)} if claim is not None and claim.delta > 0 else set()))
    for delta in deltas:
        value = _exact(epsilon_for_delta, delta)
        print(f"  ε(δ = {delta:g}) = {'unknown' if value is None else f'{value:.6g}'}")
    if claim is not None:
        exact_delta = _exact(getattr(mechanism, "privacy_profile", None), claim.epsilon)
        shown = "unknown" if exact_delta is None else f"{exact_delta:.6g}"
        print(f"  δ at the claimed ε = {claim.epsilon:.6g}: {shown}  (claimed δ = {claim.delta:g})")
        exact_eps = _exact(epsilon_for_delta, claim.delta) if claim.delta > 0 else exact_delta
        if exact_delta is None:
            verdict = "unknown (no exact privacy for this mechanism)"
        elif exact_delta <= claim.delta * (1 + 1e-9) + 1e-300:
            verdict = "holds"
        else:
            verdict = "does NOT hold"
        if exact_eps is not None and claim.delta > 0:
            verdict += f" (exact ε at δ = {claim.delta:g} is {exact_eps:.6g} vs claimed {claim.epsilon:.6g})"
        print(f"  the claim {verdict}")
    print("\nAccuracy:")
    variance = getattr(mechanism, "noise_variance", None)
    if callable(variance):
        values = np.atleast_1d(np.asarray(variance(), dtype=np.float64))
        shown = ", ".join(f"{v:.6g}" for v in values[:6]) + (", ..." if values.size > 6 else "")
        print(f"  noise variance per output column: {shown}  ({values.size} columns)")
    bound = getattr(mechanism, "error_bound", None)
    if callable(bound):
        queries = len(getattr(mechanism, "query_columns", (0,)))
        print(f"  error bound at α = {THEORY_ALPHA}: P(|error| > {bound(THEORY_ALPHA, 1):.6g}) ≤ {THEORY_ALPHA} per query")
        if queries > 1:
            print(f"  over all {queries} queries: P(max |error| > {bound(THEORY_ALPHA, queries):.6g}) ≤ {THEORY_ALPHA}")
    worst = _exact(getattr(mechanism, "worst_case_error", None))
    if worst is not None:
        print(f"  worst-case error: {worst:.6g} (the noise is bounded)")
    if not callable(variance) and not callable(bound):
        print("  no accuracy claims declared")
    return EXIT_OK


# -- dpaudit plot -------------------------------------------------------------------------------
def _plot(args: argparse.Namespace) -> int:
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


def parse_value(text: str) -> Any:
    """A command-line parameter value: int, float, bool, None, or the string itself."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for convert in (int, float):
        try:
            value = convert(text.replace("_", "") if convert is int else text)
        except ValueError:
            continue
        if convert is float and not math.isfinite(value):
            return text
        return value
    return text


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
