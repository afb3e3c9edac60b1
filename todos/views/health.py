from django.db import connection
from django.http import JsonResponse


def healthz(request):
    """Liveness for load balancers: 200 when PostgreSQL answers, 503 when it does not."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # noqa: BLE001 - any failure means "not healthy"
        return JsonResponse({"ok": False, "database": "unreachable"}, status=503)
    return JsonResponse({"ok": True, "database": "ok"})
