"""``/todos/export.csv``: every todo of the list's filter as CSV, streamed from an async iterator
in keyset pages; a person's own teams' todos only; spreadsheet formulas defused."""

from __future__ import annotations

import asyncio
import csv
import io

import pytest
from asgiref.sync import sync_to_async
from django.db import connections
from django.test import AsyncClient
from django.urls import reverse

from tests.board.test_bulk import insert_dead_letters
from tests.board.test_filters import dead_with
from tests.support.board import make
from todos.core import db
from todos.core.db import connect, execute
from todos.core.selectors import todo_export
from todos.core.store import human as human_store
from todos.dashboard.csv_rows import HEADER, text_cell

pytestmark = pytest.mark.usefixtures("store_db")


def consume(response) -> str:
    """The streamed body, read the way the ASGI server reads it: ``async for`` on the event loop."""
    assert response.streaming and response.is_async

    async def collect() -> bytes:
        try:
            return b"".join([chunk async for chunk in response.streaming_content])
        finally:
            await db.aclose_pool()

    return asyncio.run(collect()).decode()


def export(client, **params) -> list[dict]:
    response = client.get(reverse("todo_export"), params)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="todos-')
    text = consume(response)
    rows = list(csv.reader(io.StringIO(text)))
    assert tuple(rows[0]) == HEADER
    return [dict(zip(HEADER, row, strict=True)) for row in rows[1:]]


def test_the_columns_and_the_boards_words(world, alice_client):
    pending = make(world, "pending", title="to do", kind="report", priority=7)
    dead = dead_with(world, "timeout after 30s", title="gave up")
    done = make(world, "done", title="finished")
    rows = {r["id"]: r for r in export(alice_client)}
    assert set(rows) == {pending.id, dead.id, done.id}
    assert rows[pending.id] | {"created_at": ""} == {
        "id": pending.id,
        "queue": "default",
        "kind": "report",
        "title": "to do",
        "state": "pending",
        "priority": "7",
        "attempts": "0",
        "max_attempts": "5",
        "created_at": "",
        "finished_at": "",
        "last_reason": "",
    }
    assert rows[pending.id]["created_at"].endswith("Z")
    assert rows[dead.id]["state"] == "dead" and rows[dead.id]["last_reason"] == "timeout after 30s"
    assert rows[dead.id]["attempts"] == "1" and rows[dead.id]["finished_at"].endswith("Z")
    assert rows[done.id]["state"] == "done" and rows[done.id]["last_reason"] == "all good"


def test_the_export_follows_the_filter_and_its_order(world, alice_client):
    a = make(world, "pending", kind="report")
    b = make(world, "pending", kind="report")
    make(world, "pending", kind="other")
    make(world, "done", kind="report")
    assert [r["id"] for r in export(alice_client, kind="report", state="pending")] == [b.id, a.id]
    assert [r["id"] for r in export(alice_client, kind="report", state="pending", sort="oldest")] == [a.id, b.id]
    hit = dead_with(world, "quota exceeded for tenant", title="x")
    assert [r["id"] for r in export(alice_client, q="quota exceeded")] == [hit.id]


def test_quotes_commas_and_newlines_survive(world, alice_client):
    todo = make(world, "pending", title='He said "no", twice')
    with connect() as conn:  # a fixture shortcut: a title the store would refuse, as an old row may hold
        conn.execute("UPDATE todos SET kind = %s WHERE id = %s", ("line one\nline two", todo.id))
    (row,) = export(alice_client)
    assert row["title"] == 'He said "no", twice'
    assert row["kind"] == "line one\nline two"


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_cell_that_starts_a_formula_is_prefixed(world, alice_client, start):
    todo = make(world, "pending", title="placeholder")
    with connect() as conn:
        conn.execute("UPDATE todos SET title = %s, kind = %s WHERE id = %s", (f"{start}1+1", f"{start}cmd", todo.id))
    (row,) = export(alice_client)
    assert row["title"] == f"'{start}1+1"
    assert row["kind"] == f"'{start}cmd"


def test_a_formula_in_an_attempt_summary_is_prefixed(world, alice_client):
    dead_with(world, '=HYPERLINK("http://evil.example","click")')
    (row,) = export(alice_client)
    assert row["last_reason"] == '\'=HYPERLINK("http://evil.example","click")'


def test_the_last_reason_is_the_error_an_agent_reported(world, alice_client):
    from tests.board.test_filters import failed_with_error

    failed_with_error(world, {"type": "ValueError", "message": "bad row 7\nmore detail", "traceback": "frames"})
    (row,) = export(alice_client)
    assert row["last_reason"] == "ValueError: bad row 7"


def test_text_cell():
    assert text_cell(None) == "" and text_cell("") == ""
    assert text_cell("plain") == "plain" and text_cell("a=b") == "a=b"
    assert text_cell("-5") == "'-5" and text_cell("@SUM(A1)") == "'@SUM(A1)"


def test_negative_priorities_stay_numbers(world, alice_client):
    make(world, "pending", priority=-3)
    (row,) = export(alice_client)
    assert row["priority"] == "-3"


def test_a_person_never_exports_another_teams_todos(world, alice_client, bob_client):
    ours = make(world, "pending", title="ACME-SECRET")
    theirs = make(world, "pending", title="globex's", agent=world.globex_agent)
    assert [r["id"] for r in export(bob_client)] == [theirs.id]
    assert [r["id"] for r in export(alice_client)] == [ours.id]
    # naming the other team's endpoint or team is refused, not widened to everything
    for params in ({"team": "acme"}, {"endpoint": "acme-worker"}):
        response = bob_client.get(reverse("todo_export"), params)
        assert response.status_code == 400
        assert b"ACME-SECRET" not in response.content
    # searching for their text finds nothing of theirs
    assert export(bob_client, q="ACME-SECRET") == []


def test_a_signed_out_request_exports_nothing(world, client):
    make(world, "pending", title="ACME-SECRET")
    response = client.get(reverse("todo_export"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_pages_continue_across_keyset_boundaries_with_ties(world, alice_client, monkeypatch):
    monkeypatch.setattr(todo_export, "EXPORT_PAGE_ROWS", 4)
    todos = [make(world, "pending", title=f"t{i}", priority=i % 3) for i in range(11)]
    with connect() as conn:  # ties on created_at: the keyset's id breaks them
        conn.execute(
            "UPDATE todos SET created_at = '2026-01-01T00:00:00Z' WHERE id = ANY(%s)", ([t.id for t in todos[:6]],)
        )
    newest = [r["id"] for r in export(alice_client)]
    assert sorted(newest) == sorted(t.id for t in todos) and len(newest) == 11
    oldest = [r["id"] for r in export(alice_client, sort="oldest")]
    assert oldest == list(reversed(newest))
    by_priority = export(alice_client, sort="priority", state="pending")
    assert len({r["id"] for r in by_priority}) == 11
    assert [int(r["priority"]) for r in by_priority] == sorted(int(r["priority"]) for r in by_priority)


def test_twelve_thousand_rows_in_three_pages(world, alice_client, monkeypatch):
    insert_dead_letters(world.acme_ep.id, 12_000)
    pages: list[int] = []
    real = todo_export.aexecute

    async def counting(stmt):
        rows = await real(stmt)
        pages.append(len(rows))
        return rows

    monkeypatch.setattr(todo_export, "aexecute", counting)
    rows = export(alice_client, state="dead")
    assert len(rows) == 12_000 and len({r["id"] for r in rows}) == 12_000
    assert pages == [5_000, 5_000, 2_000]
    assert rows[0]["title"] == "dead letter #1" and rows[-1]["title"] == "dead letter #12000"


def test_claimed_by_me_is_exported_with_mine(world, alice_client):
    mine = make(world, "pending", title="mine")
    execute(human_store.claim(world.alice, mine.id))
    make(world, "pending", title="not mine")
    assert [r["id"] for r in export(alice_client, mine="1")] == [mine.id]


def test_served_by_the_asgi_handler_as_a_stream(world, alice_client):
    todo = make(world, "pending", title="over asgi")

    async def scenario():
        client = AsyncClient()
        client.cookies = alice_client.cookies
        try:
            response = await client.get(reverse("todo_export"))
            assert response.streaming and response.is_async
            return response.status_code, b"".join([chunk async for chunk in response.streaming_content])
        finally:
            await db.aclose_pool()
            # the handler ran the view's session and user reads on its thread: close that connection
            await sync_to_async(connections.close_all)()

    status, body = asyncio.run(scenario())
    assert status == 200
    rows = list(csv.reader(io.StringIO(body.decode())))
    assert rows[1][0] == todo.id and rows[1][3] == "over asgi"
