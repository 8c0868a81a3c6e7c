"""``python -m mechanisms``: claimed against exact ε for every Gaussian calibration.

For each calibration of :mod:`mechanisms.calibration` and each (ε, δ) of a grid, the table shows
σ/Δ, the exact ε of the resulting mechanism at the claimed δ and the exact δ at the claimed ε
(docs/ground-truth.md §1: μ = Δ/σ, δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)), and flags the claims that
do not hold: exact ε at the claimed δ above the claimed ε.  The classical and lecture
calibrations are proven only for ε < 1 (resp. ε ≤ 1); the table shows where they hold anyway.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from .calibration import CALIBRATIONS, outside_proven_range
from .gaussian import CalibrationWarning, GaussianMechanism
from .validation import check_finite_positive, check_open_unit

__all__ = ["CalibrationRow", "calibration_table", "format_table", "main",
           "DEFAULT_EPSILONS", "DEFAULT_DELTAS"]

DEFAULT_EPSILONS: tuple[float, ...] = (0.5, 1.0, 2.0, 5.0, 7.0, 8.0, 10.0)
DEFAULT_DELTAS: tuple[float, ...] = (1e-5, 1e-2, 0.1)

#: A claim holds when exact ε ≤ claimed ε · (1 + HOLD_RTOL): the analytic calibration is exact
#: and its root finding is accurate to ~1e-12 relative.
HOLD_RTOL = 1e-9


@dataclass(frozen=True)
class CalibrationRow:
    """One calibration at one (ε, δ): its σ (for Δ = 1) and the exact truth."""

    calibration: str
    epsilon: float
    delta: float
    sigma: float
    exact_epsilon: float
    exact_delta: float
    proven: bool

    @property
    def holds(self) -> bool:
        """Whether the (ε, δ) claim holds: exact ε at the claimed δ ≤ claimed ε."""
        return self.exact_epsilon <= self.epsilon * (1.0 + HOLD_RTOL)


def calibration_table(epsilons: Iterable[float] = DEFAULT_EPSILONS,
                      deltas: Iterable[float] = DEFAULT_DELTAS,
                      calibrations: Sequence[str] = CALIBRATIONS) -> list[CalibrationRow]:
    """Rows for every calibration × δ × ε (in that nesting order), for d = 1 (Δ = 1).

    Each row comes from ``GaussianMechanism(ε, δ, calibration=...)`` and its exact truth; the
    :class:`CalibrationWarning` of unproven ranges is suppressed (the status column shows it).
    """
    epsilons = [check_finite_positive("epsilon", e) for e in epsilons]
    deltas = [check_open_unit("delta", d) for d in deltas]
    rows = []
    for calibration in calibrations:
        for delta in deltas:
            for epsilon in epsilons:
                with warnings.catch_warnings():  # the status column reports it instead
                    warnings.simplefilter("ignore", CalibrationWarning)
                    mechanism = GaussianMechanism(epsilon, delta, calibration=calibration)
                rows.append(CalibrationRow(
                    calibration=calibration, epsilon=epsilon, delta=delta, sigma=mechanism.sigma,
                    exact_epsilon=mechanism.epsilon_for_delta(delta),
                    exact_delta=float(mechanism.privacy_profile(epsilon)),
                    proven=outside_proven_range(calibration, epsilon) is None))
    return rows


def format_table(rows: Sequence[CalibrationRow]) -> str:
    """Plain aligned text, one block per calibration."""
    header = (f"{'calibration':<11} {'δ':>7} {'ε claimed':>9} {'σ/Δ':>10} "
              f"{'exact ε at δ':>12} {'exact δ at ε':>12}  status")
    lines = ["Gaussian mechanism: claimed (ε, δ) against the exact privacy of the calibrated σ",
             "(l2 sensitivity Δ = 1; exact = Balle–Wang profile with μ = Δ/σ)", ""]
    previous: Optional[str] = None
    for row in rows:
        if row.calibration != previous:
            if previous is not None:
                lines.append("")
            lines += [header, "-" * len(header)]
            previous = row.calibration
        if row.holds:
            status = "ok" if row.proven else "ok (unproven range)"
        else:
            status = "FAILS: claim does not hold"
        lines.append(f"{row.calibration:<11} {row.delta:>7.0e} {row.epsilon:>9g} {row.sigma:>10.5g} "
                     f"{row.exact_epsilon:>12.5f} {row.exact_delta:>12.4e}  {status}")
    failing = sum(not row.holds for row in rows)
    lines += ["", f"{failing} of {len(rows)} claims do not hold (exact ε at the claimed δ exceeds "
              "the claimed ε).",
              "classical: Dwork & Roth Thm A.1, proven for ε < 1; lecture: Wu eq. (17)/(29), proven "
              "for ε ≤ 1;", "analytic: Balle & Wang Alg. 1 (exact); zcdp: lecture slides, ρ from "
              "ε = ρ/2 + √(2ρ ln 1/δ) (conservative)."]
    return "\n".join(lines)


def _floats(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Print the calibration table; returns the exit code 0."""
    parser = argparse.ArgumentParser(
        prog="python -m mechanisms",
        description="Claimed against exact ε for the Gaussian mechanism's calibrations.")
    parser.add_argument("--epsilons", type=_floats, default=list(DEFAULT_EPSILONS),
                        help="comma-separated ε grid (default: %(default)s)")
    parser.add_argument("--deltas", type=_floats, default=list(DEFAULT_DELTAS),
                        help="comma-separated δ grid (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        rows = calibration_table(args.epsilons, args.deltas)
    except (TypeError, ValueError) as exc:
        parser.error(str(exc))
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
