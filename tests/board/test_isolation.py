"""Isolation: a human of another team learns nothing about, and changes nothing of, a team's
todos, teams, queues and jobs. Every Board route is in ROUTES; a route added without a row here
fails ``test_every_route_is_covered``.

For a route that names an object, the foreign object and an unknown one answer the same 404,
byte for byte. Routes that list things show nothing of the other team.
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from django.urls import URLPattern, get_resolver, reverse

from tests.support.board import htmx, login, make
from todos.core.db import connect, execute
from todos.core.selectors import bulk_jobs as bulk_job_selectors
from todos.core.selectors.access import viewer_for
from todos.core.store import bulk_jobs, schedules
from todos.core.store import human as human_store
from todos.ops import bulk

pytestmark = pytest.mark.usefixtures("store_db")

UNKNOWN_TODO = "td_" + "0" * 32
UNKNOWN_JOB = "f" * 32

ACTION_DATA = {"note": "x", "result": "{}", "priority": "1", "assignee": "", "fragment": "drawer"}

# name → (method, how to build the foreign and the unknown request, kind)
# kind "object": foreign and unknown must give the same 404 bytes.
# kind "listing": the response must not mention the other team's todos or names.
# kind "public"/"own": not about another team's objects (reason in the comment).
ROUTES = {
    "healthz": ("GET", None, "public"),  # liveness, no data
    "metrics": ("GET", None, "public"),  # installation-wide, behind its own token (test_metrics.py)
    "login": ("GET", None, "public"),
    "logout": ("POST", None, "own"),  # ends the caller's own session
    "password_change": ("GET", None, "own"),
    "password_change_done": ("GET", None, "own"),
    "overview": ("GET", {}, "listing"),
    "overview_table": ("GET", {}, "listing"),
    "agents": ("GET", {}, "listing"),
    # a foreign or unknown ?team= is the same 404 (test_charts.py)
    "charts": ("GET", {"range": "24h", "queue": "default"}, "listing"),
    "charts_panel": ("GET", {"range": "7d"}, "listing"),
    "overview_chart": ("GET", {}, "listing"),
    "agents_panel": ("GET", {}, "listing"),
    "activity": ("GET", {"person": "alice"}, "listing"),
    "todo_list": ("GET", {"team": "acme", "endpoint": "acme-worker", "q": "secret"}, "listing"),
    "todo_counts": ("GET", {"team": "acme"}, "listing"),
    "dead_letter_groups": ("GET", {"team": "acme"}, "listing"),
    # a stream, not a page: another team's todos are never exported (tests/board/test_csv_export.py)
    "todo_export": ("GET", None, "own"),
    # a person's own views: another person's view answers 404 (tests/board/test_saved_views.py)
    "saved_views": ("GET", None, "own"),
    "saved_view_rename": ("POST", None, "own"),
    "saved_view_delete": ("POST", None, "own"),
    "todo_new": ("GET", {}, "listing"),
    "teams": ("GET", {}, "listing"),
    "team_create": ("POST", None, "own"),  # site admins only: 403 for everyone else (test_teams.py)
    "todo_detail": ("GET", "todo", "object"),
    "todo_drawer": ("GET", "todo", "object"),
    "todo_row": ("GET", "todo", "object"),
    "todo_claim": ("POST", "todo", "object"),
    "todo_complete": ("POST", "todo", "object"),
    "todo_fail": ("POST", "todo", "object"),
    "todo_release": ("POST", "todo", "object"),
    "todo_extend": ("POST", "todo", "object"),
    "todo_force_release": ("POST", "todo", "object"),
    "todo_retry": ("POST", "todo", "object"),
    "todo_cancel": ("POST", "todo", "object"),
    "todo_assign": ("POST", "todo", "object"),
    "todo_priority": ("POST", "todo", "object"),
    "todo_run_now": ("POST", "todo", "object"),
    "todo_run_anyway": ("POST", "todo", "object"),
    "todo_cancel_downstream": ("POST", "todo", "object"),
    "todo_reschedule": ("POST", "todo", "object"),
    "todo_edit": ("POST", "todo", "object"),
    "bulk_preview": ("POST", "ids", "object"),
    "bulk_start": ("POST", "ids", "object"),
    "bulk_job": ("GET", "job", "object"),
    "bulk_stop": ("POST", "job", "object"),
    "queue_pause": ("POST", "team_form", "object"),
    "queue_resume": ("POST", "team_form", "object"),
    "concurrency_limit": ("POST", "team_form", "object"),
    "queue_timeout": ("POST", "team_form", "object"),
    "rate_limit": ("POST", "team_form", "object"),
    "team_detail": ("GET", "team", "object"),
    "team_member_set": ("POST", "team", "object"),
    "team_member_remove": ("POST", "team_member", "object"),
    "endpoints": ("GET", {}, "listing"),
    "endpoints_panel": ("GET", {}, "listing"),
    "endpoint_vend": ("POST", "team_form", "object"),
    "endpoint_edit": ("POST", "endpoint", "object"),
    "endpoint_rotate": ("POST", "endpoint", "object"),
    "endpoint_revoke": ("POST", "endpoint", "object"),
    "endpoint_delete": ("POST", "endpoint", "object"),
    "agent_pause": ("POST", "endpoint", "object"),
    "agent_resume": ("POST", "endpoint", "object"),
    "agent_revoke": ("POST", "endpoint", "object"),
    # people are installation-wide: site admins only, 403 for everyone else (tests/board/test_people.py)
    "people": ("GET", None, "own"),
    "person_create": ("POST", None, "own"),
    "person_deactivate": ("POST", None, "own"),
    "person_reactivate": ("POST", None, "own"),
    "person_password_reset": ("POST", None, "own"),
    # the group → team role mappings are installation-wide too (tests/sign_in/test_sign_in_roles_page.py)
    "sign_in_roles": ("GET", None, "own"),
    "sign_in_role_add": ("POST", None, "own"),
    "sign_in_role_remove": ("POST", None, "own"),
    "time_zone": ("POST", None, "own"),  # the person's own zone: their row only (tests/board/test_clock.py)
    "schedules": ("GET", {}, "listing"),
    "schedules_panel": ("GET", {}, "listing"),
    "schedule_create": ("POST", "team_form", "object"),
    "schedule_preview": ("GET", None, "public"),  # cron arithmetic on what the caller typed, no data
    "schedule_detail": ("GET", "schedule", "object"),
    "schedule_pause": ("POST", "schedule", "object"),
    "schedule_resume": ("POST", "schedule", "object"),
    "schedule_fire": ("POST", "schedule", "object"),
    "schedule_delete": ("POST", "schedule", "object"),
}


def board_route_names() -> set[str]:
    return {p.name for p in get_resolver("todos.urls").url_patterns if isinstance(p, URLPattern) and p.name}


def test_every_route_is_covered():
    names = board_route_names()
    assert names - set(ROUTES) == set(), "routes without an isolation row: add them to ROUTES"
    assert set(ROUTES) - names == set(), "rows for routes that no longer exist"


def snapshot() -> dict:
    with connect() as conn:
        return {
            "todos": conn.execute(
                "SELECT id, state, owner, assignee, priority, attempt, result, updated_at FROM todos ORDER BY id"
            ).fetchall(),
            "attempts": conn.execute(
                "SELECT todo_id, seq, ended_at, outcome FROM todo_attempts ORDER BY 1, 2"
            ).fetchall(),
            "audit": conn.execute("SELECT count(*) AS n FROM audit_log").fetchone()["n"],
            "members": conn.execute("SELECT team_id, user_id, role FROM team_members ORDER BY 1, 2").fetchall(),
            "pauses": conn.execute("SELECT team_id, queue FROM queue_pauses ORDER BY 1, 2").fetchall(),
            "jobs": conn.execute("SELECT id, state, processed FROM bulk_jobs ORDER BY id").fetchall(),
            "schedules": conn.execute("SELECT id, name, paused, next_fire_at FROM schedules ORDER BY id").fetchall(),
            "fires": conn.execute("SELECT count(*) AS n FROM schedule_fires").fetchone()["n"],
            "endpoints": conn.execute(
                "SELECT id, state, credential_hash, scope_verbs, scope_queues, default_lease_ttl_seconds "
                "FROM endpoints ORDER BY id"
            ).fetchall(),
        }


@pytest.fixture
def acme_things(world):
    todos = {
        state: make(world, state, title=f"ACME-SECRET {state}")
        for state in ("pending", "claimed", "mine", "retry", "dead", "done")
    }
    # alice's job, queued (a foreign stop must not stop it); "td_none" is no todo of anyone's
    job = SimpleNamespace(
        id=execute(
            bulk_jobs.create(world.alice, action="cancel", scope="selected", selected_ids=["td_none"], description="x")
        )
    )
    execute(human_store.pause_queue(world.alice, world.acme.id, "email"))
    job.schedule = execute(
        schedules.create(
            world.alice,
            world.acme.id,
            now=datetime.now(UTC),
            name="ACME-SECRET nightly",
            cron="0 3 * * *",
            timezone="UTC",
            endpoint_id=world.acme_ep.id,
            queue="email",
            title="ACME-SECRET report",
        )
    )
    return todos, job


def request_for(world, name: str, kind_arg, target: str, todos, job):
    """(url, data) for ``target`` = "foreign" or "unknown"."""
    todo_id = todos["pending"].id if target == "foreign" else UNKNOWN_TODO
    if kind_arg == "todo":
        return reverse(name, args=[todo_id]), dict(ACTION_DATA)
    if kind_arg == "ids":
        ids = [t.id for t in todos.values()] if target == "foreign" else [UNKNOWN_TODO, "td_" + "1" * 32]
        return reverse(name), {"plan": "cancel:selected", "ids": ids}
    if kind_arg == "job":
        return reverse(name, args=[job.id if target == "foreign" else UNKNOWN_JOB]), {}
    if kind_arg == "endpoint":
        data = {"scope_verbs": ["claim"], "scope_queues": ["default"], "confirm": "narrow", "prefix": "x", "note": "x"}
        return reverse(name, args=["acme-worker" if target == "foreign" else "no-such-endpoint"]), data
    if kind_arg == "schedule":
        schedule_id = job.schedule.id if target == "foreign" else "00000000-0000-4000-8000-000000000000"
        return reverse(name, args=[schedule_id]), {"name": "x", "cron": "* * * * *"}
    slug = "acme" if target == "foreign" else "no-such-team"
    if kind_arg == "team_form":
        return reverse(name), {"team": slug, "queue": "email"}
    if kind_arg == "team":
        return reverse(name, args=[slug]), {"username": "bob", "role": "admin"}
    if kind_arg == "team_member":
        return reverse(name, args=[slug, world.alice_user.id]), {}
    raise AssertionError(kind_arg)


@pytest.mark.parametrize("as_htmx", [False, True], ids=["plain", "htmx"])
def test_foreign_objects_answer_the_same_404_as_unknown_ones(world, acme_things, bob_client, as_htmx):
    todos, job = acme_things
    before = snapshot()
    headers = htmx("drawer") if as_htmx else {}
    checked = 0
    for name, (method, arg, kind) in ROUTES.items():
        if kind != "object":
            continue
        answers = []
        for target in ("foreign", "unknown"):
            url, data = request_for(world, name, arg, target, todos, job)
            call = bob_client.get if method == "GET" else bob_client.post
            response = call(url, data, **headers)
            answers.append(response)
        foreign, unknown = answers
        assert foreign.status_code == 404, f"{name}: foreign answered {foreign.status_code}"
        assert unknown.status_code == 404, f"{name}: unknown answered {unknown.status_code}"
        assert foreign.content == unknown.content, f"{name}: the bodies differ"
        assert b"ACME" not in foreign.content and b"acme" not in foreign.content.lower()
        checked += 1
    assert checked == sum(1 for _, _, kind in ROUTES.values() if kind == "object")
    assert snapshot() == before, "a foreign request changed something"


def test_listings_show_nothing_of_another_team(world, acme_things, bob_client):
    todos, job = acme_things
    make(world, "pending", title="globex's own", agent=world.globex_agent)
    for name, (_method, params, kind) in ROUTES.items():
        if kind != "listing":
            continue
        response = bob_client.get(reverse(name), params)
        assert response.status_code == 200, name
        body = response.content.decode()
        assert "ACME-SECRET" not in body, name
        for todo in todos.values():
            assert todo.id not in body, name
        plain = bob_client.get(reverse(name)).content.decode()  # (the params above are echoed back)
        assert "acme-worker" not in plain and "Acme" not in plain, name
    listed = bob_client.get(reverse("todo_list")).content.decode()
    assert "globex&#x27;s own" in listed or "globex's own" in listed
    # naming the other team in a filter gives a message, not its data
    filtered = bob_client.get(reverse("todo_list"), {"team": "acme"}).content.decode()
    assert "team: you are not a member of a team" in filtered
    filtered = bob_client.get(reverse("todo_list"), {"endpoint": "acme-worker"}).content.decode()
    assert "endpoint: none of your teams has an endpoint" in filtered
    # the same messages for a team or endpoint that does not exist
    assert (
        "team: you are not a member of a team &#x27;nope&#x27;"
        in bob_client.get(reverse("todo_list"), {"team": "nope"}).content.decode()
    )


def test_bulk_on_all_matching_never_reaches_another_team(world, acme_things, bob_client):
    todos, _ = acme_things
    before = snapshot()
    response = bob_client.post(reverse("bulk_start"), {"action": "cancel", "scope": "matching", "state": "all"})
    assert response.status_code == 302
    job_id = response["Location"].rstrip("/").split("/")[-1]
    bulk.work_until_idle(30)
    job = bulk_job_selectors.get(viewer_for(world.bob_user), job_id)
    assert job.state == "done" and job.total == 0 and job.changed == 0
    after = snapshot()
    assert [str(j["id"]) for j in after.pop("jobs")] == sorted([str(acme_things[1].id), job_id])
    before.pop("jobs")
    assert after == before


def test_superuser_does_not_see_other_teams_todos(world, acme_things):
    from tests import factories

    root = factories.user("root", superuser=True)
    client = login(root)
    todos, _ = acme_things
    assert client.get(reverse("todo_detail", args=[todos["pending"].id])).status_code == 404
    assert "ACME-SECRET" not in client.get(reverse("todo_list")).content.decode()
    # but a site admin manages teams
    assert client.get(reverse("team_detail", args=["acme"])).status_code == 200
