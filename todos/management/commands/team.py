"""``manage.py team``: teams and their members from the shell (a headless setup).

    manage.py team create acme "Acme Inc."
    manage.py team add acme alice --role operator      # or change alice's role
    manage.py team remove acme alice
    manage.py team list

Each change is audited as the Board's own (actor ``system``). People are made with
``manage.py person create``.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from todos.core.db import execute, pool
from todos.core.errors import Conflict, StoreError
from todos.core.selectors import people as people_selectors
from todos.core.store import teams as team_store


def team_id_for(slug: str):
    """The team's id, or a CommandError that says how to make it."""
    with pool().connection() as conn:
        row = conn.execute("SELECT id FROM teams WHERE slug = %s", (slug,)).fetchone()
    if row is None:
        raise CommandError(f'no team with slug {slug!r}; create it with: manage.py team create {slug} "Team name"')
    return row["id"]


def person_id_for(username: str, *, active: bool = True) -> int:
    person = people_selectors.person_by_username(username)
    if person is None:
        raise CommandError(f"no person named {username!r}; create them with: manage.py person create {username}")
    if active and not person["is_active"]:
        raise CommandError(f"{username!r} is deactivated; reactivate them with: manage.py person reactivate {username}")
    return person["id"]


class Command(BaseCommand):
    help = "Create teams and manage their members."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True, metavar="create|add|remove|list")
        create = sub.add_parser("create", help="create a team")
        create.add_argument("slug", help="URL-safe id: lowercase letters, digits and '-'")
        create.add_argument("name", nargs="?", help="display name (default: the slug)")
        add = sub.add_parser("add", help="add a person to a team, or change their role")
        add.add_argument("slug")
        add.add_argument("username")
        add.add_argument("--role", default="operator", help=f"one of {', '.join(team_store.ROLES)} (default operator)")
        remove = sub.add_parser("remove", help="remove a person from a team")
        remove.add_argument("slug")
        remove.add_argument("username")
        sub.add_parser("list", help="list teams and their members")

    def handle(self, *args, action: str, **options):
        try:
            getattr(self, f"do_{action}")(**options)
        except StoreError as exc:
            raise CommandError(exc.message) from None

    def do_create(self, *, slug: str, name: str | None, **_):
        team = execute(team_store.create_team(slug=slug, name=name or slug))
        self.stdout.write(f"Created team {team.slug} ({team.name}).")
        self.stdout.write(f"Next: manage.py team add {team.slug} <username> --role admin")

    def do_add(self, *, slug: str, username: str, role: str, **_):
        if role not in team_store.ROLES:
            raise CommandError(f"--role must be one of {', '.join(team_store.ROLES)}, got {role!r}")
        team_id = team_id_for(slug)
        outcome = execute(team_store.set_member(None, team_id=team_id, user_id=person_id_for(username), role=role))
        self.stdout.write(f"{username} is now {role} of {slug} ({outcome}).")

    def do_remove(self, *, slug: str, username: str, **_):
        team_id = team_id_for(slug)
        try:
            execute(team_store.remove_member(None, team_id=team_id, user_id=person_id_for(username, active=False)))
        except Conflict:
            raise CommandError(f"{username!r} is not a member of {slug!r}") from None
        self.stdout.write(f"Removed {username} from {slug}.")

    def do_list(self, **_):
        sql = """SELECT t.slug, t.name, coalesce(string_agg(u.username || ' (' || m.role || ')', ', '
                 ORDER BY u.username), '') AS members
                 FROM teams t LEFT JOIN team_members m ON m.team_id = t.id LEFT JOIN auth_user u ON u.id = m.user_id
                 GROUP BY t.id ORDER BY t.slug"""
        with pool().connection() as conn:
            rows = conn.execute(sql).fetchall()
        if not rows:
            self.stdout.write('No teams yet: manage.py team create <slug> "Team name"')
        for row in rows:
            self.stdout.write(f"{row['slug']:<24} {row['name']:<24} {row['members'] or '(no members)'}")
