"""Board's settings plus one test-only view (``/test-echo-request/``) that shows what the server
made of a request's address and scheme: the forwarded-header tests start ``manage.py up`` with
``DJANGO_SETTINGS_MODULE=tests.up.echo_settings``. Never used outside the tests."""

from board.settings import *  # noqa: F401,F403

ROOT_URLCONF = "tests.up.echo_urls"
