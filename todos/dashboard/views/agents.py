"""``/agents/``: per endpoint, its in-flight todos, last heartbeat and recent outcomes."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from todos.core.selectors.agents import agents
from todos.dashboard.views.common import board_view


@require_GET
@board_view
def agents_page(request):
    return render(request, "agents/index.html", {"agents": agents(request.viewer)})


@require_GET
@board_view
def agents_panel(request):
    """The agents panel alone (a live region)."""
    return render(request, "agents/_panel.html", {"agents": agents(request.viewer)})
