"""Work no agent can claim: waiting todos (pending, or failed with a retry due) whose owning
endpoint cannot take them, with the reason and the fix.

A todo belongs to one endpoint (``todos.endpoint_id``: the caller of ``create_for``, or the
endpoint it named as ``endpoint``), and only that endpoint's credential claims it: ``claim_next``
and ``claim`` look at the caller's own todos in the caller's ``scope_queues``. So a waiting todo
sits forever (until a human takes it) when its owner

* was revoked or has expired (``revoked``, ``expired``),
* has neither ``claim_next`` nor ``claim`` in its verbs: a producer-only endpoint (``no_claim_verb``),
* does not have the todo's queue in its ``scope_queues`` (``queue_out_of_scope``).

The question is asked per (owner, queue), never per todo: the relay's exact counts
(``todo_counts``, primary key ``(endpoint_id, queue, state)``) say where work waits, and the
owners' rows say whether they can claim it, so the cost is O(the viewer's endpoints × queues)
whatever the number of todos. For each group it also names the team's endpoints that *do* claim
that queue (the retarget fix: a producer passes ``endpoint`` to ``create_for``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import LiteralString
from urllib.parse import urlencode
from uuid import UUID

from django.urls import reverse

from todos.db import pool
from todos.selectors.access import Viewer

CLAIM_VERBS = ("claim_next", "claim")

# One row per (owning endpoint, queue) with waiting work its owner cannot claim.
STUCK_SQL: LiteralString = """
SELECT c.endpoint_id, c.queue, e.slug, e.team_id, e.scope_queues,
       coalesce(sum(c.n) FILTER (WHERE c.state = 'pending'), 0)::bigint AS pending,
       coalesce(sum(c.n) FILTER (WHERE c.state = 'retry'), 0)::bigint AS retry,
       CASE WHEN e.state = 'revoked' THEN 'revoked'
            WHEN e.expires_at <= now() THEN 'expired'
            WHEN NOT (e.scope_verbs && %(claim_verbs)s::text[]) THEN 'no_claim_verb'
            ELSE 'queue_out_of_scope' END AS reason,
       ARRAY(SELECT o.slug FROM endpoints o
             WHERE o.team_id = e.team_id AND o.id <> e.id AND o.state = 'active'
               AND (o.expires_at IS NULL OR o.expires_at > now())
               AND o.scope_verbs && %(claim_verbs)s::text[] AND c.queue = ANY(o.scope_queues)
             ORDER BY o.slug) AS claimers
FROM todo_counts c JOIN endpoints e ON e.id = c.endpoint_id
WHERE c.endpoint_id = ANY(%(eps)s::uuid[]) AND c.state IN ('pending', 'retry') AND c.n > 0
  AND (%(queue)s::text IS NULL OR c.queue = %(queue)s::text)
  AND (e.state = 'revoked' OR e.expires_at <= now()
       OR NOT (e.scope_verbs && %(claim_verbs)s::text[]) OR NOT (c.queue = ANY(e.scope_queues)))
GROUP BY c.endpoint_id, c.queue, e.id
ORDER BY e.slug, c.queue"""


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
    reason: str  # revoked | expired | no_claim_verb | queue_out_of_scope
    scope_queues: tuple[str, ...]
    claimers: tuple[str, ...]  # the team's endpoints that do claim this queue

    @property
    def waiting(self) -> int:
        return self.pending + self.retry

    @property
    def explanation(self) -> str:
        ep, queue = self.endpoint_slug, self.queue
        return {
            "revoked": f"Their endpoint {ep} was revoked: no agent can claim them.",
            "expired": f"Their endpoint {ep} has expired: no agent can claim them.",
            "no_claim_verb": f"Their endpoint {ep} cannot claim (it has neither claim_next nor claim): "
            "it only hands work in.",
            "queue_out_of_scope": f"Queue {queue} is outside {ep}'s queues ({', '.join(self.scope_queues) or 'none'}).",
        }[self.reason]

    @property
    def todos_url(self) -> str:
        query = urlencode(
            {"team": self.team_slug, "endpoint": self.endpoint_slug, "queue": self.queue, "state": "pending"}
        )
        return f"{reverse('todo_list')}?{query}"

    @property
    def fixes(self) -> list[Fix]:
        """What would make the work claimable, most direct first."""
        ep, queue = self.endpoint_slug, self.queue
        edit = reverse("endpoint_edit", args=[ep])
        vend = f"{reverse('endpoint_vend')}?team={self.team_slug}"
        fixes = []
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
    with pool().connection() as conn:
        rows = conn.execute(STUCK_SQL, params).fetchall()
    stuck = []
    for row in rows:
        owning_team = viewer.team(row["team_id"])
        if owning_team is None:  # pragma: no cover - every row is one of the viewer's endpoints
            continue
        stuck.append(
            Stuck(
                endpoint_id=row["endpoint_id"],
                endpoint_slug=row["slug"],
                team_slug=owning_team.slug,
                queue=row["queue"],
                pending=row["pending"],
                retry=row["retry"],
                reason=row["reason"],
                scope_queues=tuple(row["scope_queues"]),
                claimers=tuple(row["claimers"]),
            )
        )
    return stuck


class _NoTeam:
    slug = ""


_NO_TEAM = _NoTeam()


def matching(stuck: list[Stuck], f) -> list[Stuck]:
    """The groups a todo list filter (``todos.filters.TodoFilter``) shows some of."""
    return [
        s
        for s in stuck
        if (not f.team or s.team_slug == f.team)
        and (not f.endpoint or s.endpoint_slug == f.endpoint)
        and (not f.queue or s.queue == f.queue)
    ]
