"""``python -m benchmarks.virtual_miss``: how often the virtual-view test's audit misses, measured over seeds.

``tests/mechanisms/test_training_virtual.py::test_the_ratio_refutes_sixteen_virtual_steps`` runs
one seeded anytime audit (at most ``--samples`` draws a side, the linear statistic) of the law the
virtual view scores at k = 16 (:class:`VirtualLaw`: σ = 2, T = 4, q = ½, the canary in one of k
physical steps each noised σC/√k; true ε(1e-3) = 6.22 against the RDP claim of 1.922) and asserts
VIOLATED.  Its pass rests on its seed: with another stream of draws (another seed, another NumPy)
the audit may stop without refuting.  That miss probability has no closed form here (the anytime
audit learns its events from the draws, and the law of L is a mixture over 16ᵀ placements), so it
is measured: the same audit at each seed of ``--seeds``, and the number of misses m of n gives a
one-sided Clopper–Pearson upper bound on it at 95%, 1 − 0.05^{1/n} when m = 0 (Clopper & Pearson
1934).  The survival table (seeds still unrefuted beyond each draw count) shows where the misses
would come from.

Writes ``benchmarks/results/training/virtual-miss.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from joblib import Parallel, delayed
from scipy import stats

from mechanisms.claims import Relation
from mechanisms.training.accountants import accountant_claim
from mechanisms.training.virtual import virtual_steps_loss

RESULTS = Path(__file__).resolve().parent / "results" / "training"
SIGMA, STEPS, RATE, DELTA = 2.0, 4, 0.5, 1e-3
#: The test's seed and budget.
TEST_SEED, TEST_SAMPLES = 2028, 16_000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class VirtualLaw:
    """The view's output under the law it scores (σ = 2, T = 4, q = ½, k physical steps), drawn
    directly: L = Σ_t log(1 − q + (q/k)·Σ_j exp(Δ·v_{t,j} − Δ²/2)), Δ = √k/σ, of k standard
    normals per logical step, the one of a uniform J shifted by Δ with probability q when the
    dataset holds the canary (:mod:`mechanisms.training.virtual`)."""

    k: int
    relation = Relation.ADD_REMOVE
    d = 1
    row_dim = 1
    output_dim = 1

    @property
    def claim(self):
        return accountant_claim("rdp", RATE, SIGMA, STEPS, DELTA)

    @property
    def name(self) -> str:
        return f"virtual-steps law, k={self.k}"

    def __call__(self, dataset, size: int, rng: np.random.Generator) -> np.ndarray:
        z = rng.standard_normal((size, STEPS, self.k))
        if np.asarray(dataset).shape[0]:
            z[np.arange(size)[:, None], np.arange(STEPS)[None, :], rng.integers(0, self.k, (size, STEPS))] += \
                np.sqrt(self.k) / SIGMA * (rng.random((size, STEPS)) < RATE)
        return virtual_steps_loss(z.reshape(size, -1), sample_rate=RATE, noise_multiplier=SIGMA,
                                  physical_steps=self.k)[:, None]


def audit_law(seed: int, samples: int = TEST_SAMPLES, k: int = 16):
    """The test's audit at ``seed``: anytime, at most ``samples`` a side, the linear statistic."""
    from audit.engine import run_audit
    from audit.training import training_pair

    return run_audit(VirtualLaw(k), training_pair(), samples=samples, anytime=True, seed=seed, progress=False,
                     statistic="linear", accuracy=False)


def one_seed(seed: int, samples: int) -> dict:
    report = audit_law(seed, samples)
    data = report.to_dict(include_runtime=False)
    return {"seed": seed, "verdict": str(report.verdict.value), "draws": data.get("draws", {}).get("per_side"),
            "epsilon_lb": report.epsilon_lower_bound}


def upper_bound(misses: int, n: int, confidence: float = CONFIDENCE) -> float:
    """One-sided Clopper–Pearson upper bound on a probability from ``misses`` of ``n``."""
    return 1.0 if misses >= n else float(stats.beta.ppf(confidence, misses + 1, n - misses))


def markdown(rows: list[dict], samples: int, seconds: float) -> str:
    n, misses = len(rows), sum(r["verdict"] != "VIOLATED" for r in rows)
    draws = sorted(int(r["draws"]) for r in rows if r["verdict"] == "VIOLATED")
    rounds = sorted(set(draws))  # the anytime audit stops only at the end of a round
    survival = " · ".join(f"beyond {d:,}: {sum(x > d for x in draws) + misses}" for d in rounds)
    return "\n".join([
        f"Seeds {rows[0]['seed']} to {rows[-1]['seed']} ({n}), at most {samples:,} draws a side: "
        f"{misses} not refuted, so the miss probability is at most {upper_bound(misses, n):.3g} "
        f"(one-sided Clopper–Pearson, {CONFIDENCE:.0%}). Refuted seeds stopped at a median of "
        f"{int(np.median(draws)) if draws else 0:,} and at most {max(draws) if draws else 0:,} draws a side.",
        "",
        f"Seeds still unrefuted at the end of each round the audits stopped at: {survival}.",
        "",
        f"Wall time {seconds / 60:.1f} min.",
    ])


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.virtual_miss", description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="4000:4400", help="START:STOP, the seeds audited (default %(default)s)")
    parser.add_argument("--samples", type=int, default=TEST_SAMPLES)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    start, _, stop = args.seeds.partition(":")
    seeds = range(int(start), int(stop))
    if not seeds:
        raise SystemExit(f"`--seeds` must be START:STOP with START < STOP, got {args.seeds!r}")
    started = time.perf_counter()
    rows = Parallel(n_jobs=args.jobs)(delayed(one_seed)(seed, args.samples) for seed in seeds)
    seconds = time.perf_counter() - started
    text = markdown(rows, args.samples, seconds)
    command = "python -m benchmarks.virtual_miss " + " ".join(sys.argv[1:] if argv is None else argv)
    print(text)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "virtual-miss.json").write_text(json.dumps({"command": command.strip(), "samples": args.samples,
                                                            "wall_time_s": round(seconds, 1), "rows": rows},
                                                           indent=1) + "\n")
    (args.out / "virtual-miss.md").write_text(f"Command: `{command.strip()}`\n\n{text}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
