"""A parent that thousands of children wait for (docs/lifecycle.md, "Dependencies"), with real
connections: the one statement that completes it counts every child off, each claimable at that
statement's commit and not before, with the Board's counts exact and the waiting claims woken;
children counted off by several parents in one statement are counted once per parent."""

from __future__ import annotations

from tests.factories import relayed
from tests.store.helpers import listening, row
from todos.core import db
from todos.core.db import execute
from todos.core.store import agent as agent_store

from .test_run_later import board_counts

CHILDREN = 2500


def make_children(agent, afters: list[list[str]]) -> list[str]:
    """One child per entry of ``afters`` (its parents), in create_batch's chunks, in that order."""
    ids: list[str] = []
    for start in range(0, len(afters), agent_store.CREATE_BATCH_MAX):
        chunk = afters[start : start + agent_store.CREATE_BATCH_MAX]
        items = [{"queue": "default", "title": f"child {start + i}", "after": after} for i, after in enumerate(chunk)]
        results = execute(agent_store.create_batch(agent, items))
        assert all(r.todo is not None and r.todo.blocked for r in results)
        ids += [r.todo.id for r in results if r.todo is not None]
    return ids


def claimable(conn, ids: list[str]) -> int:
    """How many of ``ids`` another connection sees as claimable now (pending, no time, no parent)."""
    found = conn.execute(
        """SELECT count(*) AS n FROM todos
           WHERE id = ANY(%s) AND state = 'pending' AND next_retry_at IS NULL AND parents_left = 0""",
        (ids,),
    ).fetchone()
    assert found is not None
    return found["n"]


def test_completing_a_parent_of_thousands_unblocks_every_child_at_its_commit(agent):
    parent = execute(agent_store.create(agent, queue="default", title="parent")).todo
    children = make_children(agent, [[parent.id]] * CHILDREN)
    execute(agent_store.claim(agent, parent.id))
    assert board_counts(agent.endpoint_id) == {"blocked": CHILDREN, "claimed": 1}
    with listening("board_ready") as listener, db.connect(autocommit=False) as completing, db.connect() as other:
        done = execute(agent_store.complete(agent, parent.id), completing)
        assert done.state == "done"
        assert claimable(other, children) == 0
        assert execute(agent_store.claim_next(agent), other) is None
        completing.commit()
        assert claimable(other, children) == CHILDREN
        woken = [p for channel, p in listener.drain() if channel == "board_ready"]
    assert woken == [{"endpoint": str(agent.endpoint_id), "queue": "default", "n": CHILDREN}]
    assert board_counts(agent.endpoint_id) == {"pending": CHILDREN, "done": 1}
    claimed = execute(agent_store.claim_next(agent))
    assert claimed is not None and claimed.todo.id in set(children)
    assert board_counts(agent.endpoint_id) == {"pending": CHILDREN - 1, "claimed": 1, "done": 1}


def test_children_of_several_parents_done_in_one_statement_are_counted_once_per_parent(agent):
    a, b, c = (execute(agent_store.create(agent, queue="default", title=t)).todo for t in "abc")
    # Interleaved: children of both, of one, and of all three, so the count-off groups repeats.
    shapes = [[a.id, b.id], [a.id], [b.id, a.id, c.id]] * 400
    children = make_children(agent, shapes)
    execute(agent_store.claim(agent, a.id))
    execute(agent_store.claim(agent, b.id))
    results = execute(agent_store.complete_batch(agent, [{"id": a.id}, {"id": b.id}]))
    assert [r.todo.state for r in results if r.todo is not None] == ["done", "done"]
    relayed()
    left = {child: row(child)["parents_left"] for child in children}
    waiting = [child for child, after in zip(children, shapes, strict=True) if c.id in after]
    assert {left[child] for child in waiting} == {1}
    assert all(left[child] == 0 for child in children if child not in set(waiting))
    assert board_counts(agent.endpoint_id) == {"pending": 800 + 1, "blocked": 400, "done": 2}
    execute(agent_store.claim(agent, c.id))
    execute(agent_store.complete(agent, c.id))
    assert board_counts(agent.endpoint_id) == {"pending": 1200, "done": 3}
