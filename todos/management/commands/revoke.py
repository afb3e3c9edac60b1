"""``manage.py revoke <slug>``: revoke an endpoint at once.

Its token stops working with the statement's commit, and its live todos (pending, claimed, or
waiting for a retry) are dead-lettered in the same statement: nobody can claim them any more.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from todos.core.db import execute
from todos.core.errors import StoreError
from todos.core.store import endpoints
from todos.models import Endpoint


class Command(BaseCommand):
    help = "Revoke an endpoint's token and dead-letter its live todos."

    def add_arguments(self, parser):
        parser.add_argument("slug", help="the endpoint's slug")
        parser.add_argument("--note", help="why (kept in the audit trail)")

    def handle(self, *args, slug: str, note: str | None = None, **options):
        endpoint_id = Endpoint.objects.filter(slug=slug).values_list("id", flat=True).first()
        if endpoint_id is None:
            raise CommandError(f"no endpoint with slug {slug!r}")
        try:
            revoked = execute(endpoints.revoke(None, endpoint_id, note=note))
        except StoreError as exc:
            raise CommandError(exc.message) from None
        count = len(revoked.dead_lettered)
        self.stdout.write(
            f"revoked {revoked.endpoint.slug}; {count} live todo{'' if count == 1 else 's'} dead-lettered"
        )
