from django.urls import include, path

from todos.dashboard.views import sign_in

urlpatterns = [
    path("api/v1/", include("todos.agents.api.urls")),
    # The provider's sign-in (docs/sign-in.md): mozilla-django-oidc's views with discovery.
    path("oidc/authenticate/", sign_in.SignInStart.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", sign_in.SignInCallback.as_view(), name="oidc_authentication_callback"),
    path("", include("todos.urls")),
]
