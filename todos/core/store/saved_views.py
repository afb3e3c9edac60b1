"""Saved views: a person's named filter sets of the todo list, saved, renamed and deleted.

A view belongs to one person and names a querystring of the list (``TodoFilter.query``); nothing
here touches a todo or its attempts. The rules (a name of 1 to 80 characters, unique per person;
at most :data:`MAX_VIEWS` views per person) are each statement's guard, and a statement that
wrote nothing says which rule refused it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, LiteralString

from todos.core.db import Statement
from todos.core.errors import Conflict, Invalid, NotFound, StaleSnapshot
from todos.core.store import inputs
from todos.core.store.scopes import OperatorScope

MAX_VIEWS = 100
NAME_MAX_CHARS = 80
QUERY_MAX_BYTES = 4096


@dataclass(frozen=True)
class SavedView:
    id: int
    name: str
    query: str
    created_at: datetime


def clean_name(value: Any) -> str:
    name = inputs.require_line("name", value).strip()
    if not name:
        raise Invalid("name", "must not be empty")
    if len(name) > NAME_MAX_CHARS:
        raise Invalid("name", f"must be at most {NAME_MAX_CHARS} characters, got {len(name)}")
    return name


def clean_query(value: Any) -> str:
    query = inputs.require_line("query", value)
    if len(query.encode()) > QUERY_MAX_BYTES:
        raise Invalid("query", f"must be at most {QUERY_MAX_BYTES} bytes")
    return query


def _view(row: dict) -> SavedView:
    return SavedView(id=row["id"], name=row["name"], query=row["query"], created_at=row["created_at"])


SAVE_SQL: LiteralString = """
WITH mine AS (
    SELECT count(*) AS n,
           coalesce(bool_or(v.name = %(name)s), false) AS taken,
           (SELECT min(s.slot) FROM generate_series(1, %(max_views)s) AS s(slot)
            WHERE s.slot NOT IN (SELECT slot FROM saved_views WHERE user_id = %(user_id)s)) AS free_slot
    FROM saved_views v WHERE v.user_id = %(user_id)s
),
ins AS (
    -- guard: the name is not one of the person's views and a slot of their 100 is free; effect:
    -- one saved_views row. No todo or attempt row is touched. A save racing this one for the same
    -- name or slot makes ON CONFLICT skip the row (reported below, then run again).
    INSERT INTO saved_views (user_id, slot, name, query)
    SELECT %(user_id)s, mine.free_slot, %(name)s, %(query)s FROM mine
    WHERE NOT mine.taken AND mine.free_slot IS NOT NULL
    ON CONFLICT DO NOTHING
    RETURNING id, name, query, created_at
)
SELECT ins.id, ins.name, ins.query, ins.created_at, mine.n, mine.taken
FROM mine LEFT JOIN ins ON true"""


def save(by: OperatorScope, *, name: Any, query: Any) -> Statement[SavedView]:
    """A new view of ``by``'s named ``name`` opening the list at ``query``."""
    params = {"user_id": by.user_id, "name": clean_name(name), "query": clean_query(query), "max_views": MAX_VIEWS}

    def finish(rows: list[dict]) -> SavedView:
        row = rows[0]
        if row["id"] is not None:
            return _view(row)
        if row["taken"]:
            raise Conflict(f"name: you already have a view named “{params['name']}”; choose another name")
        if row["n"] >= MAX_VIEWS:
            raise Conflict(f"name: you have {MAX_VIEWS} saved views, the most one person may keep; delete one first")
        raise StaleSnapshot("another save took this name or slot meanwhile")

    return Statement(SAVE_SQL, params, finish)


RENAME_SQL: LiteralString = """
WITH target AS (
    SELECT id FROM saved_views WHERE id = %(id)s AND user_id = %(user_id)s
),
clash AS (
    SELECT id FROM saved_views WHERE user_id = %(user_id)s AND name = %(name)s AND id <> %(id)s
),
upd AS (
    -- guard: the view is the person's and no other view of theirs has the new name; effect: its
    -- name. No todo or attempt row is touched.
    UPDATE saved_views v SET name = %(name)s
    FROM target
    WHERE v.id = target.id AND NOT EXISTS (SELECT 1 FROM clash)
    RETURNING v.id, v.name, v.query, v.created_at
)
SELECT upd.id, upd.name, upd.query, upd.created_at,
       EXISTS (SELECT 1 FROM target) AS found, EXISTS (SELECT 1 FROM clash) AS clash
FROM (SELECT 1) one LEFT JOIN upd ON true"""


def rename(by: OperatorScope, view_id: int, *, name: Any) -> Statement[SavedView]:
    params = {"user_id": by.user_id, "id": view_id, "name": clean_name(name)}

    def finish(rows: list[dict]) -> SavedView:
        row = rows[0]
        if row["id"] is not None:
            return _view(row)
        if not row["found"]:
            raise NotFound("no such saved view")
        raise Conflict(f"name: you already have a view named “{params['name']}”; choose another name")

    return Statement(RENAME_SQL, params, finish)


# guard: the view is the person's; effect: it is gone. No todo or attempt row is touched.
DELETE_SQL: LiteralString = "DELETE FROM saved_views WHERE id = %(id)s AND user_id = %(user_id)s RETURNING id"


def delete(by: OperatorScope, view_id: int) -> Statement[int]:
    def finish(rows: list[dict]) -> int:
        if not rows:
            raise NotFound("no such saved view")
        return rows[0]["id"]

    return Statement(DELETE_SQL, {"user_id": by.user_id, "id": view_id}, finish)
