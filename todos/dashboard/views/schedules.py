"""``/schedules/``: a team's periodic schedules — list with next fire times, create, edit with the
next five fire times previewed as you type (htmx asks :func:`schedule_preview`, which the server
computes with cronsim), pause/resume, fire now, delete, and each schedule's last fires.

Views stay thin: every write is one store statement (``todos/core/store/schedules.py``) that checks
the team role and the owner endpoint itself; a schedule of a team the viewer is not in is the
Board's one 404. A bad field re-renders the form with the store's message beside it (422).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from todos.core import schedule_times
from todos.core.db import execute
from todos.core.errors import Invalid
from todos.core.selectors.schedules import schedule_of, schedules_of
from todos.core.store import inputs
from todos.core.store import schedules as store
from todos.dashboard import clock, form_input
from todos.dashboard.views.common import board_view, not_found, store_refusals
from todos.dashboard.views.teams import _scope

READ_ONLY = "Your role on this team is read-only: viewers see schedules but do not change them."
FIELDS = (
    "name",
    "cron",
    "timezone",
    "endpoint",
    "queue",
    "title",
    "kind",
    "payload",
    "priority",
    "max_attempts",
    "requires",
)
DEFAULTS = {"cron": "0 * * * *", "missed": "skip", "max_attempts": "5", "priority": "0"}


def _defaults() -> dict:
    """A new schedule's fields: it fires in the viewer's zone (the header's clock) unless changed."""
    return {**DEFAULTS, "timezone": clock.current().key}


def _now() -> datetime:
    return datetime.now(UTC)


def _fields(post) -> dict:
    """The form's fields as the store takes them (text; the store checks and converts each)."""
    payload_text = (post.get("payload") or "").strip()
    try:
        payload = json.loads(payload_text) if payload_text else None
    except ValueError as exc:
        raise Invalid("payload", f"not JSON ({exc})") from None
    except RecursionError:
        raise Invalid("payload", "nested too deeply") from None
    return {
        "name": post.get("name", ""),
        "cron": post.get("cron", ""),
        "timezone": post.get("timezone", ""),
        "endpoint_id": post.get("endpoint", ""),
        "queue": (post.get("queue") or "").strip(),
        "title": post.get("title", ""),
        "kind": post.get("kind") or None,
        "payload": payload,
        "priority": form_input.integer(post, "priority", *inputs.PRIORITY_RANGE, required=False),
        "max_attempts": form_input.integer(post, "max_attempts", *inputs.MAX_ATTEMPTS_RANGE, required=False),
        "requires": inputs.capability_text("requires", post.get("requires", "")),
        "missed": post.get("missed") or None,
    }


def _preview(cron: str, timezone: str) -> dict:
    """The next five fire times, or the error naming the field that stops them."""
    try:
        expr = schedule_times.cron(cron)
        tz = schedule_times.zone(timezone)
    except Invalid as exc:
        return {"preview_error": exc.message}
    ticks = schedule_times.next_ticks(expr, tz, _now(), store.PREVIEW_COUNT)
    # Shown in the viewer's zone, with the schedule's own beside it where it differs (fire_time).
    return {"preview": ticks, "preview_zone": tz.key}


def _form_context(viewer, values: dict, error: Invalid | None = None) -> dict:
    teams = [t for t in viewer.teams if t.can_act]
    return {
        "teams": teams,
        "endpoints": [e for e in viewer.endpoints if e.state == "active" and viewer.team(e.team_id).can_act],
        "values": values,
        "error": error.message if error else None,
        "error_field": error.field if error else None,
        "policies": schedule_times.POLICIES,
        **_preview(values.get("cron", ""), values.get("timezone", "")),
    }


def _list_context(viewer, values=None, error=None) -> dict:
    return {
        "schedules": schedules_of(viewer.team_ids),
        "can_create": viewer.can_act_anywhere,
        **_form_context(viewer, values or _defaults(), error),
    }


@require_GET
@board_view
def schedule_list(request):
    return render(request, "schedules/index.html", _list_context(request.viewer))


@require_GET
@board_view
def schedule_panel(request):
    """The list alone (a live region): refreshed when a schedule changes, fires, or a fired todo
    moves on."""
    return render(request, "schedules/_panel.html", {"schedules": schedules_of(request.viewer.team_ids)})


@require_GET
@board_view
def schedule_preview(request):
    """The htmx fragment under the cron field: the next five ticks, computed here by cronsim."""
    context = _preview(request.GET.get("cron", ""), request.GET.get("timezone", ""))
    return render(request, "schedules/_preview.html", context)


@require_POST
@board_view
@store_refusals(forbidden_text=READ_ONLY)
def schedule_create(request):
    viewer = request.viewer
    team = viewer.team_by_slug(request.POST.get("team") or "")
    if team is None:
        return not_found()
    try:
        made = execute(store.create(_scope(viewer), team.id, now=_now(), **_fields(request.POST)))
    except Invalid as exc:
        return render(request, "schedules/index.html", _list_context(viewer, request.POST, exc), status=422)
    messages.success(request, f"Created schedule {made.name}.")
    return HttpResponseRedirect(reverse("schedule_detail", args=[made.id]))


def _schedule_or_404(request, schedule_id):
    return schedule_of(request.viewer.team_ids, schedule_id)


def _detail_values(schedule) -> dict:
    return {
        "name": schedule.name,
        "cron": schedule.cron,
        "timezone": schedule.timezone,
        "endpoint": str(schedule.endpoint_id),
        "queue": schedule.queue,
        "title": schedule.title,
        "kind": schedule.kind or "",
        "payload": "" if schedule.payload is None else json.dumps(schedule.payload, indent=2),
        "priority": schedule.priority,
        "max_attempts": schedule.max_attempts,
        "requires": " ".join(schedule.requires),
        "missed": schedule.missed,
    }


def _detail(request, schedule, values=None, error=None, status=200):
    team = request.viewer.team(schedule.team_id)
    context = {
        "schedule": schedule,
        "can_act": team is not None and team.can_act,
        **_form_context(request.viewer, values or _detail_values(schedule), error),
    }
    return render(request, "schedules/detail.html", context, status=status)


@require_http_methods(["GET", "POST"])
@board_view
@store_refusals(forbidden_text=READ_ONLY)
def schedule_detail(request, schedule_id: str):
    """The schedule, its last fires and its edit form (GET); the edit itself (POST)."""
    schedule = _schedule_or_404(request, schedule_id)
    if schedule is None:
        return not_found()
    if request.method == "GET":
        return _detail(request, schedule)
    try:
        execute(store.update(_scope(request.viewer), schedule.id, now=_now(), **_fields(request.POST)))
    except Invalid as exc:
        return _detail(request, schedule, request.POST, exc, status=422)
    messages.success(request, f"Saved schedule {request.POST.get('name', '').strip()}.")
    return HttpResponseRedirect(reverse("schedule_detail", args=[schedule.id]))


def _action(name: str):
    @require_POST
    @board_view
    @store_refusals(forbidden_text=READ_ONLY)
    def view(request, schedule_id: str):
        schedule = _schedule_or_404(request, schedule_id)
        if schedule is None:
            return not_found()
        op = _scope(request.viewer)
        if name == "pause":
            execute(store.set_paused(op, schedule.id, True, now=_now()))
            messages.success(request, f"Paused {schedule.name}: it fires nothing until resumed.")
        elif name == "resume":
            execute(store.set_paused(op, schedule.id, False, now=_now()))
            messages.success(request, f"Resumed {schedule.name}: it fires from its next tick on.")
        elif name == "fire":
            try:
                fired = execute(store.fire_now(op, schedule.id))
            except Invalid as exc:
                messages.error(request, exc.message)
                return HttpResponseRedirect(reverse("schedule_detail", args=[schedule.id]))
            messages.success(request, f"Fired {schedule.name} now: todo {fired.todo_id}.")
        else:
            execute(store.delete(op, schedule.id))
            messages.success(request, f"Deleted schedule {schedule.name} (its todos stay).")
            return HttpResponseRedirect(reverse("schedules"))
        return HttpResponseRedirect(reverse("schedule_detail", args=[schedule.id]))

    view.__name__ = f"schedule_{name}"
    view.__doc__ = f"{name.capitalize()} one schedule (``store.schedules``), then back to its page."
    return view


schedule_pause = _action("pause")
schedule_resume = _action("resume")
schedule_fire = _action("fire")
schedule_delete = _action("delete")
