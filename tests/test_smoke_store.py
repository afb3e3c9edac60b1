import pytest

from tests import factories as f
from todos.core.db import execute
from todos.core.store import agent as A
from todos.core.store import background as B
from todos.core.store import human as O

pytestmark = pytest.mark.usefixtures("store_db")


def test_smoke_lifecycle():
    team = f.team()
    ep = f.agent(f.endpoint(team))
    human = f.member(team, f.user())
    c = execute(A.create(ep, queue="default", title="hello", payload={"a": 1}, idempotency_key="k1"))
    assert c.created
    c2 = execute(A.create(ep, queue="default", title="hello", idempotency_key="k1"))
    assert not c2.created and c2.todo.id == c.todo.id
    cl = execute(A.claim_next(ep, require_fence=True))
    assert cl.todo.id == c.todo.id and cl.lease_token and cl.attempt_seq == 1
    t = execute(A.heartbeat(ep, cl.todo.id, lease_token=cl.lease_token))
    assert t.state == "claimed"
    t = execute(A.fail(ep, cl.todo.id, lease_token=cl.lease_token, summary="boom"))
    assert t.retry_scheduled
    t = execute(O.retry(human, t.id, note="again"))
    assert t.state == "pending" and t.attempt == 0
    cl = execute(A.claim(ep, t.id))
    assert cl.attempt_seq == 2 and len(cl.prior_attempts) == 1
    t = execute(A.complete(ep, t.id, result={"ok": True}, summary="done"))
    assert t.state == "done"
    assert execute(B.reap()).count == 0
    assert execute(B.requeue_due_retries()).count == 0
    hc = execute(O.create(human, endpoint_id=ep.endpoint_id, queue="default", title="by hand"))
    hcl = execute(O.claim(human, hc.todo.id))
    assert hcl.todo.owner == human.owner
    execute(O.extend(human, hc.todo.id))
    execute(O.complete(human, hc.todo.id, note="fine"))
    c3 = execute(A.create(ep, queue="default", title="x"))
    execute(A.claim_next(ep))
    execute(O.force_release(human, c3.todo.id))
    execute(O.cancel(human, c3.todo.id))
    out = execute(O.retry_many(human, [c3.todo.id]))
    assert out.skipped == (c3.todo.id,)
    batch = execute(A.claim_batch(ep, max=5))
    assert batch == []
    assert execute(O.pause_queue(human, ep.team_id, "default")) is True
    assert execute(O.resume_queue(human, ep.team_id, "default")) is True
