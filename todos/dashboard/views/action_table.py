"""The Board's action table: every operator action on one todo, once.

A :class:`TodoAction` holds all of one action's facts: its button, the store call, how its form
fields become the store call's arguments, what success and a lost race say, whether it asks
first, and in which situations the drawer offers it. The routes (``todos/urls.py``), the view
(``actions.todo_action``), the drawer's forms (``_action_form.html``) and the list's row
buttons all read this table, as the agent API's transports read ``todos/agents/api/verbs.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from todos.core.db import Statement
from todos.core.store import human, inputs, waiting
from todos.core.store.scopes import OperatorScope
from todos.dashboard import form_input

# What a todo is to the viewer, as far as actions go (``present.situation`` works it out).
PENDING = "pending"
SCHEDULED = "scheduled"  # pending, waiting for its time
BLOCKED = "blocked"  # pending, waiting for its parents (docs/lifecycle.md, "Dependencies")
HELD = "held"  # claimed, and the viewer holds the lease
LAPSED = "lapsed"  # someone else's lease lapsed with attempts left: it can be taken over
TAKEN = "taken"  # claimed by someone else
RETRY = "retry"
DEAD = "dead"
LIVE = frozenset({PENDING, BLOCKED, SCHEDULED, HELD, LAPSED, TAKEN, RETRY, DEAD})
WAITING = frozenset({PENDING, SCHEDULED})


@dataclass(frozen=True)
class TodoAction:
    name: str
    label: str  # its button (and the heading of its route's docstring)
    call: Callable[..., Statement]  # ``call(op, todo_id, **parse(form))``
    parse: Callable[..., dict]  # a POSTed form -> the store call's keyword arguments
    success: str  # the toast, with ``{id}`` the todo's short id
    verb_phrase: str  # "Could not <verb_phrase>: …" when the store's guard refuses it
    offered_in: frozenset[str]  # the situations (above) in which the drawer offers it
    style: str = ""  # "primary", "warn", "danger", or "" for a plain button
    # Asked before it is sent, in the Board's own dialog (``{holder}``: the lease holder), with a
    # button that does it (``confirm_yes``) and one that does not (``confirm_no``), each named for
    # what it does: never "Cancel" for "do not cancel".
    confirm: str = ""
    confirm_yes: str = ""
    confirm_no: str = ""
    # "button": a form that is one button; "folded": a form with fields behind a "<label>…"
    # toggle; "inline": a field and a small button on one line.
    form: str = "button"
    fields: str = ""  # the template of its form's inputs (folded and inline forms)
    submit: str = ""  # its submit button's text when that is not ``label``

    @property
    def path(self) -> str:
        """Its URL segment: ``/todos/<id>/<path>/``."""
        return self.name.replace("_", "-")

    @property
    def url_name(self) -> str:
        return f"todo_{self.name}"

    @property
    def holder_only(self) -> bool:
        """Offered only to the lease holder: refused once someone else has the lease."""
        return self.offered_in == {HELD}

    @property
    def submit_text(self) -> str:
        return self.submit or self.label


def _lease(data) -> dict:
    return {"lease_ttl_seconds": form_input.lease_seconds(data)}


def _note(data) -> dict:
    return {"note": form_input.note(data)}


def _note_and_result(data) -> dict:
    return {"note": form_input.note(data), "result": form_input.json_field(data, "result")}


def _assignee(data) -> dict:
    return {"assignee": form_input.assignee(data)}


def _priority(data) -> dict:
    return {"priority": form_input.integer(data, "priority", *inputs.PRIORITY_RANGE)}


def _run_at(data) -> dict:
    return {"run_at": form_input.run_at(data)}


def _edit_form(data) -> dict:
    return {"changes": form_input.edit_changes(data)}


def _edit(op: OperatorScope, todo_id, *, changes) -> Statement:
    return waiting.edit(op, todo_id, changes)


def _assign(op: OperatorScope, todo_id, *, assignee) -> Statement:
    return human.assign(op, todo_id, assignee)


def _set_priority(op: OperatorScope, todo_id, *, priority) -> Statement:
    return human.set_priority(op, todo_id, priority)


# In the order the drawer shows them: single buttons, then the forms with fields.
TABLE: tuple[TodoAction, ...] = (
    TodoAction(
        "claim",
        "Claim",
        human.claim,
        _lease,
        success="Claimed {id}: the lease is yours.",
        verb_phrase="claim it",
        offered_in=frozenset({PENDING, LAPSED}),
        style="primary",
    ),
    TodoAction(
        "extend",
        "Extend lease",
        human.extend,
        _lease,
        success="Extended your lease on {id}: it now expires at {expires}.",
        verb_phrase="extend the lease",
        offered_in=frozenset({HELD}),
        form="inline",
        fields="todos/action_fields/_extend.html",
        submit="Extend",
    ),
    TodoAction(
        "release",
        "Release",
        human.release,
        _note,
        success="Released {id}: it is pending again.",
        verb_phrase="release it",
        offered_in=frozenset({HELD}),
    ),
    TodoAction(
        "force_release",
        "Force release",
        human.force_release,
        _note,
        success="Took the lease away: {id} is pending again.",
        verb_phrase="force-release it",
        offered_in=frozenset({LAPSED, TAKEN}),
        style="warn",
        confirm=(
            "Take the lease away from {holder}? The todo goes back to pending, and its attempt is"
            " recorded as force-released by you; {holder} can no longer report on it."
        ),
        confirm_yes="Force release",
        confirm_no="Keep their lease",
    ),
    TodoAction(
        "run_now",
        "Run now",
        waiting.run_now,
        _note,
        success="{id} is claimable now.",
        verb_phrase="run it now",
        offered_in=frozenset({SCHEDULED}),
        style="primary",
    ),
    TodoAction(
        "run_anyway",
        "Run anyway",
        human.run_anyway,
        _note,
        success="{id} no longer waits for its parents.",
        verb_phrase="run it anyway",
        offered_in=frozenset({BLOCKED}),
        style="primary",
        confirm="Run this todo without waiting for its parents? Their later completions no longer concern it.",
        confirm_yes="Run anyway",
        confirm_no="Keep waiting",
    ),
    TodoAction(
        "retry",
        "Retry",
        human.retry,
        _note,
        success="{id} is pending again with a fresh attempt budget.",
        verb_phrase="retry it",
        offered_in=frozenset({RETRY, DEAD}),
        style="primary",
    ),
    TodoAction(
        "cancel",
        "Cancel",
        human.cancel,
        _note,
        success="Canceled {id}.",
        verb_phrase="cancel it",
        offered_in=LIVE,
        style="danger",
        confirm="Cancel this todo for good? It will not run, and a canceled todo cannot be retried.",
        confirm_yes="Cancel this todo",
        confirm_no="Keep it",
    ),
    TodoAction(
        "complete",
        "Complete",
        human.complete,
        _note_and_result,
        success="Completed {id}.",
        verb_phrase="complete it",
        offered_in=frozenset({HELD}),
        style="primary",
        form="folded",
        fields="todos/action_fields/_complete.html",
    ),
    TodoAction(
        "fail",
        "Fail",
        human.fail,
        _note,
        success="Failed {id}.",
        verb_phrase="fail it",
        offered_in=frozenset({HELD}),
        style="warn",
        form="folded",
        fields="todos/action_fields/_fail.html",
    ),
    TodoAction(
        "assign",
        "Assign",
        _assign,
        _assignee,
        success="Assignment of {id} saved.",
        verb_phrase="change its assignee",
        offered_in=WAITING,
        form="inline",
        fields="todos/action_fields/_assign.html",
    ),
    TodoAction(
        "priority",
        "Priority",
        _set_priority,
        _priority,
        success="Priority of {id} saved.",
        verb_phrase="change its priority",
        offered_in=LIVE,
        form="inline",
        fields="todos/action_fields/_priority.html",
        submit="Set",
    ),
    TodoAction(
        "reschedule",
        "Reschedule",
        waiting.reschedule,
        _run_at,
        success="Rescheduled {id}.",
        verb_phrase="reschedule it",
        offered_in=WAITING,
        form="inline",
        fields="todos/action_fields/_reschedule.html",
        submit="Set",
    ),
    TodoAction(
        "edit",
        "Edit",
        _edit,
        _edit_form,
        success="Saved your changes to {id}.",
        verb_phrase="edit it",
        offered_in=WAITING,
        form="folded",
        fields="todos/action_fields/_edit.html",
        submit="Save changes",
    ),
)

TODO_ACTIONS: dict[str, TodoAction] = {action.name: action for action in TABLE}

# The actions a list row offers, in the row's order; a row shows the first two it may.
# Never force release: it takes someone's lease away, and asks first in the drawer.
ROW_ACTIONS = ("claim", "complete", "release", "retry")
