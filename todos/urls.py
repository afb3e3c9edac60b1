from django.urls import path

from todos.views import health

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
]
