"""Board's settings plus a system check that always fails: the test that ``up`` still runs the
checks (and that ``--skip-checks`` skips them) starts it with these. Tests only."""

from django.core import checks

from board.settings import *  # noqa: F401,F403


@checks.register
def always_fails(app_configs, **kwargs):
    return [checks.Error("a check that always fails", id="tests.E001")]
