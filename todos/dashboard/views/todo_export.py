"""``/todos/export.csv``: the todo list's filter as a CSV download of every matching todo.

The response streams from an async iterator: under ASGI the rows go out a page at a time while
the next is read, so the export's memory is one page whatever its size (docs/board.md, "Export").
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

from django.http import StreamingHttpResponse
from django.views.decorators.http import require_GET

from todos.core.filters import TodoFilter
from todos.core.selectors.access import Viewer
from todos.core.selectors.todo_export import export_pages, problems
from todos.dashboard.csv_rows import csv_text
from todos.dashboard.views.common import bad_request, board_view
from todos.dashboard.views.todo_filter import list_filter


async def csv_stream(viewer: Viewer, f: TodoFilter) -> AsyncIterator[bytes]:
    yield csv_text([], header=True).encode()
    async for rows in export_pages(viewer, f):
        yield csv_text(rows).encode()


@require_GET
@board_view
def todo_export(request):
    """The list's todos under the querystring's filter, as CSV; a filter with a bad value is
    refused naming it (an export of a wider set than asked for would be silently wrong)."""
    f = list_filter(request)
    refused = problems(request.viewer, f)
    if refused:
        return bad_request(request, " ".join(e.split(";")[0] + "." for e in refused))
    response = StreamingHttpResponse(csv_stream(request.viewer, f), content_type="text/csv; charset=utf-8")
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    response["Content-Disposition"] = f'attachment; filename="todos-{stamp}.csv"'
    response["Cache-Control"] = "no-store"
    return response
