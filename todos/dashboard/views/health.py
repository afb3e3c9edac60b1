import logging

from django.db import connection
from django.http import JsonResponse

from todos.core.unavailable import RETRY_AFTER_SECONDS, classify, describe

logger = logging.getLogger("board")


def healthz(request):
    """Liveness for load balancers: 200 when PostgreSQL answers, 503 (with ``Retry-After``) when
    it does not. Any failure at all means "not healthy"; what it was goes to the log."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # noqa: BLE001 - any failure means "not healthy"
        unavailable = classify(exc)
        logger.warning("healthz: database %s: %s", "unreachable" if unavailable else "check failed", describe(exc))
        response = JsonResponse({"ok": False, "database": "unreachable"}, status=503)
        response["Retry-After"] = str(unavailable.retry_after if unavailable else RETRY_AFTER_SECONDS)
        response["Cache-Control"] = "no-store"
        return response
    return JsonResponse({"ok": True, "database": "ok"})
