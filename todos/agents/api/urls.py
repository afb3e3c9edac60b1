"""``/api/v1/openapi.json``: the one API route Django serves.

Every other ``/api/v1/`` request (the verbs, unknown paths, any method) is answered before Django's
handler by ``todos.agents.api.fast_path``, which calls ``http.verb_view`` itself.
"""

from django.urls import path

from todos.agents.api import http

app_name = "api"

urlpatterns = [
    path("openapi.json", http.openapi_view, name="openapi"),
]
