"""Render the catalog's statements (``todos/sql/catalog.py``) into ``todos/sql/statements/``.

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
rendered with ``as_string`` on a real connection (``todos.db.connect`` unless one is passed).
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import inspect
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, LiteralString

from psycopg import sql as pgsql

from todos.db import Statement

STATEMENTS_DIR = Path(__file__).resolve().parent / "statements"
REGENERATE: LiteralString = "uv run manage.py render_sql"
HEADER_WIDTH = 100


# --- what the catalog holds ----------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """A function called with fixed arguments; returns a :class:`~todos.db.Statement`, SQL text,
    or (``capture`` set) runs its SQL itself and the ``capture``-th statement it runs is taken."""

    function: Callable[..., Any]
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    capture: int | None = None

    def __call__(self) -> Any:
        if self.capture is None:
            return self.function(*self.args, **self.kwargs)
        return capture(self.function, *self.args, nth=self.capture, **self.kwargs)

    @property
    def source(self) -> str:
        return f"{self.function.__module__}.{self.function.__qualname__}"

    def describe(self) -> list[str]:
        names = list(inspect.signature(self.function).parameters)
        bound = [(names[i] if i < len(names) else f"arg{i}", v) for i, v in enumerate(self.args)]
        bound += list(self.kwargs.items())
        return [f"{name} = {show(value)}" for name, value in bound]


@dataclass(frozen=True)
class Constant:
    """A module-level SQL constant (a string, a tuple of statements run in order, or a dict entry)."""

    module: str
    name: str
    key: str | None = None
    params: dict = field(default_factory=dict)  # what its placeholders are bound to where it runs

    def __call__(self) -> Any:
        value = getattr(importlib.import_module(self.module), self.name)
        return value[self.key] if self.key is not None else value

    @property
    def source(self) -> str:
        key = f"[{self.key!r}]" if self.key is not None else ""
        return f"{self.module}.{self.name}{key}"

    def describe(self) -> list[str]:
        return [f"%({name})s = {show(value)}" for name, value in self.params.items()]


def call(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Call:
    return Call(function, args, kwargs)


def captured(function: Callable[..., Any], *args: Any, nth: int = 0, **kwargs: Any) -> Call:
    return Call(function, args, kwargs, capture=nth)


def constant(module: str, name: str, key: str | None = None, **params: Any) -> Constant:
    return Constant(module, name, key, params)


# --- capturing what a selector function runs -----------------------------------------------------


class CaptureError(RuntimeError):
    pass


class _Stop(Exception):
    """Raised inside the captured function once the wanted statement was recorded."""


@dataclass
class Captured:
    sql: Any
    params: Any


class _NoRows:
    def fetchall(self) -> list:
        return []

    def fetchone(self) -> None:
        return None

    def __iter__(self):
        return iter(())


class _RecordingConnection:
    def __init__(self, nth: int):
        self.nth = nth
        self.seen: list[Captured] = []

    def execute(self, query: Any, params: Any = None, **_: Any) -> _NoRows:
        self.seen.append(Captured(query, params))
        if len(self.seen) > self.nth:
            raise _Stop
        return _NoRows()


class _RecordingPool:
    def __init__(self, conn: _RecordingConnection):
        self.conn = conn

    @contextmanager
    def connection(self, *_: Any, **__: Any) -> Iterator[_RecordingConnection]:
        yield self.conn


SELECTOR_PACKAGE: LiteralString = "todos.selectors"


def capture(function: Callable[..., Any], *args: Any, nth: int = 0, **kwargs: Any) -> Captured:
    """The ``nth`` statement (0-based) ``function`` runs through ``pool()`` (or ``read_connection()``).

    Every module of ``todos.selectors`` (and the function's own) gets the recording pool for the
    call and its own back after: meant for the render command and the test, not for a process
    whose other threads read through the selectors at the same time.
    """
    conn = _RecordingConnection(nth)
    stand_in = _RecordingPool(conn)
    # Selectors take their connection from ``pool()`` or ``read_connection()`` (todos/replica.py).
    stand_ins: dict[str, Any] = {"pool": lambda: stand_in, "read_connection": stand_in.connection}
    modules = [function.__globals__] + [
        vars(m)
        for m in _selector_modules()
        if stand_ins.keys() & vars(m).keys() and vars(m) is not function.__globals__
    ]
    saved = [(g, name, g[name]) for g in modules for name in stand_ins if name in g]
    for g, name, _ in saved:
        g[name] = stand_ins[name]
    try:
        result = function(*args, **kwargs)
        if inspect.isgenerator(result):
            list(result)
    except _Stop:
        return conn.seen[nth]
    finally:
        for g, name, original in saved:
            g[name] = original
    raise CaptureError(
        f"{function.__module__}.{function.__qualname__} ran {len(conn.seen)} statement(s); "
        f"the catalog asks for statement {nth}"
    )


def _uses_a_stand_in(module: dict, stand_ins: dict, function: Callable[..., Any]) -> bool:
    return bool(stand_ins.keys() & module.keys()) and module is not function.__globals__


def _selector_modules() -> list:
    import pkgutil

    package = importlib.import_module(SELECTOR_PACKAGE)
    return [importlib.import_module(f"{SELECTOR_PACKAGE}.{m.name}") for m in pkgutil.iter_modules(package.__path__)]


# --- rendering -----------------------------------------------------------------------------------


def show(value: Any) -> str:
    """A stable, readable value for a header: dataclasses by field, sets sorted, Jsonb unwrapped."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = [f for f in dataclasses.fields(value) if f.repr]
        inner = ", ".join(f"{f.name}={show(getattr(value, f.name))}" for f in fields)
        return f"{type(value).__name__}({inner})"
    if isinstance(value, (set, frozenset)):
        items = ", ".join(show(v) for v in sorted(value, key=repr))
        return f"{type(value).__name__}({{{items}}})" if value else f"{type(value).__name__}()"
    if isinstance(value, tuple):
        items = ", ".join(show(v) for v in value)
        return f"({items},)" if len(value) == 1 else f"({items})"
    if isinstance(value, list):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{show(k)}: {show(v)}" for k, v in value.items()) + "}"
    return repr(value)


def sql_text(value: Any, conn: Any = None) -> str:
    """The SQL of whatever a catalog entry built: a Statement, text, Composable, or several."""
    if isinstance(value, Statement):
        return sql_text(value.sql, conn)
    if isinstance(value, Captured):
        return sql_text(value.sql, conn)
    if isinstance(value, pgsql.Composable):
        if conn is None:
            from todos.db import connect

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
                break_long_words=False,
                break_on_hyphens=False,
            )
    lines.append(f"Generated: edit the code, then run `{REGENERATE}`.")
    return "\n".join(f"-- {line}".rstrip() for line in lines)


def render(name: str, entry: Call | Constant, conn: Any = None) -> str:
    return f"{header(name, entry)}\n\n{sql_text(entry(), conn)}\n"


def render_all(conn: Any = None) -> dict[str, str]:
    """``{file name: text}`` for every catalog entry."""
    from todos.sql.catalog import CATALOG

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
