"""Saved views: save the todo list's current filter under a name, open, rename and delete them.

A view is opened by following its link (the list at its querystring), so opening one needs no
route of its own. The forms work without JavaScript: success redirects (to the list at the new
view, or back to the views page), a refused name shows the views page again with the message.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponseRedirect, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from todos.core.db import execute
from todos.core.errors import Conflict, Invalid, NotFound
from todos.core.filters import PAGE_PARAMS
from todos.core.selectors import saved_views as view_reads
from todos.core.store import saved_views as view_store
from todos.core.store.scopes import OperatorScope
from todos.dashboard.views.common import board_view, not_found
from todos.dashboard.views.todo_filter import list_filter


def _scope(request) -> OperatorScope:
    return OperatorScope(user_id=request.viewer.user_id, username=request.viewer.username)


def _page(request, *, status: int = 200, error: str = "", values: dict | None = None, editing: int | None = None):
    context = {
        "views": view_reads.views_of(request.viewer),
        "list_url": reverse("todo_list"),
        "max_views": view_store.MAX_VIEWS,
        "name_max": view_store.NAME_MAX_CHARS,
        "error": error,
        "values": values or {},
        "editing": editing,
    }
    return render(request, "todos/saved_views.html", context, status=status)


def normalized_query(request, raw: str) -> tuple[str, tuple[str, ...]]:
    """The list's own querystring for ``raw`` (filters only, in the list's order, no page
    cursor), and the problems the filter has: a view must open exactly what was on screen."""
    data = QueryDict(raw, mutable=True)
    for name in PAGE_PARAMS:
        data.pop(name, None)  # a view opens at its first page
    f = list_filter(request, data)
    return f.query(), f.errors


@require_http_methods(["GET", "POST"])
@board_view
def saved_views(request):
    """``/todos/views/``: the person's views; POST saves the filter in ``query`` as ``name``."""
    if request.method == "GET":
        return _page(request)
    name, raw = request.POST.get("name", ""), request.POST.get("query", "")
    values = {"name": name, "query": raw}
    query, problems = normalized_query(request, raw)
    if problems:
        message = "query: the filter has a bad value, fix it before saving (" + problems[0].split(";")[0] + ")"
        return _page(request, status=400, error=message, values=values)
    try:
        view = execute(view_store.save(_scope(request), name=name, query=query))
    except (Invalid, Conflict) as exc:
        return _page(request, status=400, error=exc.message, values=values)
    messages.success(request, f"Saved the view “{view.name}”.")
    return HttpResponseRedirect(f"{reverse('todo_list')}?{view.query}" if view.query else reverse("todo_list"))


@require_POST
@board_view
def saved_view_rename(request, view_id: int):
    try:
        view = execute(view_store.rename(_scope(request), view_id, name=request.POST.get("name", "")))
    except NotFound:
        return not_found()
    except (Invalid, Conflict) as exc:
        values = {"name": request.POST.get("name", "")}
        return _page(request, status=400, error=exc.message, values=values, editing=view_id)
    messages.success(request, f"Renamed the view to “{view.name}”.")
    return HttpResponseRedirect(reverse("saved_views"))


@require_POST
@board_view
def saved_view_delete(request, view_id: int):
    try:
        execute(view_store.delete(_scope(request), view_id))
    except NotFound:
        return not_found()
    messages.success(request, "Deleted the view.")
    return HttpResponseRedirect(reverse("saved_views"))
