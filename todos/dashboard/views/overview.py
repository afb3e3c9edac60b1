"""``/``: every queue the human can see, with its live numbers, pause state and throughput."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from todos.core.selectors.claimability import stuck_work
from todos.core.selectors.concurrency import busy_keys
from todos.core.selectors.overview import overview
from todos.core.selectors.queue_settings import viewer_timeouts
from todos.core.selectors.rate_limits import rate_limits
from todos.core.store import inputs
from todos.dashboard.views.charts import overview_chart_context
from todos.dashboard.views.common import board_view


def overview_table_context(request) -> dict:
    viewer = request.viewer
    return {
        "overview": overview(viewer),
        "stuck": stuck_work(viewer),
        "busy_keys": busy_keys(viewer),
        "timeouts": _timeouts_by_team(viewer),
        "rate_limits": rate_limits(viewer),
        "rate_intervals": inputs.RATE_INTERVALS,
        "viewer": viewer,
        "here": request.get_full_path(),
    }


def _timeouts_by_team(viewer) -> dict[str, dict[str, int]]:
    """The queues' default run-time limits, by team slug then queue (for the table's rows)."""
    slugs = {team.id: team.slug for team in viewer.teams}
    out: dict[str, dict[str, int]] = {}
    for (team_id, queue), seconds in viewer_timeouts(viewer).items():
        if team_id in slugs:
            out.setdefault(slugs[team_id], {})[queue] = seconds
    return out


@require_GET
@board_view
def overview_page(request):
    context = overview_table_context(request)
    if request.viewer.teams:
        context.update(overview_chart_context(request.viewer))
    return render(request, "overview/index.html", context)


@require_GET
@board_view
def overview_table(request):
    """The overview table alone (a live region)."""
    context = overview_table_context(request)
    htmx = getattr(request, "htmx", None)
    if htmx and htmx.current_url_abs_path:
        context["here"] = htmx.current_url_abs_path
    return render(request, "overview/_table.html", context)
