"""``manage.py queue_timeout``: a team's default run-time limit for a queue, from a shell.

    manage.py queue_timeout list <team-slug>
    manage.py queue_timeout set <team-slug> <queue> <seconds>
    manage.py queue_timeout clear <team-slug> <queue>

A todo that names no ``timeout_seconds`` gets its queue's default (docs/lifecycle.md, "Run-time
limits"). ``set`` and ``clear`` write the same audited statement as the Board's form
(``store.queue_settings.set_timeout``), as the system.
"""

from __future__ import annotations

from todos.core.db import execute
from todos.core.selectors.queue_settings import team_timeouts
from todos.core.store import queue_settings
from todos.management.team_setting_command import TeamSettingCommand, team_action, whole_number


def _limit(value: int | None) -> str:
    return "none" if value is None else f"{value} s"


class Command(TeamSettingCommand):
    help = "List, set or clear a team's default run-time limits per queue (1 to 604800 seconds)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        team_action(sub, "list", "the team's queues that have a default run-time limit")
        change = team_action(sub, "set", "set a queue's default run-time limit (1 to 604800 seconds)")
        change.add_argument("queue", help="the queue's name")
        change.add_argument("seconds", help="how long one attempt may run")
        clear = team_action(sub, "clear", "remove a queue's default run-time limit")
        clear.add_argument("queue", help="the queue's name")

    def show(self, team_id):
        limits = team_timeouts(team_id)
        if not limits:
            self.stdout.write("no queue has a default run-time limit")
        for queue, seconds in limits.items():
            self.stdout.write(f"{queue}\t{seconds} s")

    def change(self, action, team_id, options):
        seconds = None
        if action == "set":
            seconds = whole_number("timeout_seconds", options["seconds"], "an integer from 1 to 604800")
        changed = execute(queue_settings.set_timeout(None, team_id, options["queue"], seconds))
        self.stdout.write(
            f"{changed.queue}: run-time limit {_limit(changed.previous)} -> {_limit(changed.timeout_seconds)}"
        )
