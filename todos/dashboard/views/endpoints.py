"""``/endpoints/``: every team's agent credentials; team admins vend, edit, rotate, revoke, delete.

Who may act: a team's admins, and its members who are site admins (the store checks the same in
SQL). A site admin who is not a member sees nothing of the team here and may do nothing: a token
reaches the team's todos, and being a superuser does not bypass team scoping; they join the team
on the Teams screen first (audited, visible to the team). Operators and viewers see the list and
get 403 for every action; another team's endpoint is the Board's one 404, byte-identical to an
unknown slug.

The token exists only in the store's vend and rotate results. It is rendered once, into the
answer of that POST (``Cache-Control: no-store``; no redirect to a page that could show it again,
no session, no message, no log); reloading or going back shows no token. Rotation carries the
credential prefix the admin confirmed, so a re-posted form rotates nothing a second time.

Every action is a plain form and a redirect back (Post/Redirect/Get); the list is a live region
that follows vend, rotate, scope, lease, revoke, delete and "last seen" changes.
"""

from __future__ import annotations

import json
import re
import shlex
from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.text import slugify
from django.views.decorators.debug import sensitive_variables
from django.views.decorators.http import require_GET, require_http_methods

from todos.agents.mcp import client_config
from todos.core.db import execute, pool
from todos.core.errors import Conflict, Invalid
from todos.core.selectors import endpoints as selectors
from todos.core.selectors.access import TeamAccess
from todos.core.store import endpoints as store
from todos.core.store import inputs
from todos.core.store.scopes import OperatorScope
from todos.dashboard import clock, form_input, verb_grants
from todos.dashboard.views.common import board_view, forbidden, not_found, store_refusals

ADMINS_ONLY = "Only a team admin can manage endpoints. Your role on this team lets you look, not change them."

VERB_HELP = {
    "create_for": "create todos (for itself or another endpoint of the team)",
    "list_todos": "list todos; brings get_todo",
    "get_todo": "read one todo and its attempts",
    "claim": "claim a todo by id",
    "claim_next": "claim the next claimable todo (long poll); brings claim_batch",
    "heartbeat": "extend its lease",
    "complete": "complete a todo it holds; brings complete_batch",
    "fail": "fail a todo it holds",
    "release": "give a todo it holds back",
    "get_default_lease": "read its default lease",
    "set_default_lease": "change its own default lease",
    # every verb the verb table grants through it, so none is left out
    "schedules": "its own periodic schedules: " + ", ".join(verb_grants.granted_with("schedules")),
}
LIFETIMES = {
    "never": ("Until revoked", None),
    "1h": ("1 hour", timedelta(hours=1)),
    "24h": ("24 hours", timedelta(hours=24)),
    "7d": ("7 days", timedelta(days=7)),
    "30d": ("30 days", timedelta(days=30)),
    "custom": ("Until…", None),
}
# What ``board-worker`` calls: the reveal warns when the endpoint lacks one.
WORKER_VERBS = ("claim_next", "heartbeat", "complete", "fail", "release")
QUEUE_SPLIT = re.compile(r"[\s,]+")


def _by(viewer) -> dict:
    """The store's caller arguments: who, and whether they are a site admin (``manages``)."""
    return {"superuser": viewer.is_superuser}


def _scope(viewer) -> OperatorScope:
    return OperatorScope(user_id=viewer.user_id, username=viewer.username)


# --- the list --------------------------------------------------------------------------------


@require_GET
@board_view
def endpoint_list(request):
    return render(request, "endpoints/index.html", {"groups": selectors.by_team(request.viewer)})


@require_GET
@board_view
def endpoint_panel(request):
    """The list alone (a live region)."""
    return render(request, "endpoints/_panel.html", {"groups": selectors.by_team(request.viewer)})


# --- form input ------------------------------------------------------------------------------


def _values(data) -> dict:
    """What the form sent, to show it again after an error."""
    return {
        "name": data.get("name", ""),
        "slug": data.get("slug", ""),
        "scope_verbs": data.getlist("scope_verbs"),
        "scope_queues": data.getlist("scope_queues"),
        "scope_queues_extra": data.get("scope_queues_extra", ""),
        "default_lease_ttl_seconds": data.get("default_lease_ttl_seconds", ""),
        "lifetime": data.get("lifetime", "never"),
        "expires_at": data.get("expires_at", ""),
        "capabilities": data.get("capabilities", ""),
    }


def _capabilities(data) -> list[str]:
    """The default capabilities field (labels separated by commas or spaces), cleaned as the
    store would; an ``Invalid`` names the field (and which label, counted from 1)."""
    return inputs.capability_text("capabilities", data.get("capabilities", ""))


def _scopes(data) -> tuple[list[str], list[str], int | None]:
    """Verbs, queues (chips plus the free-text field) and default lease, cleaned as the store
    would (an ``Invalid`` names the field)."""
    extra = [q for q in QUEUE_SPLIT.split(data.get("scope_queues_extra", "")) if q]
    verbs = store.clean_verbs(data.getlist("scope_verbs"))
    queues = store.clean_queues(data.getlist("scope_queues") + extra)
    lease = form_input.integer(
        data, "default_lease_ttl_seconds", inputs.DEFAULT_LEASE_MIN, inputs.LEASE_TTL_MAX, required=False
    )
    return verbs, queues, lease


def _expires_at(data):
    choice = data.get("lifetime") or "never"
    if choice not in LIFETIMES:
        raise Invalid(
            "lifetime", "must be one of: until revoked, 1 hour, 24 hours, 7 days, 30 days, or a date and time"
        )
    now = timezone.now()
    if choice != "custom":
        span = LIFETIMES[choice][1]
        return now + span if span else None
    raw = (data.get("expires_at") or "").strip()
    if not raw:
        raise Invalid("expires_at", "is required for a lifetime that ends at a date and time")
    when = clock.parse_local("expires_at", raw)  # read in the viewer's zone, as the label says
    if when <= now + timedelta(minutes=1):
        raise Invalid("expires_at", "must be in the future")
    return when


def _slug(data) -> str:
    slug = (data.get("slug") or "").strip()
    return slug or slugify(data.get("name") or "")[:63].strip("-")


def _form_context(team, values: dict, errors: dict | None = None, **extra) -> dict:
    return {
        "team": team,
        "values": values,
        "errors": errors or {},
        "verb_choices": [(verb, VERB_HELP[verb]) for verb in store.SCOPE_VERBS],
        "implied_verbs": verb_grants.implied(),
        "queue_choices": sorted(set(selectors.known_queues(team.id)) | set(values.get("scope_queues") or ())),
        "lifetimes": [(key, label) for key, (label, _) in LIFETIMES.items()],
        "server_default_lease": settings.BOARD_DEFAULT_LEASE_SECONDS,
        **extra,
    }


# --- vend ------------------------------------------------------------------------------------


@require_http_methods(["GET", "POST"])
@board_view
@store_refusals(forbidden_text=ADMINS_ONLY)
@sensitive_variables("vended")
def endpoint_vend(request):
    """``/endpoints/new/?team=<slug>``: the form; its POST answers with the token, once."""
    viewer = request.viewer
    slug = (request.POST if request.method == "POST" else request.GET).get("team")
    if not slug:
        managed = [t for t in viewer.teams if selectors.manages(viewer, t)]
        if not managed:
            return forbidden(request, ADMINS_ONLY)
        if len(managed) > 1:
            return render(request, "endpoints/choose_team.html", {"teams": managed})
        slug = managed[0].slug
    team = viewer.team_by_slug(slug)
    if team is None:
        return not_found()
    if not selectors.manages(viewer, team):
        return forbidden(request, ADMINS_ONLY)
    if request.method == "GET":
        values = {"scope_verbs": list(store.DRAIN_VERBS), "scope_queues": [], "lifetime": "never"}
        return render(request, "endpoints/vend.html", _form_context(team, values))
    values = _values(request.POST)
    try:
        verbs, queues, lease = _scopes(request.POST)
        capabilities = _capabilities(request.POST)
        vended = execute(
            store.vend(
                _scope(viewer),
                team_id=team.id,
                name=request.POST.get("name", ""),
                slug=_slug(request.POST),
                verbs=verbs,
                queues=queues,
                default_lease_ttl_seconds=lease,
                expires_at=_expires_at(request.POST),
                capabilities=capabilities,
                **_by(viewer),
            )
        )
    except Invalid as exc:
        messages.error(request, f"{exc.field}: {exc.problem}")
        return render(request, "endpoints/vend.html", _form_context(team, values, {exc.field: exc.problem}), status=422)
    return _reveal(request, team, vended.endpoint, vended.token, rotated=False)


@sensitive_variables("token", "context")
def _reveal(request, team, endpoint, token: str, *, rotated: bool):
    """The one page that shows a token: rendered into the POST's answer, never cached."""
    base = request.build_absolute_uri("/").rstrip("/")
    queue = endpoint.scope_queues[0]
    context = {
        "team": team,
        "endpoint": endpoint,
        "token": token,
        "rotated": rotated,
        "curl": (
            f"curl -X POST {base}/api/v1/claim_next -H {shlex.quote('Authorization: Bearer ' + token)} "
            f"-H 'Content-Type: application/json' -d '{{\"wait_seconds\": 30}}'"
        ),
        "worker": (
            "uv pip install ./clients/python   # from a checkout of Board: the client and board-worker\n"
            f"export BOARD_URL={shlex.quote(base)}\n"
            f"export BOARD_TOKEN={shlex.quote(token)}\n"
            f"board-worker --queue {shlex.quote(queue)} -- ./handle-todo.sh"
        ),
        "worker_missing": [verb for verb in WORKER_VERBS if verb not in endpoint.scope_verbs],
        "mcp": json.dumps(client_config(base, token), indent=2),
    }
    response = render(request, "endpoints/reveal.html", context)
    add_never_cache_headers(response)  # no-store: not kept by the browser, a proxy, or back/forward
    return response


# --- one endpoint ----------------------------------------------------------------------------


def _manageable(request, slug: str) -> tuple[selectors.EndpointRow, TeamAccess] | HttpResponse:
    """``(endpoint, team)`` when the viewer manages the endpoint's team, else the refusal to answer."""
    viewer = request.viewer
    endpoint = selectors.endpoint_for(viewer, slug)
    if endpoint is None:
        return not_found()
    team = viewer.team(endpoint.team_id)
    if team is None:  # left the team since the query above
        return not_found()
    if not selectors.manages(viewer, team):
        return forbidden(request, ADMINS_ONLY)
    return endpoint, team


def _back(request, endpoint, level: str, message: str) -> HttpResponseRedirect:
    getattr(messages, level)(request, message)
    anchor = f"#endpoint-{endpoint.slug}" if endpoint is not None else ""
    return HttpResponseRedirect(reverse("endpoints") + anchor)


def _lease_text(seconds) -> str:
    return f"{seconds} s" if seconds else "the server default"


@require_http_methods(["GET", "POST"])
@board_view
@store_refusals(forbidden_text=ADMINS_ONLY)
def endpoint_edit(request, slug: str):
    """Scopes and default lease. Removing queues asks first, saying how many live todos are in
    them; the two changes are saved together (one transaction, one audit row each)."""
    manageable = _manageable(request, slug)
    if isinstance(manageable, HttpResponse):
        return manageable
    endpoint, team = manageable
    if not endpoint.active:
        return _back(request, endpoint, "error", f"{endpoint.name} is revoked: its scopes no longer change.")
    if request.method == "GET":
        values = {
            "scope_verbs": list(endpoint.scope_verbs),
            "scope_queues": list(endpoint.scope_queues),
            "default_lease_ttl_seconds": endpoint.default_lease_ttl_seconds or "",
            "capabilities": " ".join(endpoint.capabilities),
        }
        return render(request, "endpoints/edit.html", _form_context(team, values, endpoint=endpoint))
    values = _values(request.POST)
    try:
        verbs, queues, lease = _scopes(request.POST)
        capabilities = _capabilities(request.POST)
    except Invalid as exc:
        messages.error(request, f"{exc.field}: {exc.problem}")
        context = _form_context(team, values, {exc.field: exc.problem}, endpoint=endpoint)
        return render(request, "endpoints/edit.html", context, status=422)
    removed = [q for q in endpoint.scope_queues if q not in queues]
    if removed and request.POST.get("confirm") != "narrow":
        live = selectors.live_work(endpoint.id).in_queues(removed)
        context = {
            "team": team,
            "endpoint": endpoint,
            "removed": [(q, live.queue_total(q)) for q in removed],
            "live": live,
            "verbs": verbs,
            "queues": queues,
            "lease": lease if lease is not None else "",
            "capabilities": " ".join(capabilities),
        }
        return render(request, "endpoints/confirm_scopes.html", context)
    scopes_changed = (tuple(verbs), tuple(queues)) != (endpoint.scope_verbs, endpoint.scope_queues)
    lease_changed = lease != endpoint.default_lease_ttl_seconds
    capabilities_changed = tuple(capabilities) != endpoint.capabilities
    if not scopes_changed and not lease_changed and not capabilities_changed:
        return _back(request, endpoint, "info", f"Nothing changed on {endpoint.name}.")
    by, viewer = _scope(request.viewer), request.viewer
    try:
        with pool().connection() as conn, conn.transaction():
            if scopes_changed:
                execute(store.set_scopes(by, endpoint.id, verbs=verbs, queues=queues, **_by(viewer)), conn)
            if lease_changed:
                execute(store.set_default_lease(by, endpoint.id, lease, **_by(viewer)), conn)
            if capabilities_changed:
                execute(store.set_capabilities(by, endpoint.id, capabilities, **_by(viewer)), conn)
    except Conflict:
        return _back(request, endpoint, "error", f"Nothing saved: {endpoint.name} was revoked meanwhile.")
    said = []
    if scopes_changed:
        said.append(f"verbs {', '.join(verbs)}; queues {', '.join(queues)}")
    if lease_changed:
        said.append(f"default lease {_lease_text(lease)}")
    if capabilities_changed:
        said.append(f"default capabilities {', '.join(capabilities) or 'none'}")
    return _back(request, endpoint, "success", f"Saved {endpoint.name}: {'; '.join(said)}.")


@require_http_methods(["GET", "POST"])
@board_view
@store_refusals(forbidden_text=ADMINS_ONLY)
@sensitive_variables("rotated")
def endpoint_rotate(request, slug: str):
    """A confirmation, then a new token revealed once; the old one fails on its next request."""
    manageable = _manageable(request, slug)
    if isinstance(manageable, HttpResponse):
        return manageable
    endpoint, team = manageable
    if not endpoint.active:
        return _back(request, endpoint, "error", f"{endpoint.name} is revoked: it has no token to rotate.")
    if request.method == "GET":
        return render(request, "endpoints/rotate.html", {"team": team, "endpoint": endpoint})
    try:
        rotated = execute(
            store.rotate(
                _scope(request.viewer),
                endpoint.id,
                if_prefix=request.POST.get("prefix", ""),
                **_by(request.viewer),
            )
        )
    except Conflict:
        return _back(
            request,
            endpoint,
            "error",
            f"Not rotated: the token of {endpoint.name} changed after you confirmed (rotated or revoked meanwhile). "
            "Nothing was changed; look at the list and try again if you still want a new token.",
        )
    return _reveal(request, team, rotated.endpoint, rotated.token, rotated=True)


@require_http_methods(["GET", "POST"])
@board_view
@store_refusals(forbidden_text=ADMINS_ONLY)
def endpoint_revoke(request, slug: str):
    """A confirmation stating the live todos that will be dead-lettered, then one store call."""
    manageable = _manageable(request, slug)
    if isinstance(manageable, HttpResponse):
        return manageable
    endpoint, team = manageable
    if not endpoint.active:
        return _back(request, endpoint, "error", f"{endpoint.name} is already revoked.")
    if request.method == "GET":
        context = {"team": team, "endpoint": endpoint, "live": selectors.live_work(endpoint.id), "values": {}}
        return render(request, "endpoints/revoke.html", context)
    try:
        revoked = execute(
            store.revoke(_scope(request.viewer), endpoint.id, note=form_input.note(request.POST), **_by(request.viewer))
        )
    except Invalid as exc:
        messages.error(request, f"{exc.field}: {exc.problem}")
        context = {
            "team": team,
            "endpoint": endpoint,
            "live": selectors.live_work(endpoint.id),
            "values": request.POST,
            "errors": {exc.field: exc.problem},
        }
        return render(request, "endpoints/revoke.html", context, status=422)
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


@require_http_methods(["GET", "POST"])
@board_view
@store_refusals(forbidden_text=ADMINS_ONLY)
def endpoint_delete(request, slug: str):
    """Delete a revoked endpoint, and with it its todos and their history (a confirmation first)."""
    manageable = _manageable(request, slug)
    if isinstance(manageable, HttpResponse):
        return manageable
    endpoint, team = manageable
    if endpoint.active:
        return _back(request, endpoint, "error", f"Revoke {endpoint.name} before deleting it.")
    if request.method == "GET":
        total, more = selectors.todo_total(endpoint.id)
        return render(
            request, "endpoints/delete.html", {"team": team, "endpoint": endpoint, "total": total, "more": more}
        )
    try:
        execute(store.delete(_scope(request.viewer), endpoint.id, **_by(request.viewer)))
    except Conflict:
        return _back(request, endpoint, "error", f"Revoke {endpoint.name} before deleting it.")
    return _back(request, None, "success", f"Deleted {endpoint.name} and its todos.")
