"""The todo list's filter as a request states it: the querystring, and the zone its days are in.

Every view that reads a list filter (the list, its counts, bulk actions, the export, saved views)
parses it here, so a day range means the same instants on all of them.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

from todos.core.filters import TodoFilter
from todos.dashboard import clock


def filter_zone(request) -> ZoneInfo:
    """The zone the person's day ranges (created, finished) are days of: the one their times are
    shown in (docs/board.md, "Times and zones")."""
    return clock.resolve(request).zone


def list_filter(request, data=None) -> TodoFilter:
    """The filter of ``data`` (the request's querystring by default), its days in :func:`filter_zone`."""
    return TodoFilter.from_query(request.GET if data is None else data, zone=filter_zone(request))
