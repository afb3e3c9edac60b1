import pytest

from tests import factories
from todos.core.db import execute
from todos.core.store import agent as agent_store
from todos.core.store import background as background_store
from todos.core.store import human as human_store

pytestmark = pytest.mark.usefixtures("store_db")


def test_smoke_lifecycle():
    team = factories.team()
    ep = factories.agent(factories.endpoint(team))
    human = factories.member(team, factories.user())
    c = execute(agent_store.create(ep, queue="default", title="hello", payload={"a": 1}, idempotency_key="k1"))
    assert c.created
    c2 = execute(agent_store.create(ep, queue="default", title="hello", idempotency_key="k1"))
    assert not c2.created and c2.todo.id == c.todo.id
    cl = execute(agent_store.claim_next(ep, require_fence=True))
    assert cl.todo.id == c.todo.id and cl.lease_token and cl.attempt_seq == 1
    t = execute(agent_store.heartbeat(ep, cl.todo.id, lease_token=cl.lease_token))
    assert t.state == "claimed"
    t = execute(agent_store.fail(ep, cl.todo.id, lease_token=cl.lease_token, summary="boom"))
    assert t.retry_scheduled
    t = execute(human_store.retry(human, t.id, note="again"))
    assert t.state == "pending" and t.attempt == 0
    cl = execute(agent_store.claim(ep, t.id))
    assert cl.attempt_seq == 2 and len(cl.prior_attempts) == 1
    t = execute(agent_store.complete(ep, t.id, result={"ok": True}, summary="done"))
    assert t.state == "done"
    assert execute(background_store.reap()).count == 0
    assert execute(background_store.requeue_due_retries()).count == 0
    hc = execute(human_store.create(human, endpoint_id=ep.endpoint_id, queue="default", title="by hand"))
    hcl = execute(human_store.claim(human, hc.todo.id))
    assert hcl.todo.owner == human.owner
    execute(human_store.extend(human, hc.todo.id))
    execute(human_store.complete(human, hc.todo.id, note="fine"))
    c3 = execute(agent_store.create(ep, queue="default", title="x"))
    execute(agent_store.claim_next(ep))
    execute(human_store.force_release(human, c3.todo.id))
    execute(human_store.cancel(human, c3.todo.id))
    out = execute(human_store.retry_many(human, [c3.todo.id]))
    assert out.skipped == (c3.todo.id,)
    batch = execute(agent_store.claim_batch(ep, max=5))
    assert batch == []
    assert execute(human_store.pause_queue(human, ep.team_id, "default")) is True
    assert execute(human_store.resume_queue(human, ep.team_id, "default")) is True
