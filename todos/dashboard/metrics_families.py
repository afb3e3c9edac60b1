"""The metric families of ``/metrics``, built by prometheus-client from one snapshot per scrape.

A custom collector on a registry of its own (never the library's global one, which would also
publish this process's Python internals and whatever else registered there): each scrape calls
:func:`todos.core.selectors.metrics.snapshot` once and every family is made from it.

Label sets are bounded: at most :data:`QUEUE_LABELS_MAX` queue labels, the busiest (by their
attempts' running totals, then their live todos), and every other queue folded into
``queue="_other"`` (docs/configuration.md, "Metrics"). A queue name never starts with ``_``, so
the fold cannot collide with a queue. No exemplars.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry
from prometheus_client.utils import floatToGoString

from todos.core.selectors.flow import HISTOGRAM_BUCKETS, bucket_bounds
from todos.core.selectors.metrics import QueueTotals, snapshot

QUEUE_LABELS_MAX = 50
OTHER_QUEUES = "_other"
OUTCOMES = ("completed", "failed", "released", "lease_expired", "reaped", "canceled", "revoked", "timed_out")
# The relay's count states, and the names /metrics has always given them.
QUEUE_STATES = (("pending", "pending"), ("claimed", "claimed"), ("retry", "retry_scheduled"), ("dead", "dead_letter"))


def busiest_queues(states: dict[str, dict[str, int]], totals: dict[str, QueueTotals]) -> set[str]:
    """The queues that keep their own label: the :data:`QUEUE_LABELS_MAX` busiest, by attempts
    finished so far, then by live todos, then by name (so the choice is stable between scrapes)."""

    def weight(queue: str) -> tuple[int, int, str]:
        t = totals.get(queue)
        done = (t.completed + t.failed + t.died) if t else 0
        return (-done, -sum(states.get(queue, {}).values()), queue)

    return set(sorted(set(states) | set(totals), key=weight)[:QUEUE_LABELS_MAX])


def folded(states: dict[str, dict[str, int]], totals: dict[str, QueueTotals]):
    """The per-queue figures with every queue past the bound folded into ``_other``."""
    kept = busiest_queues(states, totals)
    out_states: dict[str, dict[str, int]] = {}
    out_totals: dict[str, QueueTotals] = {}
    for queue, by_state in states.items():
        label = queue if queue in kept else OTHER_QUEUES
        into = out_states.setdefault(label, {})
        for state, n in by_state.items():
            into[state] = into.get(state, 0) + n
    for queue, t in totals.items():
        out_totals.setdefault(queue if queue in kept else OTHER_QUEUES, QueueTotals()).add(t)
    return out_states, out_totals


def histogram_buckets(counts: list[int]) -> tuple[list[tuple[str, float]], float]:
    """Prometheus buckets (cumulative, ``le`` the bucket's upper bound, the last ``+Inf``) of a
    rollup histogram, and the sum estimated from them: each observation at its bucket's geometric
    middle (within a factor of 1.21 of its value; the rollup keeps no exact sum)."""
    buckets: list[tuple[str, float]] = []
    running = 0
    total = 0.0
    for index, n in enumerate(counts):
        low, high = bucket_bounds(index + 1)
        running += n
        total += n * (low * high) ** 0.5
        le = "+Inf" if index == HISTOGRAM_BUCKETS - 1 else floatToGoString(high)
        buckets.append((le, float(running)))
    return buckets, total


class BoardCollector(Collector):
    """Every family of ``/metrics`` from one :func:`snapshot`."""

    def collect(self) -> Iterator[Metric]:
        data = snapshot()
        yield from installation_families(data)
        yield from queue_families(data)


def installation_families(data: dict) -> Iterator[Metric]:
    live = data["live"]
    alive = live["relay_alive_age"]
    single = (
        ("board_change_log_rows", "Changes committed and not yet relayed (a few while a relay runs).",
         live["change_log_rows"]),
        ("board_relay_alive_age_seconds", "Seconds since the relay last proved alive (it does every ~5 s; -1: never).",
         float(alive) if alive is not None else -1.0),
        ("board_relay_counts_stale", "1 while the counts await a rebuild (the log was capped, or a count drifted).",
         int(bool(live["counts_stale"]))),
        ("board_todos_lease_lapsed", "Claimed todos whose lease has lapsed and that the reaper has not yet requeued.",
         live["lease_lapsed"]),
        ("board_todos_retry_due", "Failed todos whose retry time has come and that are not yet requeued.",
         live["retry_due"]),
        ("board_todos_rows_estimate", "Planner estimate of all rows in todos (any state).",
         max(live["rows_estimate"] or 0, 0)),
        ("board_oldest_pending_age_seconds", "Age of the oldest pending todo.", data["oldest"]),
        ("board_queue_pauses", "Paused (team, queue) pairs.", live["queue_pauses"]),
    )  # fmt: skip
    labelled = (
        ("board_todos", "Todos in a live state or dead-lettered (the relay's exact counts).", "state",
         {state: live[state] for state in ("pending", "claimed", "retry_scheduled", "dead_letter")}),
        ("board_todos_finished_last_hour",
         "Todos that reached a terminal state in the last hour (failed = dead-lettered).", "state",
         {state: data["finished"].get(state, 0) for state in ("done", "failed", "canceled")}),
        ("board_attempts_closed_last_hour", "Attempts closed in the last hour, by outcome.", "outcome",
         {outcome: data["attempts"].get(outcome, 0) for outcome in OUTCOMES}),
        ("board_endpoints", "Endpoints by state.", "state",
         {state: data["endpoints"].get(state, 0) for state in ("active", "revoked")}),
    )  # fmt: skip
    for name, text, value in single:
        yield GaugeMetricFamily(name, text, value=value)
    for name, text, label, values in labelled:
        family = GaugeMetricFamily(name, text, labels=[label])
        for key, value in values.items():
            family.add_metric([key], value)
        yield family


def queue_families(data: dict) -> Iterator[Metric]:
    states, totals = folded(data["queue_states"], data["queue_totals"])
    by_state = GaugeMetricFamily("board_queue_todos",
                                 f"Todos per queue and state (the relay's counts; past {QUEUE_LABELS_MAX} queues, "
                                 f"the rest as queue=\"{OTHER_QUEUES}\").",
                                 labels=["queue", "state"])  # fmt: skip
    for queue in sorted(states):
        for state, name in QUEUE_STATES:
            by_state.add_metric([queue, name], states[queue].get(state, 0))
    yield by_state
    counters = {
        "completed": CounterMetricFamily("board_queue_completed", "Attempts completed per queue.", labels=["queue"]),
        "failed": CounterMetricFamily(
            "board_queue_failed", "Attempts failed per queue (and todos dead-lettered another way).", labels=["queue"]
        ),  # fmt: skip
        "died": CounterMetricFamily(
            "board_queue_died", "Attempts whose lease lapsed per queue (reaped or taken over).", labels=["queue"]
        ),  # fmt: skip
    }
    waited = HistogramMetricFamily("board_queue_wait_seconds",
                                   "How long todos waited for their first claim, per queue (the charts' buckets; "
                                   "the sum is estimated from them).",
                                   labels=["queue"])  # fmt: skip
    ran = HistogramMetricFamily("board_queue_run_seconds",
                                "How long attempts ran, claim to end, per queue (the charts' buckets; "
                                "the sum is estimated from them).",
                                labels=["queue"])  # fmt: skip
    for queue in sorted(totals):
        t = totals[queue]
        counters["completed"].add_metric([queue], t.completed)
        counters["failed"].add_metric([queue], t.failed)
        counters["died"].add_metric([queue], t.died)
        waited.add_metric([queue], *histogram_buckets(t.waited))
        ran.add_metric([queue], *histogram_buckets(t.ran))
    yield from counters.values()
    yield waited
    yield ran


REGISTRY = CollectorRegistry()
REGISTRY.register(BoardCollector())
