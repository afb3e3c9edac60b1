"""``/people/sign-in-roles/``: which provider groups grant which team roles (site admins only).

Each change is audited; it applies at each person's next sign-in (docs/sign-in.md).
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from todos.core.db import execute
from todos.core.errors import Invalid, NotFound
from todos.core.selectors import identities as selectors
from todos.core.selectors import teams as team_selectors
from todos.core.store import identities as store
from todos.core.store.teams import ROLES
from todos.dashboard.views.common import board_view, not_found
from todos.dashboard.views.people import _scope, _site_admin


def _page(request, status: int = 200, **extra):
    context = {
        "mappings": selectors.role_mappings(),
        "teams": team_selectors.visible_teams(request.viewer),
        "roles": ROLES,
        "values": {},
        "section": "people",
        **extra,
    }
    return render(request, "people/sign_in_roles.html", context, status=status)


@require_GET
@board_view
@_site_admin
def sign_in_roles(request):
    return _page(request)


@require_POST
@board_view
@_site_admin
def sign_in_role_add(request):
    data = request.POST
    slug = (data.get("team") or "").strip()
    team = team_selectors.team_for(request.viewer, slug) if slug else None
    if team is None:
        return _page(
            request, 422, error=f"team: no team with slug “{slug}”" if slug else "team: is required", values=data
        )
    try:
        made = execute(
            store.add_mapping(
                _scope(request.viewer), group_value=data.get("group", ""), team_id=team.id, role=data.get("role")
            )
        )
    except (Invalid, NotFound) as exc:
        return _page(request, 422, error=exc.message, values=data)
    messages.success(request, f"Group {made.group_value} now grants {made.role} of {slug} at each sign-in.")
    return HttpResponseRedirect(reverse("sign_in_roles"))


@require_POST
@board_view
@_site_admin
def sign_in_role_remove(request, mapping_id: int):
    try:
        gone = execute(store.remove_mapping(_scope(request.viewer), mapping_id=mapping_id))
    except (NotFound, Invalid):  # Invalid: an id no mapping can have
        return not_found()
    messages.success(request, f"Group {gone.group_value} no longer grants a role; it applies at each next sign-in.")
    return HttpResponseRedirect(reverse("sign_in_roles"))
