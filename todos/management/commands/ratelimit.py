"""``manage.py ratelimit``: a team's rate limits per key from a shell.

    manage.py ratelimit list --team <slug>
    manage.py ratelimit set --team <slug> <key> <limit> <second|minute|hour>
    manage.py ratelimit remove --team <slug> <key>

A key without a limit is unlimited. ``set`` and ``remove`` write the same audited statements as
the Board's form (``store.rate_limits``), as the system.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from todos.core.db import execute
from todos.core.errors import StoreError
from todos.core.selectors.rate_limits import team_limits
from todos.core.store import inputs, rate_limits
from todos.models import Team


class Command(BaseCommand):
    help = "List, set or remove a team's rate limits per key (a key without one is unlimited)."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        show = sub.add_parser("list", help="every limited key of the team, with its limit and whether it is throttled")
        show.add_argument("--team", required=True, help="the team's slug")
        change = sub.add_parser("set", help="set a key's limit: N claims (1 to 10000) per second, minute or hour")
        change.add_argument("--team", required=True, help="the team's slug")
        change.add_argument("key", help="the rate key")
        change.add_argument("limit", help="how many claims of todos with the key per interval")
        change.add_argument("interval", help=f"one of {', '.join(inputs.RATE_INTERVALS)}")
        drop = sub.add_parser("remove", help="remove a key's limit (it becomes unlimited)")
        drop.add_argument("--team", required=True, help="the team's slug")
        drop.add_argument("key", help="the rate key")

    def handle(self, *args, action: str, team: str, **options):
        team_id = Team.objects.filter(slug=team).values_list("id", flat=True).first()
        if team_id is None:
            raise CommandError(f"no team with slug {team!r}")
        if action == "list":
            limits = team_limits(team_id)
            if not limits:
                self.stdout.write("no rate limits (every rate key is unlimited)")
            for r in limits:
                state = f"  (throttled until {r.refills_at:%H:%M:%S})" if r.throttled and r.refills_at else ""
                self.stdout.write(f"{r.key}\t{r.limit_text}{state}")
            return
        try:
            if action == "remove":
                removed = execute(rate_limits.remove_limit(None, team_id, options["key"]))
                self.stdout.write(f"{removed.key}: limit {removed.previous} removed (unlimited now)")
                return
            try:
                limit = int(options["limit"])
            except ValueError:
                raise CommandError(f"limit: must be a whole number from 1 to 10000, got {options['limit']!r}") from None
            changed = execute(rate_limits.set_limit(None, team_id, options["key"], limit, options["interval"]))
        except StoreError as exc:
            raise CommandError(exc.message) from None
        before = "none" if changed.previous is None else changed.previous
        self.stdout.write(f"{changed.key}: limit {before} -> {changed.allowance} per {changed.per}")
