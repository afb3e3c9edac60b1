"""``todo_attempts.search_doc``: what an attempt said, stored parsed for the search box. Every
statement that closes an attempt with text writes it (``fragments.search_document``: a plain
column since 0035, not a generated one), an attempt that said nothing (the drain's claim and
plain complete) keeps NULL, and a phrase matches within one text, never across two."""

from __future__ import annotations

import pytest

from tests.store.helpers import make_due, one, sql
from tests.store.test_run_time_limits import overrun
from todos.core.compose import Params
from todos.core.db import execute
from todos.core.selectors.todo_query import attempt_text_match
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import human as human_store

pytestmark = pytest.mark.usefixtures("store_db")


def claimed(agent, **kw) -> str:
    todo = execute(agent_store.create(agent, queue="default", title="t", **kw)).todo
    execute(agent_store.claim(agent, todo.id))
    return todo.id


def docs(todo_id: str) -> list[str | None]:
    rows = sql("SELECT search_doc::text AS doc FROM todo_attempts WHERE todo_id = %s ORDER BY seq", (todo_id,))
    return [r["doc"] for r in rows]


def matching(todo_ids: list[str], phrase: str) -> set[str]:
    """The todos among ``todo_ids`` the search's attempt test finds for ``phrase``."""
    params = Params(ids=todo_ids)
    test = attempt_text_match("t", params.bind("phrase", phrase))
    rows = sql(f"SELECT t.id FROM todos t WHERE t.id = ANY(%(ids)s) AND {test}", dict(params))
    return {r["id"] for r in rows}


def test_a_claim_and_a_plain_complete_store_no_document(world):
    todo_id = claimed(world.agent)
    assert docs(todo_id) == [None]
    execute(agent_store.complete(world.agent, todo_id, result={"ok": True}))
    assert docs(todo_id) == [None]
    assert matching([todo_id], "ok") == set()


def test_a_fail_with_an_error_stores_its_type_message_and_summary(world):
    todo_id = claimed(world.agent, max_attempts=1)
    error = {"type": "psycopg.errors.DiskFull", "message": "No space left on device", "traceback": "deep frame"}
    execute(agent_store.fail(world.agent, todo_id, error=error, summary="write stalled"))
    [doc] = docs(todo_id)
    assert doc is not None and "'diskfull'" in doc and "'psycopg.errors.diskfull'" in doc
    for phrase in ("DiskFull", "psycopg.errors.DiskFull", "errors DiskFull", "no space left", "write stalled"):
        assert matching([todo_id], phrase) == {todo_id}, phrase
    # the traceback is not searched; a phrase's words must be adjacent and in order
    for phrase in ("deep frame", "space no", "no left"):
        assert matching([todo_id], phrase) == set(), phrase


def test_a_complete_with_a_summary_or_an_error_stores_a_document(world):
    summary_only = claimed(world.agent)
    execute(agent_store.complete(world.agent, summary_only, summary="copied 12 files"))
    with_error = claimed(world.agent)
    execute(agent_store.complete(world.agent, with_error, error={"type": "app.Partial", "message": "one skipped"}))
    assert matching([summary_only, with_error], "copied 12 files") == {summary_only}
    assert matching([summary_only, with_error], "Partial") == {with_error}
    assert matching([summary_only, with_error], "one skipped") == {with_error}


def test_a_fail_that_says_nothing_stores_none_and_one_that_says_anything_stores_it(world):
    # A report with neither summary nor error object writes NULL outright (its statement leaves
    # the document's expression out); any text at all takes the full expression.
    silent, summary_only, error_only = (claimed(world.agent, max_attempts=1) for _ in range(3))
    execute(agent_store.fail(world.agent, silent))
    execute(agent_store.fail(world.agent, summary_only, summary="quota exhausted"))
    execute(agent_store.fail(world.agent, error_only, error={"type": "app.Quota", "message": "over the cap"}))
    assert docs(silent) == [None]
    ids = [silent, summary_only, error_only]
    assert matching(ids, "quota exhausted") == {summary_only}
    assert matching(ids, "over the cap") == {error_only}


def test_a_summary_taken_from_the_result_is_searchable(world, settings):
    settings.BOARD_ATTEMPT_SUMMARY_FROM_RESULT = True
    todo_id = claimed(world.agent)
    execute(agent_store.complete(world.agent, todo_id, result={"summary": "indexed forty pages"}))
    assert matching([todo_id], "indexed forty pages") == {todo_id}


def test_a_humans_report_is_searchable(world):
    created = human_store.create(world.human, endpoint_id=world.agent.endpoint_id, queue="default", title="h")
    todo = execute(created).todo
    execute(human_store.claim(world.human, todo.id))
    execute(human_store.fail(world.human, todo.id, note="printer jammed again"))
    assert matching([todo.id], "printer jammed") == {todo.id}


def test_a_phrase_never_spans_two_texts(world):
    todo_id = claimed(world.agent, max_attempts=1)
    error = {"type": "app.Quota", "message": "exceeded for tenant"}
    execute(agent_store.fail(world.agent, todo_id, error=error, summary="upload halted"))
    # each text's own phrases match ...
    for phrase in ("app.Quota", "app Quota", "upload halted", "exceeded for tenant"):
        assert matching([todo_id], phrase) == {todo_id}, phrase
    # ... but no phrase made of one text's end and the next one's start, in the stored order
    # (type, type with dots as spaces, summary, message) or any other
    for phrase in ("app.Quota app", "Quota upload", "halted exceeded", "Quota exceeded", "tenant upload"):
        assert matching([todo_id], phrase) == set(), phrase
    # the mark stored between two texts is punctuation: no search yields it
    assert "'|'" in docs(todo_id)[0]
    assert matching([todo_id], "|") == set()
    assert matching([todo_id], "Quota | upload") == set()


def test_a_pruned_attempt_takes_its_document_with_it(world, settings):
    settings.BOARD_ATTEMPTS_CAP = 2
    todo_id = claimed(world.agent, max_attempts=10)
    execute(agent_store.fail(world.agent, todo_id, error={"type": "app.Early", "message": "first words"}))
    make_due(todo_id)  # the retry window only: a released todo is pending and claimable at once
    for _ in range(2):
        execute(agent_store.claim(world.agent, todo_id))
        execute(agent_store.release(world.agent, todo_id))
    assert one("SELECT attempts_pruned FROM todos WHERE id = %s", (todo_id,))["attempts_pruned"] == 1
    assert matching([todo_id], "first words") == set()


def test_the_column_is_written_by_the_statements_not_generated_by_the_table():
    # a generated column's expression is parsed again by every statement that writes the table
    # (the drain's claims and completes included); the statements write it instead (0035)
    got = one(
        """SELECT attgenerated, pg_get_expr(d.adbin, d.adrelid) AS expr FROM pg_attribute a
           LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
           WHERE a.attrelid = 'todo_attempts'::regclass AND a.attname = 'search_doc'"""
    )
    assert (got["attgenerated"], got["expr"]) == ("", None)


def test_a_release_a_batch_completion_and_a_timeout_store_their_documents(world):
    released = claimed(world.agent)
    execute(agent_store.release(world.agent, released, summary="handing back, quota low"))
    batched = [claimed(world.agent), claimed(world.agent)]
    items = [
        {"id": batched[0], "summary": "merged cleanly"},
        {"id": batched[1], "error": {"type": "app.Conflict", "message": "two heads"}},
    ]
    execute(agent_store.complete_batch(world.agent, items))
    overdue = claimed(world.agent, timeout_seconds=60)
    overrun(overdue, 61)
    assert execute(background_store.time_out()).ids == (overdue,)
    everyone = [released, *batched, overdue]
    assert matching(everyone, "quota low") == {released}
    assert matching(everyone, "merged cleanly") == {batched[0]}
    assert matching(everyone, "Conflict") == matching(everyone, "two heads") == {batched[1]}
    assert matching(everyone, "timed_out") == matching(everyone, "ran past its") == {overdue}


def test_a_persons_release_is_searchable(world):
    created = human_store.create(world.human, endpoint_id=world.agent.endpoint_id, queue="default", title="h")
    todo = execute(created).todo
    execute(human_store.claim(world.human, todo.id))
    execute(human_store.release(world.human, todo.id, note="back to the pool"))
    assert matching([todo.id], "back to the pool") == {todo.id}
    assert docs(todo.id)[0] is not None
