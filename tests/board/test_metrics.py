"""/metrics: Prometheus text behind a bearer token; 404 when no token is configured."""

from __future__ import annotations

import pytest
from django.test import override_settings

from tests.factories import relayed
from tests.support.board import make

pytestmark = pytest.mark.usefixtures("store_db")


def test_metrics_is_absent_without_a_token(world, client):
    with override_settings(BOARD_METRICS_TOKEN=""):
        assert client.get("/metrics").status_code == 404
        assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer ").status_code == 404


@override_settings(BOARD_METRICS_TOKEN="s3cret-token")
def test_metrics_requires_the_token(world, client):
    assert client.get("/metrics").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    assert client.get("/metrics", HTTP_AUTHORIZATION="Basic s3cret-token").status_code == 401


@override_settings(BOARD_METRICS_TOKEN="s3cret-token")
def test_metrics_text(world, client):
    for state in ("pending", "pending", "claimed", "retry", "dead", "done"):
        make(world, state)
    relayed()
    response = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token")
    assert response.status_code == 200 and response["Content-Type"].startswith("text/plain; version=1.0.0")
    text = response.content.decode()
    assert 'board_todos{state="pending"} 2' in text
    assert 'board_todos{state="claimed"} 1' in text
    assert 'board_todos{state="retry_scheduled"} 1' in text
    assert 'board_todos{state="dead_letter"} 1' in text
    assert "board_change_log_rows 0" in text and "board_relay_counts_stale 0" in text
    assert "# TYPE board_relay_alive_age_seconds gauge" in text
    assert 'board_todos_finished_last_hour{state="done"} 1' in text
    assert 'board_todos_finished_last_hour{state="failed"} 1' in text
    assert 'board_attempts_closed_last_hour{outcome="completed"} 1' in text
    assert 'board_attempts_closed_last_hour{outcome="failed"} 2' in text
    assert 'board_endpoints{state="active"} 2' in text
    assert "# TYPE board_oldest_pending_age_seconds gauge" in text
    for line in text.splitlines():
        assert line.startswith("#") or line.startswith("board_"), line


def test_healthz(world, client):
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"ok": True, "database": "ok"}
