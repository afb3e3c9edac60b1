"""complete_batch's span links each worker context its items carry (docs/telemetry.md), once each."""

from __future__ import annotations

from tests import factories
from tests.telemetry.test_verb_spans import WORKER, call

OTHER = "00-33333333333333333333333333333333-4444444444444444-01"


def test_complete_batch_links_every_distinct_worker_context_of_its_items(store_db, spans):
    team = factories.team()
    vended = factories.endpoint(team, slug="spans", queues=("default",))
    ids = [call("create_for", {"queue": "default", "title": t}, vended.token)[1]["todo"]["id"] for t in "abc"]
    call("claim_batch", {"max": 3}, vended.token)
    items = [{"id": ids[0], "traceparent": WORKER}, {"id": ids[1], "traceparent": OTHER}, {"id": ids[2]}]
    status, out = call("complete_batch", {"items": items}, vended.token)
    assert status == 200 and [r["ok"] for r in out["results"]] == [True, True, True]
    [span] = [s for s in spans.get_finished_spans() if s.name == "complete_batch"]
    linked = sorted(format(link.context.trace_id, "032x") for link in span.links)
    assert linked == ["1" * 32, "3" * 32]
    assert span.attributes["messaging.batch.message_count"] == 3
