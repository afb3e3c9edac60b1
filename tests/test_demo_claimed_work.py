"""The work the demo's seed leaves claimed has no worker behind it: its lease lapses and the reaper
shows a death. A run-time limit shorter than that lease would end it first, so just after start the
support queue would show a burst of timed-out attempts that no hung worker caused."""

from __future__ import annotations

import random

import pytest

from tests import factories
from todos.core import db


@pytest.mark.usefixtures("store_db")
def test_seeded_claimed_work_lapses_before_any_run_time_limit_ends_it():
    from todos.ops.demo import HANG_QUEUE, seed

    seed(factories.user("demo-admin", superuser=True), todos=300, rng=random.Random(7))
    with db.connect() as conn:
        rows = conn.execute(
            """SELECT t.queue, t.lease_expires_at,
                      t.claimed_at + make_interval(secs => coalesce(t.timeout_seconds, s.timeout_seconds)) AS ends_at
               FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
               LEFT JOIN queue_settings s ON s.team_id = e.team_id AND s.queue = t.queue
               WHERE t.state = 'claimed'"""
        ).fetchall()
    limited = [r for r in rows if r["ends_at"] is not None]
    assert any(r["queue"] == HANG_QUEUE for r in limited)  # the case this is about is seeded
    early = [r for r in limited if r["ends_at"] <= r["lease_expires_at"]]
    assert not early, f"{len(early)} seeded claims end by their run-time limit before their lease lapses"
