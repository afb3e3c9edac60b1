"""The store's classified failures. Every transport maps these to its own error shape."""

from __future__ import annotations


class StoreError(Exception):
    """Base class; ``code`` is the agent API's error code."""

    code = "internal"

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Invalid(StoreError):
    """Malformed input. Raised before any write, and names the offending field."""

    code = "invalid"

    def __init__(self, field: str, problem: str):
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


class NotFound(StoreError):
    """No such todo in the caller's scope. A foreign tenant's todo is indistinguishable from none."""

    code = "not_found"


class Forbidden(StoreError):
    """The todo is in the caller's tenant but outside what this caller may touch (queue scope, role)."""

    code = "forbidden"


class Conflict(StoreError):
    """The todo exists in scope but the transition's guard failed: wrong state, not the lease holder,
    fence mismatch, lease lost, or a paused queue."""

    code = "conflict"


class Paused(StoreError):
    """The endpoint's claims are paused by a team admin: no claim of it takes work until they are
    resumed. Its reports still land. A worker waits and claims again later (HTTP 423)."""

    code = "paused"

    def __init__(self, by: str, at: object = None):
        when = f" at {at}" if at else ""
        super().__init__(
            f"this endpoint's claims are paused (by {by}{when}); reports still land. "
            "A team admin resumes them on the Board's Agents page; claim again later"
        )
        self.by = by


class StaleSnapshot(Conflict):
    """The statement collided with a row committed after its snapshot was taken, so it could
    neither write nor read it (an idempotent create racing the create that won the key).

    Running the statement again takes a new snapshot that sees the winner, so
    :func:`todos.core.db.execute` and :func:`todos.core.db.aexecute` do, a few times, before letting it
    out. It is a :class:`Conflict`, so a caller that still receives it needs no new branch.
    """


class Internal(StoreError):
    """A broken invariant (for example a second open attempt refused at COMMIT)."""

    code = "internal"
