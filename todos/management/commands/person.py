"""``manage.py person``: people from the shell (a headless setup).

    manage.py person create alice [--team acme --role operator] [--site-admin]
    manage.py person deactivate alice
    manage.py person reactivate alice
    manage.py person reset-password alice

``create`` and ``reset-password`` print a temporary password once (never stored in the clear);
the person changes it under "Change password". Each change is audited (actor ``system``).
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from todos.core.db import execute
from todos.core.errors import StoreError
from todos.core.store import people as people_store
from todos.core.store.teams import ROLES
from todos.management.commands.team import person_id_for, team_id_for


class Command(BaseCommand):
    help = "Create, deactivate and reactivate people; reset a password."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True, metavar="create|deactivate|reactivate|reset-password")
        create = sub.add_parser("create", help="create a person and print their temporary password once")
        create.add_argument("username")
        create.add_argument("--team", help="add them to this team (slug)")
        create.add_argument("--role", help=f"their role in --team: one of {', '.join(ROLES)} (default operator)")
        create.add_argument("--site-admin", action="store_true", help="a site admin (manages teams and people)")
        for name, text in (
            ("deactivate", "they can no longer sign in; their sessions end"),
            ("reactivate", "let a deactivated person sign in again"),
            ("reset-password", "print a new temporary password once"),
        ):
            sub.add_parser(name, help=text).add_argument("username")

    def handle(self, *args, action: str, **options):
        try:
            getattr(self, "do_" + action.replace("-", "_"))(**options)
        except StoreError as exc:
            raise CommandError(exc.message) from None

    def do_create(self, *, username: str, team: str | None, role: str | None, site_admin: bool, **_):
        if role is not None and team is None:
            raise CommandError("--role needs --team")
        if role is not None and role not in ROLES:
            raise CommandError(f"--role must be one of {', '.join(ROLES)}, got {role!r}")
        team_id = team_id_for(team) if team else None
        created = execute(
            people_store.create_person(
                None,
                username=username,
                superuser=site_admin,
                team_id=team_id,
                role=(role or "operator") if team_id else None,
            )
        )
        where = f" in team {team} as {role or 'operator'}" if team else ""
        self.stdout.write(f"Created {created.person.username}{where}.")
        self.stdout.write(f"password: {created.password}")
        self.stderr.write("The password is shown once and is not stored: pass it on now.")

    def do_deactivate(self, *, username: str, **_):
        execute(people_store.set_active(None, user_id=person_id_for(username, active=False), active=False))
        self.stdout.write(f"Deactivated {username}: they can no longer sign in.")

    def do_reactivate(self, *, username: str, **_):
        execute(people_store.set_active(None, user_id=person_id_for(username, active=False), active=True))
        self.stdout.write(f"Reactivated {username}.")

    def do_reset_password(self, *, username: str, **_):
        reset = execute(people_store.reset_password(None, user_id=person_id_for(username)))
        self.stdout.write(f"password: {reset.password}")
        self.stderr.write("The password is shown once and is not stored: pass it on now.")
