from django.urls import include, path

urlpatterns = [
    path("api/v1/", include("todos.agents.api.urls")),
    path("", include("todos.urls")),
]
