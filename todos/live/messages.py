"""The live pipeline's message format: what the relay sends on ``board_events`` and the listener
parses (docs/architecture.md, "Live updates")."""

from __future__ import annotations

from typing import LiteralString

# Live Board updates, sent by the relay from the change log (ids and small fields; never a payload).
BOARD_CHANNEL: LiteralString = "board_events"
# The op of the message the relay sends every team once it rebuilt the counts: every number may
# have moved. The other ops are the change log's (``todos.core.words.ChangeOp``); no statement
# writes this one.
RECOUNT: LiteralString = "recount"


def board_message(
    *,
    op: LiteralString,
    team: LiteralString,
    ids: LiteralString = "'{}'::text[]",
    queues: LiteralString = "'{}'::text[]",
    endpoints: LiteralString = "'{}'::uuid[]",
    user: LiteralString = "NULL",
) -> LiteralString:
    """The one ``board_events`` message (SQL expressions for each field): what changed for one
    team, as ``todos/live/listener.py`` parses it. ``user`` names the person of a membership
    change and is dropped when NULL. Only the relay sends it (docs/lifecycle.md, "Live
    notifications")."""
    return f"""pg_notify('{BOARD_CHANNEL}', json_strip_nulls(json_build_object(
            'op', {op}, 'team', {team}, 'ids', {ids}, 'queues', {queues},
            'endpoints', {endpoints}, 'user', {user}))::text)"""
