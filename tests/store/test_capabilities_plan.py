"""The claim's plan when nothing uses capabilities: the same walk of ``todos_pending`` as before
the capability guard existed: the claim stays on its index for the common case.

The statement of a claim that presents no capabilities differs from the one before capabilities
only by the literal filter ``t.requires = '{}'``; with it taken out again, both are planned over
the same table and their plans must agree line for line, apart from that filter."""

from __future__ import annotations

import re

from tests import factories
from tests.store.helpers import sql
from todos.core import db
from todos.core.store import agent as agent_store
from todos.ops import sql_render as render

PLAIN, BOUND = 20000, 300


def _seed(agent) -> None:
    sql(
        """INSERT INTO todos (id, endpoint_id, queue, title, priority, requires)
           SELECT 'td_' || g, %s, 'default', 't', g %% 3, CASE WHEN g %% 67 = 0 THEN '{gpu}'::text[] ELSE '{}' END
           FROM generate_series(1, %s) g""",
        (agent.endpoint_id, PLAIN + BOUND),
    )
    sql("ANALYZE todos")
    factories.recount()  # the rows were written behind the store's back


def _plan(conn, text: str, params: dict) -> list[str]:
    """The plan's lines; ``requires`` is of the capability_labels domain (0018), which EXPLAIN
    prints as read through its base type, ``(requires)::text[]``: written plainly here."""
    rows = conn.execute("EXPLAIN (COSTS OFF) " + render.sql_text(text, conn), params).fetchall()
    lines = [next(iter(r.values())) if isinstance(r, dict) else r[0] for r in rows]
    return [line.replace("(requires)::text[]", "requires") for line in lines]


def _shape(lines: list[str], *, without_requires: bool = False) -> list[str]:
    """The plan, minus the capability filter (a line of its own, or a clause of a Filter line)
    and the parentheses PostgreSQL puts around a filter's clauses."""
    out = []
    for line in lines:
        if without_requires:
            line = re.sub(r" AND \(requires = '\{\}'::text\[\]\)", "", line)
            line = re.sub(r"\(requires = '\{\}'::text\[\]\) AND ", "", line)
            if re.fullmatch(r"\s*Filter: \(requires = '\{\}'::text\[\]\)", line):
                continue
        out.append(line.replace("(", "").replace(")", ""))
    return out


def test_the_no_capabilities_claim_plans_as_before(agent):
    _seed(agent)
    for statement in (agent_store.claim_next(agent), agent_store.claim_batch(agent, max=10)):
        now = statement.sql
        before = now.replace("\n          AND t.requires = '{}'", "").replace("\n      AND t.requires = '{}'", "")
        assert "requires = '{}'" not in before and now.count("t.requires = '{}'") == 4
        with db.connect() as conn, conn.transaction(force_rollback=True):
            plan_now, plan_before = _plan(conn, now, statement.params), _plan(conn, before, statement.params)
        assert any("todos_pending" in line for line in plan_now), plan_now
        assert _shape(plan_now, without_requires=True) == _shape(plan_before), "\n".join(plan_now)


def test_a_claim_presenting_capabilities_still_walks_the_claim_index(agent):
    _seed(agent)
    statement = agent_store.claim_next(agent, capabilities=["gpu"])
    with db.connect() as conn, conn.transaction(force_rollback=True):
        plan = _plan(conn, statement.sql, statement.params)
    assert any("todos_pending" in line for line in plan), "\n".join(plan)
    assert any("requires <@" in line for line in plan)


def test_the_claim_walks_its_indexes_and_never_a_bitmap(agent):
    """Lapsed leases and due work are each read by a plain index scan (``todos_claimed``,
    ``todos_retry_due``): a bitmap scan cannot mark an index entry of a finished todo dead, so it
    would revisit every todo claimed since the last VACUUM on every claim (bench/README.md)."""
    _seed(agent)
    for statement in (agent_store.claim_next(agent), agent_store.claim_batch(agent, max=10)):
        with db.connect() as conn, conn.transaction(force_rollback=True):
            # some leases held and some retries waiting, written and analyzed inside the
            # transaction that is rolled back
            conn.execute(
                "UPDATE todos SET state = 'claimed', owner = 'w', lease_expires_at = now() + interval '1 hour' "
                "WHERE id IN (SELECT id FROM todos ORDER BY id LIMIT 200)"
            )
            conn.execute(
                "UPDATE todos SET state = 'failed', next_retry_at = now() + interval '1 hour' "
                "WHERE id IN (SELECT id FROM todos WHERE state = 'pending' ORDER BY id LIMIT 200)"
            )
            conn.execute("ANALYZE todos")
            plan = _plan(conn, statement.sql, statement.params)
        text = "\n".join(plan)
        assert "Bitmap Heap Scan on todos" not in text, text
        assert "Index Scan using todos_claimed" in text and "Index Scan using todos_retry_due" in text, text
