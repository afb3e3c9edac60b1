"""The CSV export's rows: the columns, the Board's words for states, and the defence against
spreadsheet formulas.

A spreadsheet runs a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in some, a tab or a
carriage return) as a formula, so a todo titled ``=HYPERLINK(…)`` would run on the reader's
machine. Every text cell that starts so is written with a leading ``'`` (OWASP, CSV injection);
the numbers and times the export writes itself are left as they are.
"""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime

HEADER = (
    "id",
    "queue",
    "kind",
    "title",
    "state",
    "priority",
    "attempts",
    "max_attempts",
    "created_at",
    "finished_at",
    "last_reason",
)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def text_cell(value: str | None) -> str:
    """A text cell a spreadsheet shows as text: ``'`` before a formula's first character."""
    if not value:
        return ""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def _instant(value: datetime | None) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value else ""


def csv_text(rows: list[dict], *, header: bool = False) -> str:
    """Rows of ``todo_export.export_pages`` as CSV lines (RFC 4180: CRLF, quoted as needed)."""
    out = io.StringIO()
    writer = csv.writer(out)
    if header:
        writer.writerow(HEADER)
    for row in rows:
        writer.writerow(
            (
                text_cell(row["id"]),
                text_cell(row["queue"]),
                text_cell(row["kind"]),
                text_cell(row["title"]),
                row["board_state"],  # the Board's word (docs/lifecycle.md, "Derived states")
                row["priority"],
                row["attempts_total"],
                row["max_attempts"],
                _instant(row["created_at"]),
                _instant(row["completed_at"]),
                text_cell(row["last_reason"]),
            )
        )
    return out.getvalue()
