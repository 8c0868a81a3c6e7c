"""Benchmarks of the audit engine: throughput, tightness and memory, reported as ratios.

Run ``python -m benchmarks`` (full tables, as in README) or ``python -m benchmarks --quick``
(CI smoke run); ``--out DIR`` writes ``benchmarks.json`` and ``benchmarks.md``.

Modules: :mod:`benchmarks.run` (entry point, Markdown), :mod:`benchmarks.throughput`,
:mod:`benchmarks.tightness`, :mod:`benchmarks.memory`, :mod:`benchmarks.limits` (the
single-threshold statistical limit) and :mod:`benchmarks.cases` (the benchmarked audits).
"""

__all__ = ["cases", "limits", "memory", "run", "throughput", "tightness"]
