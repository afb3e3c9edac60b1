"""/metrics through prometheus-client: per-queue gauges, counters and histograms from one
snapshot per scrape, on a registry of its own, with at most 50 queue labels."""

from __future__ import annotations

import pytest
from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families

from tests.factories import relayed
from tests.support.board import make
from todos.core.db import connect, execute
from todos.core.selectors.metrics import QueueTotals
from todos.core.store import background as background_store
from todos.dashboard import metrics_families
from todos.dashboard.metrics_families import OTHER_QUEUES, QUEUE_LABELS_MAX, folded

pytestmark = pytest.mark.usefixtures("store_db")
TOKEN = "s3cret-token"


def scrape(client) -> dict:
    """The families of one scrape, by name: {name: {(labels…): value}} per sample name."""
    response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert response.status_code == 200
    samples: dict = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for s in family.samples:
            samples.setdefault(s.name, {})[tuple(sorted(s.labels.items()))] = s.value
    return samples


def value(samples: dict, name: str, **labels) -> float:
    return samples[name][tuple(sorted(labels.items()))]


@override_settings(BOARD_METRICS_TOKEN=TOKEN)
def test_per_queue_and_state_gauges(world, client):
    for state in ("pending", "pending", "claimed", "retry", "dead"):
        make(world, state)
    make(world, "pending", queue="email")
    relayed()
    samples = scrape(client)
    assert value(samples, "board_queue_todos", queue="default", state="pending") == 2
    assert value(samples, "board_queue_todos", queue="default", state="claimed") == 1
    assert value(samples, "board_queue_todos", queue="default", state="retry_scheduled") == 1
    assert value(samples, "board_queue_todos", queue="default", state="dead_letter") == 1
    assert value(samples, "board_queue_todos", queue="email", state="pending") == 1
    assert value(samples, "board_queue_todos", queue="email", state="claimed") == 0


@override_settings(BOARD_METRICS_TOKEN=TOKEN)
def test_counters_of_completed_failed_and_died_per_queue(world, client):
    for state in ("done", "done", "retry"):
        make(world, state)
    make(world, "done", queue="email")
    held = make(world, "claimed")
    with connect() as conn:  # setup: the lease lapses; the reaper ends the attempt (died)
        conn.execute("UPDATE todos SET lease_expires_at = now() - interval '5 seconds' WHERE id = %s", (held.id,))
    execute(background_store.reap())
    relayed()
    samples = scrape(client)
    assert value(samples, "board_queue_completed_total", queue="default") == 2
    assert value(samples, "board_queue_failed_total", queue="default") == 1
    assert value(samples, "board_queue_died_total", queue="default") == 1
    assert value(samples, "board_queue_completed_total", queue="email") == 1


@override_settings(BOARD_METRICS_TOKEN=TOKEN)
def test_counters_do_not_fall_when_the_charts_rollup_is_pruned(world, client):
    """The charts keep eight days; the counters are running totals, not sums over that window."""
    make(world, "done")
    relayed()
    assert value(scrape(client), "board_queue_completed_total", queue="default") == 1
    with connect() as conn:  # the relay's retention, as if eight days had passed
        conn.execute("DELETE FROM todo_flow")
    make(world, "done")
    relayed()
    assert value(scrape(client), "board_queue_completed_total", queue="default") == 2


@override_settings(BOARD_METRICS_TOKEN=TOKEN)
def test_wait_and_run_histograms_per_queue(world, client):
    for _ in range(3):
        make(world, "done")
    relayed()
    samples = scrape(client)
    for name in ("board_queue_wait_seconds", "board_queue_run_seconds"):
        buckets = {dict(labels)["le"]: v for labels, v in samples[f"{name}_bucket"].items()}
        assert len(buckets) == 50 and buckets["+Inf"] == 3
        ordered = sorted(buckets.items(), key=lambda kv: float(kv[0]))
        assert [v for _, v in ordered] == sorted(v for _, v in ordered)  # cumulative
        assert ordered[0][1] >= 0 and float(ordered[0][0]) == pytest.approx(10 ** (-11 / 6))
        assert value(samples, f"{name}_count", queue="default") == 3
        assert 0 <= value(samples, f"{name}_sum", queue="default") < 60  # quick work, estimated
    assert not any(s.endswith("_created") for s in samples)


def test_at_most_fifty_queue_labels_the_rest_folded_into_other():
    states = {f"q{n:02}": {"pending": n} for n in range(60)}
    totals = {f"q{n:02}": QueueTotals(completed=100 - n) for n in range(60)}
    totals["quiet"] = QueueTotals(completed=1)
    out_states, out_totals = folded(states, totals)
    labels = set(out_states) | set(out_totals)
    assert len(labels) == QUEUE_LABELS_MAX + 1 and OTHER_QUEUES in labels
    # the busiest by finished attempts keep their labels
    assert {f"q{n:02}" for n in range(50)} <= labels and "q55" not in labels and "quiet" not in labels
    assert out_totals[OTHER_QUEUES].completed == sum(100 - n for n in range(50, 60)) + 1
    assert out_states[OTHER_QUEUES]["pending"] == sum(range(50, 60))
    # nothing is lost in the fold
    assert sum(t.completed for t in out_totals.values()) == sum(t.completed for t in totals.values())


def test_under_the_bound_nothing_is_folded():
    out_states, out_totals = folded({"a": {"pending": 1}}, {"b": QueueTotals(completed=1)})
    assert set(out_states) == {"a"} and set(out_totals) == {"b"}


@override_settings(BOARD_METRICS_TOKEN=TOKEN)
def test_the_bound_applies_to_the_scrape(world, client, monkeypatch):
    monkeypatch.setattr(metrics_families, "QUEUE_LABELS_MAX", 1)
    make(world, "done")
    make(world, "done")
    make(world, "pending", queue="email")
    relayed()
    samples = scrape(client)
    queues = {dict(labels)["queue"] for labels in samples["board_queue_todos"]}
    assert queues == {"default", OTHER_QUEUES}
    assert value(samples, "board_queue_todos", queue=OTHER_QUEUES, state="pending") == 1


@override_settings(BOARD_METRICS_TOKEN=TOKEN)
def test_one_snapshot_per_scrape_on_a_registry_of_its_own(world, client, monkeypatch):
    calls = []
    real = metrics_families.snapshot
    monkeypatch.setattr(metrics_families, "snapshot", lambda: calls.append(1) or real())
    samples = scrape(client)
    assert len(calls) == 1
    # the library's global registry (process and Python internals) is not published
    assert not any(name.startswith(("python_", "process_")) for name in samples)
    from prometheus_client import REGISTRY as GLOBAL

    assert metrics_families.REGISTRY is not GLOBAL


@override_settings(BOARD_METRICS_TOKEN=TOKEN)
def test_queues_of_other_teams_are_summed(world, client):
    """/metrics is installation-wide: a queue's figures are every team's."""
    make(world, "pending")
    make(world, "pending", agent=world.globex_agent)
    relayed()
    assert value(scrape(client), "board_queue_todos", queue="default", state="pending") == 2
