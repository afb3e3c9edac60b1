"""The store's words (``todos/core/words.py``) are the database's: a todo's states are what
``todos.state`` accepts, the Board's what ``todo_counts`` and ``todo_board_state()`` hold, and the
change log's ops what its ``change_op`` domain accepts and what the statements write. The Board's
display copies (the filter's tabs, the state glyphs) name the same states."""

from __future__ import annotations

import re

from tests.store.helpers import one, sql
from todos.core.filters import BOARD_STATES
from todos.core.words import BoardState, ChangeOp, TodoState
from todos.dashboard.templatetags.board import STATE_GLYPHS
from todos.ops.sql_render import STATEMENTS_DIR


def _check_words(table: str, name: str) -> set[str]:
    """The quoted words of a table's CHECK constraint on ``state`` (``state IN ('a', 'b')``)."""
    row = one(
        "SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conrelid = %s::regclass AND conname = %s",
        (table, name),
    )
    return set(re.findall(r"'([a-z_]+)'", row["def"]))


def test_todo_states_are_the_states_todos_accepts():
    assert _check_words("todos", "todos_state_check") == set(TodoState)


def test_board_states_are_the_states_the_counts_hold():
    assert _check_words("todo_counts", "todo_counts_state_check") == set(BoardState)


def test_todo_board_state_returns_only_board_states():
    rows = sql(
        """SELECT DISTINCT todo_board_state(s.state, t.at) AS state
           FROM unnest(%s::text[]) AS s(state)
           CROSS JOIN (VALUES (NULL::timestamptz), (now()), ('infinity')) AS t(at)""",
        (list(TodoState),),
    )
    assert {r["state"] for r in rows} == set(BoardState)


def test_every_op_fits_the_change_op_domain():
    row = one(
        """SELECT pg_get_constraintdef(c.oid) AS def FROM pg_constraint c JOIN pg_type ty ON ty.oid = c.contypid
           WHERE ty.typname = 'change_op'"""
    )
    pattern = re.search(r"~ '(.*)'::text", row["def"]).group(1)
    assert pattern == "^[a-z_]{1,32}$"
    for op in ChangeOp:
        assert re.fullmatch(pattern[1:-1], op), op
        assert one("SELECT %s::change_op AS op", (op.value,))["op"] == op


LOGGED_OP = re.compile(r"INSERT INTO change_log \([^)]*\)\s+SELECT [^,]+, [^,]+, [^,]+, [^,]+, '([a-z_]+)'")


def test_the_statements_write_every_op_and_no_other():
    written = {op for path in STATEMENTS_DIR.glob("store.*.sql") for op in LOGGED_OP.findall(path.read_text())}
    assert written == set(ChangeOp)


def test_the_board_s_display_copies_name_the_board_states():
    assert set(BOARD_STATES) - {"all"} == set(BoardState)
    assert set(STATE_GLYPHS) == set(BoardState)
