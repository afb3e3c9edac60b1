"""Board's URLs plus ``/test-echo-request/`` (tests only; see ``echo_settings``): the address and
scheme the server made of the request, and which process answered it."""

import os

from django.http import JsonResponse
from django.urls import path

from board.urls import urlpatterns as board_urlpatterns


def echo_request(request):
    return JsonResponse({"remote_addr": request.META.get("REMOTE_ADDR"), "scheme": request.scheme, "pid": os.getpid()})


urlpatterns = [path("test-echo-request/", echo_request), *board_urlpatterns]
