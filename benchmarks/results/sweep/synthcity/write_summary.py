"""Write benchmarks/results/sweep/synthcity/summary.md from the saved row records (the sweep was stopped)."""
import json, sys
from pathlib import Path
sys.path.insert(0, ".")
from audit.sweep.table import _table
R = Path("benchmarks/results/sweep/synthcity")
records = [json.loads(p.read_text()) for p in sorted((R / "rows").glob("*.json"))]
checks = json.loads((R / "repro_check.json").read_text()) if (R / "repro_check.json").is_file() else []
lines = ["# dpaudit sweep: synthcity 0.2.12 (stopped after 3 of 5 rows)", "",
         "- library: synthcity 0.2.12; swept on 2026-11-28 at budget `default`, 2 jobs, on the shared 2-core machine "
         "(load average 13 to 24)",
         "- 5 rows planned, each at confidence 0.99 (Bonferroni over the 5: at most 0.05 that any claim that holds "
         "is reported VIOLATED); the 3 PrivBayes rows finished (their records, as the sweep saved them, are in "
         "`rows/`), the 2 gray-box GAN rows did not: the sweep was stopped after 54 minutes of wall time",
         f"- verdicts of the finished rows: {sum(r['verdict'] == 'VIOLATED' for r in records)} VIOLATED of {len(records)}",
         f"- reproduction scripts run alone: {sum(c['exceeded'] for c in checks)} of {len(checks)} show the excess "
         "over the claim", "", *_table(records), "",
         "The first row's known-issue column names the noise scale, as the catalogue did when it ran; its pair "
         "(a new category) is separated by the schema read from the data, which the catalogue now names.", "",
         "## Rows not finished", "",
         "| entry | grid point | how audited | what ran before the sweep was stopped |", "|---|---|---|---|",
         "| plugins.pategan | epsilon=1.0, delta=1e-05 | gray box, 47 draws a side | the replay of its pair (both "
         "orders) and 11 of 47 draws a side, in 14 minutes of wall time and about 2.3 minutes of CPU (about 4.6 s of CPU a "
         "fit with 200 synthetic rows, under the replay's interception and the audit) |",
         "| plugins.dpgan | epsilon=1.0, delta=1e-05 | gray box, 47 draws a side | no phase finished in 14 minutes "
         "of wall time and about 2.4 minutes of CPU |", ""]
coverage = json.loads((R / "coverage.json").read_text())
lines += ["## Coverage of the public API", "",
          f"{len(coverage['covered'])} public names audited, {len(coverage['excluded'])} left out with a reason, "
          f"{len(coverage['unaccounted'])} unaccounted ({coverage['fraction']:.0%} of the public DP entries audited).", "",
          "| public name | audited by | or left out because |", "|---|---|---|"]
for name in coverage["public"]:
    by = ", ".join(coverage["covered"].get(name, [])) or "—"
    lines.append(f"| `{name}` | {by} | {coverage['excluded'].get(name, '—')} |")
lines.append("")
(R / "summary.md").write_text("\n".join(lines))
print("\n".join(lines))
