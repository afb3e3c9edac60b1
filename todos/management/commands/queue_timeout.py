"""``manage.py queue_timeout``: a team's default run-time limit for a queue, from a shell.

    manage.py queue_timeout list <team-slug>
    manage.py queue_timeout set <team-slug> <queue> <seconds>
    manage.py queue_timeout clear <team-slug> <queue>

A todo that names no ``timeout_seconds`` gets its queue's default (docs/lifecycle.md, "Run-time
limits"). ``set`` and ``clear`` write the same audited statement as the Board's form
(``store.queue_settings.set_timeout``), as the system.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from todos.core.db import execute
from todos.core.errors import StoreError
from todos.core.selectors.queue_settings import team_timeouts
from todos.core.store import queue_settings
from todos.models import Team


def _limit(value: int | None) -> str:
    return "none" if value is None else f"{value} s"


class Command(BaseCommand):
    help = "List, set or clear a team's default run-time limits per queue (1 to 604800 seconds)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        show = sub.add_parser("list", help="the team's queues that have a default run-time limit")
        show.add_argument("team", help="the team's slug")
        change = sub.add_parser("set", help="set a queue's default run-time limit (1 to 604800 seconds)")
        change.add_argument("team", help="the team's slug")
        change.add_argument("queue", help="the queue's name")
        change.add_argument("seconds", help="how long one attempt may run")
        clear = sub.add_parser("clear", help="remove a queue's default run-time limit")
        clear.add_argument("team", help="the team's slug")
        clear.add_argument("queue", help="the queue's name")

    def handle(self, *args, action: str, team: str, **options):
        team_id = Team.objects.filter(slug=team).values_list("id", flat=True).first()
        if team_id is None:
            raise CommandError(f"no team with slug {team!r}")
        if action == "list":
            limits = team_timeouts(team_id)
            if not limits:
                self.stdout.write("no queue has a default run-time limit")
            for queue, seconds in limits.items():
                self.stdout.write(f"{queue}\t{seconds} s")
            return
        seconds = None
        if action == "set":
            try:
                seconds = int(options["seconds"])
            except ValueError:
                raise CommandError(
                    f"timeout_seconds: must be an integer from 1 to 604800, got {options['seconds']!r}"
                ) from None
        try:
            changed = execute(queue_settings.set_timeout(None, team_id, options["queue"], seconds))
        except StoreError as exc:
            raise CommandError(exc.message) from None
        self.stdout.write(
            f"{changed.queue}: run-time limit {_limit(changed.previous)} -> {_limit(changed.timeout_seconds)}"
        )
