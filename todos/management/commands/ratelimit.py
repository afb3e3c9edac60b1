"""``manage.py ratelimit``: a team's rate limits per key from a shell.

    manage.py ratelimit list --team <slug>
    manage.py ratelimit set --team <slug> <key> <limit> <second|minute|hour>
    manage.py ratelimit remove --team <slug> <key>

A key without a limit is unlimited. ``set`` and ``remove`` write the same audited statements as
the Board's form (``store.rate_limits``), as the system.
"""

from __future__ import annotations

from todos.core.db import execute
from todos.core.selectors.rate_limits import team_limits
from todos.core.store import inputs, rate_limits
from todos.management.team_setting_command import TeamSettingCommand, team_action, whole_number


class Command(TeamSettingCommand):
    help = "List, set or remove a team's rate limits per key (a key without one is unlimited)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        team_action(
            sub, "list", "every limited key of the team, with its limit and whether it is throttled", team_flag=True
        )
        change = team_action(
            sub, "set", "set a key's limit: N claims (1 to 10000) per second, minute or hour", team_flag=True
        )
        change.add_argument("key", help="the rate key")
        change.add_argument("limit", help="how many claims of todos with the key per interval")
        change.add_argument("interval", help=f"one of {', '.join(inputs.RATE_INTERVALS)}")
        drop = team_action(sub, "remove", "remove a key's limit (it becomes unlimited)", team_flag=True)
        drop.add_argument("key", help="the rate key")

    def show(self, team_id):
        limits = team_limits(team_id)
        if not limits:
            self.stdout.write("no rate limits (every rate key is unlimited)")
        for r in limits:
            state = f"  (throttled until {r.refills_at:%H:%M:%S})" if r.throttled and r.refills_at else ""
            self.stdout.write(f"{r.key}\t{r.limit_text}{state}")

    def change(self, action, team_id, options):
        if action == "remove":
            removed = execute(rate_limits.remove_limit(None, team_id, options["key"]))
            self.stdout.write(f"{removed.key}: limit {removed.previous} removed (unlimited now)")
            return
        limit = whole_number("limit", options["limit"], "a whole number from 1 to 10000")
        changed = execute(rate_limits.set_limit(None, team_id, options["key"], limit, options["interval"]))
        before = "none" if changed.previous is None else changed.previous
        self.stdout.write(f"{changed.key}: limit {before} -> {changed.allowance} per {changed.per}")
