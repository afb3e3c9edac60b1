"""What the SQL catalog holds (a function called with fixed arguments, or a constant) and how a
selector's statements are captured without a database: a stand-in pool records each statement and
answers it with no rows (``todos/ops/sql_render.py`` renders what this captures)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, LiteralString

# --- what the catalog holds ----------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """A function called with fixed arguments; returns a :class:`~todos.core.db.Statement`, SQL text,
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


SELECTOR_PACKAGE: LiteralString = "todos.core.selectors"


def capture(function: Callable[..., Any], *args: Any, nth: int = 0, **kwargs: Any) -> Captured:
    """The ``nth`` statement (0-based) ``function`` runs through ``pool()`` (or ``read_connection()``).

    Every module of ``todos.core.selectors`` (and the function's own) gets the recording pool for the
    call and its own back after: meant for the render command and the test, not for a process
    whose other threads read through the selectors at the same time.
    """
    conn = _RecordingConnection(nth)
    stand_in = _RecordingPool(conn)
    # Selectors take their connection from ``pool()`` or ``read_connection()`` (todos/core/replica.py).
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
