"""Cancel with everything downstream: the preview of what it cancels, then the one store call
(docs/board.md, "Dependencies").

The preview is a GET that changes nothing (a fragment under the drawer's dependencies, or a page
without JavaScript); the POST is answered as the drawer's actions are, with the drawer re-read.
"""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from todos.core.db import execute
from todos.core.selectors import downstream, todo_list
from todos.core.selectors.rows import short_id
from todos.core.store import human
from todos.dashboard import form_input
from todos.dashboard.templatetags.board import STATE_LABELS
from todos.dashboard.views.actions import READ_ONLY, operator_scope, respond
from todos.dashboard.views.common import board_view, forbidden, is_htmx, not_found, store_refusals, vary_on_htmx


def _refused(request, exc, todo_id: str):
    row = todo_list.get_row(request.viewer, todo_id)
    now = STATE_LABELS[row.display_state] if row else "gone"
    message = f"Could not cancel it and what is downstream: it is {now} now."
    return respond(request, todo_id, status=409, level="error", message=message)


def _invalid(request, exc, todo_id: str):
    return respond(request, todo_id, status=422, level="error", message=exc.message)


@require_http_methods(["GET", "POST"])
@board_view
@store_refusals(forbidden_text=READ_ONLY, invalid=_invalid, conflict=_refused)
def todo_cancel_downstream(request, todo_id: str):
    """GET: what would be canceled (the count, each todo and its state). POST: cancel them."""
    viewer = request.viewer
    row = todo_list.get_row(viewer, todo_id)
    if row is None:
        return not_found()  # absent and foreign answer alike, before reading any input
    if not viewer.can_act_on(row.endpoint_id):
        return forbidden(request, READ_ONLY)
    if request.method == "POST":
        done = execute(human.cancel_downstream(operator_scope(viewer), todo_id, note=form_input.note(request.POST)))
        n = len(done.downstream)
        message = f"Canceled {short_id(todo_id)} and {n} todo{'s' if n != 1 else ''} downstream of it."
        return respond(request, todo_id, status=200, level="success", message=message)
    context = {
        "todo": row,
        "state": row.display_state,
        "preview": downstream.preview(viewer, todo_id),
        "here": request.GET.get("next") or request.get_full_path(),
    }
    template = "todos/_downstream.html" if is_htmx(request) else "todos/cancel_downstream.html"
    return vary_on_htmx(render(request, template, context))
