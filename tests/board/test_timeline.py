"""The drawer's attempt timeline: each attempt a span on one time axis, coloured
by outcome, with its last heartbeat and the gaps between attempts; outcomes in words with the code
as secondary text; durations; relative times with the exact time on hover."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
from django.urls import reverse

from todos.core.db import connect, execute
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.dashboard.views.attempt_timeline import LEFT, PLOT_W, outcome_sentence, timeline

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def attempt(seq, claimed, ended=None, outcome=None, disposition=None, heartbeat=None):
    return SimpleNamespace(
        seq=seq,
        claimed_at=T0 + timedelta(seconds=claimed),
        ended_at=None if ended is None else T0 + timedelta(seconds=ended),
        outcome=outcome,
        disposition=disposition,
        last_heartbeat_at=None if heartbeat is None else T0 + timedelta(seconds=heartbeat),
        lease_expires_at=T0 + timedelta(seconds=(ended or claimed) + 30),
    )


def test_spans_gaps_and_heartbeats_sit_on_one_axis_from_creation_to_now():
    attempts = [  # newest first, as the drawer reads them
        attempt(3, 70, None, heartbeat=90),
        attempt(2, 40, 60, "reaped", "requeued", heartbeat=45),
        attempt(1, 10, 30, "failed", "retry_scheduled"),
    ]
    line = timeline(T0, attempts, T0 + timedelta(seconds=100))
    assert line is not None
    assert [(s.seq, s.tone) for s in line.spans] == [(1, "failed"), (2, "died"), (3, "open")]
    one, two, three = line.spans
    assert (one.x, one.width) == (pytest.approx(LEFT + PLOT_W * 0.1), pytest.approx(PLOT_W * 0.2))
    assert two.heartbeat_x == pytest.approx(LEFT + PLOT_W * 0.45) and one.heartbeat_x is None
    assert three.x + three.width == pytest.approx(LEFT + PLOT_W)  # open: up to now
    assert [g.title for g in line.gaps] == [
        "10s in the queue before its first claim",
        "10s between attempts #1 and #2",
        "10s between attempts #2 and #3",
    ]
    assert one.title.startswith("Attempt #1: Failed (the worker reported it); a retry was scheduled · ran 20s")
    assert "claimed 2026-01-01 12:00:10 UTC" in one.title and "(failed → retry_scheduled)" in one.title
    assert "last heartbeat 2026-01-01 12:00:45 UTC" in two.title
    assert "ran 30s so far" in three.title and "lease until" in three.title
    assert (line.start_label, line.end_label, line.summary) == ("created", "now", "3 attempts over 1m 40s")


def test_a_finished_todo_ends_at_its_last_attempt_and_pruned_history_starts_at_the_first_shown():
    line = timeline(T0, [attempt(7, 50, 80, "completed", "done")], T0 + timedelta(hours=1))
    assert line is not None
    assert line.end_label == "last end" and line.start_label == "#7" and line.gaps == []
    assert (line.spans[0].x, line.spans[0].width) == (LEFT, PLOT_W)
    assert timeline(T0, [], T0) is None


def test_every_outcome_reads_as_a_sentence():
    assert outcome_sentence("lease_expired", "requeued") == (
        "Died: the lease lapsed and another claim took it over; the todo went back to the queue"
    )
    assert outcome_sentence("reaped", "dead_lettered") == (
        "Died: the lease lapsed and the reaper ended it; the todo became a dead letter"
    )
    assert outcome_sentence("completed", "done") == "Completed; the todo is done"
    assert outcome_sentence(None, None) == "In progress"


@pytest.mark.usefixtures("store_db")
def test_the_drawer_draws_the_timeline_and_says_each_outcome_in_words(world, alice_client):
    todo = execute(agent_store.create(world.agent, queue="default", title="timed", max_attempts=3)).todo
    execute(agent_store.claim(world.agent, todo.id))
    execute(agent_store.heartbeat(world.agent, todo.id))
    execute(agent_store.fail(world.agent, todo.id, summary="boom"))
    with connect() as conn:
        conn.execute("UPDATE todos SET next_retry_at = now() - interval '1 second' WHERE id = %s", (todo.id,))
    execute(background_store.requeue_due_retries())
    execute(agent_store.claim(world.agent, todo.id))
    with connect() as conn:
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = %s", (todo.id,))
    execute(background_store.reap())
    execute(agent_store.claim(world.agent, todo.id))
    body = alice_client.get(reverse("todo_drawer", args=[todo.id])).content.decode()
    assert 'aria-label="Attempt timeline: 3 attempts over' in body
    assert body.count('<g class="timeline-span timeline-') == 3
    for tone in ("failed", "died", "open"):
        assert f'class="timeline-span timeline-{tone}"' in body
    assert body.count('class="timeline-heartbeat"') == 1
    assert "in the queue before its first claim</title>" in body
    assert re.search(r"<title>Attempt #1: Failed \(the worker reported it\); a retry was scheduled · ran \d+s", body)
    assert "Died: the lease lapsed and the reaper ended it; the todo went back to the queue" in body
    assert 'title="As the API reports it">reaped → requeued</code>' in body
    assert re.search(r"attempt 1 · ran \d+s</span>", body) and "so far</span>" in body
    # relative times, the exact one on hover
    assert re.search(
        r'<dt>Claimed</dt><dd><time datetime="[^"]+" data-format="age" title="[^"]+ UTC">\d+s</time> ago', body
    )
    assert '<dt>Heartbeat</dt><dd><span class="muted">none</span>' in body  # attempt #3 never beat
