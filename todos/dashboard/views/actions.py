"""Operator actions on single todos, creating a todo by hand, pausing and resuming queues.

Each action of the table (``todos/dashboard/views/action_table.py``) is one store call (the store
writes the audit row) answered with the fragment the form came from, re-read after the change: the
row or the drawer. A lost race (``Conflict``) or bad input (``Invalid``) answers the current state
with a message saying what happened; a todo that is absent or another team's answers the Board's one
404 (``common.store_refusals`` maps the store's errors).
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from todos.core.db import execute
from todos.core.errors import Conflict, Forbidden, Invalid, NotFound
from todos.core.selectors import todo_list
from todos.core.selectors.rows import short_id
from todos.core.store import concurrency, human, inputs, queue_settings, rate_limits
from todos.core.store.scopes import OperatorScope
from todos.dashboard import clock, form_input
from todos.dashboard.templatetags.board import STATE_LABELS, duration_text
from todos.dashboard.views.action_table import TodoAction
from todos.dashboard.views.common import (
    CHANGED_EVENT,
    add_trigger,
    board_view,
    forbidden,
    is_htmx,
    not_found,
    redirect_back,
    store_refusals,
    toast,
)
from todos.dashboard.views.present import Names
from todos.dashboard.views.todos import drawer_context, row_context

READ_ONLY = "Your role on this team is read-only: you can look, not act."
ADMINS_ONLY = "Only a team admin may set or remove rate limits."


def operator_scope(viewer) -> OperatorScope:
    return OperatorScope(user_id=viewer.user_id, username=viewer.username)


def lease_expiry(result) -> str:
    """When the lease a store call left runs out, as a toast says it: "14:05:09 EST (in 1 h)"."""
    todo = getattr(result, "todo", result)
    expires = getattr(todo, "lease_expires_at", None)
    if expires is None:
        return ""
    left = (expires - datetime.now(UTC)).total_seconds()
    return f"{clock.clock_time(expires)} (in {duration_text(round(max(left, 0) / 60) * 60)})"


def conflict_message(request, action: TodoAction, todo_id: str) -> str:
    """Say what happened instead: "Someone else claimed it (Board · bob)", "it is Done now"."""
    row = todo_list.get_row(request.viewer, todo_id)
    if row is None:
        return "It is gone."
    state = row.display_state
    if state == "claimed" and row.owner != request.viewer.owner:
        holder = Names(request.viewer, [row.owner]).holder(row.owner)
        return f"Could not {action.verb_phrase}: someone else claimed it ({holder})."
    if action.holder_only and row.owner != request.viewer.owner:
        return f"Could not {action.verb_phrase}: you no longer hold its lease; it is {STATE_LABELS[state]} now."
    return f"Could not {action.verb_phrase}: it is {STATE_LABELS[state]} now."


def respond(request, todo_id: str, *, status: int, level: str, message: str, errors=None, values=None):
    fragment = request.POST.get("fragment") or "drawer"
    if not is_htmx(request):
        if status == 422 and fragment == "drawer":
            # no JavaScript: show the drawer page again with the field's message and the input kept
            context = drawer_context(request, todo_id, errors=errors, values=values, next_url=request.POST.get("next"))
            if context is not None:
                messages.error(request, message)
                context["full_page"] = True
                return render(request, "todos/detail.html", context, status=422)
        return redirect_back(request, reverse("todo_detail", args=[todo_id]), level, message)
    if fragment == "row":
        context = row_context(request, todo_id)
        template = "todos/_row.html"
    else:
        context = drawer_context(request, todo_id, errors=errors, values=values)
        template = "todos/_drawer.html"
    if context is None:
        return not_found()
    response = render(request, template, context, status=status)
    toast(response, level, message)
    return add_trigger(response, CHANGED_EVENT, {"id": todo_id, "source": fragment})


def todo_action(action: TodoAction):
    """The POST view for one action of the table (``/todos/<id>/<action>/``)."""

    def invalid(request, exc, todo_id: str):
        return respond(
            request,
            todo_id,
            status=422,
            level="error",
            message=exc.message,
            errors={action.name: exc.message},
            values=request.POST,
        )

    def conflict(request, exc, todo_id: str):
        return respond(request, todo_id, status=409, level="error", message=conflict_message(request, action, todo_id))

    @require_POST
    @board_view
    @store_refusals(forbidden_text=READ_ONLY, invalid=invalid, conflict=conflict)
    def view(request, todo_id: str):
        viewer = request.viewer
        if todo_list.get_row(viewer, todo_id) is None:
            return not_found()  # before reading any input: absent and foreign answer alike
        result = execute(action.call(operator_scope(viewer), todo_id, **action.parse(request.POST)))
        message = action.success.format(id=short_id(todo_id), expires=lease_expiry(result))
        return respond(request, todo_id, status=200, level="success", message=message)

    view.__name__ = action.url_name
    view.__doc__ = f"{action.label}: one store call, answered with the updated fragment."
    return view


# --- creating a todo by hand --------------------------------------------------------------------


def _targets(viewer) -> dict[str, tuple]:
    """The (endpoint, queue) pairs the viewer may create on: active endpoints of teams where
    they act, one of each endpoint's scoped queues."""
    targets = {}
    for endpoint in viewer.acting_endpoints():
        if endpoint.state != "active":
            continue
        for queue in endpoint.scope_queues:
            targets[f"{endpoint.id}|{queue}"] = (endpoint.id, queue)
    return targets


@require_http_methods(["GET", "POST"])
@board_view
def todo_new(request):
    """``/todos/new/``: a form, and its POST (``human.create``)."""
    viewer = request.viewer
    targets = _targets(viewer)
    groups = []
    for endpoint in viewer.acting_endpoints():
        options = [(key, f"{endpoint.name} · {q}") for key, (eid, q) in targets.items() if eid == endpoint.id]
        if options:
            team = viewer.team(endpoint.team_id)
            groups.append((f"{team.name} · {endpoint.name}", options))
    context = {"groups": groups, "values": request.POST if request.method == "POST" else {}, "errors": {}}
    status = 200
    if request.method == "POST":
        if not viewer.can_act_anywhere:
            return forbidden(request, READ_ONLY)
        try:
            kwargs = form_input.create_kwargs(request.POST, targets)
            endpoint = viewer.endpoint(kwargs["endpoint_id"])
            kwargs["team_id"] = endpoint.team_id if endpoint else None
            created = execute(human.create(operator_scope(viewer), **kwargs))
        except (NotFound, Forbidden):
            return forbidden(request, "You cannot create todos on that endpoint and queue.")
        except Invalid as exc:
            # shown beside its field: ``after[1]`` is the after field's, named as the API names it
            context["errors"] = {exc.field.split("[")[0]: exc.problem, "field": exc.field}
            messages.error(request, f"{exc.field}: {exc.problem}")
            status = 422
        except Conflict as exc:
            messages.error(request, exc.message)
            status = 409
        else:
            todo = created.todo
            if created.created:
                messages.success(request, f"Created {todo.id}.")
            else:
                messages.info(request, f"A live todo already has that idempotency key: {todo.id}.")
            return HttpResponseRedirect(reverse("todo_detail", args=[todo.id]))
    return render(request, "todos/new.html", context, status=status)


# --- pausing queues -----------------------------------------------------------------------------


def _queue_action(pause: bool):
    @require_POST
    @board_view
    @store_refusals(
        forbidden_text=READ_ONLY, invalid=lambda request, exc: _queue_reply(request, 422, "error", exc.message)
    )
    def view(request):
        viewer = request.viewer
        team = viewer.team_by_slug(request.POST.get("team") or "")
        if team is None:
            return not_found()
        queue = request.POST.get("queue") or ""
        op = operator_scope(viewer)
        if pause:
            changed = execute(human.pause_queue(op, team.id, queue, note=form_input.note(request.POST)))
            message = (
                f"Paused {queue} for {team.name}: agents' claims skip it."
                if changed
                else f"{queue} was already paused."
            )
        else:
            changed = execute(human.resume_queue(op, team.id, queue))
            message = f"Resumed {queue} for {team.name}." if changed else f"{queue} was not paused."
        return _queue_reply(request, 200, "success", message)

    view.__name__ = "queue_pause" if pause else "queue_resume"
    view.__doc__ = "Pause a team's queue (agents' claims skip it)." if pause else "Resume a paused queue."
    return view


def _queue_reply(request, status: int, level: str, message: str):
    if not is_htmx(request):
        return redirect_back(request, reverse("overview"), level, message)
    from todos.dashboard.views.overview import overview_table_context

    response = render(request, "overview/_table.html", overview_table_context(request), status=status)
    return toast(response, level, message)


queue_pause = _queue_action(pause=True)
queue_resume = _queue_action(pause=False)


# --- concurrency-key limits ---------------------------------------------------------------------


@require_POST
@board_view
@store_refusals(forbidden_text=READ_ONLY, invalid=lambda request, exc: _queue_reply(request, 422, "error", exc.message))
def concurrency_limit(request):
    """Set a team's limit for one concurrency key (``concurrency.set_limit``); answers the overview."""
    viewer = request.viewer
    team = viewer.team_by_slug(request.POST.get("team") or "")
    if team is None:
        return not_found()
    key = request.POST.get("key") or ""
    limit = form_input.integer(request.POST, "limit", *inputs.CONCURRENCY_LIMIT_RANGE)
    changed = execute(concurrency.set_limit(operator_scope(viewer), team.id, key, limit))
    return _queue_reply(
        request, 200, "success", f"{changed.key} may now have {changed.max_claimed} claimed at once in {team.name}."
    )


# --- queues' default run-time limits ------------------------------------------------------------


@require_POST
@board_view
@store_refusals(
    forbidden_text="Only an admin of the team may set a queue's run-time limit.",
    invalid=lambda request, exc: _queue_reply(request, 422, "error", exc.message),
)
def queue_timeout(request):
    """Set or clear a team's default run-time limit for a queue (``queue_settings.set_timeout``;
    an empty field clears it); answers the overview."""
    viewer = request.viewer
    team = viewer.team_by_slug(request.POST.get("team") or "")
    if team is None:
        return not_found()
    queue = request.POST.get("queue") or ""
    seconds = form_input.integer(request.POST, "timeout_seconds", *inputs.RUN_TIME_LIMIT_RANGE, required=False)
    changed = execute(queue_settings.set_timeout(operator_scope(viewer), team.id, queue, seconds))
    message = (
        f"{changed.queue} in {team.name} has no default run-time limit now."
        if changed.timeout_seconds is None
        else f"An attempt on {changed.queue} in {team.name} may now run {changed.timeout_seconds} s "
        "unless its todo sets its own limit."
    )
    return _queue_reply(request, 200, "success", message)


# --- rate limits ---------------------------------------------------------------------------------


@require_POST
@board_view
@store_refusals(
    forbidden_text=ADMINS_ONLY, invalid=lambda request, exc: _queue_reply(request, 422, "error", exc.message)
)
def rate_limit(request):
    """Set or remove (``remove`` given) a team's rate limit of one key (``rate_limits``, a team
    admin's); answers the overview."""
    viewer = request.viewer
    team = viewer.team_by_slug(request.POST.get("team") or "")
    if team is None:
        return not_found()
    key = request.POST.get("key") or ""
    scope = operator_scope(viewer)
    if request.POST.get("remove"):
        removed = execute(rate_limits.remove_limit(scope, team.id, key))
        return _queue_reply(request, 200, "success", f"{removed.key} has no rate limit now in {team.name}.")
    limit = form_input.integer(request.POST, "limit", *inputs.RATE_ALLOWANCE_RANGE)
    changed = execute(rate_limits.set_limit(scope, team.id, key, limit, request.POST.get("interval") or ""))
    return _queue_reply(
        request,
        200,
        "success",
        f"{changed.key} may now be claimed {changed.allowance:,} times per {changed.per} in {team.name}.",
    )
