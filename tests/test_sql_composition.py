"""The composition toolkit and the one-builder rules the statements are held to.

``tests/test_sql_statements.py`` proves the committed SQL files are what the code builds; these
tests prove how it builds them: parameters bound by name without clashes, the few literals checked
before they are quoted, one builder for each repeated contract (audit rows, Board messages,
membership), column lists that match their record types, and a type check that actually rejects
a runtime string on its way to ``execute``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from todos.core import compose
from todos.core.selectors.rows import ROW_COLUMNS, TodoRow
from todos.core.store import fragments
from todos.core.store.records import ATTEMPT_COLUMNS, TODO_COLUMNS, Attempt, Todo

ROOT = Path(__file__).resolve().parent.parent
STATEMENTS = ROOT / "todos" / "sql" / "statements"


# -- the toolkit ---------------------------------------------------------------------------------


def test_bind_returns_the_placeholder_and_keeps_the_value():
    params = compose.Params()
    assert params.bind("queue", "email") == "%(queue)s"
    assert params.bind("queue", "email") == "%(queue)s"  # the same value under the same name: shared
    assert params == {"queue": "email"}


def test_binding_one_name_to_two_values_is_refused():
    params = compose.Params()
    params.bind("queue", "email")
    with pytest.raises(ValueError, match="'queue' bound twice"):
        params.bind("queue", "default")
    assert params == {"queue": "email"}


def test_merge_takes_a_fragment_s_parameters_under_the_same_rule():
    params = compose.Params(viewer=[1, 2])
    params.merge({"viewer": [1, 2], "q": "x"})
    assert params == {"viewer": [1, 2], "q": "x"}
    with pytest.raises(ValueError, match="'q' bound twice"):
        params.merge({"q": "y"})


def test_integer_literals_are_ints_only():
    assert compose.integer(20) == "20"
    assert compose.integer(-3).strip() == "-3"
    for bad in (True, "5", 2.0, None):
        with pytest.raises(TypeError, match="must be an int"):
            compose.integer(bad)  # type: ignore[arg-type]


def test_state_literals_are_the_schema_s_states_only():
    assert compose.state("pending") == "'pending'"
    assert compose.states(["pending", "claimed"]) == "ARRAY['pending', 'claimed']::text[]"
    for bad in ("dead", "retry", "pending'; DROP TABLE todos; --", ""):
        with pytest.raises(ValueError, match="not a todo state"):
            compose.state(bad)


def test_conjunction_of_nothing_is_true():
    assert compose.conjunction([]) == "TRUE"
    assert compose.conjunction(["a", "b"]) == "a AND b"
    assert compose.columns(["id", "queue"], "t") == "t.id, t.queue"


# -- column lists written out literally match their record types -----------------------------------


def _names(columns: str) -> list[str]:
    """The names a column list answers: each top-level item's alias (``expr AS name``) or name."""
    items, depth, start = [], 0, 0
    for i, char in enumerate(columns):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(columns[start:i])
            start = i + 1
    return [item.split()[-1] for item in [*items, columns[start:]]]


def test_todo_columns_are_the_todo_record_s_fields_in_order():
    assert _names(TODO_COLUMNS) == [f.name for f in dataclasses.fields(Todo)]


def test_attempt_columns_are_the_attempt_record_s_fields_in_order():
    assert _names(ATTEMPT_COLUMNS) == [f.name for f in dataclasses.fields(Attempt)]


def test_the_board_s_row_columns_are_fields_of_its_row_type():
    fields = [f.name for f in dataclasses.fields(TodoRow)]
    assert list(ROW_COLUMNS) == [name for name in fields if name in ROW_COLUMNS]
    assert set(ROW_COLUMNS) <= set(fields)


# -- one builder per repeated contract -----------------------------------------------------------


def _statement_files() -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(STATEMENTS.glob("*.sql"))}


def test_every_audit_row_is_written_by_the_one_builder():
    builder_columns = re.search(r"INSERT INTO audit_log \(([^)]*)\)", fragments.audit_row("x.y", "s", team="t")).group(
        1
    )
    found = 0
    for name, text in _statement_files().items():
        for columns in re.findall(r"INSERT INTO audit_log \(([^)]*)\)", text):
            assert columns == builder_columns, f"{name} writes its audit row by hand: ({columns})"
            found += 1
    assert found >= 20  # every operator, endpoint and team statement audits


def test_every_board_message_is_written_by_the_one_builder():
    shape = re.compile(r"pg_notify\('board_events', json_strip_nulls\(json_build_object\(\s*'op', ")
    senders = []
    for name, text in _statement_files().items():
        if "board_events" in text:
            assert len(shape.findall(text)) == text.count("board_events"), name
            senders.append(name)
    # Only the relay sends Board messages: no transition does (docs/lifecycle.md, "Live notifications").
    assert senders and all(name.startswith("relay.") for name in senders), senders


def test_no_module_spells_a_channel_or_a_membership_by_hand():
    offenders = []
    for path in (ROOT / "todos").rglob("*.py"):
        if path.name == "fragments.py" or "statements" in path.parts:
            continue
        text = path.read_text()
        if re.search(r"pg_notify\('board_(events|ready)'", text):
            offenders.append(f"{path}: a channel by name")
        if path.parent.name == "store" and "FROM team_members m WHERE m.team_id" in text:
            offenders.append(f"{path}: a membership predicate by hand")
    assert not offenders, offenders


def test_member_of_reads_the_role_only_when_asked():
    assert "m.role" not in fragments.member_of("e.team_id")
    assert fragments.member_of("e.team_id", roles=fragments.ADMIN_ROLES).endswith("AND m.role IN ('admin'))")


# -- the type check that keeps runtime text out of SQL -------------------------------------------

PYRIGHT_INCLUDE = re.compile(r"\[tool\.pyright\].*?include = \[(.*?)\]", re.S)
RUNS_SQL = re.compile(r"\.execute\(|\baexecute\(|\bexecute\(|Statement\(")


def test_every_module_that_runs_sql_is_type_checked():
    include = re.findall(r'"([^"]+)"', PYRIGHT_INCLUDE.search((ROOT / "pyproject.toml").read_text()).group(1))
    unchecked = []
    for package in ("todos", "board"):
        for path in (ROOT / package).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if "migrations" in path.parts or "statements" in path.parts:
                continue
            if not RUNS_SQL.search(path.read_text()):
                continue
            if not any(relative == entry or relative.startswith(entry.rstrip("/") + "/") for entry in include):
                unchecked.append(relative)
    assert not unchecked, f"run SQL but are outside [tool.pyright] include: {unchecked}"


@pytest.mark.skipif(shutil.which("uv") is None, reason="pyright runs through uv")
def test_the_type_check_rejects_a_runtime_string_on_its_way_to_sql(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text(
        "from todos.core.db import Statement, connect\n"
        "from todos.core import compose\n\n\n"
        "def bad(name: str):\n"
        "    with connect() as conn:\n"
        "        conn.execute(f\"SELECT * FROM todos WHERE title = '{name}'\")\n"
        "    return Statement(f\"SELECT '{name}'\", {})\n\n\n"
        "def good(name: str):\n"
        "    params = compose.Params()\n"
        "    return Statement(f\"SELECT {params.bind('name', name)} LIMIT {compose.integer(3)}\", params, list)\n"
    )
    result = subprocess.run(
        ["uv", "run", "pyright", "--project", str(ROOT), "--outputjson", str(probe)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    report = json.loads(result.stdout)
    lines = sorted({d["range"]["start"]["line"] + 1 for d in report["generalDiagnostics"] if d["severity"] == "error"})
    assert lines == [7, 8], report["generalDiagnostics"]  # the two runtime strings; good() passes
