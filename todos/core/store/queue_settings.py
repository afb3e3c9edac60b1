"""A team's settings for one of its queues: the default run-time limit of its todos.

A queue's row in ``queue_settings`` (0026) holds the limit its todos get when they name none
(docs/lifecycle.md, "Run-time limits"); the todo's own limit wins. The background sweep
(``background.time_out``) and the heartbeat's guard read it by its key; nothing on the claim path
does. Setting it is one audited statement, by a team admin or the system (``manage.py
queue-timeout``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID

from todos.core.db import Statement
from todos.core.store import inputs
from todos.core.store.fragments import ADMIN_ROLES, audit_row, log_change
from todos.core.store.scopes import OperatorScope
from todos.core.store.team_setting import TEAM_EXISTS, team_setting
from todos.core.words import ChangeOp


@dataclass(frozen=True)
class QueueTimeout:
    team_id: UUID
    queue: str
    timeout_seconds: int | None  # the default now (None: cleared, no default)
    previous: int | None  # the default before this change (None: there was none)


def set_timeout(op: OperatorScope | None, team_id: Any, queue: Any, timeout_seconds: Any) -> Statement[QueueTimeout]:
    """Set (or, with None, clear) the default run-time limit of ``queue`` for a team (``op`` None:
    the system; otherwise an admin of the team).

    Guard: the person is an admin of the team. Effect: the queue's row upserted, or deleted when
    cleared. Todos already claimed are measured against the new default from the next sweep on.
    Audit: ``queue.timeout`` with the old and new limit. Log: ``queue_setting`` for the queue (the
    overview re-renders).
    """
    writer = team_setting(
        op, team_id, roles=ADMIN_ROLES, refusal="only an admin of the team may set a queue's run-time limit"
    )
    params = {**writer.params, "queue": inputs.queue(queue), "seconds": inputs.timeout_seconds(timeout_seconds)}
    sql = f"""
WITH before AS (
    SELECT s.timeout_seconds FROM queue_settings s WHERE s.team_id = %(team_id)s AND s.queue = %(queue)s
),
may AS (
    SELECT %(team_id)s::uuid AS team_id, %(queue)s::text AS queue
    WHERE {writer.allowed} AND {TEAM_EXISTS}
),
upserted AS (
    INSERT INTO queue_settings AS s (team_id, queue, timeout_seconds, updated_by)
    SELECT m.team_id, m.queue, %(seconds)s::integer, %(user_id)s FROM may m
    WHERE %(seconds)s::integer IS NOT NULL
    ON CONFLICT (team_id, queue) DO UPDATE
        SET timeout_seconds = excluded.timeout_seconds, updated_at = now(), updated_by = excluded.updated_by
    RETURNING s.team_id, s.queue
),
cleared AS (
    DELETE FROM queue_settings s USING may m
    WHERE %(seconds)s::integer IS NULL AND s.team_id = m.team_id AND s.queue = m.queue
    RETURNING s.team_id, s.queue
),
changed AS (SELECT m.team_id, m.queue FROM may m),
audit AS ({
        audit_row(
            "queue.timeout",
            "changed c",
            team="c.team_id",
            queue="c.queue",
            detail='''jsonb_build_object('queue', c.queue, 'old', (SELECT timeout_seconds FROM before),
                                         'new', %(seconds)s::integer)''',
        )
    }),
logged AS ({log_change(ChangeOp.QUEUE_SETTING, "changed c", team="c.team_id", queue="c.queue")})
SELECT c.team_id, c.queue, (SELECT timeout_seconds FROM before) AS previous,
       (SELECT count(*) FROM upserted) + (SELECT count(*) FROM cleared) AS written,
       {writer.sees} AS sees
FROM (SELECT 1) one LEFT JOIN changed c ON true"""

    def finish(rows: list[dict]) -> QueueTimeout:
        row = rows[0]
        if row["team_id"] is None:
            writer.refuse(row)
        return QueueTimeout(row["team_id"], row["queue"], params["seconds"], row["previous"])

    return Statement(sql, params, finish)
