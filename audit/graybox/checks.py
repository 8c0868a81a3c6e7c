"""The checks a record/replay makes on one pair: control flow, sensitivity, unnoised flow.

Inputs are three executions with identical randomness (:mod:`audit.graybox.execute`): the
record on D (``base``), the replay on D′ (``neighbour``) and a replay on D whose location-scale
noise is multiplied by λ on the second half of the output rows (``scaled``).

**Control flow.**  The two traces must make the same calls in the same order, from the same
sites, with the same calibration (every parameter but the protected value: scale, std, bounds,
probabilities' support, shape).  A per-record draw (a Poisson sampling coin, a shuffle) may grow
by the pair's difference in rows.  The first call where they differ is named.

**Footprint.**  On rows r of the second half, n(r) = (y_λ(r) − y(r))/(λ − 1) is the noise that
reaches each output column.  When it is an exact linear function n_j = Σ_e W_je z_e(r) of the
standardized location-scale elements z_e of that row (least squares over the rows, residual at
rounding level), W is the column's *footprint*.  The frozen-randomness difference
Δ(r) = y(D′, z_r) − y(D, z_r) must then be the same on every row (the noise enters both sides
alike); if it varies and is itself exactly linear in z, the noise's weight depends on the data.

**Sensitivity.**  The columns whose footprint is linear, the same on D and D′, and Gaussian
(resp. one Laplace element each) give the exact privacy of their projection
(:mod:`audit.graybox.privacy`); above what the claim affords it is a finding, named at the first
call whose elements reach a moved column.  A DP library's entry point that receives the protected
value (diffprivlib's ``randomise``) is checked directly: |value′ − value| against its
``sensitivity``.

**Unnoised flow.**  A column that is constant over all rows on D and on D′ (no randomness
reaches it) but differs between them, or a combination of Gaussian-noised columns outside the
range of their noise covariance, releases the data around the noise.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
from scipy import stats

from .findings import Finding, FindingKind
from .privacy import gaussian_allowance, laplace_allowance
from .tape import same_params
from .trace import SAMPLING, CallSite, RandomCall, Trace

__all__ = ["control_flow", "footprint", "output_checks", "library_sensitivity", "one_sided", "Footprint"]

#: Relative tolerance of "exact" in the footprint fits (floating-point rounding of the mechanism).
FIT_TOLERANCE = 1e-7
#: Rows per side needed beyond the number of noise elements for a fit to be a test of linearity.
SPARE_ROWS = 3


def _shape_ok(a: RandomCall, b: RandomCall, row_difference: int) -> bool:
    if a.shape == b.shape:
        return True
    if a.primitive.split(">")[-1] not in SAMPLING or len(a.shape) != len(b.shape) or row_difference == 0:
        return False
    differ = [i for i, (x, y) in enumerate(zip(a.shape, b.shape)) if x != y]
    return len(differ) == 1 and abs(a.shape[differ[0]] - b.shape[differ[0]]) == row_difference


def _side(call: Optional[RandomCall]) -> str:
    if call is None:
        return "no call"
    params = ", ".join(f"{k}={_short(v)}" for k, v in call.calibration().items())
    return f"{call.primitive}({params}) shape {call.shape} at {call.site}"


def _short(value: Any) -> str:
    array = np.asarray(value) if not isinstance(value, str) else None
    if array is not None and array.dtype.kind in "biuf" and array.size > 4:
        return f"array{array.shape}"
    return repr(value)[:40]


def _differences(a: RandomCall, b: RandomCall, row_difference: int) -> list[str]:
    reasons = []
    if a.primitive != b.primitive:
        reasons.append("another primitive")
    if (a.site.file, a.site.line) != (b.site.file, b.site.line):
        reasons.append("another call site")
    if not same_params(a.calibration(), b.calibration()):
        changed = [k for k in set(a.calibration()) | set(b.calibration())
                   if not same_params({k: a.params.get(k)}, {k: b.params.get(k)})]
        reasons.append("calibration " + ", ".join(sorted(changed)))
    if not _shape_ok(a, b, row_difference):
        reasons.append("shape")
    return reasons


def _sampling(call: RandomCall) -> bool:
    return call.primitive.split(">")[-1] in SAMPLING


def control_flow(base: Trace, neighbour: Trace, pair: str, row_difference: int) -> Optional[Finding]:
    """The first call at which the two traces differ, or None.

    Up to ``row_difference`` per-record draws (:data:`~audit.graybox.trace.SAMPLING`) may be made on
    one side only: the draws of the record that only one dataset holds.
    """
    slack, i, j = row_difference, 0, 0
    calls_a, calls_b = base.calls, neighbour.calls
    while i < len(calls_a) and j < len(calls_b):
        a, b = calls_a[i], calls_b[j]
        reasons = _differences(a, b, row_difference)
        if not reasons:
            i, j = i + 1, j + 1
            continue
        if slack and _sampling(b) and (j + 1 >= len(calls_b) or not _differences(a, calls_b[j + 1], row_difference)):
            slack, j = slack - 1, j + 1
            continue
        if slack and _sampling(a) and (i + 1 >= len(calls_a) or not _differences(calls_a[i + 1], b, row_difference)):
            slack, i = slack - 1, i + 1
            continue
        return Finding(FindingKind.CONTROL_FLOW, pair, a.site, math.nan, math.nan, "random call",
                       (), f"call {a.index} differs on D′ ({'; '.join(reasons)}): D {_side(a)}; D′ {_side(b)}",
                       {"index": a.index, "base": a.to_dict(), "neighbour": b.to_dict(), "reasons": reasons})
    rest_a, rest_b = calls_a[i:], calls_b[j:]
    if (len(rest_a) + len(rest_b) <= slack and all(_sampling(c) for c in rest_a + rest_b)) or not (rest_a or rest_b):
        return None
    extra, side = (rest_a[0], "D") if rest_a else (rest_b[0], "D′")
    return Finding(FindingKind.CONTROL_FLOW, pair, extra.site, float(len(calls_b)), float(len(calls_a)),
                   "random calls (D′ against D)", (),
                   f"{len(calls_a)} random calls on D, {len(calls_b)} on D′: the first call made only on "
                   f"{side} is {_side(extra)}", {"index": extra.index, "extra": extra.to_dict(), "only_on": side})


class Footprint:
    """The standardized location-scale elements of each row, and which columns they reach."""

    def __init__(self, base: Trace) -> None:
        self.rows = base.rows
        blocks, self.families, self.calls = [], [], []
        for call in base.calls:
            z = call.standardized()
            if z is None or len(call.shape) == 0 or call.shape[0] != base.rows or call.family not in ("gaussian", "laplace"):
                continue
            block = np.asarray(z, dtype=np.float64).reshape(base.rows, -1)
            blocks.append(block)
            self.families += [call.family] * block.shape[1]
            self.calls += [call] * block.shape[1]
        self.z = np.concatenate(blocks, axis=1) if blocks else np.zeros((base.rows, 0))

    @property
    def elements(self) -> int:
        return self.z.shape[1]

    def fit(self, rows: slice, targets: np.ndarray, *, intercept: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Least-squares weights of ``targets`` (rows × k) on the elements of ``rows`` and whether
        each column's fit is exact (residual at rounding level); with an intercept column first."""
        z = self.z[rows]
        if intercept:
            z = np.concatenate([np.ones((z.shape[0], 1)), z], axis=1)
        if z.shape[1] == 0:
            exact = np.all(np.abs(targets) <= FIT_TOLERANCE * (1.0 + np.abs(targets)), axis=0)
            return np.zeros((0, targets.shape[1])), exact
        if z.shape[0] < z.shape[1] + SPARE_ROWS:
            return np.zeros((z.shape[1], targets.shape[1])), np.zeros(targets.shape[1], dtype=bool)
        weights, *_ = np.linalg.lstsq(z, targets, rcond=None)
        residual = np.abs(z @ weights - targets).max(axis=0)
        size = np.abs(targets).max(axis=0) + np.abs(weights).max(axis=0) + 1e-300
        exact = residual <= FIT_TOLERANCE * size
        weights[np.abs(weights) <= FIT_TOLERANCE * np.abs(weights).max(axis=0, keepdims=True)] = 0.0
        return weights, exact


def footprint(base: Trace, scaled: Trace, lam: float, model: Footprint) -> tuple[np.ndarray, np.ndarray]:
    """(W (elements × k), exact (k,)): the noise footprint of each output column on D."""
    half = slice(base.rows // 2, base.rows)
    noise = (scaled.output[half] - base.output[half]) / (lam - 1.0)
    return model.fit(half, noise)


def _first_site(model: Footprint, weights: np.ndarray) -> CallSite:
    nonzero = np.flatnonzero(np.any(weights != 0, axis=1))
    return model.calls[int(nonzero[0])].site if nonzero.size else CallSite("<output>", 0, "<output>")


def output_checks(base: Trace, neighbour: Trace, scaled: Optional[Trace], lam: float, claim: Any,
                  pair: str) -> tuple[list[Finding], list[str], dict]:
    """The sensitivity and unnoised-flow findings of one pair, with the coverage notes."""
    findings, notes = [], []
    y, y2 = base.output, neighbour.output
    k = y.shape[1]
    scale = 1.0 + np.maximum(np.abs(y).max(axis=0), np.abs(y2).max(axis=0))
    delta_rows = y2 - y
    with np.errstate(invalid="ignore"):
        constant_delta = np.all(np.abs(delta_rows - delta_rows[:1]) <= FIT_TOLERANCE * scale, axis=0)
        moved = np.any(np.abs(delta_rows) > FIT_TOLERANCE * scale, axis=0) | ~np.isfinite(delta_rows).all(axis=0)
    fixed_base = np.all(y == y[:1], axis=0)
    fixed_neighbour = np.all(y2 == y2[:1], axis=0)
    delta = delta_rows[0]
    # unnoised flow: constant on both sides, different
    for j in np.flatnonzero(moved & fixed_base & fixed_neighbour):
        cause = ("the mechanism draws no randomness" if not base.calls else
                 f"it is the same on all {base.rows} rows of each side")
        findings.append(Finding(
            FindingKind.UNNOISED_FLOW, pair, CallSite("<output>", 0, f"column {j}"), float(abs(delta[j])), 0.0,
            "|Δy| with no noise", (int(j),),
            f"output column {j} is {y[0, j]:.6g} on D and {y2[0, j]:.6g} on D′ with no noise on it ({cause})",
            {"base": float(y[0, j]), "neighbour": float(y2[0, j]), "constant_rows": base.rows},
            exact=not base.calls))
    for j in np.flatnonzero(moved & fixed_base & ~fixed_neighbour):
        finding = one_sided(y[:, j], y2[:, j], claim, pair, int(j))
        if finding is not None:
            findings.append(finding)
    info: dict = {"moved_columns": [int(j) for j in np.flatnonzero(moved)]}
    if scaled is None or base.rows < 2:
        if np.any(moved & ~(fixed_base & fixed_neighbour)):
            notes.append("no footprint (the mechanism draws no location-scale noise per output row): the "
                         "sensitivity of the moved columns was not checked")
        return findings, notes, info
    model = Footprint(base)
    info["elements"] = model.elements
    weights, exact = footprint(base, scaled, lam, model)
    if model.elements + SPARE_ROWS > base.rows // 2:
        notes.append(f"{model.elements} noise elements per row is too many for {base.rows} rows: footprint not fitted")
        return findings, notes, info
    candidates = moved & ~(fixed_base & fixed_neighbour)
    # a data-dependent weight of the noise: Δ varies over rows and is exactly linear in z
    for j in np.flatnonzero(candidates & ~constant_delta & exact):
        change, fits = model.fit(slice(0, base.rows), delta_rows[:, [j]], intercept=True)
        if fits[0] and np.any(change[1:, 0] != 0):
            e = int(np.flatnonzero(change[1:, 0])[0])
            call = model.calls[e]
            w, w2 = float(weights[e, j]), float(weights[e, j] + change[1 + e, 0])
            findings.append(Finding(
                FindingKind.CONTROL_FLOW, pair, call.site, w2, w, "weight of the noise on the column (D′ against D)",
                (int(j),), f"the noise of {call.primitive} at {call.site} reaches output column {j} with weight "
                f"{w:.6g} on D and {w2:.6g} on D′: its scale depends on the data", {"element": e}))
        else:
            notes.append(f"column {j} moves by a different amount on each row (nonlinear in the noise): not checked")
    usable = candidates & constant_delta & exact & np.any(weights != 0, axis=0)
    for j in np.flatnonzero(candidates & constant_delta & ~exact):
        notes.append(f"column {j} moves by {delta[j]:.6g} and its noise is not a linear function of "
                     f"location-scale draws (discrete, clipped or Rust-drawn): its sensitivity was not checked")
    for j in np.flatnonzero(candidates & constant_delta & exact & ~np.any(weights != 0, axis=0)):
        notes.append(f"column {j} moves by {delta[j]:.6g}, no location-scale noise reaches it, yet it varies "
                     "over rows (other randomness): its sensitivity was not checked")
    gaussian = np.array([f == "gaussian" for f in model.families], dtype=bool)
    reach = weights != 0
    columns = np.flatnonzero(exact & constant_delta & np.any(reach, axis=0) & ~np.any(reach[~gaussian], axis=0))
    if usable.any() and columns.size and np.any(usable[columns]):
        findings += _gaussian(model, weights[:, columns], delta[columns], columns, claim, pair, info)
    laplace_only = exact & constant_delta & (reach.sum(axis=0) == 1) & ~np.any(reach[gaussian], axis=0)
    lap_columns = np.flatnonzero(laplace_only)
    if lap_columns.size and np.any(usable[lap_columns]):
        element = np.argmax(reach[:, lap_columns], axis=0)
        if len(set(element.tolist())) == element.size:
            w = weights[element, lap_columns]
            centres = y[0, lap_columns] - w * model.z[0, element]
            findings += _laplace(model, w, element, delta[lap_columns], lap_columns, claim, pair, info, centres)
        else:
            notes.append("Laplace noise shared between columns: its sensitivity was not checked")
    return findings, notes, info


#: Level of the one-sided Clopper–Pearson bound on how often D′ leaves the value D always takes.
ONE_SIDED_LEVEL = 1e-3


def one_sided(base: np.ndarray, neighbour: np.ndarray, claim: Any, pair: str, column: int) -> Optional[Finding]:
    """An unnoised column on D that moves on D′: D gives the same value c on every row (no noise
    reaches it), D′ leaves c on k of its m rows.  Were c certain on D, any (ε, δ) claim would need
    P_D′(y ≠ c) ≤ δ; the finding is made when the one-sided Clopper–Pearson lower bound on that
    probability (level :data:`ONE_SIDED_LEVEL`) exceeds the claim's δ at its ε, so that a correct
    mechanism whose rare event has probability ≤ δ (a stability-based histogram's new bin) is not
    named.  It rests on the rows seen (``exact`` is False); the certified audit settles it."""
    c = base[0]
    left = int(np.sum(neighbour != c))
    m = neighbour.size
    lower = float(stats.beta.ppf(ONE_SIDED_LEVEL, left, m - left + 1)) if left else 0.0
    allowed = float(np.asarray(claim.delta_at(claim.epsilon)))
    if lower <= allowed:
        return None
    return Finding(FindingKind.UNNOISED_FLOW, pair, CallSite("<output>", 0, f"column {column}"), left / m, allowed,
                   "fraction of D′ rows leaving D's constant", (column,),
                   f"output column {column} is {c:.6g} on every row of D (no noise reaches it) but leaves it on "
                   f"{left} of {m} rows of D′ (99.9% lower bound {lower:.3g} > δ = {allowed:.3g})",
                   {"base": float(c), "changed_rows": left, "rows": m, "one_sided": True,
                    "constant_rows": base.size, "weights": [1.0 if np.mean(neighbour) >= c else -1.0]})


def _gaussian(model: Footprint, weights: np.ndarray, delta: np.ndarray, columns: np.ndarray, claim: Any,
              pair: str, info: dict) -> list[Finding]:
    covariance = weights.T @ weights  # columns × columns, z standard normal
    inverse = np.linalg.pinv(covariance, rcond=1e-10, hermitian=True)
    direction = inverse @ delta
    outside = delta - covariance @ direction
    site = _first_site(model, weights[:, np.abs(delta) > 0] if np.any(delta) else weights)
    if np.abs(outside).max() > 1e-6 * (np.abs(delta).max() + 1e-300):
        return [Finding(FindingKind.UNNOISED_FLOW, pair, site, float(np.abs(outside).max()), 0.0,
                        "|Δ| outside the noise's range", tuple(int(c) for c in columns),
                        f"a combination of output columns {columns.tolist()} moves by "
                        f"{float(np.abs(outside).max()):.6g} on D′ with no noise on it",
                        {"weights": (outside / (np.abs(outside).max())).tolist()}, exact=True)]
    mu = float(math.sqrt(max(float(delta @ direction), 0.0)))
    violates, allowed, witness = gaussian_allowance(mu, claim)
    info["gaussian"] = {"mu": mu, "allowed_mu": allowed, "columns": columns.tolist()}
    if not violates:
        return []
    moved = np.abs(delta) > 0
    return [Finding(FindingKind.SENSITIVITY, pair, site, mu, allowed, "‖Δ/σ‖ (μ)", tuple(int(c) for c in columns),
                    f"the Gaussian noise of {model.calls[int(np.flatnonzero(np.any(weights[:, moved] != 0, axis=1))[0])].primitive} "
                    f"at {site} is calibrated for μ = {allowed:.6g} but the released columns move by "
                    f"‖Δ/σ‖ = {mu:.6g} (μ) on D′",
                    {"direction": direction.tolist(), "delta": delta.tolist(), "witness": witness,
                     "family": "gaussian"}, exact=True)]


def _laplace(model: Footprint, weights: np.ndarray, element: np.ndarray, delta: np.ndarray, columns: np.ndarray,
             claim: Any, pair: str, info: dict, centres: np.ndarray) -> list[Finding]:
    b = np.abs(weights)
    shifts = np.abs(delta) / b
    violates, allowed, witness = laplace_allowance(shifts, claim)
    total = float(shifts.sum())
    info["laplace"] = {"epsilon": total, "allowed_epsilon": allowed, "columns": columns.tolist()}
    if not violates:
        return []
    first = int(np.flatnonzero(shifts > 0)[0])
    call = model.calls[int(element[first])]
    return [Finding(FindingKind.SENSITIVITY, pair, call.site, total, allowed, "Σ|Δᵢ|/bᵢ (ε)",
                    tuple(int(c) for c in columns),
                    f"the Laplace noise of {call.primitive} at {call.site} has scales b = {np.unique(b).round(6).tolist()} "
                    f"but the released columns move by Σ|Δᵢ|/bᵢ = {total:.6g} against ε = {allowed:.6g} on D′",
                    {"delta": delta.tolist(), "scales": b.tolist(), "centres": centres.tolist(), "witness": witness,
                     "family": "laplace"},
                    exact=True)]


def library_sensitivity(base: Trace, neighbour: Trace, pair: str) -> list[Finding]:
    """diffprivlib entry points whose protected ``value`` moved by more than their ``sensitivity``."""
    findings = []
    for a, b in zip(base.calls, neighbour.calls):
        if a.primitive != b.primitive or "value" not in a.params or "sensitivity" not in a.params:
            continue
        try:
            moved = float(np.max(np.abs(np.asarray(b.params["value"], float) - np.asarray(a.params["value"], float))))
            sensitivity = float(a.params["sensitivity"])
        except (TypeError, ValueError):
            continue
        if moved > sensitivity * (1 + 1e-9):
            epsilon = float(a.params.get("epsilon", math.nan))
            findings.append(Finding(
                FindingKind.SENSITIVITY, pair, a.site, moved, sensitivity, "|Δvalue| against sensitivity", (),
                f"{a.primitive} at {a.site} is calibrated for sensitivity {sensitivity:.6g} (ε = {epsilon:.6g}) "
                f"but its value moves by {moved:.6g} on D′", {"index": a.index, "epsilon": epsilon}))
    return findings
