"""Bulk retry, cancel, run now and run anyway: preview (how many, on what), start (a background job), progress, report.

The preview is a POST that changes nothing and answers a confirmation form with the count; the
confirmation writes the job's row (``todos.core.store.bulk_jobs``), which the background loops of any
Board process then work (``todos.ops.bulk``); the job's fragment polls itself every second until it
has a report, through whichever process the balancer picks. Without JavaScript the same forms
post as pages and the job page refreshes with ``<meta http-equiv="refresh">``.
"""

from __future__ import annotations

from urllib.parse import quote

from django.http import HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from todos.core.db import execute
from todos.core.filters import BOARD_STATES, BadCursor, Cursor, TodoFilter
from todos.core.selectors import bulk_jobs, bulk_targets, dead_letters
from todos.core.store import bulk_jobs as job_store
from todos.core.store.scopes import OperatorScope
from todos.dashboard.views.actions import READ_ONLY
from todos.dashboard.views.common import (
    add_trigger,
    board_view,
    forbidden,
    is_htmx,
    not_found,
    store_refusals,
    toast,
    vary_on_htmx,
)
from todos.dashboard.views.todo_filter import list_filter
from todos.ops import bulk

ACTIONS = {"retry": "Retry", "cancel": "Cancel", "run_now": "Run now", "run_anyway": "Run anyway"}
DONE = {"retry": "retried", "cancel": "canceled", "run_now": "run now", "run_anyway": "run without their parents"}
SCOPES = ("selected", "matching", "group")
MAX_SELECTED = 1000


class BadRequest(Exception):
    pass


class NothingSelected(BadRequest):
    """ "… selected" with no box ticked: a preview answers a hint, not an error."""


NOTHING_SELECTED = "Select the todos first: tick their boxes, then choose “Retry selected” or “Cancel selected”."


def _days_zone(f: TodoFilter) -> dict[str, str]:
    """The zone a job's day ranges are days of, kept with its filter: the loop that works the job
    reads them as the person's page did."""
    has_days = f.created_from or f.created_to or f.finished_from or f.finished_to
    return {"zone": f.zone.key} if has_days else {}


def _describe(f: TodoFilter) -> str:
    parts = [f"state {BOARD_STATES[f.state]}"]
    for label, value in (("queue", f.queue), ("endpoint", f.endpoint), ("team", f.team), ("search", f.q)):
        if value:
            parts.append(f"{label} “{value}”")
    if f.mine:
        parts.append("assigned to me")
    for label, name in (
        ("kind", "kind"),
        ("priority", "priority"),
        ("created from", "created_from"),
        ("created to", "created_to"),
        ("finished from", "finished_from"),
        ("finished to", "finished_to"),
        ("failing with", "failed_with"),
    ):
        value = f.params().get(name)
        if value:
            parts.append(f"{label} “{value}”")
    return ", ".join(parts)


def _plan(request):
    """Read and check a bulk form: (action, scope, filter, ids, group, count, total, description).

    Raises BadRequest with a message naming the field, or returns None for "nothing of yours"
    (the caller answers 404).
    """
    viewer = request.viewer
    data = request.POST
    action, scope = data.get("action"), data.get("scope")
    if data.get("plan"):  # the list's buttons say both at once: "retry:selected"
        action, _, scope = data["plan"].partition(":")
    if action not in ACTIONS:
        raise BadRequest("action: must be retry, cancel, run_now or run_anyway")
    if scope not in SCOPES:
        raise BadRequest("scope: must be selected, matching or group")
    if scope == "group" and action not in job_store.GROUP_ACTIONS:
        raise BadRequest(f"action: {job_store.NO_GROUP_RUN_NOW}")
    f = list_filter(request, data).first_page()
    if f.errors:  # a list page falls back to "all"; a bulk action on a misread filter must not
        raise BadRequest(f.errors[0].split(";")[0])
    ids: list[str] = []
    group = ""
    done = DONE[action]
    if scope == "selected":
        raw = data.getlist("ids")
        if not raw:
            raise NothingSelected("ids: select at least one todo first")
        if len(raw) > MAX_SELECTED:
            raise BadRequest(f"ids: at most {MAX_SELECTED} selected todos; use “all matching” for more")
        ids = bulk_targets.visible_ids(viewer, raw)
        if not ids:
            return None
        count = bulk_targets.count_eligible(viewer, ids, action)
        description = f"{len(ids):,} selected todo{'s' if len(ids) != 1 else ''}"
        when = "" if done.endswith(" now") else " now"  # "can be run now", not "run now now"
        summary = f"{count:,} of them can be {done}{when}" + (
            "; the rest will be skipped." if count < len(ids) else "."
        )
    elif scope == "matching":
        counted = bulk_targets.count_matching(viewer, f, action, cap=bulk.MAX_IDS)
        count = counted.value
        description = f"all todos matching {_describe(f)}"
        summary = f"{counted} todo{'s' if count != 1 else ''} can be {done}" + (
            f" (a job covers at most {bulk.MAX_IDS:,}; run it again for the rest)." if counted.capped else "."
        )
    else:
        group = data.get("group") or ""
        if not group:
            raise BadRequest("group: choose a failure-reason group")
        count = dead_letters.group_count(viewer, f, group)
        description = f"dead letters failing with “{group}”"
        summary = f"{count:,} dead letter{'s' if count != 1 else ''} in this group can be {done}."
    return {
        "action": action,
        "action_label": ACTIONS[action],
        "scope": scope,
        "filter": f,
        "ids": ids,
        "group": group,
        "count": count,
        "description": description,
        "summary": summary,
    }


def _bad_request(request, message: str):
    if is_htmx(request):
        response = render(request, "bulk/_message.html", {"message": message, "level": "error"}, status=400)
        return toast(response, "error", message)
    return render(request, "bulk/preview.html", {"error": message}, status=400)


@require_POST
@board_view
def bulk_preview(request):
    """Say what a bulk action would touch, with a confirmation form. Changes nothing."""
    if not request.viewer.can_act_anywhere:
        return forbidden(request, READ_ONLY)
    try:
        plan = _plan(request)
    except NothingSelected:
        if is_htmx(request):
            return render(request, "bulk/_message.html", {"message": NOTHING_SELECTED, "level": "info"})
        return render(request, "bulk/preview.html", {"hint": NOTHING_SELECTED, "next": request.POST.get("next", "")})
    except BadRequest as exc:
        return _bad_request(request, str(exc))
    if plan is None:
        return not_found()
    template = "bulk/_preview.html" if is_htmx(request) else "bulk/preview.html"
    return render(request, template, {"plan": plan, "next": request.POST.get("next", "")})


@require_POST
@board_view
@store_refusals(invalid=lambda request, exc: _bad_request(request, exc.message))
def bulk_start(request):
    """Start the confirmed job in the background and answer its progress."""
    viewer = request.viewer
    if not viewer.can_act_anywhere:
        return forbidden(request, READ_ONLY)
    try:
        plan = _plan(request)
    except BadRequest as exc:
        return _bad_request(request, str(exc))
    if plan is None:
        return not_found()
    note = (request.POST.get("note") or "").strip()[:2000] or None
    job_id = execute(
        job_store.create(
            OperatorScope(user_id=viewer.user_id, username=viewer.username),
            action=plan["action"],
            scope=plan["scope"],
            description=plan["description"],
            filter_params=plan["filter"].params(**_days_zone(plan["filter"])),
            group_reason=plan["group"] or None,
            selected_ids=plan["ids"] if plan["scope"] == "selected" else None,
            note=note,
        )
    )
    if not is_htmx(request):
        return HttpResponseRedirect(reverse("bulk_job", args=[job_id]))
    job = bulk_jobs.get(viewer, job_id)
    if job is None:  # created just above; gone only if something deleted it meanwhile
        return not_found()
    return render(request, "bulk/_job.html", {"job": job, "action_label": ACTIONS[job.action]})


@require_GET
@board_view
def bulk_job(request, job_id: str):
    """A job's progress while it runs, its report when it is done (only for who started it,
    from any Board process: the job is a row)."""
    job = bulk_jobs.get(request.viewer, job_id)
    if job is None:
        return not_found()
    return _job_response(request, job)


def _job_response(request, job):
    context = {"job": job, "action_label": ACTIONS[job.action]}
    if is_htmx(request):
        response = render(request, "bulk/_job.html", context)
        if job.finished:
            if job.state == "done":
                toast(response, "success", f"{ACTIONS[job.action]}: {job.changed:,} changed, {job.skipped:,} skipped.")
            elif job.state == "canceled":
                toast(response, "info", f"{ACTIONS[job.action]} stopped: {job.changed:,} changed before it stopped.")
            else:
                toast(response, "error", job.error or "The job failed.")
            add_trigger(response, "board:bulk-finished", {"job": str(job.id)})
        return vary_on_htmx(response)
    return vary_on_htmx(render(request, "bulk/job.html", context))


@require_POST
@board_view
def bulk_stop(request, job_id: str):
    """Stop a queued or running job (only who started it): no further chunk starts; the chunk
    being worked, if any, finishes. Answers the job's fragment (or page)."""
    viewer = request.viewer
    job = bulk_jobs.get(viewer, job_id)
    if job is None:
        return not_found()
    execute(job_store.stop(OperatorScope(user_id=viewer.user_id, username=viewer.username), job.id))
    if not is_htmx(request):
        return HttpResponseRedirect(reverse("bulk_job", args=[job.id]))
    return _job_response(request, bulk_jobs.get(viewer, job.id))


@require_GET
@board_view
def dead_letter_groups(request):
    """``/todos/dead-letters/``: dead letters by normalised failure reason, with group actions."""
    f = list_filter(request)
    viewer = request.viewer
    found, capped = dead_letters.groups(viewer, f)
    opened = _opened_group(request, f, found)
    context = {
        "opened": opened,
        "filter": f,
        "groups": found,
        "capped": capped,
        "scan_rows": dead_letters.GROUP_SCAN_ROWS,
        "can_act": viewer.can_act_anywhere,
        "errors": f.errors,
        "endpoints": viewer.endpoints,
        "teams": viewer.teams,
        "queues": sorted({q for e in viewer.endpoints for q in e.scope_queues}),
    }
    return render(request, "todos/dead_letters.html", context)


def _opened_group(request, f: TodoFilter, found) -> dict | None:
    """``?group=<reason>``: that group opened to its members, a keyset page at a time
    (``?group=…&after=<cursor>``); an unknown group opens empty, a bad cursor says so."""
    fingerprint = request.GET.get("group")
    if not fingerprint:
        return None
    group = next((g for g in found if g.fingerprint == fingerprint), None)
    raw = request.GET.get("after") or ""
    after, error = None, ""
    if raw:
        try:
            after = Cursor.decode(raw, with_priority=False)
        except BadCursor:
            error = "after: not a page of this group; showing its first page"
    members, next_cursor = dead_letters.group_members(request.viewer, f, fingerprint, after=after)
    base = f.query()
    link = f"{base}&group={quote(fingerprint)}" if base else f"group={quote(fingerprint)}"
    return {
        "fingerprint": fingerprint,
        "group": group,
        "members": members,
        "error": error,
        "paged": after is not None,
        "first_url": f"?{link}",
        "next_url": f"?{link}&after={quote(next_cursor.encode())}" if next_cursor else "",
    }
