"""An attempt's error object: what ``fail`` and ``complete`` store on the attempt they close.

The object is cut, never refused for its length (type: first 200 bytes, message: first 4 KB,
traceback: last 64 KB, each on a UTF-8 character boundary); malformed input is ``invalid`` naming
``error.<field>`` and writes nothing; a refused report (fence, stale lease) writes nothing either.
"""

from __future__ import annotations

import psycopg
import pytest

from tests.store.helpers import attempts, lapse, make_due, snapshot
from todos.core import db
from todos.core.db import execute
from todos.core.store import Conflict, Invalid, inputs
from todos.core.store import agent as agent_store

REPORTS = {"fail": agent_store.fail, "complete": agent_store.complete}


def new(agent) -> str:
    return execute(agent_store.create(agent, queue="default", title="fails")).todo.id


def claimed(agent, **kw) -> tuple[str, str | None]:
    todo_id = new(agent)
    claim = execute(agent_store.claim(agent, todo_id, **kw))
    return todo_id, claim.lease_token


def stored(value) -> dict | None:
    cleaned = inputs.error_object(value)
    return None if cleaned is None else cleaned.obj


# --- cutting, cleaning and emptiness ------------------------------------------------------------


def test_a_short_error_is_kept_whole_and_says_it_was_not_cut():
    assert stored({"type": "ValueError", "message": "bad input", "traceback": "Traceback …\n  line 1"}) == {
        "type": "ValueError",
        "message": "bad input",
        "traceback": "Traceback …\n  line 1",
        "truncated": False,
    }


def test_the_type_keeps_its_first_200_bytes_on_a_character_boundary():
    # 'é' is two bytes: 99 of them and one more byte of 'x' make 199 bytes, and the next 'é' would
    # end at byte 201, so it is dropped whole, never cut in half
    value = "x" + "é" * 150
    out = stored({"type": value})
    assert out is not None and out["truncated"] is True
    assert out["type"] == "x" + "é" * 99 and len(out["type"].encode()) == 199


def test_the_message_keeps_its_first_4_kb():
    value = "€" * 2000  # 3 bytes each: 6000 bytes
    out = stored({"message": value})
    assert out is not None and out["truncated"] is True
    assert out["message"] == "€" * 1365 and len(out["message"].encode()) == 4095


def test_the_traceback_keeps_its_last_64_kb_where_the_failure_is_named():
    head = "Traceback (most recent call last):\n" + "🙂" * 20000  # 4 bytes each
    tail = "\n  File \"job.py\", line 9, in run\nKeyError: 'user'"
    out = stored({"traceback": head + tail})
    assert out is not None and out["truncated"] is True
    kept = out["traceback"]
    assert kept.endswith(tail)
    assert len(kept.encode()) <= inputs.ERROR_TRACEBACK_MAX_BYTES
    # cut on a boundary: what is left of the emoji run starts with a whole emoji
    assert kept.startswith("🙂") and len(kept.encode()) > inputs.ERROR_TRACEBACK_MAX_BYTES - 4


def test_exactly_at_each_limit_nothing_is_cut():
    out = stored({"type": "t" * 200, "message": "m" * 4096, "traceback": "b" * 65536})
    assert out is not None and out["truncated"] is False
    assert (len(out["type"]), len(out["message"]), len(out["traceback"])) == (200, 4096, 65536)


@pytest.mark.parametrize(
    "value",
    [None, {}, {"type": "", "message": "", "traceback": ""}, {"type": None, "message": None}, {"message": "\x00"}],
    ids=["none", "empty-object", "empty-fields", "null-fields", "only-nul"],
)
def test_an_empty_error_is_no_error(value):
    assert stored(value) is None


def test_empty_fields_are_left_out_and_nul_and_lone_surrogates_are_cleaned():
    assert stored({"type": "", "message": "a\x00b\ud800c"}) == {"message": "ab\ufffdc", "truncated": False}


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("boom", "error"),
        (["ValueError"], "error"),
        (42, "error"),
        ({"type": 1}, "error.type"),
        ({"message": ["a"]}, "error.message"),
        ({"traceback": {"frames": []}}, "error.traceback"),
        ({"type": "E", "code": 7}, "error.code"),
        ({"truncated": True}, "error.truncated"),
    ],
)
def test_a_malformed_error_is_invalid_naming_the_field(value, field):
    with pytest.raises(Invalid) as caught:
        inputs.error_object(value)
    assert caught.value.field == field


# --- stored on the attempt the report closes ----------------------------------------------------


@pytest.mark.parametrize("verb", REPORTS)
def test_the_report_stores_the_error_on_the_attempt_it_closes(agent, verb):
    todo_id, _ = claimed(agent)
    execute(REPORTS[verb](agent, todo_id, error={"type": "app.Boom", "message": "it broke\nsecond line"}))
    [a] = attempts(todo_id)
    assert a["error"] == {"type": "app.Boom", "message": "it broke\nsecond line", "truncated": False}


def test_each_attempt_keeps_its_own_error(agent):
    todo_id, _ = claimed(agent)
    execute(agent_store.fail(agent, todo_id, error={"type": "First", "traceback": "t" * 70000}))
    make_due(todo_id)
    execute(agent_store.claim(agent, todo_id))
    execute(agent_store.fail(agent, todo_id, error={"type": "Second"}))
    make_due(todo_id)
    execute(agent_store.claim(agent, todo_id))
    execute(agent_store.complete(agent, todo_id))
    first, second, third = attempts(todo_id)
    assert first["error"]["type"] == "First" and first["error"]["truncated"] is True
    assert len(first["error"]["traceback"]) == 65536
    assert second["error"] == {"type": "Second", "truncated": False}
    assert third["error"] is None and third["outcome"] == "completed"


def test_a_report_without_an_error_stores_none(agent):
    todo_id, _ = claimed(agent)
    execute(agent_store.fail(agent, todo_id, summary="no details", error={}))
    [a] = attempts(todo_id)
    assert a["error"] is None and a["summary"] == "no details"


@pytest.mark.parametrize("verb", REPORTS)
@pytest.mark.parametrize(
    ("value", "field"),
    [("boom", "error"), ({"type": 1}, "error.type"), ({"message": 2}, "error.message"),
     ({"traceback": 3}, "error.traceback"), ({"stack": "x"}, "error.stack")],
)  # fmt: skip
def test_a_malformed_error_writes_nothing(agent, verb, value, field):
    todo_id, _ = claimed(agent)
    before = snapshot(todo_id)
    with pytest.raises(Invalid) as caught:
        execute(REPORTS[verb](agent, todo_id, error=value))
    assert caught.value.field == field
    assert snapshot(todo_id) == before


@pytest.mark.parametrize("verb", REPORTS)
def test_a_report_with_the_wrong_lease_token_stores_no_error(agent, verb):
    todo_id, token = claimed(agent, require_fence=True)
    assert token is not None
    before = snapshot(todo_id)
    wrong = "A" * len(token)
    with pytest.raises(Conflict):
        execute(REPORTS[verb](agent, todo_id, lease_token=wrong, error={"type": "Fenced"}))
    assert snapshot(todo_id) == before and attempts(todo_id)[0]["error"] is None


@pytest.mark.parametrize("verb", REPORTS)
def test_a_stale_holder_report_stores_its_error_on_no_attempt(agent, verb):
    todo_id, old_token = claimed(agent, require_fence=True)
    lapse(todo_id)
    execute(agent_store.claim(agent, todo_id, require_fence=True))  # a takeover: attempt 2 is open
    before = snapshot(todo_id)
    with pytest.raises(Conflict):
        execute(REPORTS[verb](agent, todo_id, lease_token=old_token, error={"type": "Stale"}))
    assert snapshot(todo_id) == before
    assert [a["error"] for a in attempts(todo_id)] == [None, None]


def test_a_complete_batch_item_stores_its_own_error_on_its_own_attempt(agent):
    quiet, noisy, long = (claimed(agent)[0] for _ in range(3))
    results = execute(
        agent_store.complete_batch(
            agent,
            [
                {"id": quiet},
                {"id": noisy, "error": {"type": "app.Retried", "message": "recovered after a retry"}},
                {"id": long, "error": {"traceback": "t" * 70000}},
            ],
        )
    )
    assert [r.ok for r in results] == [True, True, True]
    assert attempts(quiet)[0]["error"] is None
    recovered = {"type": "app.Retried", "message": "recovered after a retry", "truncated": False}
    assert attempts(noisy)[0]["error"] == recovered
    [kept] = attempts(long)
    assert kept["outcome"] == "completed" and kept["error"]["truncated"] is True
    assert len(kept["error"]["traceback"]) == 65536


@pytest.mark.parametrize(
    ("value", "field"),
    [("boom", "items[1].error"), ({"type": 1}, "items[1].error.type"), ({"stack": "x"}, "items[1].error.stack")],
)
def test_a_malformed_error_in_a_complete_batch_item_completes_no_item(agent, value, field):
    first, second = claimed(agent)[0], claimed(agent)[0]
    before = (snapshot(first), snapshot(second))
    with pytest.raises(Invalid) as caught:
        items = [{"id": first, "error": {"type": "Fine"}}, {"id": second, "error": value}]
        execute(agent_store.complete_batch(agent, items))
    assert caught.value.field == field
    assert (snapshot(first), snapshot(second)) == before


def test_a_complete_batch_item_that_misses_stores_no_error(agent):
    todo_id, token = claimed(agent, require_fence=True)
    assert token is not None
    before = snapshot(todo_id)
    fenced = {"id": todo_id, "lease_token": "A" * len(token), "error": {"type": "Fenced"}}
    [result] = execute(agent_store.complete_batch(agent, [fenced]))
    assert not result.ok and result.error.code == "conflict"
    assert snapshot(todo_id) == before and attempts(todo_id)[0]["error"] is None


# --- the column's rule, the backstop behind the store -------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        '"a string"',
        '{"truncated": false}',
        '{"type": "E"}',
        '{"type": 1, "truncated": false}',
        '{"type": "E", "truncated": false, "extra": 1}',
        '{"type": "%s", "truncated": true}' % ("x" * 201),
        '{"message": "%s", "truncated": true}' % ("x" * 4097),
        '{"traceback": "%s", "truncated": true}' % ("x" * 65537),
    ],
)
def test_the_column_refuses_what_the_store_would_never_write(agent, bad):
    todo_id, _ = claimed(agent)
    with db.connect() as conn, pytest.raises(psycopg.errors.CheckViolation):
        conn.execute("UPDATE todo_attempts SET error = %s::jsonb WHERE todo_id = %s", (bad, todo_id))
