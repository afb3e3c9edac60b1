"""Parsing the page's subscription and deciding what concerns it."""

from __future__ import annotations

import pytest

from todos.live.subscriptions import InvalidSubscription, Subscription

TEAM = "6f1f1b9e-3c4b-4a51-9a55-0d7a1c2b3e4f"
OTHER_TEAM = "0b7e4a0c-1111-4222-8333-944455556666"


def event(op="claim", ids=("td_1",), queues=("default",), team=TEAM, endpoints=()):
    return {"team": team, "ids": list(ids), "queues": list(queues), "ops": [op], "endpoints": list(endpoints)}


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "todos",
        {"page": ""},
        {"page": 7},
        {"page": "x" * 33},
        {"page": "todos", "filter": ["a"]},
        {"page": "todos", "filter": "q=" + "x" * 2000},
        {"page": "drawer", "todo": True},
        {"page": "drawer", "todo": {"id": 1}},
        {"page": "drawer", "todo": "x" * 65},
        {"page": "drawer", "todo": "td_1", "related": "td_2"},
        {"page": "drawer", "todo": "td_1", "related": [7]},
        {"page": "drawer", "todo": "td_1", "related": ["x" * 65]},
        {"page": "drawer", "todo": "td_1", "related": [f"td_{n}" for n in range(201)]},
    ],
)
def test_invalid_subscriptions_are_refused(raw):
    with pytest.raises(InvalidSubscription):
        Subscription.parse(raw)


def test_the_open_todo_always_matters_whatever_the_filter():
    sub = Subscription.parse({"page": "todos", "filter": f"team={OTHER_TEAM}&queue=q2", "todo": "td_1"})
    assert sub.wants(event("heartbeat"))
    assert not sub.wants(event("heartbeat", ids=["td_2"]))


def test_a_drawer_page_wants_only_its_todo():
    sub = Subscription.parse({"page": "drawer", "filter": "", "todo": "td_1"})
    assert sub.wants(event("reap"))
    assert not sub.wants(event("reap", ids=["td_2"]))
    assert not sub.wants(event("membership", ids=[]))


def test_the_todo_list_filter_narrows_by_team_queue_and_endpoint():
    ep = "1c4b7f0e-2222-4333-8444-955566667777"
    sub = Subscription.parse({"page": "todos", "filter": f"?team={TEAM}&queue=a&queue=b&endpoint={ep}&state=pending"})
    assert sub.wants(event(queues=["b"], endpoints=[ep]))
    assert not sub.wants(event(queues=["c"], endpoints=[ep]))
    assert not sub.wants(event(queues=["a"], team=OTHER_TEAM))
    assert not sub.wants(event(queues=["a"], endpoints=["9c4b7f0e-2222-4333-8444-955566667777"]))
    assert not sub.wants(event("membership", ids=[], queues=[]))


def test_filter_values_the_server_cannot_interpret_narrow_nothing():
    sub = Subscription.parse({"page": "todos", "filter": "team=payments&endpoint=crawler"})
    assert sub.teams is None and sub.endpoints is None
    assert sub.wants(event(team=OTHER_TEAM))


def test_pages_ignore_ops_that_cannot_change_them():
    overview = Subscription.parse({"page": "overview"})
    assert overview.wants(event("create")) and overview.wants(event("pause", ids=[]))
    assert not overview.wants(event("heartbeat")) and not overview.wants(event("priority"))
    # what can make waiting work claimable or not: the overview's and the list's "no agent can claim"
    for page in ("overview", "todos"):
        sub = Subscription.parse({"page": page})
        assert sub.wants(event("endpoint", ids=[])) and sub.wants(event("revoke", ids=[]))
        assert sub.wants(event("assign"))
    teams = Subscription.parse({"page": "teams"})
    assert teams.wants(event("membership", ids=[])) and not teams.wants(event("claim"))
    assert Subscription.parse({"page": "agents"}).wants(event("heartbeat"))
    assert Subscription.parse({"page": "activity"}).wants(event("membership", ids=[]))


def test_an_unknown_page_or_no_subscription_yet_gets_everything():
    assert Subscription.parse({"page": "endpoints"}).wants(event("endpoint", ids=[]))
    assert Subscription().wants(event("heartbeat"))


def test_a_todo_page_is_sent_only_its_own_id_from_a_merged_change():
    drawer = Subscription.parse({"page": "drawer", "filter": "", "todo": "td_1"})
    todos = Subscription.parse({"page": "todos", "filter": "", "todo": "td_1"})
    merged = {"team": TEAM, "ids": ["td_2", "td_1", "td_3"], "queues": ["q"], "ops": ["claim"]}
    assert drawer.shown_ids(merged) == ["td_1"]
    assert todos.shown_ids(merged) == ["td_2", "td_1", "td_3"]  # the list shows them all


def test_the_open_drawer_s_relatives_matter_and_reach_a_drawer_page_as_theirs_only():
    sub = Subscription.parse({"page": "drawer", "todo": "td_1", "related": ["td_2", "td_3"]})
    assert sub.wants(event("claim", ids=["td_3"], team=OTHER_TEAM))
    assert sub.shown_ids(event("claim", ids=["td_9", "td_2", "td_1"])) == ["td_2", "td_1"]
    alone = Subscription.parse({"page": "drawer", "todo": "td_1"})
    assert alone.shown_ids(event("claim", ids=["td_2"])) == []
