"""``manage.py vend``: mint an endpoint and print its token, once.

    manage.py vend --team acme --name "CI fixer" --verbs claim_next,heartbeat,complete,fail \\
        --queues ci-failures [--slug ci-fixer] [--expires-in 24h | --expires-at 2027-01-01T00:00Z] \\
        [--default-lease 600] [--capabilities gpu,region:eu]

The token is printed once and never stored (only its SHA-256 is): copy it now.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from django.core.management.base import BaseCommand, CommandError
from django.utils.text import slugify

from todos.core.db import execute
from todos.core.errors import Invalid, StoreError
from todos.core.store import endpoints
from todos.models import Team

DURATION = re.compile(r"^(\d+)([smhdw])$")
UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(value: str) -> timedelta:
    match = DURATION.match(value.strip())
    if match is None or int(match.group(1)) <= 0:
        raise CommandError(
            f"--expires-in must be a positive number with a unit s, m, h, d or w (e.g. 24h), got {value!r}"
        )
    return timedelta(**{UNITS[match.group(2)]: int(match.group(1))})


def parse_instant(value: str) -> datetime:
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise CommandError(
            f"--expires-at must be an ISO 8601 date and time (e.g. 2027-01-01T00:00:00Z), got {value!r}"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when


def split_list(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


class Command(BaseCommand):
    help = "Create an endpoint (an agent credential) for a team and print its token once."

    def add_arguments(self, parser):
        parser.add_argument("--team", required=True, help="the team's slug")
        parser.add_argument("--name", required=True, help="a human-readable name")
        parser.add_argument("--slug", help="URL-safe id (default: from the name)")
        parser.add_argument(
            "--verbs",
            help=f"comma-separated scope verbs, or 'all' (default: {','.join(endpoints.DRAIN_VERBS)}); "
            f"known: {', '.join(endpoints.SCOPE_VERBS)}",
        )
        parser.add_argument("--queues", required=True, help="comma-separated queues the endpoint may use")
        expiry = parser.add_mutually_exclusive_group()
        expiry.add_argument("--expires-in", help="lifetime such as 30m, 24h, 7d")
        expiry.add_argument("--expires-at", help="ISO 8601 instant the token stops working")
        parser.add_argument("--default-lease", type=int, help="default lease in seconds (60..86400)")
        parser.add_argument(
            "--capabilities",
            help="comma-separated default capabilities: what its claims present when they present none",
        )

    def handle(self, *args, **options):
        team = Team.objects.filter(slug=options["team"]).values_list("id", flat=True).first()
        if team is None:
            raise CommandError(
                f"no team with slug {options['team']!r}; create it with: "
                f'manage.py team create {options["team"]} "Team name"'
            )
        verbs = split_list(options["verbs"]) or list(endpoints.DRAIN_VERBS)
        if verbs == ["all"]:
            verbs = list(endpoints.SCOPE_VERBS)
        slug = options["slug"] or slugify(options["name"])[:63].strip("-")
        if not slug:
            raise CommandError("--slug is required when the name has no letters or digits")
        expires_at = None
        if options["expires_in"]:
            expires_at = datetime.now(UTC) + parse_duration(options["expires_in"])
        elif options["expires_at"]:
            expires_at = parse_instant(options["expires_at"])
            if expires_at <= datetime.now(UTC):
                raise CommandError("--expires-at must be in the future")
        try:
            vended = execute(
                endpoints.vend(
                    None,
                    team_id=team,
                    name=options["name"],
                    slug=slug,
                    verbs=verbs,
                    queues=split_list(options["queues"]),
                    default_lease_ttl_seconds=options["default_lease"],
                    expires_at=expires_at,
                    capabilities=split_list(options["capabilities"]),
                )
            )
        except StoreError as exc:
            raise CommandError(_option_message(exc)) from None
        ep = vended.endpoint
        self.stdout.write(f"slug:    {ep.slug}")
        self.stdout.write(f"verbs:   {','.join(ep.scope_verbs)}")
        self.stdout.write(f"queues:  {','.join(ep.scope_queues)}")
        if ep.capabilities:
            self.stdout.write(f"capabilities: {','.join(ep.capabilities)}")
        if ep.expires_at:
            self.stdout.write(f"expires: {ep.expires_at.isoformat()}")
        self.stdout.write(f"token:   {vended.token}")
        self.stderr.write("The token is shown once and is not stored: copy it now.")


def _option_message(exc: StoreError) -> str:
    """A store error in the command line's words (``scope_verbs`` is ``--verbs`` here)."""
    options = {
        "scope_verbs": "--verbs",
        "scope_queues": "--queues",
        "default_lease_ttl_seconds": "--default-lease",
        "slug": "--slug",
        "name": "--name",
    }
    if not isinstance(exc, Invalid):  # only Invalid names a field
        return exc.message
    field = exc.field
    if field in options:
        return f"{options[field]}: {exc.problem}"
    if field.startswith("capabilities"):
        return f"--capabilities{field.removeprefix('capabilities')}: {exc.problem}"
    return exc.message
