"""The replayed release of the SmartNoise SQL catalogue for releases before 1.0, against the plain one.

``scenarios/libraries/snsql_legacy.py`` answers a query by the reader's own ``_execute_ast(query,
cache_exact=True)`` with the rewrite computed once and replayed.  This check draws ``--replayed``
answers that way and ``--plain`` answers by ``reader.execute(sql)`` on a new reader each, on the same
table (6 rows, ``SELECT COUNT(*), SUM(x)``), in the release's own environment
(:mod:`audit.sweep.releases`), and compares each column by the two-sample Kolmogorov–Smirnov test:
a replay that changed the mechanism would show as a small p-value.

Run ``nice -n 5 python benchmarks/snsql_replay.py 0.1.1 0.1.3.1``; results:
``benchmarks/results/snsql_replay.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from audit.sweep.releases import ensure_environment  # noqa: E402

#: Run in the release's environment: prints {"count": p, "sum": p}.
CHECK = r'''
import json, sys, warnings
warnings.simplefilter("ignore")
import numpy as np
from scipy.stats import ks_2samp
import scenarios.libraries.snsql_legacy as L

replayed_n, plain_n = int(sys.argv[1]), int(sys.argv[2])
data = np.array(L.table_rows([(1.0 if i % 2 == 0 else 0.0, float(i % 2)) for i in range(6)]))
table = {"censor_dims": False, "bounds": (0.0, 1.0)}
sql = "SELECT COUNT(*) AS n, SUM(x) AS s FROM T.T"
replayed = np.array([L.query(data, None, sql=sql, epsilon=1.0, delta=1e-5, table=table, width=2)[1:3]
                     for _ in range(replayed_n)])
plain = []
for _ in range(plain_n):
    L.reader_for.__dict__["cache"] = {}  # a new reader: nothing cached or replayed
    plain.append([float(v) for v in L.reader_for(data, 1.0, 1e-5, table).execute(sql)[1]])
plain = np.array(plain)
print(json.dumps({name: float(ks_2samp(replayed[:, j], plain[:, j]).pvalue) for j, name in enumerate(("count", "sum"))}))
'''


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", nargs="+", help="opendp-smartnoise releases, e.g. 0.1.1 0.1.3.1")
    parser.add_argument("--replayed", type=int, default=3000)
    parser.add_argument("--plain", type=int, default=400)
    args = parser.parse_args(argv)
    lines = ["**Replayed against plain `reader.execute` (`SELECT COUNT(*), SUM(x)` on 6 rows, "
             f"{args.replayed} replayed and {args.plain} plain answers; two-sample Kolmogorov–Smirnov p-values)**", "",
             "| release | p (count) | p (sum) |", "|---|---|---|"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    for version in args.versions:
        python = ensure_environment("smartnoise-sql", "smartnoise-sql", version, log=print)
        done = subprocess.run([str(python), "-c", CHECK, str(args.replayed), str(args.plain)], env=env, cwd=ROOT,
                              capture_output=True, text=True, check=True)
        found = json.loads(done.stdout.strip().splitlines()[-1])
        lines.append(f"| {version} | {found['count']:.4f} | {found['sum']:.4f} |")
    (ROOT / "benchmarks" / "results" / "snsql_replay.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
