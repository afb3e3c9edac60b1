"""Every named statement is committed as SQL text (``todos/sql/statements/``), and stays current.

The files are what a reviewer reads: these tests fail when the code builds SQL that differs from
them, when a store function that returns a Statement has no catalog entry (so no file), and when a
selector's or the relay's SQL constant is in no file. Each statement is also planned by PostgreSQL
(``EXPLAIN``, nothing runs) with the parameters the catalog built it with, so a file is valid SQL
against the real schema, not merely text.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest
from django.core.management import CommandError, call_command

from todos.core import db
from todos.core.db import Statement
from todos.ops import sql_capture as capture
from todos.ops import sql_render as render
from todos.ops.sql_capture import Call, Captured, Constant
from todos.ops.sql_catalog import CATALOG, STATEMENT_MODULES
from todos.ops.sql_render import REGENERATE, differences, normalise, render_all


@pytest.fixture
def conn(store_db):
    with db.connect() as connection:
        yield connection


def test_committed_files_are_what_the_code_builds(conn):
    rendered = render_all(conn)
    diff = differences(rendered)
    if diff:
        pytest.fail(f"todos/sql/statements/ differs from the SQL the code builds:\n{diff}\nRegenerate: {REGENERATE}")
    assert len(rendered) == len(CATALOG) > 100


def test_every_file_names_its_builder_and_arguments():
    text = (render.STATEMENTS_DIR / "store.agent.claim.sql").read_text()
    assert text.startswith("-- store.agent.claim\n-- built by todos.core.store.agent.claim()\n-- with:\n")
    assert "--   todo_id = 'td_00000000000000000000000000000001'" in text
    assert REGENERATE in text
    assert "FOR UPDATE" in text and all(line == line.rstrip() for line in text.splitlines())


def _statement_functions(module):
    for name, function in vars(module).items():
        if name.startswith("_") or not inspect.isfunction(function) or function.__module__ != module.__name__:
            continue
        returns = inspect.signature(function).return_annotation
        # with ``from __future__ import annotations`` the annotation is its source text
        text = returns if isinstance(returns, str) else ""
        if text.startswith("Statement") or getattr(returns, "__origin__", None) is Statement:
            yield function


def test_every_store_statement_function_has_a_catalog_entry():
    covered = {entry.function for entry in CATALOG.values() if isinstance(entry, Call)}
    found = [f for module in STATEMENT_MODULES for f in _statement_functions(module)]
    missing = [f"{f.__module__}.{f.__name__}" for f in found if f not in covered]
    assert not missing, (
        f"functions returning a Statement without an entry in todos/ops/sql_catalog.py: {', '.join(missing)}; "
        f"add one, then run `{REGENERATE}`"
    )
    assert len(found) > 50  # the introspection sees the store (a broken filter would pass vacuously)


def test_a_new_statement_function_without_an_entry_is_noticed(monkeypatch):
    from todos.core.store import background

    def sweep_something(limit: int = 10) -> Statement[int]:
        return Statement("SELECT 1", {}, len)

    sweep_something.__module__ = background.__name__
    monkeypatch.setattr(background, "sweep_something", sweep_something, raising=False)
    with pytest.raises(AssertionError, match="todos.core.store.background.sweep_something"):
        test_every_store_statement_function_has_a_catalog_entry()


SQL_CONSTANT = re.compile(r"^(?:[A-Z_]+_)?SQL$")


def _sql_constants():
    modules = [importlib.import_module("todos.live.relay")]
    package = importlib.import_module("todos.core.selectors")
    modules += [
        importlib.import_module(f"todos.core.selectors.{m.name}") for m in pkgutil.iter_modules(package.__path__)
    ]
    for module in modules:
        for name, value in vars(module).items():
            if not SQL_CONSTANT.match(name):
                continue
            items = value.items() if isinstance(value, dict) else [(None, value)]
            for key, text in items:
                if isinstance(text, str):
                    yield f"{module.__name__}.{name}" + (f"[{key!r}]" if key else ""), normalise(text)


def test_every_selector_and_relay_sql_constant_is_in_a_file():
    bodies = "\n".join(text.split("\n\n", 1)[1] for text in render_all().values())
    constants = list(_sql_constants())
    missing = [name for name, text in constants if text not in bodies]
    assert not missing, (
        f"SQL constants in no statement file: {', '.join(missing)}; add entries to todos/ops/sql_catalog.py"
    )
    assert len(constants) > 20


def _runs(entry):
    """(sql, params) pairs of what the entry builds, as the code runs them."""
    built = entry()
    if isinstance(built, (Statement, Captured)):
        return [(built.sql, built.params)]
    assert isinstance(entry, Constant)
    params = entry.params or None
    return [(sql, params) for sql in (built if isinstance(built, (tuple, list)) else [built])]


@pytest.mark.parametrize("name", sorted(CATALOG))
def test_postgresql_plans_each_statement(conn, name):
    """EXPLAIN plans without running, so a write is planned and nothing changes."""
    for sql, params in _runs(CATALOG[name]):
        with conn.transaction(force_rollback=True):
            conn.execute("EXPLAIN " + render.sql_text(sql, conn), params)


def test_check_passes_and_writes_nothing(capsys):
    before = {p.name: p.stat().st_mtime_ns for p in render.STATEMENTS_DIR.glob("*.sql")}
    call_command("render_sql", "--check")
    assert "up to date" in capsys.readouterr().out
    assert {p.name: p.stat().st_mtime_ns for p in render.STATEMENTS_DIR.glob("*.sql")} == before


def test_check_fails_with_a_diff_and_the_command(monkeypatch, capsys):
    from todos.management.commands import render_sql

    def changed(conn=None):
        rendered = render_all(conn)
        rendered["store.agent.claim.sql"] = rendered["store.agent.claim.sql"].replace("FOR UPDATE", "FOR SHARE")
        rendered["store.agent.brand_new.sql"] = "SELECT 1\n"
        return rendered

    monkeypatch.setattr(render_sql, "render_all", changed)
    with pytest.raises(CommandError, match=re.escape(REGENERATE)) as raised:
        call_command("render_sql", "--check")
    assert raised.value.returncode == 1
    out = capsys.readouterr().out
    assert "--- a/todos/sql/statements/store.agent.claim.sql" in out
    assert "-    FOR UPDATE" in out and "+    FOR SHARE" in out
    assert "+++ b/todos/sql/statements/store.agent.brand_new.sql" in out


def test_write_adds_changes_and_removes_files(tmp_path):
    (tmp_path / "gone.sql").write_text("SELECT 0\n")
    (tmp_path / "same.sql").write_text("SELECT 1\n")
    changed = render.write({"same.sql": "SELECT 1\n", "new.sql": "SELECT 2\n"}, tmp_path)
    assert changed == ["gone.sql", "new.sql"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.sql", "same.sql"]
    assert differences({"same.sql": "SELECT 1\n", "new.sql": "SELECT 2\n"}, tmp_path) == ""


def test_composed_sql_is_rendered_on_a_real_connection(conn):
    from psycopg import sql

    query = sql.SQL("SELECT {} FROM {} WHERE id = %(id)s").format(sql.Identifier("title"), sql.Identifier("todos"))
    assert render.sql_text(query, conn) == 'SELECT "title" FROM "todos" WHERE id = %(id)s'


def test_capture_names_a_function_that_runs_fewer_statements_than_asked():
    from todos.core.selectors import endpoints
    from todos.ops.sql_catalog import TEAM

    with pytest.raises(capture.CaptureError, match="ran 1 statement"):
        capture.capture(endpoints.known_queues, TEAM, nth=1)
    from todos.core import replica

    assert endpoints.read_connection is replica.read_connection  # the stand-in is gone after the capture


# -- what a reviewer reads -----------------------------------------------------------------------

LINE_LIMIT = 120
# Two string literals compared (``('claimed') = 'claimed'``): a test folded to a constant, which a
# builder that knows both sides should have decided itself.
LITERAL_COMPARISON = re.compile(r"'[^'\n]*'\)?\s*(?:=|<>|!=|IS (?:NOT )?DISTINCT FROM)\s*\(?'")


def _committed() -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(render.STATEMENTS_DIR.glob("*.sql"))}


def test_no_rendered_line_is_longer_than_the_limit():
    long = [
        f"{name}:{n} ({len(line)})"
        for name, text in _committed().items()
        for n, line in enumerate(text.splitlines(), 1)
        if len(line) > LINE_LIMIT
    ]
    assert not long, f"lines over {LINE_LIMIT} characters (lay out the builder, then `{REGENERATE}`): {long}"


def test_no_two_files_hold_the_same_statement():
    """A statement is named once: an adapter that runs another's SQL (reading its rows differently)
    is not a store function of its own, or its file would repeat the other's."""
    names_by_body: dict[str, list[str]] = {}
    for name, text in _committed().items():
        names_by_body.setdefault(text.split("\n\n", 1)[1], []).append(name)
    repeated = [names for names in names_by_body.values() if len(names) > 1]
    assert not repeated, f"files with the same SQL (name the statement once): {repeated}"


def test_no_rendered_statement_compares_two_string_literals():
    found = {
        name: match.group(0)
        for name, text in _committed().items()
        if (match := LITERAL_COMPARISON.search(text.split("\n\n", 1)[1]))
    }
    assert not found, f"constant comparisons the builder could have folded: {found}"
    assert LITERAL_COMPARISON.search("CASE WHEN ('claimed') = 'claimed' AND ('done') IS DISTINCT FROM 'claimed'")
