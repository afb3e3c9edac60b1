"""Endpoint writes: vend, rotate, change scopes and lease, revoke (dead-lettering live work),
expire, delete, and the once-a-minute ``last_seen_at`` stamp.

A token is ``bd_`` + 32 random bytes in base64url. Only its SHA-256 is stored; the token is in
the vend and rotate results and nowhere else.

Who may manage a team's endpoints (checked in each statement's SQL): its admins, and its members
who are site admins (``superuser=True``: the caller vouches for ``is_superuser``). A site admin who
is not a member may not: an endpoint's token reaches the team's todos, and being a superuser does
not bypass team scoping (docs/guarantees.md); a site admin joins the team first (audited, visible).
``by`` None is a command-line call: no membership check.

Every change writes its change-log row (op ``endpoint``; ``revoke``; ``seen`` for the last-seen
stamp) in the statement that makes it; the relay tells the Board.

Every change to what a credential carries (revoke, expiry, rotate, scopes, lease, capabilities,
delete) also ends the endpoint's cached credential (``todos/core/credential_cache.py``): in this
process when its statement has run (``finish``), and in every other one through a
``board_credentials`` notification the statement sends itself, delivered when it commits. Not
through the relay: an agent's next request would come before the relay's next pass. These
statements are rare (people make them, the expiry sweep, an agent setting its own default lease;
never a claim or a report), so the cluster-wide notify lock a notifying commit takes costs
nothing here. A vend needs neither: an unknown token is never cached.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString
from uuid import UUID

from todos.core import compose
from todos.core.credential_cache import CACHE, CREDENTIALS_CHANNEL
from todos.core.db import Statement
from todos.core.errors import Conflict, Forbidden, Invalid, NotFound
from todos.core.store import inputs
from todos.core.store.endpoint_gate import seen_ctes
from todos.core.store.fragments import (
    ADMIN_ROLES,
    LEASE_SEEN,
    audit_row,
    board_state,
    children_failed,
    children_woken,
    last_attempt_reason_group,
    log_endpoints,
    log_todos,
    member_of,
    ready_message,
)
from todos.core.store.scopes import OperatorScope
from todos.core.words import ChangeOp, TodoState

TOKEN_PREFIX: LiteralString = "bd_"
PREFIX_SHOWN = 10
SCOPE_VERBS = (
    "create_for",
    "list_todos",
    "get_todo",
    "claim",
    "claim_next",
    "heartbeat",
    "complete",
    "fail",
    "release",
    "get_default_lease",
    "set_default_lease",
    "schedules",  # list, create, pause, resume and delete its own periodic schedules
)
# What a worker needs to drain a queue: pre-selected when vending.
DRAIN_VERBS = ("list_todos", "get_todo", "claim_next", "claim", "heartbeat", "complete", "fail", "release")
SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")

ENDPOINT_COLUMNS: LiteralString = """id, team_id, slug, name, credential_prefix, scope_verbs, scope_queues,
    default_lease_ttl_seconds, state, created_at, created_by, revoked_at, expires_at, last_seen_at, capabilities,
    claims_paused_at, claims_paused_by"""


@dataclass(frozen=True)
class EndpointRecord:
    id: UUID
    team_id: UUID
    slug: str
    name: str
    credential_prefix: str
    scope_verbs: tuple[str, ...]
    scope_queues: tuple[str, ...]
    default_lease_ttl_seconds: int | None
    state: str
    created_at: datetime
    created_by: int | None
    revoked_at: datetime | None
    expires_at: datetime | None
    last_seen_at: datetime | None
    capabilities: tuple[str, ...] = ()  # what its claims present when they present none
    claims_paused_at: datetime | None = None  # set while a team admin has paused its claims
    claims_paused_by: str | None = None

    @classmethod
    def from_row(cls, row: dict) -> EndpointRecord:
        values = {k: row[k] for k in cls.__dataclass_fields__}
        values["scope_verbs"] = tuple(values["scope_verbs"])
        values["scope_queues"] = tuple(values["scope_queues"])
        values["capabilities"] = tuple(values["capabilities"] or ())
        return cls(**values)


@dataclass(frozen=True)
class Vended:
    endpoint: EndpointRecord
    token: str  # shown once


@dataclass(frozen=True)
class Revoked:
    endpoint: EndpointRecord
    dead_lettered: tuple[str, ...]


def new_token() -> tuple[str, bytes, str]:
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, token_hash(token), token[:PREFIX_SHOWN]


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "replace")).digest()


def clean_verbs(values: Any) -> list[str]:
    if not isinstance(values, (list, tuple)) or not values:
        raise Invalid("scope_verbs", "must list at least one verb")
    unknown = [v for v in values if v not in SCOPE_VERBS]
    if unknown:
        raise Invalid("scope_verbs", f"unknown verb {str(unknown[0])[:40]!r}; known: {', '.join(SCOPE_VERBS)}")
    return [v for v in SCOPE_VERBS if v in values]


def clean_queues(values: Any) -> list[str]:
    if not isinstance(values, (list, tuple)) or not values:
        raise Invalid("scope_queues", "must list at least one queue")
    cleaned = inputs.queues(values, "scope_queues")
    return sorted(set(cleaned))


def clean_slug(value: Any, field: str = "slug") -> str:
    value = inputs.require_str(field, value)
    if not SLUG_RE.fullmatch(value):  # whole: match() lets a trailing newline through
        raise Invalid(field, "must be 1 to 63 lowercase letters, digits and dashes, starting with a letter or digit")
    return value


def clean_name(value: Any) -> str:
    value = inputs.require_str("name", value).strip()
    if not 1 <= len(value) <= 200:
        raise Invalid("name", "must be 1 to 200 characters")
    return value


def _manages(team: LiteralString, by: OperatorScope | None, superuser: bool = False) -> LiteralString:
    """SQL: the caller may manage the endpoints of ``team`` (an SQL expression): an admin of the
    team, or any member of it who is a site admin. A command (``by`` None) always may."""
    if by is None:
        return "TRUE"
    return member_of(team, roles=None if superuser else ADMIN_ROLES)


def _member(team: LiteralString, by: OperatorScope | None) -> LiteralString:
    if by is None:
        return "TRUE"
    return member_of(team)


VEND_DETAIL: LiteralString = "jsonb_build_object('verbs', s.scope_verbs, 'queues', s.scope_queues)"
EXPIRE_DETAIL: LiteralString = (
    "jsonb_build_object('dead_lettered', (SELECT count(*) FROM dead d WHERE d.endpoint_id = r.id))"
)
REVOKE_DETAIL: LiteralString = "jsonb_build_object('dead_lettered', (SELECT count(*) FROM dead))"


def _audit_row(action: LiteralString, source: LiteralString, detail: LiteralString = "%(detail)s") -> LiteralString:
    """The audit row of an endpoint change; ``source`` is a FROM clause naming the changed row ``s``."""
    return audit_row(action, source, team="s.team_id", endpoint="s.id", note="%(note)s", detail=detail)


# Endpoints one notification names at most: 100 ids of 36 characters stay far below PostgreSQL's
# 8000-byte payload limit. More (only the expiry sweep changes several at once) say ``null``.
NOTIFY_MAX_ENDPOINTS = 100


def _notify_credentials(rows: LiteralString) -> LiteralString:
    """SQL: one ``board_credentials`` notification naming the endpoints of ``rows`` (``id``), so
    every process forgets their cached credentials; none when ``rows`` is empty."""
    return f"""(SELECT count(pg_notify('{CREDENTIALS_CHANNEL}', json_build_object('endpoints', c.ids)::text))
        FROM (SELECT CASE WHEN count(*) <= {compose.integer(NOTIFY_MAX_ENDPOINTS)} THEN array_agg(n.id) END AS ids
              FROM {rows} n HAVING count(*) > 0) c)"""


def _actor(by: OperatorScope | None) -> dict:
    return {
        "user_id": by.user_id if by else None,
        "actor": by.username if by else "system",
        "note": None,
        "detail": None,
    }


def vend(
    by: OperatorScope | None,
    *,
    team_id: Any,
    name: Any,
    slug: Any,
    verbs: Any,
    queues: Any,
    default_lease_ttl_seconds: Any = None,
    expires_at: datetime | None = None,
    superuser: bool = False,
    capabilities: Any = None,
) -> Statement[Vended]:
    """Mint an endpoint and its token. ``by`` None: a command-line vend (no membership check).
    ``capabilities``: the default capabilities its claims present when they present none."""
    token, digest, prefix = new_token()
    params = _actor(by)
    params.update(
        team_id=_uuid(team_id, "team"),
        name=clean_name(name),
        slug=clean_slug(slug),
        verbs=clean_verbs(verbs),
        queues=clean_queues(queues),
        lease=inputs.default_lease(default_lease_ttl_seconds),
        expires_at=expires_at,
        capabilities=inputs.capability_labels("capabilities", capabilities),
        hash=digest,
        prefix=prefix,
    )
    guard = _manages("%(team_id)s", by, superuser)
    sql = f"""
WITH ins AS (
    INSERT INTO endpoints (team_id, slug, name, credential_hash, credential_prefix, scope_verbs,
                           scope_queues, default_lease_ttl_seconds, expires_at, created_by, capabilities)
    SELECT %(team_id)s, %(slug)s, %(name)s, %(hash)s, %(prefix)s, %(verbs)s::text[], %(queues)s::text[],
           %(lease)s, %(expires_at)s, %(user_id)s, %(capabilities)s::text[]
    WHERE {guard} AND EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s)
      AND NOT EXISTS (SELECT 1 FROM endpoints WHERE slug = %(slug)s)
    ON CONFLICT (slug) DO NOTHING
    RETURNING *
),
audit AS ({_audit_row("endpoint.vend", "ins s", VEND_DETAIL)}),
logged AS ({log_endpoints(ChangeOp.ENDPOINT, "ins")})
SELECT i.*, EXISTS (SELECT 1 FROM teams WHERE id = %(team_id)s) AS team_exists,
       {_member("%(team_id)s", by)} AS member,
       {guard} AS allowed,
       EXISTS (SELECT 1 FROM endpoints WHERE slug = %(slug)s) AS slug_taken
FROM (SELECT 1) one LEFT JOIN ins i ON true"""

    def finish(rows: list[dict]) -> Vended:
        row = rows[0]
        if row["id"] is None:
            if not row["team_exists"] or not row["member"]:
                raise NotFound("no such team")  # another team's is no different from none
            if not row["allowed"]:
                raise Forbidden("only a team admin can vend endpoints")
            raise Invalid("slug", f"{params['slug']!r} is already taken")
        return Vended(endpoint=EndpointRecord.from_row(row), token=token)

    return Statement(sql, params, finish)


def _endpoint_change(
    by: OperatorScope | None,
    endpoint_id: Any,
    set_sql: LiteralString,
    action: LiteralString,
    detail_sql: LiteralString,
    extra: dict,
    *,
    guard: LiteralString = "e.state = 'active'",
    superuser: bool = False,
    conflict: str = "the endpoint changed meanwhile (rotated or revoked); look again",
    also: LiteralString = "0",
) -> Statement[EndpointRecord]:
    """One change to an endpoint a person (or a command) makes. ``conflict``: the refusal when
    the endpoint is active but ``guard`` failed; ``also``: an SQL expression over ``upd`` the
    statement also selects (a notification it sends)."""
    params = _actor(by)
    params.update(extra, endpoint_id=_uuid(endpoint_id))
    admin = _manages("e.team_id", by, superuser)
    member = _member("e.team_id", by)
    sql = f"""
WITH before AS (SELECT e.* FROM endpoints e WHERE e.id = %(endpoint_id)s),
upd AS (
    UPDATE endpoints e SET {set_sql}
    FROM before b
    WHERE e.id = b.id AND {admin}
      AND {guard}
    RETURNING e.*
),
audit AS ({_audit_row(action, "upd s JOIN before b ON b.id = s.id", detail_sql)}),
logged AS ({log_endpoints(ChangeOp.ENDPOINT, "upd")})
SELECT u.*,
       (SELECT {member}
        FROM before e) AS member,
       (SELECT {admin}
        FROM before e) AS admin,
       (SELECT e.state FROM before e) AS state_before,
       {_notify_credentials("upd")} AS forgotten,
       {also} AS also
FROM (SELECT 1) one LEFT JOIN upd u ON true"""

    def finish(rows: list[dict]) -> EndpointRecord:
        row = rows[0]
        if row["id"] is None:
            if not row["member"]:
                raise NotFound("no such endpoint")
            if not row["admin"]:
                raise Forbidden("only a team admin can change endpoints")
            if row["state_before"] == "active":
                raise Conflict(conflict)
            raise Conflict("the endpoint is revoked")
        CACHE.forget([row["id"]])
        return EndpointRecord.from_row(row)

    return Statement(sql, params, finish)


def _uuid(value: Any, field: str = "endpoint") -> UUID:
    try:
        return UUID(str(value))
    except ValueError:
        raise Invalid(field, "must be an id") from None


def set_scopes(
    by: OperatorScope | None,
    endpoint_id: Any,
    *,
    verbs: Any,
    queues: Any,
    superuser: bool = False,
) -> Statement[EndpointRecord]:
    """Replace an endpoint's verbs and queues (audited with before and after)."""
    return _endpoint_change(
        by,
        endpoint_id,
        "scope_verbs = %(verbs)s::text[], scope_queues = %(queues)s::text[]",
        "endpoint.scopes",
        """jsonb_build_object('verbs', jsonb_build_object('from', b.scope_verbs, 'to', s.scope_verbs),
                              'queues', jsonb_build_object('from', b.scope_queues, 'to', s.scope_queues))""",
        {"verbs": clean_verbs(verbs), "queues": clean_queues(queues)},
        superuser=superuser,
    )


def set_default_lease(
    by: OperatorScope | None,
    endpoint_id: Any,
    seconds: Any,
    *,
    superuser: bool = False,
) -> Statement[EndpointRecord]:
    """Set (or with None reset) the endpoint's default lease, 60..86400 seconds."""
    return _endpoint_change(
        by,
        endpoint_id,
        "default_lease_ttl_seconds = %(lease)s",
        "endpoint.lease",
        "jsonb_build_object('from', b.default_lease_ttl_seconds, 'to', s.default_lease_ttl_seconds)",
        {"lease": inputs.default_lease(seconds)},
        superuser=superuser,
    )


def set_capabilities(
    by: OperatorScope | None,
    endpoint_id: Any,
    capabilities: Any,
    *,
    superuser: bool = False,
) -> Statement[EndpointRecord]:
    """Replace the endpoint's default capabilities: what its claims present when they present
    none of their own (a claim that presents some uses those instead). Audited with before and
    after; logged as an ``endpoint`` change, so the Board's claimability warning is re-read."""
    return _endpoint_change(
        by,
        endpoint_id,
        "capabilities = %(capabilities)s::text[]",
        "endpoint.capabilities",
        "jsonb_build_object('from', b.capabilities, 'to', s.capabilities)",
        {"capabilities": inputs.capability_labels("capabilities", capabilities)},
        superuser=superuser,
    )


@dataclass(frozen=True)
class Rotated:
    endpoint: EndpointRecord
    token: str


def rotate(
    by: OperatorScope | None,
    endpoint_id: Any,
    *,
    if_prefix: Any = None,
    superuser: bool = False,
) -> Statement[Rotated]:
    """A new token for the endpoint; the old one stops working with this statement's commit.

    ``if_prefix``: rotate only while the current credential still has this prefix (the one the
    human confirmed), so a form posted twice (a reload, two admins at once) rotates once and the
    second post is a conflict instead of silently replacing the token just handed out.
    """
    token, digest, prefix = new_token()
    extra = {"hash": digest, "prefix": prefix}
    guard = "e.state = 'active'"
    if if_prefix is not None:
        extra["if_prefix"] = inputs.require_str("if_prefix", if_prefix)
        guard += " AND e.credential_prefix = %(if_prefix)s"
    inner = _endpoint_change(
        by,
        endpoint_id,
        "credential_hash = %(hash)s, credential_prefix = %(prefix)s",
        "endpoint.rotate",
        "jsonb_build_object('prefix', jsonb_build_object('from', b.credential_prefix, 'to', s.credential_prefix))",
        extra,
        guard=guard,
        superuser=superuser,
    )
    return Statement(inner.sql, inner.params, lambda rows: Rotated(inner.finish(rows), token))


REVOKE_LIVE: LiteralString = f"""(t.state = {TodoState.PENDING.sql}
           OR (t.state = {TodoState.CLAIMED.sql} AND {LEASE_SEEN})
           OR (t.state = {TodoState.FAILED.sql} AND t.next_retry_at IS NOT NULL))"""
REVOKE_SQL: LiteralString = f"""
live AS (
    -- the revoked endpoints' live todos, locked, with their Board state before they die
    SELECT t.id, r.slug, {board_state("t")} AS state_before
    FROM todos t JOIN revoked r ON t.endpoint_id = r.id
    WHERE {REVOKE_LIVE}
    ORDER BY t.id
    FOR UPDATE OF t
),
dead AS (
    -- live work of a revoked endpoint can never be claimed again: dead-letter it
    UPDATE todos t SET state = {TodoState.FAILED.sql}, next_retry_at = NULL, owner = NULL, lease_expires_at = NULL,
        completed_at = now(), updated_at = now(),
        result = jsonb_build_object('error', 'endpoint_revoked', 'endpoint', l.slug, 'revoked_at', now()),
        {last_attempt_reason_group("'endpoint_revoked'")}
    FROM live l
    WHERE t.id = l.id AND {REVOKE_LIVE}
    RETURNING t.*, l.state_before
),
closed AS (
    UPDATE todo_attempts a SET ended_at = now(), outcome = 'revoked', disposition = 'dead_lettered'
    FROM dead d
    WHERE a.todo_id = d.id AND a.seq = d.attempts_total AND a.ended_at IS NULL
),
logged_todos AS ({log_todos(ChangeOp.REVOKE, "dead", before="r.state_before")}),
{children_failed("dead")},
children_woken AS (SELECT {children_woken()} AS n),
logged AS ({log_endpoints(ChangeOp.REVOKE, "revoked")})"""


def revoke(
    by: OperatorScope | None, endpoint_id: Any, *, note: Any = None, superuser: bool = False
) -> Statement[Revoked]:
    """Revoke an endpoint and, in the same statement, dead-letter its live todos (pending,
    claimed, or waiting for a retry): their open attempts close ``revoked``/``dead_lettered``."""
    params = _actor(by)
    params.update(endpoint_id=_uuid(endpoint_id), note=inputs.note(note))
    admin = _manages("e.team_id", by, superuser)
    member = _member("e.team_id", by)
    sql = f"""
WITH revoked AS (
    UPDATE endpoints e SET state = 'revoked', revoked_at = now()
    WHERE e.id = %(endpoint_id)s AND e.state = 'active'
      AND {admin}
    RETURNING e.*
),{REVOKE_SQL},
audit AS ({_audit_row("endpoint.revoke", "revoked s", REVOKE_DETAIL)}),
result AS (
    SELECT r.*, (SELECT coalesce(array_agg(d.id), '{{}}') FROM dead d) AS dead_ids,
           (SELECT n FROM children_woken) AS children_woken
    FROM revoked r
)
SELECT x.*,
       (SELECT {member}
        FROM endpoints e WHERE e.id = %(endpoint_id)s) AS member,
       (SELECT {admin}
        FROM endpoints e WHERE e.id = %(endpoint_id)s) AS admin,
       {_notify_credentials("revoked")} AS forgotten
FROM (SELECT 1) one LEFT JOIN result x ON true"""

    def finish(rows: list[dict]) -> Revoked:
        row = rows[0]
        if row["id"] is None:
            if not row["member"]:
                raise NotFound("no such endpoint")
            if not row["admin"]:
                raise Forbidden("only a team admin can revoke endpoints")
            raise Conflict("the endpoint is already revoked")
        CACHE.forget([row["id"]])
        return Revoked(endpoint=EndpointRecord.from_row(row), dead_lettered=tuple(row["dead_ids"]))

    return Statement(sql, params, finish)


def expire_due(limit: int = 100) -> Statement[list[Revoked]]:
    """The expiry sweep: revoke every active endpoint whose lifetime ended, exactly as a revoke."""
    sql = f"""
WITH revoked AS (
    UPDATE endpoints e SET state = 'revoked', revoked_at = now()
    -- NO KEY UPDATE: the relay's count upserts hold KEY SHARE on the endpoints they reference
    -- (their foreign key); FOR UPDATE would skip those endpoints, and the sweep would miss them
    WHERE e.id IN (SELECT id FROM endpoints WHERE state = 'active' AND expires_at <= now()
                   LIMIT %(limit)s FOR NO KEY UPDATE SKIP LOCKED)
    RETURNING e.*
),{REVOKE_SQL},
audit AS ({
        audit_row(
            "endpoint.expire",
            "revoked r",
            team="r.team_id",
            user="NULL",
            actor="'system'",
            endpoint="r.id",
            detail=EXPIRE_DETAIL,
        )
    })
SELECT r.*, (SELECT coalesce(array_agg(d.id), '{{}}') FROM dead d WHERE d.endpoint_id = r.id) AS dead_ids,
       (SELECT n FROM children_woken) AS children_woken,
       {_notify_credentials("revoked")} AS forgotten
FROM revoked r"""

    def finish(rows: list[dict]) -> list[Revoked]:
        CACHE.forget([row["id"] for row in rows])
        return [Revoked(EndpointRecord.from_row(r), tuple(r["dead_ids"])) for r in rows]

    return Statement(sql, {"limit": limit}, finish)


def delete(by: OperatorScope, endpoint_id: Any, *, superuser: bool = False) -> Statement[None]:
    """Delete a revoked endpoint (its todos cascade). Active endpoints must be revoked first."""
    params = _actor(by)
    params["endpoint_id"] = _uuid(endpoint_id)
    admin = _manages("e.team_id", by, superuser)
    sql = f"""
WITH gone AS (
    DELETE FROM endpoints e
    WHERE e.id = %(endpoint_id)s AND e.state = 'revoked'
      AND {admin}
    RETURNING e.id, e.team_id, e.slug
),
audit AS ({_audit_row("endpoint.delete", "gone s", "jsonb_build_object('slug', s.slug)")}),
logged AS ({log_endpoints(ChangeOp.ENDPOINT, "gone")})
SELECT (SELECT count(*) FROM gone) AS deleted,
       EXISTS (SELECT 1 FROM endpoints e WHERE e.id = %(endpoint_id)s
           AND {_member("e.team_id", by)}) AS member,
       EXISTS (SELECT 1 FROM endpoints e WHERE e.id = %(endpoint_id)s
           AND {admin}) AS admin,
       {_notify_credentials("gone")} AS forgotten"""

    def finish(rows: list[dict]) -> None:
        row = rows[0]
        if row["deleted"]:
            CACHE.forget([params["endpoint_id"]])
            return None
        if not row["member"]:
            raise NotFound("no such endpoint")
        if not row["admin"]:
            raise Forbidden("only a team admin can delete endpoints")
        raise Conflict("only a revoked endpoint can be deleted; revoke it first")

    return Statement(sql, params, finish)


def touch_last_seen(endpoint_id: UUID) -> Statement[None]:
    """Stamp ``last_seen_at``, at most once a minute (so an agent's calls do not each write) and
    without waiting for the endpoint's row (the claims and reports stamp it the same way), and
    tell the Board (op ``seen``: only pages that show "last seen" listen for it)."""
    sql = f"""
WITH {seen_ctes()}
SELECT count(*) AS stamped FROM seen"""
    return Statement(sql, {"endpoint_id": endpoint_id}, lambda rows: None)


def _wake_waiting_claims(rows: LiteralString) -> LiteralString:
    """SQL: wake every claim of the endpoints of ``rows`` waiting in a long poll on any of their
    queues (a ``board_ready`` message without a count wakes them all), so it claims again and
    meets what changed (a pause answers ``paused`` at once)."""
    return f"""(SELECT count({ready_message("w.id", "q.queue")})
        FROM {rows} w CROSS JOIN LATERAL unnest(w.scope_queues) AS q(queue))"""


PAUSE_DETAIL: LiteralString = "jsonb_build_object('paused_at', s.claims_paused_at)"
RESUME_DETAIL: LiteralString = "jsonb_build_object('paused_at', b.claims_paused_at, 'paused_by', b.claims_paused_by)"


def pause_claims(
    by: OperatorScope | None, endpoint_id: Any, *, note: Any = None, superuser: bool = False
) -> Statement[EndpointRecord]:
    """Pause the endpoint's claims: from this statement's commit every claim by it is refused
    ``paused`` (naming who paused it), and its long polls waiting now are woken to meet that at
    once; its reports still land, so work in flight finishes. Guard: active and not paused (a
    second pause is a conflict). Audited ``endpoint.pause``; no todo or attempt row changes."""
    params = {"note": inputs.note(note)}
    return _endpoint_change(
        by,
        endpoint_id,
        "claims_paused_at = now(), claims_paused_by = %(actor)s",
        "endpoint.pause",
        PAUSE_DETAIL,
        params,
        guard="e.state = 'active' AND e.claims_paused_at IS NULL",
        superuser=superuser,
        conflict="the endpoint's claims are already paused",
        also=_wake_waiting_claims("upd"),
    )


def resume_claims(
    by: OperatorScope | None, endpoint_id: Any, *, note: Any = None, superuser: bool = False
) -> Statement[EndpointRecord]:
    """Resume the endpoint's paused claims; its waiting long polls are woken to claim at once.
    Guard: active and paused (resuming claims that run is a conflict). Audited ``endpoint.resume``
    with when and by whom they had been paused; no todo or attempt row changes."""
    params = {"note": inputs.note(note)}
    return _endpoint_change(
        by,
        endpoint_id,
        "claims_paused_at = NULL, claims_paused_by = NULL",
        "endpoint.resume",
        RESUME_DETAIL,
        params,
        guard="e.state = 'active' AND e.claims_paused_at IS NOT NULL",
        superuser=superuser,
        conflict="the endpoint's claims are not paused",
        also=_wake_waiting_claims("upd"),
    )


def set_own_default_lease(endpoint_id: UUID, seconds: Any) -> Statement[EndpointRecord]:
    """The agent verb ``set_default_lease``: an endpoint changes its own default (null resets)."""
    sql = f"""
WITH upd AS (
    UPDATE endpoints SET default_lease_ttl_seconds = %(lease)s
    WHERE id = %(endpoint_id)s AND state = 'active'
    RETURNING {ENDPOINT_COLUMNS}
),
logged AS ({log_endpoints(ChangeOp.ENDPOINT, "upd")})
SELECT u.*, {_notify_credentials("upd")} AS forgotten FROM upd u"""

    def finish(rows: list[dict]) -> EndpointRecord:
        if not rows:
            raise Conflict("the endpoint is revoked")
        CACHE.forget([endpoint_id])
        return EndpointRecord.from_row(rows[0])

    return Statement(sql, {"endpoint_id": endpoint_id, "lease": inputs.default_lease(seconds)}, finish)
