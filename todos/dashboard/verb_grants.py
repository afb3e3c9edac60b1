"""Which agent verbs each scope verb grants, read from the verb table itself, so the endpoint
form's hints name every verb a scope verb allows and cannot fall behind a new row in it."""

from __future__ import annotations

from todos.agents.api.verbs import TABLE
from todos.core.store.endpoints import SCOPE_VERBS


def granted_with(scope_verb: str) -> list[str]:
    """The agent verbs that ``scope_verb`` allows besides any verb of its own name, in the
    table's order: ``schedules`` ⇒ list_schedules, create_schedule, …"""
    return [verb.name for verb in TABLE if scope_verb in verb.granted_by and verb.name != scope_verb]


def implied() -> list[tuple[str, list[str]]]:
    """Every scope verb that brings other verbs with it, and those verbs."""
    return [(scope, verbs) for scope in SCOPE_VERBS if (verbs := granted_with(scope))]
