"""Memory table: peak resident memory of an audit at the smallest and largest sample counts.

The audits of the tightness table already run one per fresh subprocess with their peak RSS
measured (:mod:`benchmarks.tightness`), so this table reuses them instead of running the largest
audits a second time.  Two figures per audit, both sampled every 10 ms with psutil: the peak RSS
summed over the audit process and its loky workers, and the peak of the audit process alone.
The engine keeps only histogram counts and draws at most one chunk (2^20 output elements) per
worker at a time, so both must be flat in the sample count once it exceeds one chunk: the ratio
largest/smallest is the figure of merit (target ≤ 1.10 from 1e6 to 1e8 samples).
"""

from __future__ import annotations

__all__ = ["memory_table", "MEMORY_TARGET"]

#: Peak memory at the largest sample count may exceed that at the smallest by at most 10%.
MEMORY_TARGET = 1.10


def memory_table(tightness_rows: list[dict]) -> list[dict]:
    """One row per case: peak memory at its smallest and largest sample counts, and the ratios."""
    by_case: dict[str, list[dict]] = {}
    for row in tightness_rows:
        by_case.setdefault(row["case"], []).append(row)
    table = []
    for case, rows in by_case.items():
        rows = sorted(rows, key=lambda r: r["samples"])
        small, large = rows[0], rows[-1]
        if small["samples"] == large["samples"]:
            continue
        tree = large["peak_rss_tree_mb"] / small["peak_rss_tree_mb"]
        main = large["peak_rss_main_mb"] / small["peak_rss_main_mb"]
        table.append({
            "case": case, "title": small["title"], "n_jobs": large["n_jobs"],
            "small_samples": small["samples"], "large_samples": large["samples"],
            "small_peak_tree_mb": small["peak_rss_tree_mb"], "large_peak_tree_mb": large["peak_rss_tree_mb"],
            "small_peak_rss_main_mb": small["peak_rss_main_mb"], "large_peak_rss_main_mb": large["peak_rss_main_mb"],
            "ratio_tree": tree, "ratio_main": main,
            "meets_target": bool(max(tree, main) <= MEMORY_TARGET),
        })
    return table
