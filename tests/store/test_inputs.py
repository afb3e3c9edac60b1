"""Bad input is refused with Invalid naming the field, before anything is written; the inputs the
store cleans (summary, claimant) are cut, never refused for length."""

from __future__ import annotations

import pytest

from tests.store.helpers import attempts, counts, row, snapshot
from todos.core.db import execute
from todos.core.store import Invalid, inputs
from todos.core.store import agent as agent_store
from todos.core.store import human as human_store

MiB = 1024 * 1024


def invalid(field: str, build, *args, **kwargs) -> Invalid:
    """``build(*args, **kwargs)`` (and running what it built, if it got that far) raises Invalid
    naming ``field``, and no table grew."""
    before = counts()
    with pytest.raises(Invalid) as info:
        execute(build(*args, **kwargs))
    assert info.value.field == field, info.value
    assert info.value.code == "invalid"
    assert counts() == before
    return info.value


# --- create -----------------------------------------------------------------------------------


BAD_CREATE_FIELDS = [
    ("title", ""),
    ("title", "   "),
    ("title", "x" * 501),
    ("title", None),
    ("title", 42),
    ("title", "nul\x00inside"),
    ("title", "lone \ud800 surrogate"),
    ("queue", ""),
    ("queue", "has space"),
    ("queue", "-leading-dash"),
    ("queue", "q" * 129),
    ("queue", "bad\x00"),
    ("queue", ["default"]),
    ("payload", {1, 2}),
    ("payload", float("nan")),
    ("payload", {"x": float("inf")}),
    ("payload", object()),
    ("payload", {"blob": "x" * MiB}),
    ("payload", {"text": "nul \x00 inside"}),
    ("payload", {"nul\x00key": 1}),
    ("payload", {"s": "lone \udfff surrogate"}),
    ("priority", 40000),
    ("priority", -40000),
    ("priority", "1"),
    ("priority", 1.5),
    ("priority", True),
    ("max_attempts", 0),
    ("max_attempts", 101),
    ("max_attempts", -1),
    ("max_attempts", True),
    ("max_attempts", 5.0),
    ("idempotency_key", "k" * 256),
    ("idempotency_key", 7),
    ("kind", "k" * 201),
    ("source", b"bytes"),
    ("assignee", "a" * 201),
]


def test_create_refuses_malformed_fields(agent, subtests):
    for field, value in BAD_CREATE_FIELDS:
        with subtests.test(field=field, value=repr(value)[:40]):
            fields = {"queue": "default", "title": "fine", field: value}
            err = invalid(field, agent_store.create, agent, **fields)
            if isinstance(value, str) and len(value) > 100:
                assert value not in err.message


def test_create_accepts_the_boundaries(agent):
    ok = execute(
        agent_store.create(
            agent,
            queue="default",
            title="x" * 500,
            priority=-32768,
            max_attempts=100,
            idempotency_key="k" * 255,
            payload={"blob": "x" * (MiB - 20)},
        )
    )
    assert ok.created and row(ok.todo.id)["max_attempts"] == 100
    assert execute(agent_store.create(agent, queue="default", title="é" * 500, max_attempts=1)).created


def test_a_payload_may_mention_a_backslash_u0000_as_text(agent):
    """Only a real NUL is refused; the six characters ``\\u0000`` are ordinary text."""
    created = execute(agent_store.create(agent, queue="default", title="x", payload={"doc": "write \\u0000 for NUL"}))
    assert row(created.todo.id)["payload"] == {"doc": "write \\u0000 for NUL"}


def test_payload_accepts_any_json_document(agent):
    for payload in ([1, "two", None, True, {"x": [1.5]}], "just a string", 12, 10**30):
        todo = execute(agent_store.create(agent, queue="default", title="x", payload=payload)).todo
        assert row(todo.id)["payload"] == payload


# --- claims -----------------------------------------------------------------------------------


def test_lease_ttls_out_of_range_are_refused_everywhere(agent, subtests):
    pending = execute(agent_store.create(agent, queue="default", title="x")).todo.id
    held = execute(agent_store.create(agent, queue="default", title="y")).todo.id
    execute(agent_store.claim(agent, held))
    before = snapshot(pending), snapshot(held)
    for ttl in (0, -1, 86401, 10**9, True, "300", 1.5):
        with subtests.test(ttl=ttl):
            invalid("lease_ttl_seconds", agent_store.claim_next, agent, lease_ttl_seconds=ttl)
            invalid("lease_ttl_seconds", agent_store.claim, agent, pending, lease_ttl_seconds=ttl)
            invalid("lease_ttl_seconds", agent_store.claim_batch, agent, max=2, lease_ttl_seconds=ttl)
            invalid("lease_ttl_seconds", agent_store.heartbeat, agent, held, lease_ttl_seconds=ttl)
    assert (snapshot(pending), snapshot(held)) == before


def test_lease_ttl_boundaries(agent):
    a = execute(agent_store.create(agent, queue="default", title="x")).todo.id
    b = execute(agent_store.create(agent, queue="default", title="y")).todo.id
    execute(agent_store.claim(agent, a, lease_ttl_seconds=1))
    execute(agent_store.claim(agent, b, lease_ttl_seconds=86400))


def test_claim_arguments_are_checked(agent, human, subtests):
    for value in (0, 101, True, "5", None):
        with subtests.test(max=value):
            invalid("max", agent_store.claim_batch, agent, max=value)
    for queue in ("", "no spaces", 5):
        with subtests.test(queue=queue):
            invalid("queue", agent_store.claim_next, agent, queue=queue)
    for todo_id in (None, 12, "", "x" * 65, "td_\x00"):
        with subtests.test(todo_id=todo_id):
            invalid("id", agent_store.claim, agent, todo_id)
            invalid("id", agent_store.complete, agent, todo_id)
            invalid("id", human_store.cancel, human, todo_id)


def test_claimant_is_cleaned_not_refused(agent):
    a = execute(agent_store.create(agent, queue="default", title="x")).todo.id
    b = execute(agent_store.create(agent, queue="default", title="y")).todo.id
    c = execute(agent_store.create(agent, queue="default", title="z")).todo.id
    execute(agent_store.claim(agent, a, claimant="build\x00box\n/\tci\x1b[31m-7\x7f"))
    assert attempts(a)[0]["claimant"] == "buildbox/ci[31m-7"
    execute(agent_store.claim(agent, b, claimant="€" * 50))  # 150 bytes → 42 whole characters
    assert attempts(b)[0]["claimant"] == "€" * 42
    execute(agent_store.claim(agent, c, claimant="\n\r\t"))  # nothing left: no claimant
    assert attempts(c)[0]["claimant"] is None
    invalid("claimant", agent_store.claim_next, agent, claimant=42)


# --- reports ----------------------------------------------------------------------------------


BAD_ARTIFACTS = [
    "http://ci.example/run/1",
    "javascript:alert(document.cookie)",
    "https://",
    "https:///no-host",
    "https://ci.example/" + "a" * 500,
    "https://ci.example/with space",
    "https://ci.example/\nnewline",
    "ftp://files.example/x",
    "mcp:/one-slash",
    "mcp://",
    "no scheme at all",
    "//ci.example/x",
    "data:text/html,<script>1</script>",
    "https://[::1/broken",
    ["https://ci.example"],
]


@pytest.mark.parametrize("verb", ["complete", "fail", "release"])
def test_bad_artifacts_are_refused_without_echoing_them(agent, verb, subtests):
    todo_id = execute(agent_store.create(agent, queue="default", title="x")).todo.id
    execute(agent_store.claim(agent, todo_id))
    before = snapshot(todo_id)
    for artifact in BAD_ARTIFACTS:
        with subtests.test(artifact=artifact):
            err = invalid("artifact", getattr(agent_store, verb), agent, todo_id, artifact=artifact, summary="s")
            if isinstance(artifact, str):
                assert artifact not in err.message and artifact not in str(err)
                assert "ci.example" not in err.message
    assert snapshot(todo_id) == before


def test_good_artifacts_are_kept(agent):
    for artifact in (
        "https://ci.example/run/1?sig=abc",
        "HTTPS://CI.EXAMPLE/x",
        "mcp://cairn/Ab12",
        "https://h/" + "a" * 502,
    ):
        todo_id = execute(agent_store.create(agent, queue="default", title="x")).todo.id
        execute(agent_store.claim(agent, todo_id))
        execute(agent_store.complete(agent, todo_id, artifact=artifact))
        assert attempts(todo_id)[0]["artifact"] == artifact


def test_artifact_schemes_come_from_settings(agent, settings):
    settings.BOARD_ARTIFACT_SCHEMES = ["s3"]
    todo_id = execute(agent_store.create(agent, queue="default", title="x")).todo.id
    execute(agent_store.claim(agent, todo_id))
    invalid("artifact", agent_store.complete, agent, todo_id, artifact="mcp://cairn/x")
    execute(agent_store.complete(agent, todo_id, artifact="s3://bucket/key"))


def test_bad_results_and_summaries_are_refused(agent, subtests):
    todo_id = execute(agent_store.create(agent, queue="default", title="x")).todo.id
    execute(agent_store.claim(agent, todo_id))
    before = snapshot(todo_id)
    for result in ({1, 2}, float("nan"), {"big": "x" * MiB}, {"t": "\x00"}):
        with subtests.test(result=repr(result)[:30]):
            invalid("result", agent_store.complete, agent, todo_id, result=result)
            invalid("result", agent_store.fail, agent, todo_id, result=result)
    for summary in (42, "nul\x00"):
        with subtests.test(summary=summary):
            invalid("summary", agent_store.complete, agent, todo_id, summary=summary)
    assert snapshot(todo_id) == before


def test_a_long_summary_is_cut_at_a_character_boundary(agent):
    cases = {
        "€" * 1000: "€" * 682,  # 3-byte characters: 682 × 3 = 2046 bytes
        "a" + "😀" * 600: "a" + "😀" * 511,  # 4-byte: 1 + 511 × 4 = 2045 bytes
        "é" * 1024: "é" * 1024,  # exactly 2048 bytes: kept whole
    }
    for text, stored in cases.items():
        todo_id = execute(agent_store.create(agent, queue="default", title="x")).todo.id
        execute(agent_store.claim(agent, todo_id))
        execute(agent_store.fail(agent, todo_id, summary=text))
        [a] = attempts(todo_id)
        assert a["summary"] == stored
        assert a["summary_truncated"] is (stored != text)
        assert len(a["summary"].encode()) <= 2048


def test_an_empty_summary_is_no_summary(agent):
    todo_id = execute(agent_store.create(agent, queue="default", title="x")).todo.id
    execute(agent_store.claim(agent, todo_id))
    execute(agent_store.complete(agent, todo_id, summary=""))
    assert (attempts(todo_id)[0]["summary"], attempts(todo_id)[0]["summary_truncated"]) == (None, False)


def test_summary_from_result_is_off_by_default_and_cut_when_on(agent, settings):
    a = execute(agent_store.create(agent, queue="default", title="x")).todo.id
    execute(agent_store.claim(agent, a))
    execute(agent_store.complete(agent, a, result={"secret": "hunter2"}))
    assert attempts(a)[0]["summary"] is None
    settings.BOARD_ATTEMPT_SUMMARY_FROM_RESULT = True
    b = execute(agent_store.create(agent, queue="default", title="y")).todo.id
    execute(agent_store.claim(agent, b))
    execute(agent_store.complete(agent, b, result={"log": "€" * 1000}))
    [att] = attempts(b)
    assert att["summary"].startswith('{"log":"') and att["summary_truncated"] is True
    assert len(att["summary"].encode()) <= 2048


BAD_BATCHES = [
    ("not a list", "items"),
    ([], "items"),
    ([{"id": f"td_{i}"} for i in range(101)], "items"),
    (["td_x"], "items[0]"),
    ([{"id": "td_a"}, {"id": "td_b", "color": "red"}], "items[1].color"),
    ([{"id": "td_a"}, {"id": "td_a"}], "items[1].id"),
    ([{"id": "td_a", "artifact": "http://x"}], "items[0].artifact"),
    ([{"id": "td_a", "result": float("nan")}], "items[0].result"),
]


def test_complete_batch_names_the_bad_item(agent, subtests):
    for items, field in BAD_BATCHES:
        with subtests.test(field=field):
            invalid(field, agent_store.complete_batch, agent, items)


# --- operator inputs --------------------------------------------------------------------------


def test_operator_notes_are_bounded(world):
    todo_id = execute(agent_store.create(world.agent, queue="default", title="x")).todo.id
    invalid("note", human_store.cancel, world.human, todo_id, note="n" * 2001)
    invalid("note", human_store.cancel, world.human, todo_id, note=5)
    invalid("ids", human_store.cancel_many, world.human, ["td_x"] * 1001)
    invalid("ids", human_store.retry_many, world.human, "td_x")


def test_a_long_multibyte_note_becomes_a_cut_attempt_summary(world):
    """A note may hold 2000 characters; the attempt's summary holds 2048 bytes."""
    note = "€" * 2000
    for verb in ("complete", "fail", "release"):
        todo_id = execute(agent_store.create(world.agent, queue="default", title=verb)).todo.id
        execute(human_store.claim(world.human, todo_id))
        execute(getattr(human_store, verb)(world.human, todo_id, note=note))
        [a] = attempts(todo_id)
        assert a["summary"] == "€" * 682 and a["summary_truncated"] is True


def test_a_pause_note_is_bounded_by_the_pause_table(world):
    invalid("note", human_store.pause_queue, world.human, world.team.id, "default", note="n" * 501)
    assert execute(human_store.pause_queue(world.human, world.team.id, "default", note="n" * 500)) is True


def test_pause_needs_a_team_id_and_a_queue_name(world):
    invalid("team", human_store.pause_queue, world.human, "not-a-uuid", "default")
    invalid("queue", human_store.pause_queue, world.human, world.team.id, "bad queue")


# --- the validators themselves ----------------------------------------------------------------


def test_unknown_state_names_are_invalid():
    for value in ("running", "PENDING", "", None, ["pending"], "dead_letter"):
        with pytest.raises(Invalid) as info:
            inputs.state(value)
        assert info.value.field == "state"
    with pytest.raises(Invalid) as info:
        inputs.state("nope", "filter")
    assert info.value.field == "filter"


def test_known_state_names_pass():
    assert [inputs.state(s) for s in inputs.TODO_STATES] == list(inputs.TODO_STATES)


def test_queue_lists_name_the_field():
    with pytest.raises(Invalid) as info:
        inputs.queues(["ok", "not ok"], "scope_queues")
    assert info.value.field == "scope_queues"
    with pytest.raises(Invalid):
        inputs.queues("default")
