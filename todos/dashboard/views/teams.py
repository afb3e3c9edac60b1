"""``/teams/``: site admins create teams; team admins (and site admins) manage members and roles.

Viewers and operators see their team's members and endpoints but get no buttons, and their
POSTs are refused (403) by the store's own check. A team that is not the human's (for anyone but
a site admin) answers the Board's one 404.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from todos.core.db import execute
from todos.core.errors import Conflict, Invalid
from todos.core.selectors import teams as selectors
from todos.core.store import teams as team_store
from todos.core.store.scopes import OperatorScope
from todos.dashboard.views.common import board_view, forbidden, not_found, store_refusals

ROLES = team_store.ROLES
MANAGERS_ONLY = "Only a team admin or a site admin can manage members."
SITE_ADMINS_ONLY = "Only site admins create teams."


def _scope(viewer) -> OperatorScope:
    return OperatorScope(user_id=viewer.user_id, username=viewer.username)


@require_GET
@board_view
def team_list(request):
    viewer = request.viewer
    return render(
        request, "teams/index.html", {"teams": selectors.visible_teams(viewer), "can_create": viewer.is_superuser}
    )


def _create_invalid(request, exc):
    messages.error(request, exc.message)
    context = {
        "teams": selectors.visible_teams(request.viewer),
        "can_create": True,
        "values": request.POST,
        "error": exc.message,
    }
    return render(request, "teams/index.html", context, status=422)


@require_POST
@board_view
@store_refusals(forbidden_text=SITE_ADMINS_ONLY, invalid=_create_invalid)
def team_create(request):
    """Site admins only."""
    viewer = request.viewer
    if not viewer.is_superuser:
        return forbidden(request, SITE_ADMINS_ONLY)
    team = execute(
        team_store.create_team(slug=request.POST.get("slug", ""), name=request.POST.get("name", ""), by=_scope(viewer))
    )
    messages.success(request, f"Created team {team.name}.")
    return HttpResponseRedirect(reverse("team_detail", args=[team.slug]))


def _manages(viewer, team) -> bool:
    return viewer.is_superuser or team.role == "admin"


@require_GET
@board_view
def team_detail(request, slug: str):
    viewer = request.viewer
    team = selectors.team_for(viewer, slug)
    if team is None:
        return not_found()
    context = {
        "team": team,
        "members": selectors.members(team.id),
        "endpoints": selectors.endpoints(team.id),
        "manages": _manages(viewer, team),
        "roles": ROLES,
    }
    return render(request, "teams/detail.html", context)


@require_POST
@board_view
@store_refusals(forbidden_text=MANAGERS_ONLY)
def team_member_set(request, slug: str):
    """Add a member by username, or change a member's role."""
    viewer = request.viewer
    team = selectors.team_for(viewer, slug)
    if team is None:
        return not_found()
    username = (request.POST.get("username") or "").strip()
    user_id = request.POST.get("user_id")
    if not user_id:
        user_id = selectors.user_id_by_username(username) if username else None
        if user_id is None:
            return _member_reply(
                request,
                team,
                "error",
                _no_such_person(viewer, username) if username else "username: is required",
                422,
            )
    try:
        user_id = int(user_id)
        outcome = execute(
            team_store.set_member(
                _scope(viewer),
                team_id=team.id,
                user_id=user_id,
                role=request.POST.get("role"),
                superuser=viewer.is_superuser,
            )
        )
    except ValueError:
        return _member_reply(request, team, "error", "user: not a user id", 422)
    except Invalid as exc:
        return _member_reply(request, team, "error", exc.message, 422)
    return _member_reply(request, team, "success", "Member added." if outcome == "added" else "Role changed.")


@require_POST
@board_view
@store_refusals(forbidden_text=MANAGERS_ONLY)
def team_member_remove(request, slug: str, user_id: int):
    viewer = request.viewer
    team = selectors.team_for(viewer, slug)
    if team is None:
        return not_found()
    try:
        execute(
            team_store.remove_member(_scope(viewer), team_id=team.id, user_id=user_id, superuser=viewer.is_superuser)
        )
    except Conflict:
        return _member_reply(request, team, "error", "That person is not a member any more.", 409)
    return _member_reply(request, team, "success", "Member removed.")


def _no_such_person(viewer, username: str) -> str:
    """Only existing people can be added; say who can create one."""
    who = "create them on the People page" if viewer.is_superuser else "ask a site admin to create them"
    return f"username: no active user named “{username}”: {who}, then add them here"


def _member_reply(request, team, level: str, message: str, status: int = 200):
    getattr(messages, level)(request, message)
    if status >= 400:
        viewer = request.viewer
        context = {
            "team": team,
            "members": selectors.members(team.id),
            "endpoints": selectors.endpoints(team.id),
            "manages": _manages(viewer, team),
            "roles": ROLES,
            "values": request.POST,
        }
        return render(request, "teams/detail.html", context, status=status)
    return HttpResponseRedirect(reverse("team_detail", args=[team.slug]))
