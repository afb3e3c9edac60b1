"""Trace ids in a real browser: the todo's page shows its producer's trace id and the attempt's
worker trace id (as text: the test server has no BOARD_TRACE_URL).

The ``page`` fixture (``test_browser.py``) fails a test on any console error or CSP violation."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.board import test_browser as base
from tests.board.test_browser import sign_in
from tests.support.board import make
from todos.core.db import execute
from todos.core.store import agent as agent_store

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("store_db")]

allow_sync_orm_beside_playwright = base.allow_sync_orm_beside_playwright
fast_passwords = base.fast_passwords
browser = base.browser
page = base.page

PRODUCER = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
WORKER = "00-11111111111111111111111111111111-2222222222222222-01"


def test_the_todo_page_shows_the_producer_and_worker_trace_ids(world, page):
    todo = make(world, "pending", title="A traced todo", traceparent=PRODUCER)
    execute(agent_store.claim(world.agent, todo.id))
    execute(agent_store.complete(world.agent, todo.id, traceparent=WORKER))
    sign_in(page, "alice")
    page.goto(f"/todos/{todo.id}/")
    trace = page.locator("dt", has_text=re.compile("^Trace$")).locator("xpath=following-sibling::dd[1]")
    expect(trace).to_have_text("4bf92f3577b34da6a3ce929d0e0e4736")
    worker = page.locator(".attempt dt", has_text="Worker trace").locator("xpath=following-sibling::dd[1]")
    expect(worker).to_have_text("11111111111111111111111111111111")
    expect(page.locator("a", has_text="4bf92f3577b34da6a3ce929d0e0e4736")).to_have_count(0)
