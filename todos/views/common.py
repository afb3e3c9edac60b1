"""What every Board view shares: sign-in, the viewer, the uniform 404, toasts and redirects.

Two audiences get the same actions: htmx (a fragment back, messages as ``HX-Trigger`` toasts) and
a plain browser without JavaScript (a redirect back to where the form was, messages through
``django.contrib.messages``). Views pick with :func:`reply`.
"""

from __future__ import annotations

import json
from functools import wraps

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string
from django.utils.http import url_has_allowed_host_and_scheme
from django_htmx.http import HttpResponseClientRedirect

from todos.selectors.access import viewer_for

TOAST_EVENT = "board:toast"
CHANGED_EVENT = "board:todo-changed"


def board_view(view):
    """Signed-in humans only; ``request.viewer`` is their teams and endpoints.

    An htmx request from a page whose session ended is sent to the sign-in page as a whole
    page (``HX-Redirect``), not swapped into a fragment's place.
    """

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            if getattr(request, "htmx", False):
                from django.conf import settings
                from django.shortcuts import resolve_url

                return HttpResponseClientRedirect(resolve_url(settings.LOGIN_URL))
            return redirect_to_login(request.get_full_path())
        request.viewer = viewer_for(request.user)
        return view(request, *args, **kwargs)

    return wrapper


_NOT_FOUND_BODY: bytes | None = None


def not_found() -> HttpResponse:
    """The one 404 of the Board: the same bytes whether the thing is absent or another team's.

    Rendered once without a request (no CSRF token, no user name, no path), so nothing in the
    body can differ between "does not exist" and "not yours".
    """
    global _NOT_FOUND_BODY
    if _NOT_FOUND_BODY is None:
        _NOT_FOUND_BODY = render_to_string("board/not_found.html").encode()
    response = HttpResponse(_NOT_FOUND_BODY, status=404, content_type="text/html; charset=utf-8")
    return add_trigger(response, TOAST_EVENT, {"level": "error", "message": "Not found."})


def add_trigger(response: HttpResponse, event: str, detail) -> HttpResponse:
    """Add an event to the response's ``HX-Trigger`` header (events accumulate in a list)."""
    current = json.loads(response.headers.get("HX-Trigger", "{}") or "{}")
    if event == TOAST_EVENT:
        current.setdefault(event, {"items": []})["items"].append(detail)
    else:
        current[event] = detail
    response.headers["HX-Trigger"] = json.dumps(current)
    return response


def toast(response: HttpResponse, level: str, message: str) -> HttpResponse:
    return add_trigger(response, TOAST_EVENT, {"level": level, "message": message})


def safe_next(request, default: str) -> str:
    """Where a plain form POST returns to: the form's ``next`` if it is on this site."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if target and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return default


def redirect_back(request, default: str, level: str | None = None, message: str | None = None) -> HttpResponseRedirect:
    if message:
        getattr(messages, level or "info")(request, message)
    return HttpResponseRedirect(safe_next(request, default))


def is_htmx(request) -> bool:
    """An htmx request asking for a fragment (a history restore wants the whole page)."""
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.history_restore_request


def vary_on_htmx(response: HttpResponse) -> HttpResponse:
    """Fragment and page share URLs: caches must key on the header that picks one."""
    from django.utils.cache import patch_vary_headers

    patch_vary_headers(response, ("HX-Request",))
    return response


def forbidden(request, message: str) -> HttpResponse:
    """A viewer (read-only role) tried to change something: 403, said plainly."""
    if is_htmx(request):
        return toast(HttpResponse(message, status=403, content_type="text/plain; charset=utf-8"), "error", message)
    body = render_to_string("board/forbidden.html", {"message": message}, request=request)
    return HttpResponse(body, status=403)
