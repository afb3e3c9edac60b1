"""The Activity page: the audit trail across the human's teams, filterable, keyset-paged."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.support.board import htmx, make
from todos.core.db import connect, execute
from todos.core.selectors import activity as selectors
from todos.core.store import human as human_store

pytestmark = pytest.mark.usefixtures("store_db")


def test_activity_lists_filters_and_pages(world, alice_client, monkeypatch):
    with connect() as conn:
        conn.execute("DELETE FROM audit_log")  # the fixture's own set-up (teams, members, endpoints)
    todo = make(world, "pending", title="audited")
    execute(human_store.claim(world.alice, todo.id))
    execute(human_store.release(world.alice, todo.id, note="not today"))
    execute(human_store.pause_queue(world.adam, world.acme.id, "email"))
    globex_todo = make(world, "pending", agent=world.globex_agent)
    execute(human_store.cancel(world.bob, globex_todo.id, note="globex private note"))

    rows = lambda b: re.findall(r'<code class="code-note">([a-z._]+)</code>', b)  # noqa: E731
    get = lambda **q: alice_client.get(reverse("activity"), q).content.decode()  # noqa: E731
    body = get()
    assert rows(body) == ["queue.pause", "todo.release", "todo.claim"]  # newest first
    assert "not today" in body
    assert "globex private note" not in body and globex_todo.id[:11] not in body
    assert rows(get(person="adam")) == ["queue.pause"]
    assert rows(get(action="todo.release")) == ["todo.release"]
    assert rows(get(action="todo.*")) == ["todo.release", "todo.claim"]
    with connect() as conn:
        conn.execute("UPDATE audit_log SET at = now() - interval '2 days' WHERE action = 'queue.pause'")
    assert rows(get(period="24h")) == ["todo.release", "todo.claim"]
    bad = get(action="drop.table", period="forever")
    assert "action: unknown action" in bad and "period: unknown period" in bad
    fragment = alice_client.get(reverse("activity"), {"person": "alice"}, **htmx("activity-list")).content.decode()
    assert fragment.startswith('<section id="activity-list"')

    monkeypatch.setattr(selectors, "PAGE_SIZE", 2)
    first = get()
    older = re.search(r'rel="next" href="([^"]+)"', first).group(1).replace("&amp;", "&")
    second = alice_client.get(older).content.decode()
    assert rows(first) == ["todo.release", "todo.claim"] and rows(second) == ["queue.pause"]
    assert not re.search(r'rel="next"', second)
