"""``/people/``: site admins create people, deactivate and reactivate them, reset passwords.

Resetting a password and deactivating ask first, like every destructive action of the Board: the
row's button opens a page (GET) that says what will happen to whom, and only its form (POST) acts.

Everyone else gets 403 on every route here (people are installation-wide, not a team's). A new
person's temporary password, and a reset one, is shown once on the page that answers the POST
(never in a redirect, a message or a log) with ``Cache-Control: no-store``; only its hash is kept.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from todos.core.db import execute
from todos.core.errors import Conflict, Invalid, NotFound
from todos.core.selectors import people as selectors
from todos.core.selectors import teams as team_selectors
from todos.core.store import people as store
from todos.core.store.scopes import OperatorScope
from todos.core.store.teams import ROLES
from todos.dashboard.views.common import board_view, forbidden, not_found

SITE_ADMINS_ONLY = "Only site admins manage people."


def _scope(viewer) -> OperatorScope:
    return OperatorScope(user_id=viewer.user_id, username=viewer.username)


def _page(request, status: int = 200, **extra):
    context = {
        "people": (everyone := selectors.people()),
        "limited": len(everyone) == selectors.PEOPLE_LIMIT,
        "changes": selectors.recent_changes(),
        "teams": team_selectors.visible_teams(request.viewer),
        "roles": ROLES,
        "values": {},
        "viewer_id": request.viewer.user_id,
        "passwords_off": bool(settings.BOARD_OIDC_ONLY),
        **extra,
    }
    return render(request, "people/index.html", context, status=status)


def _site_admin(view):
    """Site admins only (checked after :func:`board_view` resolved the viewer)."""

    def wrapper(request, *args, **kwargs):
        if not request.viewer.is_superuser:
            return forbidden(request, SITE_ADMINS_ONLY)
        return view(request, *args, **kwargs)

    wrapper.__name__ = view.__name__
    wrapper.__doc__ = view.__doc__
    return wrapper


@require_GET
@board_view
@_site_admin
def people_page(request):
    return _page(request)


@never_cache
@require_POST
@board_view
@_site_admin
def person_create(request):
    """A new person, optionally added to a team with a role; answers with their password, once."""
    data = request.POST
    team_slug = (data.get("team") or "").strip()
    team_id = role = None
    if team_slug:
        team = team_selectors.team_for(request.viewer, team_slug)
        if team is None:
            return _page(request, 422, error=f"team: no team with slug “{team_slug}”", values=data)
        team_id, role = team.id, data.get("role") or "viewer"
    try:
        created = execute(
            store.create_person(
                _scope(request.viewer),
                username=data.get("username", ""),
                superuser=data.get("site_admin") in ("1", "on", "true"),
                team_id=team_id,
                role=role,
            )
        )
    except Invalid as exc:
        return _page(request, 422, error=exc.message, values=data)
    except NotFound:  # the team was deleted between the lookup and the insert
        return _page(request, 422, error=f"team: no team with slug “{team_slug}”", values=data)
    context = {"person": created.person, "password": created.password, "created": True, "team": team_slug}
    return render(request, "people/password.html", context, status=201)


# What each confirmation says will happen, and its button.
CONFIRMATIONS = {
    "password": (
        "Reset the password of {name}?",
        "{name} gets a new temporary password, shown to you once; their old password stops working "
        "and their open sessions end.",
        "Reset password",
    ),
    "deactivate": (
        "Deactivate {name}?",
        "{name} can no longer sign in; their open sessions and live connections end. Their team "
        "memberships stay, and you can reactivate them later.",
        "Deactivate",
    ),
}


def _password_refusal(username: str) -> str:
    """Why a password is not reset with local passwords off (docs/sign-in.md, "break-glass")."""
    return f"Cannot reset the password: local passwords are off: {username} signs in through the identity provider."


def _confirm(request, user_id: int, which: str):
    """The question before a destructive action on a person (answered by a POST to the same URL)."""
    person = selectors.person(user_id)
    if person is None:
        return not_found()
    if not person.is_active or person.id == request.viewer.user_id:
        return HttpResponseRedirect(reverse("people"))  # nothing to ask: the page offers no such button
    if which == "password" and settings.BOARD_OIDC_ONLY and not person.is_superuser:
        return _page(request, 409, error=_password_refusal(person.username))
    title, effect, button = CONFIRMATIONS[which]
    context = {
        "person": person,
        "title": title.format(name=person.username),
        "effect": effect.format(name=person.username),
        "button": button,
        "action": reverse("person_password_reset" if which == "password" else "person_deactivate", args=[person.id]),
    }
    return render(request, "people/confirm.html", context)


@never_cache
@require_http_methods(["GET", "POST"])
@board_view
@_site_admin
def person_password_reset(request, user_id: int):
    """A new temporary password; the person's sessions end. Shown once. GET asks first."""
    if request.method == "GET":
        return _confirm(request, user_id, "password")
    try:
        reset = execute(store.reset_password(_scope(request.viewer), user_id=user_id))
    except NotFound:
        return not_found()
    except Conflict as exc:
        return _page(request, 409, error=f"Cannot reset the password: {exc.message}.")
    return render(request, "people/password.html", {"person": reset.person, "password": reset.password})


def _set_active(request, user_id: int, active: bool):
    try:
        person = execute(store.set_active(_scope(request.viewer), user_id=user_id, active=active))
    except NotFound:
        return not_found()
    except (Invalid, Conflict) as exc:
        status = 422 if isinstance(exc, Invalid) else 409
        return _page(request, status, error=exc.message[:1].upper() + exc.message[1:] + ".")
    messages.success(request, f"{person.username} {'reactivated' if active else 'deactivated'}.")
    return HttpResponseRedirect(reverse("people"))


@require_http_methods(["GET", "POST"])
@board_view
@_site_admin
def person_deactivate(request, user_id: int):
    """They can no longer sign in; their sessions and live connections end. Memberships stay.
    GET asks first."""
    if request.method == "GET":
        return _confirm(request, user_id, "deactivate")
    return _set_active(request, user_id, False)


@require_POST
@board_view
@_site_admin
def person_reactivate(request, user_id: int):
    return _set_active(request, user_id, True)
