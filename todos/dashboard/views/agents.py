"""``/agents/``: per endpoint, its in-flight todos, last heartbeat and recent outcomes; a team
admin pauses and resumes its claims and revokes it here.

Who may act: the endpoint's team admins (and its members who are site admins), as on the
Endpoints page, whose store transitions these reuse; operators and viewers get 403, another team's
endpoint the Board's one 404. Every action is a plain form and a redirect back to the page (Post/
Redirect/Get); the page's live region follows pause and resume (op ``endpoint``) everywhere.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from todos.core.db import execute
from todos.core.errors import Conflict, Invalid
from todos.core.selectors import endpoints as endpoint_selectors
from todos.core.selectors.agents import agents
from todos.core.store import endpoints as store
from todos.core.store.scopes import OperatorScope
from todos.dashboard import form_input
from todos.dashboard.views.common import board_view, forbidden, not_found, store_refusals

ADMINS_ONLY = "Only a team admin can pause, resume or revoke an agent. Your role on this team lets you look."


def _page_context(viewer) -> dict:
    statuses = agents(viewer)
    return {"agents": statuses, "manages_any": any(a.manages for a in statuses)}


@require_GET
@board_view
def agents_page(request):
    return render(request, "agents/index.html", _page_context(request.viewer))


@require_GET
@board_view
def agents_panel(request):
    """The agents panel alone (a live region)."""
    return render(request, "agents/_panel.html", _page_context(request.viewer))


def _managed(request, slug: str):
    """The endpoint when the viewer manages its team, else the refusal to answer (404 for an
    unknown or another team's slug alike, 403 for a member who is not an admin)."""
    viewer = request.viewer
    endpoint = endpoint_selectors.endpoint_for(viewer, slug)
    team = viewer.team(endpoint.team_id) if endpoint is not None else None
    if endpoint is None or team is None:
        return not_found()
    if not endpoint_selectors.manages(viewer, team):
        return forbidden(request, ADMINS_ONLY)
    return endpoint


def _back(request, endpoint, level: str, message: str) -> HttpResponseRedirect:
    getattr(messages, level)(request, message)
    return HttpResponseRedirect(reverse("agents") + f"#agent-{endpoint.slug}")


def _caller(request) -> dict:
    viewer = request.viewer
    return {
        "by": OperatorScope(user_id=viewer.user_id, username=viewer.username),
        "superuser": viewer.is_superuser,
    }


@require_POST
@board_view
@store_refusals(forbidden_text=ADMINS_ONLY)
def agent_pause(request, slug: str):
    """Pause the endpoint's claims: they are refused ``paused`` until resumed; reports land."""
    endpoint = _managed(request, slug)
    if isinstance(endpoint, HttpResponse):
        return endpoint
    try:
        note = form_input.note(request.POST)
        caller = _caller(request)
        execute(store.pause_claims(caller["by"], endpoint.id, note=note, superuser=caller["superuser"]))
    except Invalid as exc:
        return _back(request, endpoint, "error", f"Not paused: {exc.field}: {exc.problem}")
    except Conflict as exc:
        return _back(request, endpoint, "error", f"Not paused: {exc.message}.")
    return _back(
        request,
        endpoint,
        "success",
        f"Paused the claims of {endpoint.name}: it takes no new work until resumed; what it holds it can still finish.",
    )


@require_POST
@board_view
@store_refusals(forbidden_text=ADMINS_ONLY)
def agent_resume(request, slug: str):
    """Resume the endpoint's paused claims; its waiting claims are woken."""
    endpoint = _managed(request, slug)
    if isinstance(endpoint, HttpResponse):
        return endpoint
    try:
        caller = _caller(request)
        execute(store.resume_claims(caller["by"], endpoint.id, superuser=caller["superuser"]))
    except Conflict as exc:
        return _back(request, endpoint, "error", f"Not resumed: {exc.message}.")
    return _back(request, endpoint, "success", f"Resumed the claims of {endpoint.name}: it takes work again.")


@require_http_methods(["GET", "POST"])
@board_view
@store_refusals(forbidden_text=ADMINS_ONLY)
def agent_revoke(request, slug: str):
    """Revoke from the Agents page: the Endpoints page's confirmation (the live todos that will be
    dead-lettered), then its one store call, then back here."""
    endpoint = _managed(request, slug)
    if isinstance(endpoint, HttpResponse):
        return endpoint
    if not endpoint.active:
        return _back(request, endpoint, "error", f"{endpoint.name} is already revoked.")
    context = {
        "team": request.viewer.team(endpoint.team_id),
        "endpoint": endpoint,
        "live": endpoint_selectors.live_work(endpoint.id),
        "values": request.POST,
        "action": reverse("agent_revoke", args=[endpoint.slug]),
        "cancel": reverse("agents") + f"#agent-{endpoint.slug}",
        "from_page": {"url": reverse("agents"), "name": "Agents"},
    }
    if request.method == "GET":
        return render(request, "endpoints/revoke.html", context)
    try:
        caller = _caller(request)
        revoked = execute(
            store.revoke(caller["by"], endpoint.id, note=form_input.note(request.POST), superuser=caller["superuser"])
        )
    except Invalid as exc:
        messages.error(request, f"{exc.field}: {exc.problem}")
        return render(request, "endpoints/revoke.html", {**context, "errors": {exc.field: exc.problem}}, status=422)
    except Conflict:
        return _back(request, endpoint, "error", f"{endpoint.name} is already revoked.")
    n = len(revoked.dead_lettered)
    return _back(
        request,
        endpoint,
        "success",
        f"Revoked {endpoint.name}: its token is refused from now on; "
        f"{n} live todo{'' if n == 1 else 's'} dead-lettered.",
    )
