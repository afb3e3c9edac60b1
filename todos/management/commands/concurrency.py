"""``manage.py concurrency``: a team's concurrency-key limits from a shell.

    manage.py concurrency list <team-slug>
    manage.py concurrency set <team-slug> <key> <limit>

A key nobody configured has limit 1 (one claimed todo at a time). ``set`` writes the same audited
statement as the Board's form (``store.concurrency.set_limit``), as the system.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from todos.core.db import execute
from todos.core.errors import StoreError
from todos.core.selectors.concurrency import team_keys
from todos.core.store import concurrency
from todos.models import Team


class Command(BaseCommand):
    help = "List or set a team's concurrency-key limits (a key without one has limit 1)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        show = sub.add_parser("list", help="every key the team used or configured, with its limit and claims")
        show.add_argument("team", help="the team's slug")
        change = sub.add_parser("set", help="set a key's limit (1 to 10000)")
        change.add_argument("team", help="the team's slug")
        change.add_argument("key", help="the concurrency key")
        change.add_argument("limit", help="how many todos with the key may be claimed at once")

    def handle(self, *args, action: str, team: str, **options):
        team_id = Team.objects.filter(slug=team).values_list("id", flat=True).first()
        if team_id is None:
            raise CommandError(f"no team with slug {team!r}")
        if action == "list":
            keys = team_keys(team_id)
            if not keys:
                self.stdout.write("no concurrency keys yet (every key has limit 1 until set)")
            for k in keys:
                busy = "  (at its limit)" if k.claimed >= k.max_claimed else ""
                self.stdout.write(f"{k.key}\tlimit {k.max_claimed}\tclaimed {k.claimed}{busy}")
            return
        try:
            limit = int(options["limit"])
        except ValueError:
            raise CommandError(f"limit: must be a whole number from 1 to 10000, got {options['limit']!r}") from None
        try:
            changed = execute(concurrency.set_limit(None, team_id, options["key"], limit))
        except StoreError as exc:
            raise CommandError(exc.message) from None
        before = "1 (default)" if changed.previous is None else str(changed.previous)
        self.stdout.write(f"{changed.key}: limit {before} -> {changed.max_claimed} ({changed.claimed} claimed now)")
