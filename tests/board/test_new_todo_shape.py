"""The new-todo form takes work with a shape: parents (``after``), the rule for a failed parent,
a rate key and a run-time limit; bad values are refused with the API's words beside the field,
and nothing is written."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from tests.support.board import make
from todos.core.db import connect


def count() -> int:
    with connect() as conn:
        return conn.execute("SELECT count(*) AS n FROM todos").fetchone()["n"]


def row(todo_id):
    with connect() as conn:
        return conn.execute(
            """SELECT todo_board_state(state, next_retry_at) AS state, parents_left, on_parent_failure, rate_key,
                      timeout_seconds, (SELECT array_agg(parent_id ORDER BY parent_id) FROM todo_dependencies
                                        WHERE child_id = todos.id) AS parents
               FROM todos WHERE id = %s""",
            (todo_id,),
        ).fetchone()


def test_a_todo_made_by_hand_after_others_waits_for_them_with_its_rate_key_and_limit(world, alice_client):
    a, b = make(world, "pending", title="a"), make(world, "pending", title="b")
    page = alice_client.get(reverse("todo_new")).content.decode()
    assert 'name="after"' in page and 'name="rate_key"' in page and 'name="timeout_seconds"' in page
    response = alice_client.post(
        reverse("todo_new"),
        {
            "target": f"{world.acme_ep.id}|default",
            "title": "merge",
            "after": f" {a.id}, {b.id}\n",
            "on_parent_failure": "run",
            "rate_key": "crawl:upstream",
            "timeout_seconds": "600",
        },
    )
    assert response.status_code == 302
    todo_id = response["Location"].split("/")[2]
    assert row(todo_id) == {
        "state": "blocked",
        "parents_left": 2,
        "on_parent_failure": "run",
        "rate_key": "crawl:upstream",
        "timeout_seconds": 600,
        "parents": sorted([a.id, b.id]),
    }


@pytest.mark.parametrize(
    ("fields", "shown"),
    [
        ({"after": "td_nope"}, "after[0]: no such todo in this team: td_nope"),
        ({"after": "OK td_nope"}, "after[1]: no such todo in this team: td_nope"),
        ({"timeout_seconds": "0"}, "timeout_seconds: must be from 1 to 604800, got 0"),
        ({"timeout_seconds": "soon"}, "timeout_seconds: must be an integer from 1 to 604800"),
        ({"timeout_seconds": "604801"}, "timeout_seconds: must be from 1 to 604800, got 604801"),
        ({"rate_key": "x" * 201}, "rate_key: "),
        ({"after": "OK", "on_parent_failure": "maybe"}, "on_parent_failure: must be 'cancel' or 'run'"),
    ],
)
def test_a_bad_value_is_refused_beside_its_field_with_the_api_s_words(world, alice_client, fields, shown):
    parent = make(world, "pending", title="a parent")
    data = {"target": f"{world.acme_ep.id}|default", "title": "merge"}
    data.update({k: v.replace("OK", parent.id) for k, v in fields.items()})
    before = count()
    response = alice_client.post(reverse("todo_new"), data)
    body = html.unescape(response.content.decode())
    assert response.status_code == 422
    assert f'role="alert">{shown}' in body, body[body.find("form-error") - 200 : body.find("form-error") + 300]
    assert 'aria-invalid="true"' in body
    assert count() == before


def test_another_team_s_todo_as_a_parent_reads_as_an_unknown_one(world, alice_client):
    theirs = make(world, "pending", agent=world.globex_agent)
    data = {"target": f"{world.acme_ep.id}|default", "title": "merge"}
    unknown = alice_client.post(reverse("todo_new"), {**data, "after": "td_nope"})
    foreign = alice_client.post(reverse("todo_new"), {**data, "after": theirs.id})
    assert foreign.status_code == unknown.status_code == 422
    assert f"no such todo in this team: {theirs.id}" in html.unescape(foreign.content.decode())
