"""``/activity/``: the audit trail of human actions across the human's teams."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from todos.core.selectors import activity as selectors
from todos.dashboard.views.common import board_view, is_htmx, vary_on_htmx


@require_GET
@board_view
def activity_page(request):
    viewer = request.viewer
    f = selectors.ActivityFilter.from_query(request.GET)
    rows, next_cursor = selectors.activity(viewer, f)
    teams = {t.id: t.name for t in viewer.teams}
    context = {
        "filter": f,
        "entries": rows,
        "next_cursor": next_cursor,
        "errors": f.errors,
        "people": selectors.people(viewer),
        "actions": selectors.ACTIONS,
        "periods": selectors.PERIODS,
        "teams": teams,
        "endpoint_names": {e.id: e.name for e in viewer.endpoints},
        "paged": f.before is not None,
    }
    if is_htmx(request) and request.htmx.target == "activity-list":
        return vary_on_htmx(render(request, "activity/_list.html", context))
    return vary_on_htmx(render(request, "activity/index.html", context))
