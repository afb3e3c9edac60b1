"""``/me/time-zone/``: the header's zone switch. Everyone may set their own zone, a read-only
viewer too: it changes what they see, nothing anyone else sees.

A plain form POST answered by a redirect back to the page it came from, which then renders every
time in the new zone (``todos/dashboard/clock.py``).
"""

from __future__ import annotations

from django.urls import reverse
from django.views.decorators.http import require_POST

from todos.core.db import execute
from todos.core.errors import Invalid
from todos.core.store import preferences as store
from todos.dashboard import clock
from todos.dashboard.views.common import board_view, redirect_back

ZONE_KINDS = {"utc": "UTC", "browser": store.BROWSER_ZONE, "named": None}
YEAR = 365 * 24 * 3600


def _choice(data) -> str:
    kind = data.get("zone_kind") or ""
    if kind not in ZONE_KINDS:
        raise Invalid("zone_kind", "choose UTC, your browser's zone, or a named zone")
    if kind == "named":
        return store.clean_time_zone(data.get("named_zone") or "", "named_zone")
    return ZONE_KINDS[kind] or ""


@require_POST
@board_view
def set_time_zone(request):
    """Remember the person's zone; with "browser's zone", also the zone the browser just reported
    (so the page it returns to is already in it)."""
    back = reverse("overview")
    try:
        choice = _choice(request.POST)
        reported = request.POST.get("browser_zone") or ""
        browser = clock.known_zone(reported) if reported else None
        if reported and browser is None:
            raise Invalid("browser_zone", f"your browser reported {reported[:64]!r}, which is not a known time zone")
        saved = execute(store.set_time_zone(user_id=request.user.pk, time_zone=choice))
    except Invalid as exc:
        return redirect_back(request, back, "error", f"Time zone not changed: {exc}")
    if saved == store.BROWSER_ZONE:
        shown = f"your browser's zone ({browser.key})" if browser else "your browser's zone"
    else:
        shown = saved
    response = redirect_back(request, back, "success", f"Times are now shown in {shown}.")
    if browser is not None:
        response.set_cookie(clock.BROWSER_COOKIE, browser.key, max_age=YEAR, samesite="Lax", secure=request.is_secure())
    return response
