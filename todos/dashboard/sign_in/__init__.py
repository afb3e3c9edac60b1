"""Single sign-on through an OpenID Connect provider (docs/sign-in.md)."""
