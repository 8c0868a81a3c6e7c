"""Does DP-CTGAN's data sampler show in the synthetic table?  The public-domain pair of the catalogue.

SmartNoise Synth's DP-CTGAN samples its conditional vectors, and the training row for each, from the
data's exact category frequencies (``ctgan/data_sampler.py``), so a record alone in its category is
drawn whenever that category is; the gray-box replay of the public-domain new-category pair parts
there.  This measures what a black-box statistic sees of it: the count of the record's category
a = 3 in 200 synthetic rows, on D (eight records without a = 3) and D′ (with the record (3, 0)),
the transformer fitted on the public domain, at ε = 1, δ = 1e-5, batch size 8 and ``epochs`` epochs,
over fresh unseeded fits (``scenarios.libraries.snsynth.synthesize``).

Run in SmartNoise Synth's environment::

    python -m benchmarks.snsynth_dpctgan_sampler --fits 200 --epochs 1 30

Results: ``benchmarks/results/snsynth_dpctgan_sampler.md``.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scenarios.libraries import snsynth  # noqa: E402


def _public_domain_case():
    """The catalogue's DP-CTGAN row on the new-category pair with the public domain."""
    entry = next(e for e in snsynth.entries() if e.name == "synthesizers.dpctgan")
    return next(c for c in entry.cases() if c.params.get("public_domain"))


def counts(present: bool, fits: int, epochs: int) -> np.ndarray:
    """The count of a = 3 in the synthetic table over ``fits`` fresh fits of the catalogue's
    public-domain DP-CTGAN row at ``epochs`` epochs, on D′ (``present``) or D."""
    case = _public_domain_case()
    pair = case.scenario.pairs[0]
    column = [name for name, _ in case.layout].index("marginal a = 3")
    params = {**case.release_params, "epochs": epochs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.array([case.release(pair.neighbor if present else pair.base, None, **params)[column]
                         for _ in range(fits)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fits", type=int, default=100)
    parser.add_argument("--epochs", type=int, nargs="+", default=[1, 30])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    lines = ["# DP-CTGAN's data sampler: the record's category in the synthetic table (public domain)", "",
             "| epochs | fits a side | D: mean count of a = 3 (of 200) | D′: mean count | difference | its standard "
             "error | fits with a = 3, D / D′ |", "|---|---|---|---|---|---|---|"]
    for epochs in args.epochs:
        d, dp = counts(False, args.fits, epochs), counts(True, args.fits, epochs)
        error = math.sqrt(d.var(ddof=1) / d.size + dp.var(ddof=1) / dp.size)
        lines.append(f"| {epochs} | {args.fits} | {d.mean():.1f} | {dp.mean():.1f} | {dp.mean() - d.mean():+.1f} | "
                     f"{error:.1f} | {(d > 0).sum()} / {(dp > 0).sum()} |")
    version = importlib.metadata.version("smartnoise-synth")
    lines += ["", f"Measured with `python -m benchmarks.snsynth_dpctgan_sampler --fits {args.fits} --epochs "
              f"{' '.join(map(str, args.epochs))}` (smartnoise-synth {version}, "
              f"{time.perf_counter() - started:.0f} s); fresh unseeded fits."]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "snsynth_dpctgan_sampler.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
