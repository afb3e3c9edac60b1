"""``/metrics``: Prometheus text format, behind ``Authorization: Bearer <BOARD_METRICS_TOKEN>``.

With no token configured the route does not exist (404), so an installation that never set one
publishes nothing.
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpResponse, HttpResponseNotFound
from django.views.decorators.http import require_GET

from todos.core.selectors.metrics import snapshot

OUTCOMES = ("completed", "failed", "released", "lease_expired", "reaped", "canceled", "revoked")


def _authorised(request) -> bool:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    expected = settings.BOARD_METRICS_TOKEN
    return scheme.lower() == "bearer" and bool(token) and hmac.compare_digest(token.strip().encode(), expected.encode())


def render_metrics(data: dict) -> str:
    live = data["live"]
    lines: list[str] = []

    def metric(name: str, kind: str, help_text: str, samples: list[tuple[str, float]]):
        lines.append(f"# HELP {name} {help_text}")
        lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            lines.append(f"{name}{labels} {value:g}" if isinstance(value, float) else f"{name}{labels} {value}")

    metric(
        "board_todos",
        "gauge",
        "Todos in a live state or dead-lettered (the relay's exact counts).",
        [
            ('{state="pending"}', live["pending"]),
            ('{state="claimed"}', live["claimed"]),
            ('{state="retry_scheduled"}', live["retry_scheduled"]),
            ('{state="dead_letter"}', live["dead_letter"]),
        ],
    )
    metric(
        "board_change_log_rows",
        "gauge",
        "Changes committed and not yet relayed (a few while a relay runs).",
        [("", live["change_log_rows"])],
    )
    metric(
        "board_relay_alive_age_seconds",
        "gauge",
        "Seconds since the relay last proved alive (it does every ~5 s; -1: never).",
        [("", float(live["relay_alive_age"]) if live["relay_alive_age"] is not None else -1.0)],
    )
    metric(
        "board_relay_counts_stale",
        "gauge",
        "1 while the counts await a rebuild (the log was capped, or a count drifted).",
        [("", int(bool(live["counts_stale"])))],
    )
    metric(
        "board_todos_lease_lapsed",
        "gauge",
        "Claimed todos whose lease has lapsed and that the reaper has not yet requeued.",
        [("", live["lease_lapsed"])],
    )
    metric(
        "board_todos_retry_due",
        "gauge",
        "Failed todos whose retry time has come and that are not yet requeued.",
        [("", live["retry_due"])],
    )
    metric(
        "board_todos_rows_estimate",
        "gauge",
        "Planner estimate of all rows in todos (any state).",
        [("", max(live["rows_estimate"] or 0, 0))],
    )
    metric("board_oldest_pending_age_seconds", "gauge", "Age of the oldest pending todo.", [("", data["oldest"])])
    metric(
        "board_todos_finished_last_hour",
        "gauge",
        "Todos that reached a terminal state in the last hour (failed = dead-lettered).",
        [(f'{{state="{state}"}}', data["finished"].get(state, 0)) for state in ("done", "failed", "canceled")],
    )
    metric(
        "board_attempts_closed_last_hour",
        "gauge",
        "Attempts closed in the last hour, by outcome.",
        [(f'{{outcome="{outcome}"}}', data["attempts"].get(outcome, 0)) for outcome in OUTCOMES],
    )
    metric(
        "board_endpoints",
        "gauge",
        "Endpoints by state.",
        [(f'{{state="{state}"}}', data["endpoints"].get(state, 0)) for state in ("active", "revoked")],
    )
    metric("board_queue_pauses", "gauge", "Paused (team, queue) pairs.", [("", live["queue_pauses"])])
    return "\n".join(lines) + "\n"


@require_GET
def metrics(request):
    if not settings.BOARD_METRICS_TOKEN:
        return HttpResponseNotFound(b"Not found.\n", content_type="text/plain")
    if not _authorised(request):
        response = HttpResponse(
            b"Unauthorized: send Authorization: Bearer <BOARD_METRICS_TOKEN>.\n", status=401, content_type="text/plain"
        )
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    return HttpResponse(render_metrics(snapshot()).encode(), content_type="text/plain; version=0.0.4; charset=utf-8")
