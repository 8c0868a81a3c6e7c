"""Figures of an audit report, drawn from its JSON form (so ``dpaudit plot`` can redraw them).

Every function takes one entry of ``report.json`` (or the bare ``AuditReport.to_dict()``) and
returns a :class:`matplotlib.figure.Figure` built without pyplot, on the Agg canvas: nothing
global is touched and no display is needed.  matplotlib is the optional ``plots`` extra; it is
imported only when a figure is drawn, and a missing install raises :class:`PlotsUnavailable`.

The figures (one of each per audit):

- :func:`tradeoff_figure`: what the evidence certifies about the worst pair's trade-off curve T
  (Dong, Roth & Su 2022, Def. 2.1): each certified point (α_hi, β_hi) gives T(α_hi) ≤ β_hi, so T
  lies on or below the staircase through them (:func:`certified_staircase`); the region above
  it is hatched.  This is an *upper* bound: no lower bound on T follows from samples.  Against
  it the claimed curve f (the claim says T ≥ f) and the exact T.  A certified point below f is a
  violation (✕, with a segment up to f).  Linear axes on the left; log-log on the right, where
  the tails that decide large-ε claims are visible.
- :func:`epsilon_figure`: the certified lower bound ε_lb(δ) against the claimed ε(δ) implied by
  the claim and the exact privacy profile ε(δ), δ on a log axis; where ε_lb exceeds the claim
  the claim is refuted (shaded).
- :func:`accuracy_figure`: the histogram (as a density) of the first query's error against the
  exact noise density (or a Gaussian of the claimed variance), with the claimed bound ±a of
  P(|e| > a) ≤ α marked; linear and log density.

Lines carry labels (the ``LABEL_*`` constants) so tests and users can find the plotted data.
"""

from __future__ import annotations

import io
import math
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from .files import write_file
from .text import claim_label, figure_stem

__all__ = ["PlotsUnavailable", "tradeoff_figure", "epsilon_figure", "accuracy_figure",
           "figures", "save_figures", "figure_png", "certified_staircase",
           "LABEL_CERTIFIED_REGION", "LABEL_VIOLATION", "as_report",
           "LABEL_EMPIRICAL", "LABEL_CLAIMED", "LABEL_EXACT", "LABEL_CERTIFIED_EPSILON", "LABEL_HEADLINE",
           "LABEL_HISTOGRAM", "LABEL_DENSITY", "LABEL_GAUSSIAN"]

LABEL_EMPIRICAL = "empirical trade-off (worst pair)"
LABEL_CLAIMED = "claimed"
LABEL_EXACT = "exact"
LABEL_CERTIFIED_EPSILON = "certified lower bound ε_lb(δ)"
LABEL_HEADLINE = "certified ε_lb"
LABEL_HISTOGRAM = "error histogram (density)"
LABEL_DENSITY = "exact noise density"
LABEL_GAUSSIAN = "Gaussian with the claimed variance"

_COLOURS = {"empirical": "#1f77b4", "claimed": "#d62728", "exact": "#2ca02c", "violation": "#000000"}
_DPI = 110


class PlotsUnavailable(ImportError):
    """matplotlib is not installed: figures need the ``plots`` extra."""


def _matplotlib():
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise PlotsUnavailable("figures need matplotlib: pip install 'dpaudit[plots]' "
                               f"(or pass --no-plots); import failed: {exc}") from None
    return Figure


def as_report(data: dict) -> dict:
    """The ``AuditReport`` dict of a report.json entry (or ``data`` itself if it is one)."""
    if not isinstance(data, dict):
        raise TypeError(f"`report` must be a report dict (an entry of report.json), got {type(data).__name__}")
    report = data.get("report", data)
    if not isinstance(report, dict) or "tradeoff" not in report or "epsilon_curve" not in report:
        raise ValueError("`report` is not a dpaudit audit report (no 'tradeoff'/'epsilon_curve' section)")
    return report


def _array(values: Optional[Sequence[Any]]) -> Optional[np.ndarray]:
    """JSON numbers (with "inf"/"-inf"/"nan" strings) as a float array; ``None`` stays ``None``."""
    if values is None:
        return None
    return np.array([float(v) for v in values], dtype=np.float64)


def _number(value: Any) -> Optional[float]:
    return None if value is None else float(value)


def _title(report: dict, what: str) -> str:
    return f"{report['mechanism']}\n{what}: claim {claim_label(report.get('claim', {}))}, verdict {report['verdict']}"


def _sparse_log_ticks(axis) -> None:
    """Decade ticks only (labelled minor ticks over many decades are slow and cluttered)."""
    from matplotlib.ticker import LogLocator, NullLocator

    axis.set_major_locator(LogLocator(base=10.0, numticks=12))
    axis.set_minor_locator(NullLocator())


# -- (a) trade-off ----------------------------------------------------------------------------------
LABEL_CERTIFIED_REGION = "certified: T lies below this staircase"
LABEL_VIOLATION = "certified point below the claim (violation)"
#: In the linear panel a violation closer to the claimed curve than this (in β) is not drawn: it
#: would sit on the line; the log-log panel shows it.
_VISIBLE_GAP = 0.02


def certified_staircase(alpha_hi: np.ndarray, beta_hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The upper bound on the true trade-off curve T implied by certified points (α_hi, β_hi).

    A certified point is a test with true errors α ≤ α_hi and β ≤ β_hi, hence T(α_hi) ≤ β_hi, and
    since T is non-increasing, T(a) ≤ U(a) = min{β_hi,i : α_hi,i ≤ a} (U = 1 left of every point).
    Returns the corners of U as a step path from α = 0 to α = 1.  No lower bound on T follows from
    samples.
    """
    order = np.lexsort((beta_hi, alpha_hi))
    xs, ys = [0.0], [1.0]
    level = 1.0
    for a, b in zip(alpha_hi[order], beta_hi[order]):
        if b < level:
            xs += [float(a), float(a)]
            ys += [level, float(b)]
            level = float(b)
    xs.append(1.0)
    ys.append(level)
    return np.array(xs), np.array(ys)


def tradeoff_figure(data: dict):
    """The certified upper bound on the trade-off curve, against the claimed and exact curves."""
    Figure = _matplotlib()
    report = as_report(data)
    curve = report["tradeoff"]
    alpha, beta = _array(curve["alpha"]), _array(curve["beta"])
    alpha_hi, beta_hi = _array(curve["alpha_upper"]), _array(curve["beta_upper"])
    grid, claimed, exact = _array(curve["grid"]), _array(curve["claimed"]), _array(curve["exact"])
    # Joint-test violations certify a quantity, not a point: only point violations are drawn.
    violations = [v for v in report.get("violations") or [] if "alpha_hi" in v]
    v_alpha = np.array([float(v["alpha_hi"]) for v in violations])
    v_beta = np.array([float(v["beta_hi"]) for v in violations])
    v_claim = np.array([float(v["claimed_beta"]) for v in violations])
    step_x, step_y = certified_staircase(alpha_hi, beta_hi)
    order = np.argsort(alpha, kind="stable")
    figure = Figure(figsize=(11.5, 6.2), dpi=_DPI)
    figure.subplots_adjust(left=0.07, right=0.98, bottom=0.27, top=0.86, wspace=0.2)
    axes = figure.subplots(1, 2)
    confidence = float(report["confidence"])
    for ax, log in zip(axes, (False, True)):
        # Region above the staircase: excluded for T at the stated confidence (shown hatched).
        ax.fill_between(step_x, step_y, 1.05, color=_COLOURS["empirical"], alpha=0.16, linewidth=0,
                        hatch="//", edgecolor=_COLOURS["empirical"])
        ax.plot(step_x, step_y, "-", color=_COLOURS["empirical"], linewidth=1.8,
                label=f"{LABEL_CERTIFIED_REGION}: T(α_hi) ≤ β_hi at each certified point "
                      f"(confidence {confidence:g}); hatched: T cannot be there")
        ax.plot(alpha[order], beta[order], ".", color=_COLOURS["empirical"], markersize=3, alpha=0.6,
                label=LABEL_EMPIRICAL + ": observed (α, β) of the same tests")
        ax.plot(grid, claimed, "--", color=_COLOURS["claimed"], linewidth=1.6,
                label=f"{LABEL_CLAIMED} curve: the claim says T lies on or above it")
        if exact is not None:
            ax.plot(grid, exact, "-", color=_COLOURS["exact"], linewidth=1.2, label=f"{LABEL_EXACT} T")
        if violations:
            shown = np.ones(len(violations), dtype=bool) if log else (v_claim - v_beta) > _VISIBLE_GAP
            if shown.any():
                ax.vlines(v_alpha[shown], v_beta[shown], v_claim[shown], color=_COLOURS["violation"],
                          linewidth=0.9, zorder=5)
                ax.plot(v_alpha[shown], v_beta[shown], "x", color=_COLOURS["violation"], markersize=7,
                        markeredgewidth=1.6, zorder=6,
                        label=f"{LABEL_VIOLATION}, with its gap to the claim" if log else None)
            if not log and not shown.all():
                # Under the panel's x-label, outside the axes: hidden violations sit at the axes,
                # where the staircase and the curves run, so a note inside would cover them.
                ax.annotate(f"{int((~shown).sum())} violation(s) too close to the axes to see here: see the "
                            "log-log panel", xy=(0.5, 0.0), xycoords=ax.xaxis.label, xytext=(0, -3),
                            textcoords="offset points", ha="center", va="top", fontsize=8,
                            color=_COLOURS["violation"])
        ax.set_xlabel("α  (type-I error: rejecting D when the output came from D)")
        ax.set_ylabel("β  (type-II error)")
        ax.grid(True, which="major", alpha=0.3)
        if log:
            positive = np.concatenate([alpha[alpha > 0], beta[beta > 0], alpha_hi[alpha_hi > 0],
                                       v_alpha[v_alpha > 0], v_beta[v_beta > 0], [1e-6]])
            low = max(10.0 ** math.floor(math.log10(positive.min())), 1e-9)
            ax.set_xscale("log")
            ax.set_yscale("log")
            _sparse_log_ticks(ax.xaxis)
            _sparse_log_ticks(ax.yaxis)
            ax.set_xlim(low, 1.05)
            ax.set_ylim(low, 1.05)
            ax.set_title("log-log: the tails decide large-ε claims", fontsize=10)
        else:
            ax.set_xlim(-0.01, 1.01)
            ax.set_ylim(-0.01, 1.01)
            ax.set_aspect("equal")
            ax.set_title(f"pair: {curve['pair']}", fontsize=10)
    handles, labels = axes[1].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, framealpha=0.9)
    figure.suptitle(_title(report, "trade-off curve"), fontsize=11)
    return figure


# -- (b) ε(δ) ---------------------------------------------------------------------------------------
def epsilon_figure(data: dict):
    """Certified ε_lb(δ) against the claimed ε(δ) and the exact privacy profile, log δ."""
    Figure = _matplotlib()
    report = as_report(data)
    curve = report["epsilon_curve"]
    deltas, lower = _array(curve["deltas"]), _array(curve["lower_bounds"])
    claimed, exact = _array(curve["claimed"]), _array(curve["exact"])
    figure = Figure(figsize=(8.0, 6.2), dpi=_DPI)
    figure.subplots_adjust(left=0.08, right=0.97, bottom=0.27, top=0.90)
    ax = figure.subplots()
    ax.plot(deltas, lower, "o-", color=_COLOURS["empirical"], markersize=3, linewidth=1.6,
            label=f"{LABEL_CERTIFIED_EPSILON}, confidence {report['confidence']:g}")
    finite = np.isfinite(claimed)
    ax.plot(deltas[finite], claimed[finite], "--", color=_COLOURS["claimed"], linewidth=1.6,
            label=f"{LABEL_CLAIMED} ε(δ) implied by the claim")
    if exact is not None:
        ax.plot(deltas, exact, "-", color=_COLOURS["exact"], linewidth=1.2, label=f"{LABEL_EXACT} ε(δ)")
    ref_delta, ref_epsilon = float(report["reference_delta"]), float(report["reference_epsilon"])
    if ref_delta > 0:
        ax.plot([ref_delta], [ref_epsilon], "*", color=_COLOURS["claimed"], markersize=14,
                label=f"claimed point (δ = {ref_delta:g}, ε = {ref_epsilon:.3g})")
        headline = float(report["epsilon_lower_bound"])
        ax.plot([ref_delta], [headline], "D", color=_COLOURS["empirical"], markersize=7,
                markeredgecolor="black", label=f"{LABEL_HEADLINE} at δ = {ref_delta:g}: {headline:.3g}")
    else:
        ax.axhline(ref_epsilon, color=_COLOURS["claimed"], linewidth=0.8, linestyle=":",
                   label=f"claimed pure ε = {ref_epsilon:.3g}")
    above = lower > np.where(finite, claimed, np.inf)
    if above.any():
        ax.plot(deltas[above], lower[above], "o", color=_COLOURS["claimed"], markersize=7,
                markerfacecolor="none", markeredgewidth=1.8,
                label="certified ε above the claimed ε(δ): the claim is refuted")
    if ref_delta > 0 and deltas.min() < ref_delta:
        ax.axvspan(deltas.min() / 2, ref_delta, color="0.85", alpha=0.5, linewidth=0,
                   label=f"δ < {ref_delta:g}: the claim allows any ε")
    ax.set_xscale("log")
    _sparse_log_ticks(ax.xaxis)
    ax.set_xlim(deltas.min() / 2, min(1.0, deltas.max() * 2))
    ax.set_xlabel("δ")
    ax.set_ylabel("ε")
    top = [v for v in (np.nanmax(lower), ref_epsilon,
                       np.nanmax(exact) if exact is not None else None) if v is not None and math.isfinite(v)]
    ceiling = 1.15 * max(top + [1e-3])
    ax.set_ylim(0.0, ceiling)
    infinite = np.isinf(exact) if exact is not None else np.zeros(deltas.shape, dtype=bool)
    if infinite.any():  # δ below δ_∞: no finite ε (outputs impossible under one neighbour)
        edge = float(deltas[infinite].max())
        ax.plot(deltas[infinite], np.full(infinite.sum(), 0.97 * ceiling), "^", color=_COLOURS["exact"],
                markersize=7, label=f"{LABEL_EXACT} ε = ∞ at these δ (δ ≤ {edge:.3g} < δ_∞)")
        ax.axvline(edge, color=_COLOURS["exact"], linestyle=":", linewidth=1.0)
    ax.grid(True, which="major", alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, framealpha=0.9)
    ax.set_title(_title(report, "privacy profile"), fontsize=11)
    return figure


# -- (c) accuracy -----------------------------------------------------------------------------------
def accuracy_figure(data: dict):
    """Error histogram against the exact noise density, with the claimed bound; ``None`` if the
    report has no accuracy section."""
    report = as_report(data)
    accuracy = report.get("accuracy")
    if not accuracy or not accuracy.get("histogram"):
        return None
    Figure = _matplotlib()
    histogram = accuracy["histogram"]
    edges, counts = _array(histogram["edges"]), _array(histogram["counts"])
    widths = np.diff(edges)
    density = counts / (float(accuracy["samples"]) * widths)
    centres = 0.5 * (edges[:-1] + edges[1:])
    reference = data.get("noise_density") if "report" in data else None
    variance = _number(histogram.get("claimed_variance"))
    bound = _number(histogram.get("claimed_bound"))
    figure = Figure(figsize=(11.5, 5.0), dpi=_DPI)
    figure.subplots_adjust(left=0.07, right=0.98, bottom=0.11, top=0.83, wspace=0.2)
    axes = figure.subplots(1, 2)
    for ax, log in zip(axes, (False, True)):
        ax.stairs(density, edges, fill=True, color=_COLOURS["empirical"], alpha=0.35,
                  label=f"{LABEL_HISTOGRAM}, {int(accuracy['samples']):,} draws")
        if reference is not None:
            ax.plot(_array(reference["x"]), _array(reference["density"]), "-", color=_COLOURS["exact"],
                    linewidth=1.6, label=LABEL_DENSITY)
        elif variance is not None and variance > 0:
            gaussian = np.exp(-0.5 * centres ** 2 / variance) / math.sqrt(2 * math.pi * variance)
            ax.plot(centres, gaussian, "-", color=_COLOURS["exact"], linewidth=1.6,
                    label=f"{LABEL_GAUSSIAN} σ² = {variance:.4g}")
        if bound is not None and math.isfinite(bound):
            for sign in (-1, 1):
                ax.axvline(sign * bound, color=_COLOURS["claimed"], linestyle="--", linewidth=1.4,
                           label=f"claimed bound ±{bound:.4g}: P(|error| > bound) ≤ {accuracy['alpha']:g}"
                           if sign > 0 else None)
        ax.set_xlabel(f"error of output column {histogram['column']}  (output − true answer)")
        ax.set_ylabel("density")
        ax.grid(True, alpha=0.3)
        if log:
            ax.set_yscale("log")
            _sparse_log_ticks(ax.yaxis)
            positive = density[density > 0]
            if positive.size:
                ax.set_ylim(0.5 * positive.min(), 2.0 * positive.max())
            ax.set_title("log density: the tails", fontsize=10)
    column = next((c for c in accuracy.get("columns", []) if c.get("column") == histogram["column"]), None)
    if column and column.get("exceedance"):
        ci = column["exceedance"]
        axes[0].set_title(f"P(|error| > bound) ∈ [{float(ci['low']):.4g}, {float(ci['high']):.4g}] "
                          f"({column['exceedances']:,} exceedances)", fontsize=10)
    peak = max([float(density.max())] + [float(line.get_ydata().max()) for line in axes[0].get_lines()
                                          if len(line.get_ydata()) > 2])
    axes[0].set_ylim(0.0, 1.4 * peak)  # headroom for the legend
    axes[0].legend(loc="upper left", fontsize=8, framealpha=0.9)
    figure.suptitle(f"{report['mechanism']}\naccuracy: verdict {accuracy['verdict']}", fontsize=11)
    return figure


# -- all of them ------------------------------------------------------------------------------------
_KINDS = {"tradeoff": tradeoff_figure, "epsilon": epsilon_figure, "accuracy": accuracy_figure}


def figures(data: dict) -> dict:
    """All figures of one report entry, by kind ("tradeoff", "epsilon", "accuracy")."""
    drawn = {kind: draw(data) for kind, draw in _KINDS.items()}
    return {kind: figure for kind, figure in drawn.items() if figure is not None}


def figure_png(figure) -> bytes:
    """The PNG bytes of a figure."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI)
    return buffer.getvalue()


def save_figures(data: dict, directory: "str | Path", stem: str) -> dict[str, Path]:
    """Draw and write ``<directory>/<stem>-<kind>.png`` atomically; returns the paths by kind."""
    directory = Path(directory)
    paths = {}
    for kind, figure in figures(data).items():
        path = directory / f"{figure_stem(stem)}-{kind}.png"
        write_file(path, figure_png(figure))
        paths[kind] = path
    return paths
