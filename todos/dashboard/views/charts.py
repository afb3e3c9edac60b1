"""``/charts/``: completed, failed and died per interval, and time waiting and running, per queue
or for all queues of the viewer's teams, over 1 h, 24 h or 7 d (server-rendered SVG).

``/charts/panel/`` is the same charts alone (a live region, refreshed on the live pipeline's
messages, throttled in ``static/board/live.js``); ``/overview/chart/`` is the overview's compact
chart of the last hour. Bad input (a range or queue the Board does not know) is a 400 naming it; a
team that is not the viewer's is the Board's one 404.
"""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from todos.core.errors import Invalid
from todos.core.selectors import flow as flow_reads
from todos.core.store import inputs
from todos.dashboard.views import chart_svg
from todos.dashboard.views.common import bad_request, board_view, not_found


class _Refused(Exception):
    def __init__(self, response):
        self.response = response


def _choice(request) -> dict:
    """The chart the query string asks for, checked."""
    range_key = request.GET.get("range") or flow_reads.DEFAULT_RANGE
    if range_key not in flow_reads.RANGES:
        raise _Refused(bad_request(request, f"range: must be one of {', '.join(flow_reads.RANGES)}, got {range_key!r}"))
    queue = request.GET.get("queue") or flow_reads.ALL_QUEUES
    if queue:
        try:
            queue = inputs.queue(queue)
        except Invalid as exc:
            raise _Refused(bad_request(request, str(exc))) from None
    slug = request.GET.get("team") or ""
    team = None
    if slug:
        team = request.viewer.team_by_slug(slug)
        if team is None:
            raise _Refused(not_found())
    return {"range_key": range_key, "queue": queue, "team": team}


def charts_context(request, *, range_key: str, queue: str, team) -> dict:
    data = flow_reads.flow(request.viewer, range_key=range_key, queue=queue, teams=None if team is None else {team.id})
    scope = f"queue {queue}" if queue else "all queues"
    if team is not None:
        scope += f" of {team.name}"
    return {
        "flow": data,
        "scope": scope,
        "charts": [chart_svg.outcomes_chart(data, scope), chart_svg.times_chart(data, scope)],
        "table": chart_svg.table_rows(data),
        "ranges": list(flow_reads.RANGES.values()),
        "range_key": range_key,
        "queue": queue,
        "team": team,
        "queues": flow_reads.queues(request.viewer),
        "viewer": request.viewer,
    }


@require_GET
@board_view
def charts_page(request):
    try:
        choice = _choice(request)
    except _Refused as refused:
        return refused.response
    return render(request, "charts/index.html", charts_context(request, **choice))


@require_GET
@board_view
def charts_panel(request):
    """The charts alone (a live region)."""
    try:
        choice = _choice(request)
    except _Refused as refused:
        return refused.response
    return render(request, "charts/_panel.html", charts_context(request, **choice))


def overview_chart_context(viewer) -> dict:
    """The overview's compact chart: the last hour, all queues of the viewer's teams."""
    data = flow_reads.flow(viewer, range_key="1h")
    return {
        "chart": chart_svg.outcomes_chart(data, "all queues", height=130),
        "times": data.total,
        "wait_p95": chart_svg.duration(data.total.waited_p95),
        "run_p95": chart_svg.duration(data.total.ran_p95),
    }


@require_GET
@board_view
def overview_chart(request):
    """The overview's compact chart alone (a live region)."""
    return render(request, "charts/_overview.html", overview_chart_context(request.viewer))
