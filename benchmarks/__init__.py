"""Benchmarks of the audit engine: throughput, tightness and memory, reported as ratios.

Run ``python -m benchmarks`` (full tables, as in docs/performance.md) or
``python -m benchmarks --quick`` (CI smoke run); ``--out DIR`` writes ``benchmarks.json`` and
``benchmarks.md``.  After any benchmark rewrites ``benchmarks/results/``, ``python -m
benchmarks.docs_tables`` refreshes the tables of README.md and docs/ (:mod:`benchmarks.docs_tables`).

Modules: :mod:`benchmarks.run` (entry point, Markdown), :mod:`benchmarks.throughput`,
:mod:`benchmarks.tightness`, :mod:`benchmarks.memory`, :mod:`benchmarks.limits` (the
single-threshold statistical limit) and :mod:`benchmarks.cases` (the benchmarked audits).
"""

__all__ = ["cases", "docs_tables", "limits", "memory", "run", "throughput", "tightness"]
