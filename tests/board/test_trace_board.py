"""The drawer's trace ids (docs/telemetry.md, "The Board"): the todo's producer trace and each
attempt's worker trace, linked through BOARD_TRACE_URL when it is set, shown plain when not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.test import override_settings
from django.urls import reverse

from tests.support.board import htmx, make
from todos.core.db import execute
from todos.core.store import agent as agent_store

PRODUCER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
WORKER = "00-11111111111111111111111111111111-2222222222222222-01"
ROOT = Path(__file__).resolve().parents[2]


def drawer(client, todo_id) -> str:
    return client.get(reverse("todo_drawer", args=[todo_id]), **htmx("drawer")).content.decode()


def test_the_drawer_shows_the_trace_id_without_a_link_when_no_url_is_set(world, alice_client):
    todo = make(world, "pending", traceparent=PRODUCER)
    html = drawer(alice_client, todo.id)
    assert '<span class="mono">4bf92f3577b34da6a3ce929d0e0e4736</span>' in html
    assert "/trace/4bf92f" not in html


@override_settings(BOARD_TRACE_URL="http://jaeger:16686/trace/{trace_id}")
def test_the_drawer_links_the_todo_and_the_attempt_traces(world, alice_client):
    todo = make(world, "pending", traceparent=PRODUCER)
    execute(agent_store.claim(world.agent, todo.id))
    execute(agent_store.complete(world.agent, todo.id, traceparent=WORKER))
    html = drawer(alice_client, todo.id)
    assert 'href="http://jaeger:16686/trace/4bf92f3577b34da6a3ce929d0e0e4736"' in html
    assert "Worker trace" in html
    assert 'href="http://jaeger:16686/trace/11111111111111111111111111111111"' in html


def test_a_todo_without_a_trace_shows_a_dash_and_no_worker_trace(world, alice_client):
    todo = make(world, "done")
    html = drawer(alice_client, todo.id)
    assert "<dt>Trace</dt><dd>—" in html
    assert "Worker trace" not in html


def test_a_trace_url_without_its_placeholder_is_refused_at_start_up():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "board.settings", "BOARD_TRACE_URL": "http://jaeger:16686/trace"}
    done = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; settings.BOARD_TRACE_URL"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "BOARD_TRACE_URL must be an http(s) URL with {trace_id} in it" in done.stderr
