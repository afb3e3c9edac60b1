"""From selector rows to what a template shows: holder names, the viewer's actions and their forms.

The lease holder is stored as ``human:<id>`` or ``endpoint:<uuid>``; the Board shows
"Board · <username>" or the endpoint's name, never a raw credential id.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from uuid import UUID

from django.urls import reverse

from todos.core.selectors import claimability, dead_letters
from todos.core.selectors.access import ACTING_ROLES, Viewer, usernames
from todos.core.selectors.claimability import Stuck
from todos.core.selectors.dead_letters import DeadReason
from todos.core.selectors.rows import TodoRow
from todos.dashboard import wording
from todos.dashboard.views import action_table
from todos.dashboard.views.action_table import ROW_ACTIONS, TABLE, TODO_ACTIONS, TodoAction

CLAIM_VERBS = ("claim", "claim_next", "claim_batch")


def situation(todo: TodoRow, viewer: Viewer) -> str:
    """What the todo is to this viewer as far as actions go (``action_table``'s situations)."""
    state = todo.display_state
    if state != "claimed":
        return state
    if todo.owner == viewer.owner:
        return action_table.HELD
    if todo.lease_lapsed and todo.attempt < todo.max_attempts:
        return action_table.LAPSED  # a lapsed lease can be taken over
    return action_table.TAKEN


def actions_for(todo: TodoRow, viewer: Viewer) -> tuple[str, ...]:
    """What this viewer may do to this todo now (the guards of docs/lifecycle.md, "Transitions");
    viewers get nothing."""
    if not viewer.can_act_on(todo.endpoint_id):
        return ()
    now = situation(todo, viewer)
    return tuple(action.name for action in TABLE if now in action.offered_in)


@dataclass(frozen=True)
class ActionForm:
    """One action's form in the drawer (``_action_form.html``)."""

    action: TodoAction
    url: str
    confirm: str
    error: str


def action_forms(todo: TodoRow, actions, *, holder: str | None, errors: dict) -> list[ActionForm]:
    """The drawer's forms for ``actions`` (names, from :func:`actions_for`), with the field
    error of the one just refused."""
    return [
        ActionForm(
            action=action,
            url=todo_url(action.url_name, todo.id),
            confirm=action.confirm.format(holder=holder),
            error=errors.get(action.name, ""),
        )
        for action in (TODO_ACTIONS[name] for name in actions)
    ]


# "Extend lease": how long from now the lease should run (minutes, label); the default is the
# human lease (BOARD_HUMAN_LEASE_SECONDS) when it is one of them.
LEASE_CHOICES = (
    (15, "15 minutes"),
    (30, "30 minutes"),
    (60, "1 hour"),
    (120, "2 hours"),
    (240, "4 hours"),
    (480, "8 hours"),
)


def lease_default_minutes() -> int:
    from django.conf import settings

    minutes = settings.BOARD_HUMAN_LEASE_SECONDS // 60
    return minutes if minutes in dict(LEASE_CHOICES) else 30


def can_claim_in(endpoint, queue: str) -> bool:
    """Whether an endpoint (a team listing, with its verbs) can claim work in ``queue``: active,
    the queue in its scope, and a claim verb."""
    return (
        endpoint.state == "active"
        and queue in endpoint.scope_queues
        and any(verb in endpoint.scope_verbs for verb in CLAIM_VERBS)
    )


def assign_choices(todo: TodoRow, members, endpoints) -> list[tuple[str, str]]:
    """Who the todo can be assigned to: the people who can claim it (operators and admins of its
    team: a viewer cannot) and the team's endpoints that can claim in its queue; the current
    assignee stays listed (marked) even if it no longer could, so saving changes nothing unasked."""
    choices = [(f"human:{m.user_id}", f"{m.username} (human)") for m in members if m.role in ACTING_ROLES]
    choices += [(f"endpoint:{e.id}", f"{e.name} (endpoint)") for e in endpoints if can_claim_in(e, todo.queue)]
    if todo.assignee and todo.assignee not in dict(choices):
        choices.append((todo.assignee, "the current assignee (cannot claim here now)"))
    return choices


class Names:
    """Resolves owner strings for a batch of rows with one query for the usernames."""

    def __init__(self, viewer: Viewer, owners):
        self.viewer = viewer
        ids = []
        for owner in owners:
            if owner and owner.startswith("human:") and owner[6:].isdigit():
                ids.append(int(owner[6:]))
        self.users = usernames(ids)

    def person(self, owner: str | None) -> str | None:
        if not owner:
            return None
        kind, _, ident = owner.partition(":")
        if kind == "human":
            name = self.users.get(int(ident)) if ident.isdigit() else None
            return name or "a former member"
        if kind == "endpoint":
            try:
                endpoint = self.viewer.endpoint(UUID(ident))
            except ValueError:
                endpoint = None
            return endpoint.name if endpoint else "another endpoint"
        return owner

    def holder(self, owner: str | None) -> str | None:
        """The lease holder: "Board · <human>" for a human's claim."""
        if owner and owner.startswith("human:"):
            return f"Board · {self.person(owner)}"
        return self.person(owner)


_PLACEHOLDER = "td_" + "0" * 32


@functools.cache
def _todo_url(name: str) -> tuple[str, str]:
    """A todo URL as (before the id, after it), reversed once per process: a list page has 50
    rows of 3-5 URLs each, and reversing them one by one was a tenth of its render time."""
    before, _, after = reverse(name, args=[_PLACEHOLDER]).partition(_PLACEHOLDER)
    return before, after


def todo_url(name: str, todo_id: str) -> str:
    """``reverse(name, args=[todo_id])`` for the todo URLs (ids are URL-safe: ``td_<hex>``)."""
    before, after = _todo_url(name)
    return f"{before}{todo_id}{after}"


@dataclass(frozen=True)
class RowButton:
    action: str
    label: str
    url: str


@dataclass(frozen=True)
class RowView:
    todo: TodoRow
    holder: str | None
    assignee: str | None
    endpoint_name: str
    mine: bool
    paused: bool
    actions: tuple[str, ...]
    stuck: Stuck | None = None  # waiting work its owning endpoint cannot claim (why, and the fix)
    reason: DeadReason | None = None  # a dead letter's: why it ended, and how

    @property
    def reason_label(self) -> str:
        """What a screen reader hears before the reason: failed, died or ended, by the outcome."""
        return wording.dead_reason_label(self.reason.outcome if self.reason else None)

    @property
    def row_actions(self) -> tuple[str, ...]:
        return tuple(a for a in ROW_ACTIONS if a in self.actions)[:2]

    @property
    def row_buttons(self) -> list[RowButton]:
        return [RowButton(a, TODO_ACTIONS[a].label, todo_url(f"todo_{a}", self.todo.id)) for a in self.row_actions]

    @property
    def row_url(self) -> str:
        return todo_url("todo_row", self.todo.id)

    @property
    def detail_url(self) -> str:
        return todo_url("todo_detail", self.todo.id)

    @property
    def drawer_url(self) -> str:
        return todo_url("todo_drawer", self.todo.id)

    @property
    def id(self) -> str:
        return self.todo.id


def present_rows(viewer: Viewer, rows, *, paused: set | None = None, stuck: list[Stuck] | None = None) -> list[RowView]:
    names = Names(viewer, [r.owner for r in rows] + [r.assignee for r in rows])
    paused = paused or set()
    stuck_groups = stuck_by_owner_and_queue(viewer, rows, stuck)
    why = dead_letters.reasons([r.id for r in rows if r.dead_letter])
    views = []
    for row in rows:
        endpoint = viewer.endpoint(row.endpoint_id)
        views.append(
            RowView(
                todo=row,
                holder=names.holder(row.owner) if row.state == "claimed" else None,
                assignee=names.person(row.assignee),
                endpoint_name=endpoint.name if endpoint else "",
                mine=row.owner == viewer.owner,
                paused=bool(endpoint and (endpoint.team_id, row.queue) in paused),
                actions=actions_for(row, viewer),
                stuck=stuck_of(stuck_groups, row),
                reason=why.get(row.id),
            )
        )
    return views


WAITING_STATES = ("pending", "scheduled", "blocked", "retry")


def stuck_of(groups: dict, row) -> Stuck | None:
    if row.display_state not in WAITING_STATES:
        return None
    return next((s for s in groups.get((row.endpoint_id, row.queue), ()) if s.covers(row)), None)


def stuck_by_owner_and_queue(viewer: Viewer, rows, known: list[Stuck] | None = None) -> dict:
    """The (endpoint, queue) groups no agent can claim, read only when a row is waiting: one
    grouped query (:mod:`todos.core.selectors.claimability`), never a per-row check."""
    if not any(r.display_state in WAITING_STATES for r in rows):
        return {}
    groups: dict[tuple, list[Stuck]] = {}
    for s in claimability.stuck_work(viewer) if known is None else known:
        groups.setdefault((s.endpoint_id, s.queue), []).append(s)
    return groups
