"""Rendering audit reports: words and numbers, tables, summary.md, report.html, figures, files.

Every module here works on the JSON form of a report (``AuditReport.to_dict()``, the ``report``
of a report.json entry), so a live report and one read back by ``dpaudit plot`` render the same,
and none imports :mod:`audit.report`: the result objects call down into this package
(``AuditReport.summary()``, ``to_html()``), never the other way.

- :mod:`~audit.render.numbers`: numbers for people;
- :mod:`~audit.render.text`: claim labels, the summary lines of an audit;
- :mod:`~audit.render.witness`: the witness in words (the pair as data, the statistic, the event);
- :mod:`~audit.render.tables`: the run's table for the terminal and for Markdown;
- :mod:`~audit.render.markdown`: summary.md;
- :mod:`~audit.render.html`: report.html and the notebook view (Jinja2 templates in ``templates/``);
- :mod:`~audit.render.plots`: the figures (matplotlib, the optional ``plots`` extra);
- :mod:`~audit.render.files`: report.json entries, writing and reading a run's files atomically.
"""

from .files import ReportFileError, error_entry, load_report, make_entry, report_document, write_reports
from .html import audit_section, report_html
from .markdown import summary_markdown
from .plots import PlotsUnavailable, figure_png, figures, save_figures
from .tables import COLUMNS, format_table, markdown_table, table_rows
from .text import error_control_text, figure_stem, summary_text
from .witness import witness_lines, witness_parts

__all__ = [
    "COLUMNS", "PlotsUnavailable", "ReportFileError", "audit_section", "error_control_text", "error_entry",
    "figure_png", "figure_stem", "figures", "format_table", "load_report", "make_entry", "markdown_table",
    "report_document", "report_html", "save_figures", "summary_markdown", "summary_text", "table_rows",
    "witness_lines", "witness_parts", "write_reports",
]
