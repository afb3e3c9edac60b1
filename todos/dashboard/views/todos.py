"""The todo list and the drawer: pages, and the fragments htmx and live updates swap in.

One template per piece (``todos/_row.html``, ``todos/_drawer.html``, …) is used by the full page
and by its fragment URL, so a fragment is always what the page would have shown.
"""

from __future__ import annotations

from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET

from todos.core.filters import BadCursor, Cursor, TodoFilter
from todos.core.selectors import claimability, drawer
from todos.core.selectors import saved_views as view_reads
from todos.core.selectors import teams as team_selectors
from todos.core.selectors import todo_counts as tab_counts
from todos.core.selectors import todo_list as todo_pages
from todos.dashboard.views import attempt_timeline
from todos.dashboard.views.common import board_view, is_htmx, not_found, vary_on_htmx
from todos.dashboard.views.present import (
    LEASE_CHOICES,
    Names,
    action_forms,
    actions_for,
    assign_choices,
    lease_default_minutes,
    present_rows,
)
from todos.dashboard.views.todo_filter import list_filter


def _list_context(request, f: TodoFilter) -> dict:
    viewer = request.viewer
    page = todo_pages.list_page(viewer, f)
    paused = todo_pages.paused_queues(viewer)
    queues = sorted({q for e in viewer.endpoints for q in e.scope_queues})
    # a search's first page counted the tabs in its own statement when their windows are one
    counts = page.tab_counts if page.tab_counts is not None else tab_counts.state_counts(viewer, f)
    stuck = claimability.stuck_work(viewer)
    return {
        "filter": f,
        "page": page,
        "newest": page.newest_cursor,
        "rows": present_rows(viewer, page.rows, paused=paused, stuck=stuck),
        # waiting work no agent can claim is counted per queue: beside a filter on the todos' own
        # columns (kind, priority, days, reason) its numbers would not be of the rows shown
        "stuck": claimability.matching(stuck, f)
        if f.state in ("all", "pending", "scheduled", "retry") and not f.row_filtered
        else [],
        "counts": counts,
        "result_count": counts.get(f.state) if f.q else None,
        "errors": page.errors,
        "queues": queues,
        "list_url": reverse("todo_list"),
        "here": request.get_full_path(),
        "can_bulk": viewer.can_act_anywhere,
        "bulk_offers": bulk_offers(f, counts),
        "scan_rows": todo_pages.SEARCH_SCAN_ROWS,
    }


# The tabs a bulk action can change rows of (its store guard, ``human.BULK_GUARDS``, by state).
BULK_TABS = {
    "retry": ("retry", "dead"),
    "cancel": ("pending", "blocked", "scheduled", "claimed", "retry", "dead"),
    "run_now": ("scheduled",),
    "run_anyway": ("blocked",),
}


def bulk_offers(f: TodoFilter, counts: dict) -> dict[str, bool]:
    """Which "… all matching" buttons the list offers: only an action that has rows to change
    under the filter, by the tabs' counts (never "0 todos can be retried")."""
    tabs = tuple(counts) if f.state == "all" else (f.state,)
    return {action: any(counts[tab].value for tab in tabs if tab in states) for action, states in BULK_TABS.items()}


@require_GET
@board_view
def todo_list(request):
    """``/todos/``: the page; with htmx the list region; with ``fragment=rows`` just the rows."""
    f = list_filter(request)
    viewer = request.viewer
    if request.GET.get("fragment") == "rows":
        return vary_on_htmx(_rows_fragment(request, f))
    context = _list_context(request, f)
    if is_htmx(request) and request.htmx.target == "todo-list":
        return vary_on_htmx(render(request, "todos/_list.html", dict(context, oob_counts=True)))
    context["endpoints"] = viewer.endpoints
    context["teams"] = viewer.teams
    context["saved_views"] = view_reads.views_of(viewer)
    context["drawer_html"] = open_drawer(request)
    return vary_on_htmx(render(request, "todos/list.html", context))


def open_drawer(request) -> str:
    """The drawer the URL says is open (``?open=<id>``: board.js puts it there when a row's
    drawer opens, so a reload reopens it and "back" closes it), rendered beside the list; "" for
    none, or for a todo that is not (or no longer) the viewer's."""
    todo_id = request.GET.get("open") or ""
    if not todo_id or len(todo_id) > 64:
        return ""
    context = drawer_context(request, todo_id)
    if context is None:
        return ""
    return render_to_string("todos/_drawer.html", context, request=request)


def _rows_fragment(request, f: TodoFilter):
    viewer = request.viewer
    raw = request.GET.get("newer_than")
    paused = todo_pages.paused_queues(viewer)
    if raw:
        try:
            cursor = Cursor.decode(raw, with_priority=False)
        except BadCursor:
            return render(request, "todos/_error.html", {"message": "newer_than: not a row cursor"}, status=400)
        rows = todo_pages.rows_newer_than(viewer, f, cursor)
        newest = Cursor(rows[0].created_at, rows[0].id) if rows else cursor
        context = {"rows": present_rows(viewer, rows, paused=paused), "newest": newest, "filter": f, "newer": True}
    else:
        page = todo_pages.list_page(viewer, f)
        context = {
            "rows": present_rows(viewer, page.rows, paused=paused),
            "newest": page.newest_cursor,
            "filter": f,
            "page": page,
        }
    context["here"] = (
        request.htmx.current_url_abs_path
        if getattr(request, "htmx", False) and request.htmx.current_url_abs_path
        else reverse("todo_list")
    )
    context["list_url"] = reverse("todo_list")
    return render(request, "todos/_rows.html", context)


@require_GET
@board_view
def todo_counts(request):
    """The state tabs with their counts (a live region)."""
    f = list_filter(request)
    context = {"filter": f, "counts": tab_counts.state_counts(request.viewer, f), "list_url": reverse("todo_list")}
    return render(request, "todos/_counts.html", context)


def row_context(request, todo_id: str, next_url: str | None = None) -> dict | None:
    viewer = request.viewer
    row = todo_pages.get_row(viewer, todo_id)
    if row is None:
        return None
    paused = todo_pages.paused_queues(viewer)
    if next_url is None:
        htmx = getattr(request, "htmx", None)
        next_url = (htmx.current_url_abs_path if htmx else None) or reverse("todo_list")
    return {"item": present_rows(viewer, [row], paused=paused)[0], "here": next_url}


@require_GET
@board_view
def todo_row(request, todo_id: str):
    """One list row: what live updates and row actions swap in."""
    context = row_context(request, todo_id)
    if context is None:
        return not_found()
    return render(request, "todos/_row.html", context)


# A request from a todo's own page (``/todos/<id>/``) for its drawer element: the live refresh
# (the element's hx-get URL) and the drawer's forms (a hidden field) carry it, so what comes back
# is the page's variant (the title the page's h1, ``drawer-page``), not the one beside the list.
FULL_PAGE_PARAM = "as"
FULL_PAGE_VALUE = "page"


def wants_full_page(request) -> bool:
    data = request.POST if request.method == "POST" else request.GET
    return data.get(FULL_PAGE_PARAM) == FULL_PAGE_VALUE


# The drawer draws a todo's parents and children as a small graph while it stays small; beyond
# this many, the lists alone (docs/board.md, "Dependencies").
GRAPH_MAX_RELATIVES = 25


def drawer_context(
    request, todo_id: str, *, errors: dict | None = None, values: dict | None = None, next_url: str | None = None
) -> dict | None:
    viewer = request.viewer
    todo = drawer.get_detail(viewer, todo_id)
    if todo is None:
        return None
    attempt_rows = drawer.attempts(todo)
    audit = drawer.todo_audit(viewer, todo)
    names = Names(viewer, [todo.owner, todo.assignee] + [o for a in attempt_rows for o in (a.owner, a.ended_by)])
    endpoint = viewer.endpoint(todo.endpoint_id)
    team = viewer.team(todo.team_id)
    actions = actions_for(todo, viewer)
    choices = []
    if "assign" in actions:
        choices = assign_choices(todo, team_selectors.members(todo.team_id), team_selectors.endpoints(todo.team_id))
    if next_url is None:
        htmx = getattr(request, "htmx", None)
        next_url = (htmx.current_url_abs_path if htmx else None) or request.get_full_path()
    holder = names.holder(todo.owner) if todo.state == "claimed" else None
    relatives = drawer.relatives(viewer, todo)
    return {
        "todo": todo,
        "state": todo.display_state,
        "holder": holder,
        "mine": todo.owner == viewer.owner,
        "assignee": names.person(todo.assignee),
        "endpoint": endpoint,
        "endpoint_capabilities": endpoint.capabilities if endpoint else None,
        # what the owner's claims lack by default (a worker may still present them itself)
        "missing_capabilities": sorted(set(todo.requires) - set(endpoint.capabilities if endpoint else ())),
        "team": team,
        "actions": actions,
        "action_forms": action_forms(todo, actions, holder=holder, errors=errors or {}),
        "attempts": [(a, names.person(a.owner), names.holder(a.ended_by)) for a in attempt_rows],
        "attempts_more": max(todo.attempts_total - todo.attempts_pruned - len(attempt_rows), 0),
        "timeline": attempt_timeline.timeline(todo.created_at, attempt_rows, attempt_timeline.now_utc()),
        "audit": audit,
        "relatives": relatives,
        # live updates refresh the drawer when one of these changes (static/board/live.js)
        "related_ids": " ".join(r.id for r in relatives["parents"] + relatives["children"]),
        "graph": 0 < len(relatives["parents"]) + len(relatives["children"]) <= GRAPH_MAX_RELATIVES,
        "assign_choices": choices,
        "lease_choices": LEASE_CHOICES,
        "lease_default": lease_default_minutes(),
        "errors": errors or {},
        "values": values or {},
        "here": next_url,
        "read_only": not viewer.can_act_on(todo.endpoint_id),
        "full_page": wants_full_page(request),
        "full_page_param": FULL_PAGE_PARAM,
        "full_page_value": FULL_PAGE_VALUE,
    }


@require_GET
@board_view
def todo_detail(request, todo_id: str):
    """``/todos/<id>/``: a full page for deep links; htmx gets the drawer fragment."""
    context = drawer_context(request, todo_id)
    if context is None:
        return not_found()
    if is_htmx(request):
        return vary_on_htmx(render(request, "todos/_drawer.html", context))
    context["full_page"] = True
    return vary_on_htmx(render(request, "todos/detail.html", context))


@require_GET
@board_view
def todo_drawer(request, todo_id: str):
    """The drawer fragment (opened beside the list, refreshed live; the todo's own page asks for
    its variant with :data:`FULL_PAGE_PARAM`)."""
    context = drawer_context(request, todo_id)
    if context is None:
        return not_found()
    return render(request, "todos/_drawer.html", context)
