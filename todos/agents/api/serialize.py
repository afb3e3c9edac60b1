"""Store records as the API's JSON: todo rows, attempts, claims (docs/api.md, "Calling").

Only the listed keys leave the server: never the token hash, the MCP session, the claimer
endpoint or the idempotency key. Timestamps are RFC 3339 in UTC; absent values are ``null``.
"""

from __future__ import annotations

from datetime import UTC, datetime

from todos.core.selectors.schedules import ScheduleView
from todos.core.store.records import Attempt, Claim, Todo
from todos.core.store.schedules import Fired


def timestamp(value: datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def todo_row(todo: Todo) -> dict:
    return {
        "id": todo.id,
        "queue": todo.queue,
        "source": todo.source,
        "kind": todo.kind,
        "title": todo.title,
        "state": todo.state,
        "owner": todo.owner,
        "assignee": todo.assignee,
        "priority": todo.priority,
        "attempt": todo.attempt,
        "max_attempts": todo.max_attempts,
        "attempts_total": todo.attempts_total,
        "lease_expires_at": timestamp(todo.lease_expires_at),
        "next_retry_at": timestamp(todo.next_retry_at),
        "dead_letter": todo.dead_letter,
        "scheduled": todo.scheduled,
        "blocked": todo.blocked,
        "parents_left": todo.parents_left,
        "on_parent_failure": todo.on_parent_failure,
        "concurrency_key": todo.concurrency_key,
        "requires": list(todo.requires),
        "timeout_seconds": todo.timeout_seconds,
        "rate_key": todo.rate_key,
        "traceparent": todo.traceparent,
        "created_at": timestamp(todo.created_at),
        "updated_at": timestamp(todo.updated_at),
        "payload": todo.payload,
    }


def todo_with_result(todo: Todo) -> dict:
    return {**todo_row(todo), "result": todo.result}


def attempt(a: Attempt) -> dict:
    return {
        "seq": a.seq,
        "attempt": a.attempt,
        "claimer_kind": a.claimer_kind,
        "claimant": a.claimant,
        "claimed_at": timestamp(a.claimed_at),
        "last_heartbeat_at": timestamp(a.last_heartbeat_at),
        "lease_expires_at": timestamp(a.lease_expires_at),
        "ended_at": timestamp(a.ended_at),
        "outcome": a.outcome,
        "disposition": a.disposition,
        "died": a.died,
        "summary": a.summary,
        "summary_truncated": a.summary_truncated,
        "artifact": a.artifact,
        "error": error(a.error),
        "traceparent": a.traceparent,
    }


def error(stored: dict | None) -> dict | None:
    """An attempt's error object, every key present (an empty field is ``null``)."""
    if stored is None:
        return None
    return {
        "type": stored.get("type"),
        "message": stored.get("message"),
        "traceback": stored.get("traceback"),
        "truncated": bool(stored.get("truncated")),
    }


def claim(c: Claim, *, with_prior: bool = True) -> dict:
    """A claim. ``lease_token`` is present only when the claim was fenced
    (``require_fence``): an unfenced claim has no token to show, so the key is left out."""
    out: dict = {
        "todo": todo_row(c.todo),
        "attempt_seq": c.attempt_seq,
        "attempts_total": c.attempts_total,
        "timeout_seconds": c.timeout_seconds,
    }
    if c.lease_token is not None:
        out["lease_token"] = c.lease_token
    if with_prior:
        out["prior_attempts"] = [attempt(a) for a in c.prior_attempts]
    return out


def fired_schedule(fired: Fired) -> dict:
    """A manually fired schedule as the fire's own statement saw it, shaped as :func:`schedule`,
    with that one fire: the answer when a delete landed between the fire's commit and a re-read."""
    record = fired.schedule
    assert record is not None, "a manual fire returns its schedule"
    return {
        "id": str(record.id),
        "name": record.name,
        "cron": record.cron,
        "timezone": record.timezone,
        "queue": record.queue,
        "title": record.title,
        "kind": record.kind,
        "payload": record.payload,
        "priority": record.priority,
        "max_attempts": record.max_attempts,
        "requires": list(record.requires or ()),
        "missed": record.missed,
        "paused": record.paused,
        "next_fire_at": timestamp(record.next_fire_at),
        "fires": [
            {
                "tick": timestamp(fired.tick),
                "fired_at": timestamp(fired.tick),
                "how": fired.how,
                "missed": 0,
                "todo_id": fired.todo_id,
                "state": "pending" if fired.todo_id else "gone",
            }
        ],
    }


def schedule(view: ScheduleView) -> dict:
    """A schedule as ``list_schedules`` shows it: no team or owner (it is the caller's own)."""
    return {
        "id": str(view.id),
        "name": view.name,
        "cron": view.cron,
        "timezone": view.timezone,
        "queue": view.queue,
        "title": view.title,
        "kind": view.kind,
        "payload": view.payload,
        "priority": view.priority,
        "max_attempts": view.max_attempts,
        "requires": list(view.requires or ()),
        "missed": view.missed,
        "paused": view.paused,
        "next_fire_at": timestamp(view.next_fire_at),
        "fires": [
            {
                "tick": timestamp(f.tick),
                "fired_at": timestamp(f.fired_at),
                "how": f.how,
                "missed": f.missed,
                "todo_id": f.todo_id,
                "state": f.state,
            }
            for f in view.fires
        ],
    }
