"""``/api/v1/``: the OpenAPI document, then one route for every verb (unknown ones answer a JSON 404)."""

from django.urls import path, re_path

from todos.api import http

app_name = "api"

urlpatterns = [
    path("openapi.json", http.openapi_view, name="openapi"),
    re_path(r"^(?P<verb>.*)$", http.verb_view, name="verb"),
]
