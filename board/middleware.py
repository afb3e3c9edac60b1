"""Security headers Django does not set itself, and a database outage answered as one."""

from __future__ import annotations

import logging

from django.conf import settings
from django.http import HttpResponse
from django.template.loader import render_to_string
from django.utils.http import url_has_allowed_host_and_scheme

from todos.core.unavailable import classify as classify_unavailable
from todos.core.unavailable import describe as describe_unavailable

logger = logging.getLogger("board")

UNAVAILABLE_TOAST = "Board cannot reach its database right now; try again in a moment."


class ContentSecurityPolicyMiddleware:
    """Send a CSP that forbids inline scripts and styles: all JavaScript lives in static files."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        return response


class DatabaseUnavailableMiddleware:
    """A view that meets a database outage (``todos.core.unavailable``: down, restarting, no pooled
    connection free in time, a statement timeout) answers 503, not a 500 or Django's debug page.

    A page gets a page that says so and reloads itself (a meta refresh: the CSP allows no inline
    script, and none is needed); an htmx request gets a 503 whose ``HX-Trigger`` toast says so
    (``board.js`` shows it instead of its generic error). Both carry ``Retry-After``. The page is
    rendered without the request, so nothing in it touches the database (no user, no session).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        unavailable = classify_unavailable(exception)
        if unavailable is None:
            return None
        logger.warning(
            "database unavailable for %s %.200s: %s", request.method, request.path, describe_unavailable(exception)
        )
        return unavailable_response(request, unavailable.retry_after)


def unavailable_response(request, retry_after: int) -> HttpResponse:
    if request.headers.get("HX-Request") == "true":
        from todos.dashboard.views.common import toast

        response = HttpResponse(UNAVAILABLE_TOAST.encode(), status=503, content_type="text/plain; charset=utf-8")
        toast(response, "error", UNAVAILABLE_TOAST)
    else:
        body = render_to_string("board/unavailable.html", {"retry_after": retry_after, "retry_url": retry_url(request)})
        response = HttpResponse(body, status=503, content_type="text/html; charset=utf-8")
    response["Retry-After"] = str(retry_after)
    response["Cache-Control"] = "no-store"
    return response


def retry_url(request) -> str:
    """Where the page goes when it retries: the same page for a GET; after a form post, the page
    the form was on (a reload must not post it again), else the overview."""
    if request.method in ("GET", "HEAD"):
        return request.get_full_path()
    referer = request.headers.get("Referer", "")
    if referer and url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return referer
    return "/"


# Paths whose reads never go to the replica: the agent API and MCP (an agent must see its own
# writes), health and metrics (they report on the primary).
PRIMARY_ONLY_PREFIXES = ("/api/", "/mcp/", "/healthz", "/metrics")
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class ReplicaReadsMiddleware:
    """Route a Board page request's reads to the read replica (todos/core/replica.py).

    A safe Board request reads the replica, unless its human's last action has not been replayed
    there yet; an unsafe one reads and writes the primary, and once it succeeded, remembers the
    primary's WAL position in the session for the human's next reads. A live refresh (after a
    change someone else committed) reads the replica once it has replayed the primary's position
    at the request. A safe request whose
    replica statement failed (the replica went away mid-page) runs once more, on the primary.
    Without ``BOARD_READ_REPLICA_URL`` it does nothing.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from django.conf import settings

        from todos.core import replica

        if not settings.BOARD_READ_REPLICA_URL or request.path.startswith(PRIMARY_ONLY_PREFIXES):
            return self.get_response(request)
        session = getattr(request, "session", None)
        if request.method not in SAFE_METHODS:
            with replica.routed(None):
                response = self.get_response(request)
            if session is not None and response.status_code < 400:
                replica.remember_write(session)
            return response
        route = replica.Route(
            after_lsn=replica.read_after_lsn(session) if session is not None else None,
            live=bool(request.headers.get(replica.LIVE_HEADER)),
        )
        with replica.routed(route):
            response = self.get_response(request)
        if route.replica_failed:
            logger.warning("read replica failed during %s %.200s: reading the primary", request.method, request.path)
            with replica.routed(replica.Route(target="primary")):
                return self.get_response(request)
        if route.target == "replica" and route.after_lsn is not None and session is not None:
            replica.forget_write(session)
        return response
