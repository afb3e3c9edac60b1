"""``/metrics``: Prometheus text format, behind ``Authorization: Bearer <BOARD_METRICS_TOKEN>``;
the families are prometheus-client's, from one snapshot per scrape (``metrics_families.py``).

With no token configured the route does not exist (404), so an installation that never set one
publishes nothing.
"""

from __future__ import annotations

import hmac

from django.conf import settings
from django.http import HttpResponse, HttpResponseNotFound
from django.views.decorators.http import require_GET
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from todos.dashboard.metrics_families import REGISTRY


def _authorised(request) -> bool:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    expected = settings.BOARD_METRICS_TOKEN
    return scheme.lower() == "bearer" and bool(token) and hmac.compare_digest(token.strip().encode(), expected.encode())


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
    return HttpResponse(generate_latest(REGISTRY), content_type=CONTENT_TYPE_LATEST)
