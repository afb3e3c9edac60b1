"""``manage.py recount``: recompute the Board's counts from ``todos`` and report any drift.

The relay keeps ``todo_counts`` exact from the change log; they can only drift when rows were
written behind the store's back (a hand-run UPDATE, a restore) or the log was capped while no relay
ran (the relay then rebuilds them by itself). Safe while Board runs: it holds the relay's pass lock
for the few seconds the rebuild takes, and the relay carries on from the rebuilt counts.
"""

from django.core.management.base import BaseCommand

from todos.core.db import connect
from todos.live.relay import rebuild_counts


class Command(BaseCommand):
    help = "Recompute the Board's per-queue counts from the todos table and report the drift corrected."

    def handle(self, *args, **options):
        with connect() as conn:
            corrected = rebuild_counts(conn)
        if not corrected:
            self.stdout.write("counts: exact, nothing to correct")
            return
        self.stdout.write(
            # Django's Style sets its roles (SUCCESS, WARNING, …) with setattr: no attribute pyright can see
            self.style.WARNING(  # pyright: ignore[reportAttributeAccessIssue]
                f"counts: corrected {len(corrected)} drifted (endpoint, queue, state) counts"
            )
        )
        for d in corrected:
            self.stdout.write(f"  {d.endpoint_id} {d.queue} {d.state}: {d.was} -> {d.now}")
