"""``dpaudit run``: its options, and checking the files and the output folder before auditing them.

The audits run in :mod:`audit.suite`; the output folder (resuming, dropped audits, checkpoints,
error control) is :mod:`audit.run_folder`.  Exit status: 0 when no claim is refuted, 1 when some
audit is VIOLATED, 2 when some audit could not run (even if another was refuted).
"""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..errors import CheckpointError
from ..lazy import lazy_module
from .common import COMMAND_HELP, DEBUG_HELP, EXIT_OK, EXIT_USAGE, EXIT_VIOLATED, Interrupted, UsageError

# Imported at first use (audit.lazy): `dpaudit --help` needs none of them.
scenarios = lazy_module("scenarios")
scenario_files = lazy_module("scenarios.files")
parallelism = lazy_module("audit.parallelism")
render_files = lazy_module("audit.render.files")
render_graybox = lazy_module("audit.render.graybox")
render_tables = lazy_module("audit.render.tables")
render_text = lazy_module("audit.render.text")
report_module = lazy_module("audit.report")
settings_module = lazy_module("audit.settings")
spec_module = lazy_module("audit.spec")
statistics = lazy_module("audit.statistics")
run_folder = lazy_module("audit.run_folder")
suite = lazy_module("audit.suite")

__all__ = ["add_run_parser", "run_command", "DEFAULT_OUT"]

DEFAULT_OUT = "dpaudit-report"


def add_run_parser(commands: Any) -> None:
    """Add ``dpaudit run`` and its options to ``commands`` (the sub-parsers of :func:`audit.cli.build_parser`)."""
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
    run.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP)


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


def run_command(args: argparse.Namespace, *, run_audits: Callable[[Sequence[Any], Any], Iterator[dict]]) -> int:
    """``dpaudit run``: check every file and the output folder, run the audits (``run_audits``, as
    :func:`audit.suite.run_audits`; :mod:`audit.cli` passes its own, which a test replaces), write the
    reports and print the table; returns the exit status."""
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
