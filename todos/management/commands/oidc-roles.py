"""``manage.py oidc-roles``: which provider groups grant which team roles (docs/sign-in.md).

    manage.py oidc-roles list
    manage.py oidc-roles add board-operators acme --role operator
    manage.py oidc-roles remove board-operators acme

Each change is audited like the Board's (actor ``system``) and applies at each person's next sign-in.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from todos.core.db import execute
from todos.core.errors import StoreError
from todos.core.selectors import identities as selectors
from todos.core.store import identities as store
from todos.core.store.teams import ROLES
from todos.management.commands.team import team_id_for


class Command(BaseCommand):
    help = "List, add and remove the provider group → team role mappings of single sign-on."

    def add_arguments(self, parser):
        sub = parser.add_subparsers(dest="action", required=True, metavar="list|add|remove")
        sub.add_parser("list", help="list the mappings")
        add = sub.add_parser("add", help="map a provider group to a team role")
        add.add_argument("group", help="a value of the groups claim, exactly as the provider sends it")
        add.add_argument("slug", help="the team")
        add.add_argument("--role", default="viewer", help=f"one of {', '.join(ROLES)} (default viewer)")
        remove = sub.add_parser("remove", help="remove a group's mapping to a team")
        remove.add_argument("group")
        remove.add_argument("slug")

    def handle(self, *args, action: str, **options):
        try:
            getattr(self, f"do_{action}")(**options)
        except StoreError as exc:
            raise CommandError(exc.message) from None

    def do_list(self, **_):
        mappings = selectors.role_mappings()
        if not mappings:
            self.stdout.write("No mappings yet: manage.py oidc-roles add <group> <team> --role viewer")
        for m in mappings:
            self.stdout.write(f"{m.group_value:<32} {m.team_slug:<24} {m.role}")

    def do_add(self, *, group: str, slug: str, role: str, **_):
        if role not in ROLES:
            raise CommandError(f"--role must be one of {', '.join(ROLES)}, got {role!r}")
        made = execute(store.add_mapping(None, group_value=group, team_id=team_id_for(slug), role=role))
        self.stdout.write(f"Group {made.group_value} now grants {made.role} of {slug} at each sign-in.")

    def do_remove(self, *, group: str, slug: str, **_):
        team_id = team_id_for(slug)
        found = [m for m in selectors.role_mappings() if m.group_value == group.strip() and m.team_id == team_id]
        if not found:
            raise CommandError(f"group {group!r} does not map to {slug!r}; see manage.py oidc-roles list")
        execute(store.remove_mapping(None, mapping_id=found[0].id))
        self.stdout.write(f"Group {group} no longer grants a role of {slug}; its memberships go at each next sign-in.")
