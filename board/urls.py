from django.urls import include, path

from todos.dashboard.views import sign_in, sign_in_roles

urlpatterns = [
    path("api/v1/", include("todos.agents.api.urls")),
    # Sign-in and sign-out with single sign-on (docs/sign-in.md); before todos.urls, whose
    # accounts/ routes these replace.
    path("accounts/login/", sign_in.LoginView.as_view(), name="login"),
    path("accounts/logout/", sign_in.sign_out, name="logout"),
    path("accounts/password_change/", sign_in.PasswordChangeView.as_view(), name="password_change"),
    path("oidc/authenticate/", sign_in.SignInStart.as_view(), name="oidc_authentication_init"),
    path("oidc/callback/", sign_in.SignInCallback.as_view(), name="oidc_authentication_callback"),
    path("people/sign-in-roles/", sign_in_roles.sign_in_roles, name="sign_in_roles"),
    path("people/sign-in-roles/new/", sign_in_roles.sign_in_role_add, name="sign_in_role_add"),
    path(
        "people/sign-in-roles/<int:mapping_id>/remove/", sign_in_roles.sign_in_role_remove, name="sign_in_role_remove"
    ),
    path("", include("todos.urls")),
]
