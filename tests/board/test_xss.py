"""Untrusted text (titles, payloads, results, summaries, artifacts, notes) renders inert."""

from __future__ import annotations

import re

import pytest
from django.test import override_settings
from django.urls import reverse

from tests.support.board import htmx
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store

pytestmark = pytest.mark.usefixtures("store_db")

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(2)>'
JS_URL = "javascript:alert(3)"
EVIL = f"{SCRIPT} {IMG} {JS_URL}"


def assert_inert(body: str) -> None:
    assert "<script>alert" not in body
    assert "<img src=x" not in body and "onerror=alert" not in body.replace("onerror=alert(2)&gt;", "")
    assert not re.search(r'href="\s*javascript:', body, re.I)
    assert not re.search(r"<[a-z]+[^>]*\son[a-z]+=", body.replace("&lt;", "")), "an event handler attribute"
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


@override_settings(BOARD_ARTIFACT_SCHEMES=["mcp", "javascript"])
def test_everything_untrusted_is_escaped(world, alice_client):
    todo = execute(
        agent_store.create(
            world.agent,
            queue="default",
            title=EVIL,
            kind=IMG,
            source=SCRIPT,
            idempotency_key=IMG,
            payload={"html": EVIL, SCRIPT: IMG},
        )
    ).todo
    execute(agent_store.claim(world.agent, todo.id, claimant=EVIL))
    execute(
        agent_store.fail(world.agent, todo.id, summary=EVIL, artifact="javascript://alert(3)", result={"error": EVIL})
    )
    execute(human_store.retry(world.alice, todo.id, note=EVIL))
    execute(agent_store.claim(world.agent, todo.id, claimant=SCRIPT))
    execute(
        agent_store.complete(
            world.agent,
            todo.id,
            summary=IMG,
            artifact="mcp://x/" + "%22%3E%3Cimg%3E",
            result={"error": EVIL, "list": [SCRIPT]},
        )
    )

    drawer = alice_client.get(reverse("todo_drawer", args=[todo.id])).content.decode()
    assert_inert(drawer)
    # artifacts: a link only for https://
    assert 'href="javascript' not in drawer and '<a href="mcp' not in drawer
    assert "<code>javascript://alert(3)</code>" in drawer
    for url in (
        reverse("todo_list"),
        reverse("todo_list") + "?q=" + "%3Cscript%3E",
        reverse("todo_detail", args=[todo.id]),
        reverse("activity"),
        reverse("dead_letter_groups"),
    ):
        assert_inert_page = alice_client.get(url).content.decode()
        assert "<script>alert" not in assert_inert_page and "<img src=x" not in assert_inert_page, url
    row = alice_client.get(reverse("todo_row", args=[todo.id])).content.decode()
    assert "<script>alert" not in row and "<img src=x" not in row


def test_dead_letter_reasons_and_a_search_echo_are_escaped(world, alice_client):
    todo = execute(agent_store.create(world.agent, queue="default", title="t", max_attempts=1)).todo
    execute(agent_store.claim(world.agent, todo.id))
    execute(agent_store.fail(world.agent, todo.id, summary=EVIL))
    body = alice_client.get(reverse("dead_letter_groups")).content.decode()
    assert "<script>alert" not in body and "<img src=x" not in body
    assert "&lt;script&gt;" in body
    echoed = alice_client.get(reverse("todo_list"), {"q": IMG, "queue": IMG}, **htmx("todo-list")).content.decode()
    assert "<img src=x" not in echoed


def test_https_artifact_is_a_safe_link(world, alice_client):
    todo = execute(agent_store.create(world.agent, queue="default", title="t")).todo
    execute(agent_store.claim(world.agent, todo.id))
    execute(agent_store.complete(world.agent, todo.id, artifact='https://example.com/a?b="c"&d=<e>'))
    body = alice_client.get(reverse("todo_drawer", args=[todo.id])).content.decode()
    assert '<a href="https://example.com/a?b=&quot;c&quot;&amp;d=&lt;e&gt;" rel="noopener noreferrer nofollow"' in body
