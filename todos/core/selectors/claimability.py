"""Work no agent can claim: waiting todos (pending, scheduled to run later, blocked on their
parents, or failed with a retry scheduled) whose owning endpoint cannot take them, with the reason
and the fix. Scheduled and blocked work is not claimable *yet*, but once it comes due (or its
parents are done) it is just as stuck as pending work, so each is counted (separately: the Board
says what it waits for as well). A blocked todo is pending with ``next_retry_at = 'infinity'``
(0024): it is counted as blocked, never as scheduled.

A todo belongs to one endpoint (``todos.endpoint_id``: the caller of ``create_for``, or the
endpoint it named as ``endpoint``), and only that endpoint's credential claims it: ``claim_next``
and ``claim`` look at the caller's own todos in the caller's ``scope_queues``. So a waiting todo
sits forever (until a human takes it) when its owner

* was revoked or has expired (``revoked``, ``expired``),
* has neither ``claim_next`` nor ``claim`` in its verbs: a producer-only endpoint (``no_claim_verb``),
* does not have the todo's queue in its ``scope_queues`` (``queue_out_of_scope``);

or when the todo is reserved (``assignee``) for *another* endpoint, which cannot claim what it
does not own (``assigned_elsewhere``), or when it requires capabilities its owner does not have
(``missing_capabilities``): a claim presenting none presents the endpoint's default capabilities,
so work needing a label outside them waits unless a worker presents it itself (``--capability``).
The Board can only know the defaults; it says so, and names the missing labels.

The question is asked per (owner, queue), never per todo: the relay's exact counts
(``todo_counts``, primary key ``(endpoint_id, queue, state)``) say where work waits, and the
owners' rows say whether they can claim it, so the cost is O(the viewer's endpoints × queues)
whatever the number of todos. Reservations are read from the partial assignee index
(``todos_assignee_state_created``, only assigned rows), grouped by (owner, queue, assignee): the
cost is the number of pending todos reserved for an endpoint, never the number of todos.
Requirements are read the same way from ``todos_requires_waiting`` (only waiting rows that need
something), grouped by (owner, queue) with the labels the owner lacks. For each
group it also names the team's endpoints that *do* claim that queue (the retarget fix: a producer
passes ``endpoint`` to ``create_for``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import LiteralString
from urllib.parse import urlencode
from uuid import UUID

from django.urls import reverse

from todos.core.replica import read_connection
from todos.core.selectors.access import Viewer

CLAIM_VERBS = ("claim_next", "claim")

# One row per (owning endpoint, queue) with waiting work its owner cannot claim.
STUCK_SQL: LiteralString = """
SELECT c.endpoint_id, c.queue, e.slug, e.team_id, e.scope_queues,
       coalesce(sum(c.n) FILTER (WHERE c.state = 'pending'), 0)::bigint AS pending,
       coalesce(sum(c.n) FILTER (WHERE c.state = 'retry'), 0)::bigint AS retry,
       coalesce(sum(c.n) FILTER (WHERE c.state = 'scheduled'), 0)::bigint AS scheduled,
       coalesce(sum(c.n) FILTER (WHERE c.state = 'blocked'), 0)::bigint AS blocked,
       CASE WHEN e.state = 'revoked' THEN 'revoked'
            WHEN e.expires_at <= now() THEN 'expired'
            WHEN NOT (e.scope_verbs && %(claim_verbs)s::text[]) THEN 'no_claim_verb'
            WHEN NOT (c.queue = ANY(e.scope_queues)) THEN 'queue_out_of_scope'
            ELSE 'claims_paused' END AS reason,
       e.claims_paused_by,
       ARRAY(SELECT o.slug FROM endpoints o
             WHERE o.team_id = e.team_id AND o.id <> e.id AND o.state = 'active'
               AND (o.expires_at IS NULL OR o.expires_at > now())
               AND o.scope_verbs && %(claim_verbs)s::text[] AND c.queue = ANY(o.scope_queues)
               AND o.claims_paused_at IS NULL
             ORDER BY o.slug) AS claimers
FROM todo_counts c JOIN endpoints e ON e.id = c.endpoint_id
WHERE c.endpoint_id = ANY(%(eps)s::uuid[]) AND c.state IN ('pending', 'scheduled', 'blocked', 'retry') AND c.n > 0
  AND (%(queue)s::text IS NULL OR c.queue = %(queue)s::text)
  AND (e.state = 'revoked' OR e.expires_at <= now()
       OR NOT (e.scope_verbs && %(claim_verbs)s::text[]) OR NOT (c.queue = ANY(e.scope_queues))
       OR e.claims_paused_at IS NOT NULL)
GROUP BY c.endpoint_id, c.queue, e.id
ORDER BY e.slug, c.queue"""

# Pending todos (scheduled and blocked ones counted apart) reserved for an endpoint other than their owner, per
# (owner, queue, assignee).
# The range on assignee is the 'endpoint:' prefix, served by todos_assignee_state_created.
ASSIGNED_SQL: LiteralString = """
SELECT t.endpoint_id, t.queue, t.assignee, e.slug, e.team_id, e.scope_queues,
       count(*) FILTER (WHERE t.next_retry_at IS NULL)::bigint AS pending,
       count(*) FILTER (WHERE t.next_retry_at <> 'infinity')::bigint AS scheduled,
       count(*) FILTER (WHERE t.next_retry_at = 'infinity')::bigint AS blocked,
       (SELECT o.slug FROM endpoints o WHERE 'endpoint:' || o.id::text = t.assignee) AS assignee_slug
FROM todos t JOIN endpoints e ON e.id = t.endpoint_id
WHERE t.assignee >= 'endpoint:' AND t.assignee < 'endpoint;' AND t.state = 'pending'
  AND t.endpoint_id = ANY(%(eps)s::uuid[])
  AND (%(queue)s::text IS NULL OR t.queue = %(queue)s::text)
  AND t.assignee <> 'endpoint:' || t.endpoint_id::text
GROUP BY t.endpoint_id, t.queue, t.assignee, e.id
ORDER BY e.slug, t.queue, t.assignee"""


# Waiting capability-bound todos whose requirements are not within their owner's default
# capabilities, per (owner, queue), with the labels it lacks. Served by todos_requires_waiting.
CAPABILITIES_SQL: LiteralString = """
WITH waiting AS (
    SELECT t.endpoint_id, t.queue, t.state, t.next_retry_at, t.requires FROM todos t
    WHERE t.endpoint_id = ANY(%(eps)s::uuid[]) AND t.requires <> '{}' AND t.state IN ('pending', 'failed')
      AND (t.state = 'pending' OR t.next_retry_at IS NOT NULL)  -- pending, scheduled, blocked or a retry: not dead
      AND (%(queue)s::text IS NULL OR t.queue = %(queue)s::text)
)
SELECT w.endpoint_id, w.queue, e.slug, e.team_id, e.scope_queues, e.capabilities,
       count(*) FILTER (WHERE w.state = 'pending' AND w.next_retry_at IS NULL)::bigint AS pending,
       count(*) FILTER (WHERE w.state = 'failed')::bigint AS retry,
       count(*) FILTER (WHERE w.state = 'pending' AND w.next_retry_at <> 'infinity')::bigint AS scheduled,
       count(*) FILTER (WHERE w.state = 'pending' AND w.next_retry_at = 'infinity')::bigint AS blocked,
       (SELECT array_agg(DISTINCT l ORDER BY l) FROM waiting m CROSS JOIN LATERAL unnest(m.requires) l
        WHERE m.endpoint_id = w.endpoint_id AND m.queue = w.queue AND NOT (l = ANY(e.capabilities))) AS missing
FROM waiting w JOIN endpoints e ON e.id = w.endpoint_id
WHERE NOT (w.requires <@ e.capabilities)
GROUP BY w.endpoint_id, w.queue, e.id
ORDER BY e.slug, w.queue"""


@dataclass(frozen=True)
class Fix:
    label: str
    url: str


@dataclass(frozen=True)
class Stuck:
    """Waiting todos of one (endpoint, queue) that no agent can claim."""

    endpoint_id: UUID
    endpoint_slug: str
    team_slug: str
    queue: str
    pending: int
    retry: int
    # revoked | expired | no_claim_verb | queue_out_of_scope | claims_paused | assigned_elsewhere |
    # missing_capabilities
    reason: str
    scope_queues: tuple[str, ...]
    claimers: tuple[str, ...]  # the team's endpoints that do claim this queue
    assignee: str | None = None  # assigned_elsewhere: the endpoint:<id> they are reserved for
    can_fix: bool = False  # the viewer is an admin of the owning team (endpoints are theirs to change)
    assignee_slug: str | None = None
    # missing_capabilities: the labels the todos need beyond the owner's default capabilities
    missing: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()  # the owner's default capabilities
    scheduled: int = 0  # of them, scheduled to run later: stuck the same way once they come due
    paused_by: str | None = None  # claims_paused: who paused the owner's claims
    blocked: int = 0  # of them, waiting on their parents: stuck the same way once those are done

    @property
    def waiting(self) -> int:
        return self.pending + self.retry + self.scheduled + self.blocked

    @property
    def explanation(self) -> str:
        ep, queue = self.endpoint_slug, self.queue
        return {
            "revoked": f"Their endpoint {ep} was revoked: no agent can claim them.",
            "expired": f"Their endpoint {ep} has expired: no agent can claim them.",
            "no_claim_verb": f"Their endpoint {ep} cannot claim (it has neither claim_next nor claim): "
            "it only hands work in.",
            "queue_out_of_scope": f"Queue {queue} is outside {ep}'s queues ({', '.join(self.scope_queues) or 'none'}).",
            "claims_paused": f"The claims of their endpoint {ep} are paused (by {self.paused_by or 'a team admin'}): "
            "nothing is claimed until they are resumed.",
            "assigned_elsewhere": f"They are assigned to endpoint {self.assignee_slug or 'that no longer exists'}, "
            f"but only their owner {ep} claims them.",
            "missing_capabilities": f"They need capabilities no endpoint that could claim them has: "
            f"{', '.join(self.missing)}. Only their owner {ep} claims them, and its default capabilities are "
            f"{', '.join(self.capabilities) or 'none'}; only a worker presenting the labels itself "
            "(--capability) would take them.",
        }[self.reason]

    def covers(self, row) -> bool:
        """Whether this group holds ``row`` (a todo row of its owner and queue)."""
        if self.reason == "missing_capabilities":
            return not set(row.requires) <= set(self.capabilities)
        return self.reason != "assigned_elsewhere" or row.assignee == self.assignee

    @property
    def _listed_state(self) -> str:
        """The todo list's tab that shows them: the first of its states with any (pending if none)."""
        counts = (
            ("pending", self.pending),
            ("retry", self.retry),
            ("scheduled", self.scheduled),
            ("blocked", self.blocked),
        )
        return next((state for state, n in counts if n), "pending")

    @property
    def todos_url(self) -> str:
        query = urlencode(
            {
                "team": self.team_slug,
                "endpoint": self.endpoint_slug,
                "queue": self.queue,
                "state": self._listed_state,
            }
        )
        return f"{reverse('todo_list')}?{query}"

    @property
    def fixes(self) -> list[Fix]:
        """What would make the work claimable, most direct first."""
        ep, queue = self.endpoint_slug, self.queue
        edit = reverse("endpoint_edit", args=[ep])
        vend = f"{reverse('endpoint_vend')}?team={self.team_slug}"
        fixes = []
        if self.reason == "assigned_elsewhere":
            return [Fix(f"Clear the assignment (or reassign them to {ep}) on each todo", self.todos_url)]
        if self.reason == "missing_capabilities":
            return [
                Fix(f"Give {ep} the default capabilities {', '.join(self.missing)}", edit),
                Fix("Take or cancel them by hand", self.todos_url),
            ]
        if self.reason == "claims_paused":  # a pause is meant to end: no retarget, no new endpoint
            return [
                Fix(f"Resume {ep}'s claims on the Agents page", reverse("agents")),
                Fix("Take or cancel them by hand", self.todos_url),
            ]
        if self.reason == "no_claim_verb":
            fixes.append(Fix(f"Give {ep} the claim_next verb", edit))
        if self.reason == "queue_out_of_scope":
            fixes.append(Fix(f"Widen {ep}'s queues to include {queue}", edit))
        if self.claimers:
            fixes.append(
                Fix(
                    f"Retarget: have producers pass endpoint={self.claimers[0]} to create_for "
                    f"({self.claimers[0]} claims {queue})",
                    reverse("endpoints") + f"?team={self.team_slug}",
                )
            )
        else:
            fixes.append(Fix(f"Vend an endpoint that claims {queue}, and retarget producers to it", vend))
        fixes.append(Fix("Take or cancel them by hand", self.todos_url))
        return fixes


def stuck_work(viewer: Viewer, *, team: str = "", endpoint: str = "", queue: str = "") -> list[Stuck]:
    """The viewer's waiting work no agent can claim, optionally narrowed like the todo list
    (team slug, endpoint slug, queue)."""
    endpoints = [
        e
        for e in viewer.endpoints
        if (not endpoint or e.slug == endpoint) and (not team or (viewer.team(e.team_id) or _NO_TEAM).slug == team)
    ]
    if not endpoints:
        return []
    params = {"eps": [e.id for e in endpoints], "queue": queue or None, "claim_verbs": list(CLAIM_VERBS)}
    with read_connection() as conn:
        rows = conn.execute(STUCK_SQL, params).fetchall()
        assigned = conn.execute(ASSIGNED_SQL, params).fetchall()
        bound = conn.execute(CAPABILITIES_SQL, params).fetchall()

    def group(row, owning_team, **fields) -> Stuck:
        """One (endpoint, queue) group of a row: the fields every reason shares, then its own."""
        return Stuck(
            endpoint_id=row["endpoint_id"],
            endpoint_slug=row["slug"],
            team_slug=owning_team.slug,
            queue=row["queue"],
            pending=row["pending"],
            scheduled=row["scheduled"],
            blocked=row["blocked"],
            scope_queues=tuple(row["scope_queues"]),
            **fields,
        )

    site_admin = viewer.is_superuser  # endpoints are their team admins' (or a site admin's) to change
    stuck = []
    for row in rows:
        owning_team = viewer.team(row["team_id"])
        if owning_team is None:  # pragma: no cover - every row is one of the viewer's endpoints
            continue
        stuck.append(
            group(
                row,
                owning_team,
                retry=row["retry"],
                reason=row["reason"],
                claimers=tuple(row["claimers"]),
                can_fix=owning_team.is_admin or site_admin,
                paused_by=row["claims_paused_by"],
            )
        )
    # An owner that cannot claim the queue at all is already flagged, with its fix.
    flagged = {(s.endpoint_id, s.queue) for s in stuck}
    for row in assigned:
        owning_team = viewer.team(row["team_id"])
        if owning_team is None or (row["endpoint_id"], row["queue"]) in flagged:
            continue
        stuck.append(
            group(
                row,
                owning_team,
                retry=0,
                reason="assigned_elsewhere",
                claimers=(),
                assignee=row["assignee"],
                assignee_slug=row["assignee_slug"],
                can_fix=owning_team.can_act,  # clearing an assignment is an operator's action
            )
        )
    for row in bound:
        owning_team = viewer.team(row["team_id"])
        if owning_team is None or (row["endpoint_id"], row["queue"]) in flagged:
            continue
        stuck.append(
            group(
                row,
                owning_team,
                retry=row["retry"],
                reason="missing_capabilities",
                claimers=(),
                missing=tuple(row["missing"] or ()),
                capabilities=tuple(row["capabilities"]),
                can_fix=owning_team.is_admin or site_admin,
            )
        )
    return stuck


class _NoTeam:
    slug = ""


_NO_TEAM = _NoTeam()


def matching(stuck: list[Stuck], f) -> list[Stuck]:
    """The groups a todo list filter (``todos.core.filters.TodoFilter``) shows some of."""
    return [
        s
        for s in stuck
        if (not f.team or s.team_slug == f.team)
        and (not f.endpoint or s.endpoint_slug == f.endpoint)
        and (not f.queue or s.queue == f.queue)
    ]
