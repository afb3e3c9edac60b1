"""Board's URLs plus ``/test-echo-request/`` (tests only; see ``echo_settings``)."""

from django.http import JsonResponse
from django.urls import path

from board.urls import urlpatterns as board_urlpatterns


def echo_request(request):
    return JsonResponse({"remote_addr": request.META.get("REMOTE_ADDR"), "scheme": request.scheme})


urlpatterns = [path("test-echo-request/", echo_request), *board_urlpatterns]
