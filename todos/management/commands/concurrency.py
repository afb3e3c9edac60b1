"""``manage.py concurrency``: a team's concurrency-key limits from a shell.

    manage.py concurrency list <team-slug>
    manage.py concurrency set <team-slug> <key> <limit>

A key nobody configured has limit 1 (one claimed todo at a time). ``set`` writes the same audited
statement as the Board's form (``store.concurrency.set_limit``), as the system.
"""

from __future__ import annotations

from todos.core.db import execute
from todos.core.selectors.concurrency import team_keys
from todos.core.store import concurrency
from todos.management.team_setting_command import TeamSettingCommand, team_action, whole_number


class Command(TeamSettingCommand):
    help = "List or set a team's concurrency-key limits (a key without one has limit 1)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        team_action(sub, "list", "every key the team used or configured, with its limit and claims")
        change = team_action(sub, "set", "set a key's limit (1 to 10000)")
        change.add_argument("key", help="the concurrency key")
        change.add_argument("limit", help="how many todos with the key may be claimed at once")

    def show(self, team_id):
        keys = team_keys(team_id)
        if not keys:
            self.stdout.write("no concurrency keys yet (every key has limit 1 until set)")
        for k in keys:
            busy = "  (at its limit)" if k.claimed >= k.max_claimed else ""
            self.stdout.write(f"{k.key}\tlimit {k.max_claimed}\tclaimed {k.claimed}{busy}")

    def change(self, action, team_id, options):
        limit = whole_number("limit", options["limit"], "a whole number from 1 to 10000")
        changed = execute(concurrency.set_limit(None, team_id, options["key"], limit))
        before = "1 (default)" if changed.previous is None else str(changed.previous)
        self.stdout.write(f"{changed.key}: limit {before} -> {changed.max_claimed} ({changed.claimed} claimed now)")
