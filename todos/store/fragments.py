"""SQL fragments shared by the store's statements: scopes, the fence, notifications, misses.

Each is a piece of one statement, never a statement of its own: the transitions in
``agent.py``, ``operator.py`` and ``background.py`` stay one readable SQL statement each.
"""

from __future__ import annotations

# Live Board updates (ids and small fields only; never a payload).
BOARD_CHANNEL = "board_events"
# Agents waiting in claim_next: work became claimable for (endpoint, queue).
READY_CHANNEL = "board_ready"
# Ids per notification: keeps every payload far below PostgreSQL's 8000-byte limit.
NOTIFY_CHUNK = 50

# "Claimable", minus the queue-pause and assignee parts that depend on the caller.
CLAIMABLE = """(
        t.state = 'pending'
     OR (t.state = 'claimed' AND t.lease_expires_at < now() AND t.attempt < t.max_attempts)
     OR (t.state = 'failed' AND t.next_retry_at <= now() AND t.attempt < t.max_attempts))"""

# The lease-token fence: the open attempt (seq = attempts_total, so a takeover committed while this
# statement waited on the row lock is seen through the re-read todo row) holds the presented
# token's digest, both NULL counting as equal. Compared in SQL, on fixed-length digests.
FENCE = """EXISTS (
        SELECT 1 FROM todo_attempts fa
        WHERE fa.todo_id = t.id AND fa.seq = t.attempts_total AND fa.ended_at IS NULL
          AND ((fa.lease_token_hash IS NULL AND %(token_hash)s::bytea IS NULL)
               OR fa.lease_token_hash = %(token_hash)s::bytea))"""

# The lease's open attempt is visible to this statement, so closing "the open attempt" closes it.
# A claim that committed while this statement waited on the todo's row lock is seen through the
# re-read row (attempts_total moved on) but not its new attempt, which is newer than the
# statement's snapshot: without this guard an unfenced statement (the operator's, a revoke) would
# end the lease and leave that attempt open. With it, the statement is a conflict (or skips the
# row) and the caller sees the todo as it now is. The agent's FENCE has the same property.
LEASE_SEEN = """EXISTS (
        SELECT 1 FROM todo_attempts la
        WHERE la.todo_id = t.id AND la.seq = t.attempts_total AND la.ended_at IS NULL)"""

# A team is paused on a queue: agents' claims skip it.
NOT_PAUSED = """NOT EXISTS (
        SELECT 1 FROM queue_pauses qp JOIN endpoints pe ON pe.team_id = qp.team_id
        WHERE pe.id = t.endpoint_id AND qp.queue = t.queue)"""

def queue_not_paused(queue: str) -> str:
    """The endpoint's team has not paused ``queue`` (an expression naming a queue).

    A check per queue, for scans that go queue by queue: tested against every row (as
    ``NOT_PAUSED`` is), it stops the planner from walking the claim index in order and makes it
    fetch and sort the queue's whole backlog instead.
    """
    return f"""NOT EXISTS (
        SELECT 1 FROM queue_pauses qp JOIN endpoints pe ON pe.team_id = qp.team_id
        WHERE pe.id = %(endpoint_id)s AND qp.queue = {queue})"""


# operatorOwns(human): the todo's endpoint belongs to a team the human is a member of.
OPERATOR_SEES = """t.endpoint_id IN (
        SELECT oe.id FROM endpoints oe JOIN team_members om ON om.team_id = oe.team_id
        WHERE om.user_id = %(user_id)s)"""
# …and may act on it (viewers see, operators and admins act).
OPERATOR_ACTS = """t.endpoint_id IN (
        SELECT oe.id FROM endpoints oe JOIN team_members om ON om.team_id = oe.team_id
        WHERE om.user_id = %(user_id)s AND om.role IN ('operator', 'admin'))"""


def notify_board(op: str, rows: str) -> str:
    """A scalar subquery sending one NOTIFY per team and chunk of ids for the rows of CTE ``rows``
    (``id, queue, endpoint_id``; a row with a NULL id announces a change to the endpoint itself).

    It is evaluated only when the outer SELECT produces a row and reads only what the statement
    changed, so a statement that changed nothing notifies nobody; NOTIFY is transactional, so a
    rolled-back change is never announced.
    """
    return f"""(SELECT count(pg_notify('{BOARD_CHANNEL}', json_build_object(
                    'op', '{op}', 'team', g.team_id, 'ids', g.ids,
                    'queues', g.queues, 'endpoints', g.endpoints)::text))
                FROM (SELECT e.team_id,
                             coalesce(array_agg(r.id) FILTER (WHERE r.id IS NOT NULL), '{{}}') AS ids,
                             coalesce(array_agg(DISTINCT r.queue) FILTER (WHERE r.queue IS NOT NULL), '{{}}') AS queues,
                             array_agg(DISTINCT r.endpoint_id) AS endpoints
                      FROM (SELECT id, queue, endpoint_id,
                                   (row_number() OVER ()) / {NOTIFY_CHUNK} AS chunk
                            FROM {rows}) r
                      JOIN endpoints e ON e.id = r.endpoint_id
                      GROUP BY e.team_id, r.chunk) g)"""


def notify_ready(rows: str, where: str = "TRUE") -> str:
    """One NOTIFY per (endpoint, queue) that gained claimable work among the rows of ``rows``."""
    return f"""(SELECT count(pg_notify('{READY_CHANNEL}', json_build_object(
                    'endpoint', w.endpoint_id, 'queue', w.queue)::text))
                FROM (SELECT DISTINCT endpoint_id, queue FROM {rows} WHERE {where}) w)"""


def agent_miss(target: str = "target") -> str:
    """Classify a zero-row agent transition from the caller-scoped snapshot row ``target``."""
    return f"""CASE
        WHEN NOT EXISTS (SELECT 1 FROM {target}) THEN 'not_found'
        WHEN NOT (SELECT queue FROM {target}) = ANY(%(queues)s::text[]) THEN 'forbidden'
        ELSE 'conflict' END"""


def operator_miss() -> str:
    """Classify a zero-row operator transition: unseen → not found; seen by a viewer → forbidden."""
    return """CASE
        WHEN NOT EXISTS (SELECT 1 FROM todos t WHERE t.id = %(id)s AND """ + OPERATOR_SEES + """) THEN 'not_found'
        WHEN NOT EXISTS (SELECT 1 FROM todos t WHERE t.id = %(id)s AND """ + OPERATOR_ACTS + """) THEN 'forbidden'
        ELSE 'conflict' END"""
