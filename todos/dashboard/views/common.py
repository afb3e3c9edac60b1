"""What every Board view shares: sign-in, the viewer, the uniform 404, the store's refusals
answered in one place (:func:`store_refusals`), toasts and redirects.

Two audiences get the same actions: htmx (a fragment back, messages as ``HX-Trigger`` toasts) and
a plain browser without JavaScript (a redirect back to where the form was, messages through
``django.contrib.messages``). Views pick with :func:`is_htmx`.
"""

from __future__ import annotations

import json
import re
from functools import wraps

from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse, HttpResponseRedirect
from django.template.loader import render_to_string
from django.utils.http import url_has_allowed_host_and_scheme
from django_htmx.http import HttpResponseClientRedirect

from todos.core.errors import Conflict, Forbidden, Invalid, NotFound
from todos.core.selectors.access import viewer_for
from todos.dashboard import clock
from todos.dashboard.route_converters import MalformedId

TOAST_EVENT = "board:toast"
CHANGED_EVENT = "board:todo-changed"


def board_view(view):
    """Signed-in humans only; ``request.viewer`` is their teams and endpoints.

    An htmx request from a page whose session ended is sent to the sign-in page as a whole
    page (``HX-Redirect``), not swapped into a fragment's place. Input no field can hold (see
    :func:`unstorable_input`) is refused before the view runs.
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
        if any(_names_nothing(v) for v in (*args, *kwargs.values())):
            return not_found()  # a URL naming something with a control character, or a malformed id
        field = unstorable_input(request)
        if field is not None:
            return bad_request(request, f"{field}: must not contain NUL or other control characters")
        with clock.in_viewer_zone(request):  # every time shown or read is in the viewer's zone
            return view(request, *args, **kwargs)

    return wrapper


def store_refusals(*, forbidden_text: str | None = None, invalid=None, conflict=None):
    """Answer the store errors a view raises, the same way for every Board view.

    ``NotFound`` is the Board's one 404 (absent and another team's answer alike); ``Forbidden``
    is 403 saying ``forbidden_text`` (the store's own message when None). ``Invalid`` and
    ``Conflict`` are answered by the view's ``invalid(request, exc, *args, **kwargs)`` and
    ``conflict(…)`` when it gives them; a view whose reply needs what only its body knows (the
    form it was sent, the thing it looked up) catches those two itself, inside this decorator.
    An error the view has no answer for propagates: the store refused something the view
    should not have asked.
    """

    def decorate(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            try:
                return view(request, *args, **kwargs)
            except NotFound:
                return not_found()
            except Forbidden as exc:
                return forbidden(request, forbidden_text or exc.message)
            except Invalid as exc:
                if invalid is None:
                    raise
                return invalid(request, exc, *args, **kwargs)
            except Conflict as exc:
                if conflict is None:
                    raise
                return conflict(request, exc, *args, **kwargs)

        return wrapper

    return decorate


def _names_nothing(value: object) -> bool:
    """A route's value that can name no row: text with a control character, or an id segment the
    route's converter found malformed (todos/dashboard/route_converters.py)."""
    if isinstance(value, MalformedId):
        return True
    return isinstance(value, str) and CONTROL_CHARACTERS.search(value) is not None


# Control characters other than tab, newline and carriage return (which a textarea sends).
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def unstorable_input(request) -> str | None:
    """The name of the first query or form field (key or value) holding a NUL or another control
    character, or None.

    Why here, once: PostgreSQL refuses NUL in text outright (a 500 from deep in the driver), and
    no Board field means to hold an escape or a bell. Checking every field of every request in
    the one decorator all Board views share leaves no form or filter that forgets to.
    """
    sources = [request.GET]
    if request.method == "POST":
        sources.append(request.POST)
    for data in sources:
        for key, values in data.lists():
            if CONTROL_CHARACTERS.search(key):
                return repr(key)[:64]
            if any(CONTROL_CHARACTERS.search(value) for value in values if isinstance(value, str)):
                return key[:64]
    return None


def refusal(request, status: int, template: str, message: str) -> HttpResponse:
    """A request the Board will not carry out, said plainly: a toast for htmx, a page otherwise."""
    if is_htmx(request):
        body = message.encode()  # the charset the content type names
        return toast(HttpResponse(body, status=status, content_type="text/plain; charset=utf-8"), "error", message)
    return HttpResponse(render_to_string(template, {"message": message}, request=request), status=status)


def bad_request(request, message: str) -> HttpResponse:
    """400 for input the Board cannot take."""
    return refusal(request, 400, "board/bad_request.html", message)


_NOT_FOUND_BODY: bytes | None = None


def not_found() -> HttpResponse:
    """The one 404 of the Board: the same bytes whether the thing is absent or another team's.

    Rendered once without a request (no CSRF token, no user name, no path), so nothing in the
    body can differ between "does not exist" and "not yours".
    """
    global _NOT_FOUND_BODY
    body = _NOT_FOUND_BODY
    if body is None:
        body = _NOT_FOUND_BODY = render_to_string("board/not_found.html").encode()
    response = HttpResponse(body, status=404, content_type="text/html; charset=utf-8")
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
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
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
    """A viewer (read-only role) tried to change something: 403."""
    return refusal(request, 403, "board/forbidden.html", message)
