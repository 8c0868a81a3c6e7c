"""What ``dpaudit run`` writes: report.json, summary.md, report.html and figures, each atomically.

``report.json`` holds one *entry* per audit::

    {"name": ..., "path": ..., "expected": "holds" | "violated" | null, "note": ...,
     "warnings": [...], "error": null | "message", "figures": {"tradeoff": "figures/x.png", ...},
     "noise_density": null | {"x": [...], "density": [...], "source": ...},
     "audit_key": ..., "confidence_levels": {...}, "pair_truth": {...},
     "report": AuditReport.to_dict()}

under ``{"dpaudit": version, "format": 1, "finished": bool, "settings": {...}, "audits": [entries]}``.
``audit_key`` identifies what decided the result (:func:`audit.suite.audit_key`),
``confidence_levels`` the file's, the run's and the audit's confidence, and ``pair_truth`` the
mechanism's exact ε on the audited pairs where it can tell (:func:`audit.witness.pair_truth`); a
resumed audit's ``runtime`` adds ``earlier_runs_s``.  Each may be missing (older files), and readers
fall back.  Entries are
JSON already (the report part is ``AuditReport.to_dict()``, whose non-finite floats are the
strings "inf", "-inf", "nan"), so every other view (:mod:`audit.render.markdown`,
:mod:`audit.render.html`, :mod:`audit.render.plots`) reads the same form, live or read back.
Every file goes through :func:`audit.checkpoint.write_atomic`, so an interrupted run leaves the
previous version or the new one, never a torn file; report.json and summary.md are rewritten after
every audit, so they always describe the audits finished so far.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from ..checkpoint import write_atomic
from ..version import __version__
from .html import report_html
from .markdown import summary_markdown

__all__ = ["REPORT_FORMAT", "ReportFileError", "make_entry", "error_entry", "noise_density", "report_document",
           "write_reports", "load_report", "write_file"]

REPORT_FORMAT = 1
_DENSITY_POINTS = 400


class ReportFileError(ValueError):
    """A file given to ``dpaudit plot`` is not a dpaudit report.json."""


def write_file(path: "str | Path", data: bytes) -> Path:
    """Write atomically (:func:`audit.checkpoint.write_atomic`) and return the path."""
    path = Path(path)
    write_atomic(path, data)
    return path


# -- entries ------------------------------------------------------------------------------------
def make_entry(spec: Any, report: Any) -> dict:
    """The report.json entry of one finished audit of ``spec`` (a :class:`scenarios.AuditSpec`);
    ``report`` is the :class:`audit.AuditReport` (only its ``to_dict()`` is used)."""
    data = report.to_dict()
    histogram = (data.get("accuracy") or {}).get("histogram")
    return {"name": spec.name, "path": str(spec.path), "expected": spec.expected, "note": spec.note,
            "warnings": list(spec.warnings), "error": None, "figures": {},
            "noise_density": noise_density(spec.mechanism, histogram) if histogram else None,
            "report": data}


def error_entry(spec: Any, message: str) -> dict:
    """The entry of an audit that could not run (bad input, a mechanism that raised)."""
    return {"name": spec.name, "path": str(spec.path), "expected": spec.expected, "note": spec.note,
            "warnings": list(spec.warnings), "error": message, "figures": {}, "noise_density": None,
            "report": None}


def noise_density(mechanism: Any, histogram: dict) -> Optional[dict]:
    """The exact density of the plotted error column, where the mechanism can tell it.

    Optional mechanism methods, in order: ``noise_pdf(x)`` (the density of the first query's
    noise) or a noise ``cdf(t)`` (bin-averaged: (F(b) − F(a))/(b − a), the quantity a histogram
    estimates).  ``None`` otherwise; the figure then draws a Gaussian of the claimed variance.
    """
    edges = np.asarray(histogram["edges"], dtype=np.float64)
    pdf, cdf = getattr(mechanism, "noise_pdf", None), getattr(mechanism, "cdf", None)
    try:
        if callable(pdf):
            x = np.linspace(edges[0], edges[-1], _DENSITY_POINTS)
            density, source = np.asarray(pdf(x), dtype=np.float64), "noise_pdf"
        elif callable(cdf):
            fine = np.linspace(edges[0], edges[-1], _DENSITY_POINTS + 1)
            x = 0.5 * (fine[:-1] + fine[1:])
            density, source = np.diff(np.asarray(cdf(fine), dtype=np.float64)) / np.diff(fine), "cdf"
        else:
            return None
    except (TypeError, ValueError, NotImplementedError):
        return None
    if density.shape != x.shape or not np.isfinite(density).all():
        return None
    return {"x": x.tolist(), "density": density.tolist(), "source": source}


# -- files --------------------------------------------------------------------------------------
def report_document(entries: Sequence[dict], settings: dict, finished: bool = True) -> dict:
    """The content of report.json; ``finished`` is False while the run is still going (or was
    interrupted), so that a later run in the same folder knows there is work to resume."""
    return {"dpaudit": __version__, "format": REPORT_FORMAT, "finished": bool(finished), "settings": settings,
            "audits": list(entries)}


def write_reports(out: "str | Path", entries: Sequence[dict], settings: dict, finished: bool = True) -> dict[str, Path]:
    """Write ``out/report.json``, ``out/summary.md`` and the self-contained ``out/report.html``
    (:mod:`audit.render.html`) atomically; returns their paths.

    ``entries`` and ``settings`` must be JSON already (see the module docstring); a number that
    JSON cannot hold raises ``ValueError`` instead of being written.  ``finished`` says whether the
    run is over (:func:`report_document`).
    """
    out = Path(out)
    document = report_document(entries, settings, finished)
    paths = {"report": out / "report.json", "summary": out / "summary.md", "html": out / "report.html"}
    write_file(paths["report"], (json.dumps(document, indent=2, allow_nan=False) + "\n").encode())
    write_file(paths["summary"], summary_markdown(entries, settings).encode())
    write_file(paths["html"], report_html(entries, settings, out).encode())
    return paths


def load_report(path: "str | Path") -> dict:
    """Read a report.json written by ``dpaudit run``; :class:`ReportFileError` if it is not one."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportFileError(f"{path}: is not valid JSON ({exc})") from None
    if not isinstance(document, dict) or not isinstance(document.get("audits"), list):
        raise ReportFileError(f"{path}: is not a dpaudit report.json (no 'audits' list)")
    for index, entry in enumerate(document["audits"]):
        if not isinstance(entry, dict) or "name" not in entry or "report" not in entry:
            raise ReportFileError(f"{path}: audits[{index}] is not a dpaudit audit entry "
                                  "(needs 'name' and 'report')")
    return document
