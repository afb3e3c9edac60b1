"""The words the store writes and everything after it reads: a todo's state, its state as the Board
counts it, and the operations of the change log. Each is defined here once.

The store's SQL names them through ``.sql`` (the word as an SQL string literal, a ``LiteralString``
for the type checker); the relay and the live pipeline compare against the members, which are
strings. The copies that cannot import them are tied to them by tests: the database's checks
(``todos.state``, ``todo_counts.state``, the ``change_op`` domain) and ``static/board/live.js``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import LiteralString


class TodoState(StrEnum):
    """A todo's stored state (``todos.state``): the lifecycle's five."""

    PENDING = "pending"
    CLAIMED = "claimed"
    DONE = "done"
    FAILED = "failed"
    CANCELED = "canceled"

    @property
    def sql(self) -> LiteralString:
        """The state as an SQL string literal: ``'claimed'``."""
        return f"'{self.value}'"


class BoardState(StrEnum):
    """A todo's state as the Board counts and shows it (``todo_board_state()``, ``todo_counts``)
    and as the change log records it (``state_before``, ``state_after``): ``failed`` is split into
    a scheduled retry and a dead letter, and a pending todo that waits for its time is scheduled
    (for other todos: blocked)."""

    PENDING = "pending"
    BLOCKED = "blocked"
    SCHEDULED = "scheduled"
    CLAIMED = "claimed"
    RETRY = "retry"
    DEAD = "dead"
    DONE = "done"
    CANCELED = "canceled"

    @property
    def sql(self) -> LiteralString:
        """The state as an SQL string literal: ``'dead'``."""
        return f"'{self.value}'"


class ChangeOp(StrEnum):
    """What a change-log row says happened (``change_log.op``); the relay sends it on as the
    Board message's ``op``, and pages pick the changes they show by it."""

    # a todo's lifecycle
    CREATE = "create"
    CLAIM = "claim"
    HEARTBEAT = "heartbeat"
    COMPLETE = "complete"
    FAIL = "fail"
    RELEASE = "release"
    FORCE_RELEASE = "force_release"
    RETRY = "retry"
    CANCEL = "cancel"
    ASSIGN = "assign"
    PRIORITY = "priority"
    RUN_NOW = "run_now"
    RESCHEDULE = "reschedule"
    EDIT = "edit"
    # the background work
    REAP = "reap"
    # an attempt ran past its run-time limit while its holder still heartbeated
    TIMEOUT = "timeout"
    REQUEUE = "requeue"
    PURGE = "purge"
    # an endpoint's revocation or expiry (its live todos become dead letters)
    REVOKE = "revoke"
    # a queue's pause, its resumption, a concurrency key's limit
    PAUSE = "pause"
    RESUME = "resume"
    CONCURRENCY = "concurrency"
    # a queue's default run-time limit set or cleared
    QUEUE_SETTING = "queue_setting"
    # a rate key's limit set, changed or removed
    RATE = "rate"
    # an endpoint vended, changed or deleted; its once-a-minute "last seen" stamp
    ENDPOINT = "endpoint"
    SEEN = "seen"
    # a person joined or left a team, or changed role; a schedule changed
    MEMBERSHIP = "membership"
    SCHEDULE = "schedule"

    @property
    def sql(self) -> LiteralString:
        """The op as an SQL string literal: ``'claim'``."""
        return f"'{self.value}'"
