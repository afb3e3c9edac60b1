"""``manage.py schedule``: a team's periodic schedules from a shell.

    manage.py schedule list [<team-slug>]
    manage.py schedule create <team-slug> --name N --cron "0 3 * * *" --timezone Europe/Paris
                              --endpoint <endpoint-slug> --queue Q --title T [--kind K] [--payload JSON]
                              [--priority P] [--max-attempts M] [--missed skip|catch_up]
    manage.py schedule edit <schedule-id> [any option of create]
    manage.py schedule pause|resume|fire|delete <schedule-id>

Each writes the same audited statement as the Board (``store.schedules.*``), as the system; bad
input is refused with the field named and nothing written. ``edit`` changes the options it is
given and keeps the rest, as the Board's edit form does (the statement writes the whole definition).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from uuid import UUID

from django.core.management.base import BaseCommand, CommandError

from todos.core.db import execute
from todos.core.errors import StoreError
from todos.core.selectors.schedules import schedule_of, schedules_of
from todos.core.store import schedules
from todos.models import Endpoint, Team


class Command(BaseCommand):
    help = "List, create, edit, pause, resume, fire or delete periodic schedules."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True)
        show = sub.add_parser("list", help="schedules with their next fire time (all teams, or one)")
        show.add_argument("team", nargs="?", help="a team's slug")
        make = sub.add_parser("create", help="a new schedule")
        make.add_argument("team", help="the team's slug")
        _definition(make, creating=True)
        edit = sub.add_parser("edit", help="change a schedule: the options given; the rest stay as they are")
        edit.add_argument("schedule", help="the schedule's id")
        _definition(edit, creating=False)
        for verb in ("pause", "resume", "fire", "delete"):
            one = sub.add_parser(verb)
            one.add_argument("schedule", help="the schedule's id")

    def handle(self, *args, action: str, **options):
        try:
            getattr(self, f"_{action}")(**options)
        except StoreError as exc:
            raise CommandError(exc.message) from None

    def _team(self, slug: str):
        team_id = Team.objects.filter(slug=slug).values_list("id", flat=True).first()
        if team_id is None:
            raise CommandError(f"team: no team with slug {slug!r}")
        return team_id

    def _list(self, team=None, **_):
        team_ids = [self._team(team)] if team else list(Team.objects.values_list("id", flat=True))
        found = schedules_of(team_ids)
        if not found:
            self.stdout.write("no schedules")
        for s in found:
            state = "paused" if s.paused else f"next {s.next_fire_at.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"
            self.stdout.write(
                f"{s.id}\t{s.team_slug}\t{s.name}\t{s.cron} ({s.timezone})\t{s.endpoint_slug}/{s.queue}\t{state}"
            )

    def _create(self, team, endpoint, payload=None, **options):
        team_id = self._team(team)
        endpoint_id = _endpoint_id(endpoint)
        payload = _payload(payload)
        fields = {k: options.get(k) for k in ("name", "cron", "timezone", "queue", "title", "kind", "priority")}
        made = execute(
            schedules.create(
                None,
                team_id,
                now=datetime.now(UTC),
                endpoint_id=endpoint_id,
                payload=payload,
                max_attempts=options.get("max_attempts"),
                requires=options.get("requires"),
                missed=options.get("missed"),
                **fields,
            )
        )
        self.stdout.write(f"created {made.id} ({made.name}); next fire {made.next_fire_at.isoformat()}")

    def _edit(self, schedule, **options):
        try:
            UUID(schedule)
        except ValueError:
            raise CommandError(f"schedule: must be the schedule's id (a UUID), got {schedule[:40]!r}") from None
        current = schedule_of(list(Team.objects.values_list("id", flat=True)), schedule)
        if current is None:
            raise CommandError("no such schedule")
        fields = {name: getattr(current, name) for name in EDITABLE}
        fields["endpoint_id"] = current.endpoint_id
        given = {name: options[name] for name in EDITABLE if options.get(name) is not None}
        if "payload" in given:
            given["payload"] = _payload(given["payload"])
        if options.get("endpoint") is not None:
            given["endpoint_id"] = _endpoint_id(options["endpoint"])
        if not given:
            raise CommandError("nothing to change: give at least one option (see --help)")
        made = execute(schedules.update(None, current.id, now=datetime.now(UTC), **{**fields, **given}))
        self.stdout.write(f"edited {made.name} ({', '.join(sorted(given))}); next fire {made.next_fire_at.isoformat()}")

    def _pause(self, schedule, **_):
        made = execute(schedules.set_paused(None, schedule, True, now=datetime.now(UTC)))
        self.stdout.write(f"paused {made.name}")

    def _resume(self, schedule, **_):
        made = execute(schedules.set_paused(None, schedule, False, now=datetime.now(UTC)))
        self.stdout.write(f"resumed {made.name}; next fire {made.next_fire_at.isoformat()}")

    def _fire(self, schedule, **_):
        fired = execute(schedules.fire_now(None, schedule))
        self.stdout.write(f"fired: todo {fired.todo_id}")

    def _delete(self, schedule, **_):
        name = execute(schedules.delete(None, schedule))
        self.stdout.write(f"deleted {name}")


# The fields of a schedule's definition ``edit`` can change (besides its owner, --endpoint).
EDITABLE = schedules.DEFINITION_FIELDS


def _definition(parser, *, creating: bool) -> None:
    """The options of a schedule's definition: required to create one (except those with a
    default), all optional to edit one (an option not given keeps the current value)."""
    parser.add_argument("--name", required=creating)
    parser.add_argument("--cron", required=creating, help='a cron expression, e.g. "*/15 9-17 * * MON-FRI"')
    parser.add_argument("--timezone", default="UTC" if creating else None, help="an IANA time zone (create: UTC)")
    parser.add_argument("--endpoint", required=creating, help="the owner endpoint's slug (of the team)")
    parser.add_argument("--queue", required=creating)
    parser.add_argument("--title", required=creating)
    parser.add_argument("--kind")
    parser.add_argument("--payload", help="JSON")
    parser.add_argument("--priority", type=int)
    parser.add_argument("--max-attempts", type=int, dest="max_attempts")
    parser.add_argument(
        "--requires",
        action="append",
        metavar="LABEL",
        help="a capability label the fired todos require (repeatable): only a claim presenting all takes them",
    )
    parser.add_argument("--missed", choices=schedules.schedule_times.POLICIES, default="skip" if creating else None)


def _endpoint_id(slug: str):
    endpoint_id = Endpoint.objects.filter(slug=slug).values_list("id", flat=True).first()
    if endpoint_id is None:
        raise CommandError(f"endpoint: no endpoint with slug {slug!r}")
    return endpoint_id


def _payload(text: str | None):
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise CommandError(f"payload: not JSON ({exc})") from None
    except RecursionError:
        raise CommandError("payload: nested too deeply") from None
