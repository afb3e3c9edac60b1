"""Render the catalog's statements (``todos/ops/sql_catalog.py``) into ``todos/sql/statements/``.

Each statement is built with the catalog's fixed arguments and written as ``<name>.sql``: a header
naming the function or constant and the arguments, then the SQL exactly as PostgreSQL receives it
(trailing spaces stripped, blank lines around it dropped, the statement's own layout kept). The
files are committed, so a change to any statement shows as a diff of whole SQL text in review.
``manage.py render_sql`` writes them; ``--check`` (and ``tests/test_sql_statements.py``) fail with a
unified diff when the committed files differ from what the code builds.

Selector functions run their SQL themselves. To read it without a database, :func:`capture` lends
their modules a stand-in pool whose connection records each statement and answers it with no
rows; the function is stopped at the statement the catalog asks for, so what it would do with a
real answer never matters. Nothing is executed. A statement given as ``psycopg.sql.Composable`` is
rendered with ``as_string`` on a real connection (``todos.core.db.connect`` unless one is passed).
"""

from __future__ import annotations

import difflib
import textwrap
from pathlib import Path
from typing import Any, LiteralString

from psycopg import sql as pgsql

from todos.core.db import Statement
from todos.ops.sql_capture import Call, Captured, Constant
from todos.ops.sql_catalog import CATALOG

STATEMENTS_DIR = Path(__file__).resolve().parent.parent / "sql" / "statements"
REGENERATE: LiteralString = "uv run manage.py render_sql"
HEADER_WIDTH = 100


# --- rendering -----------------------------------------------------------------------------------


def sql_text(value: Any, conn: Any = None) -> str:
    """The SQL of whatever a catalog entry built: a Statement, text, Composable, or several."""
    if isinstance(value, Statement):
        return sql_text(value.sql, conn)
    if isinstance(value, Captured):
        return sql_text(value.sql, conn)
    if isinstance(value, pgsql.Composable):
        if conn is None:
            from todos.core.db import connect

            with connect() as own:
                return normalise(value.as_string(own))
        return normalise(value.as_string(conn))
    if isinstance(value, (tuple, list)):
        return "\n\n".join(sql_text(v, conn) + ";" for v in value)
    if isinstance(value, str):
        return normalise(value)
    raise TypeError(f"a catalog entry built {type(value).__name__}, not SQL")


def normalise(text: str) -> str:
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


def header(name: str, entry: Call | Constant) -> str:
    lines = [name, f"built by {entry.source}()" if isinstance(entry, Call) else f"the constant {entry.source}"]
    if isinstance(entry, Call) and entry.capture is not None:
        lines[-1] += f", the statement #{entry.capture + 1} it runs"
    described = entry.describe()
    if described:
        lines.append("with:" if isinstance(entry, Call) else "bound where it runs:")
        for item in described:
            lines += textwrap.wrap(
                item,
                HEADER_WIDTH - 7,
                initial_indent="  ",
                subsequent_indent="      ",
                break_long_words=True,
                break_on_hyphens=False,
            )
    lines.append(f"Generated: edit the code, then run `{REGENERATE}`.")
    return "\n".join(f"-- {line}".rstrip() for line in lines)


def render(name: str, entry: Call | Constant, conn: Any = None) -> str:
    return f"{header(name, entry)}\n\n{sql_text(entry(), conn)}\n"


def render_all(conn: Any = None) -> dict[str, str]:
    """``{file name: text}`` for every catalog entry."""
    return {f"{name}.sql": render(name, entry, conn) for name, entry in CATALOG.items()}


def differences(rendered: dict[str, str], directory: Path = STATEMENTS_DIR) -> str:
    """A unified diff from the committed files to ``rendered`` (empty when they agree)."""
    committed = {p.name: p.read_text() for p in sorted(directory.glob("*.sql"))} if directory.is_dir() else {}
    out: list[str] = []
    for name in sorted(set(committed) | set(rendered)):
        before, after = committed.get(name), rendered.get(name)
        if before == after:
            continue
        out += difflib.unified_diff(
            (before or "").splitlines(keepends=True),
            (after or "").splitlines(keepends=True),
            fromfile=f"a/todos/sql/statements/{name}" if before is not None else "/dev/null",
            tofile=f"b/todos/sql/statements/{name}" if after is not None else "/dev/null",
        )
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def write(rendered: dict[str, str], directory: Path = STATEMENTS_DIR) -> list[str]:
    """Write ``rendered`` into ``directory`` and delete files no entry renders; return the names changed."""
    directory.mkdir(parents=True, exist_ok=True)
    changed = []
    for path in directory.glob("*.sql"):
        if path.name not in rendered:
            path.unlink()
            changed.append(path.name)
    for name, text in rendered.items():
        path = directory / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            changed.append(name)
    return sorted(changed)
