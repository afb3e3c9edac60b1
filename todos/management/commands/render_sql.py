"""``manage.py render_sql``: write every named statement into ``todos/sql/statements/<name>.sql``.

The statements are the catalog's (``todos/ops/sql_catalog.py``), built with fixed arguments; the files
are committed so a reviewer reads the whole SQL of a change in its diff. ``--check`` writes nothing
and exits 1 with a unified diff when the files differ from what the code builds (the test suite
runs the same check: ``tests/test_sql_statements.py``). No database is needed unless a statement is
a ``psycopg.sql.Composable``, which is rendered on a connection from ``todos.core.db``.
"""

from django.core.management.base import BaseCommand, CommandError

from todos.ops.sql_render import REGENERATE, STATEMENTS_DIR, differences, render_all, write


class Command(BaseCommand):
    help = "Render every named SQL statement into todos/sql/statements/ (--check: only compare)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--check",
            action="store_true",
            help="Write nothing; exit 1 with a unified diff if the committed files differ from the code.",
        )

    def handle(self, *args, check: bool = False, **options):
        rendered = render_all()
        if check:
            diff = differences(rendered)
            if diff:
                self.stdout.write(diff)
                raise CommandError(f"todos/sql/statements/ is out of date: run `{REGENERATE}`", returncode=1)
            self.stdout.write(f"{len(rendered)} statements: todos/sql/statements/ is up to date")
            return
        changed = write(rendered)
        where = STATEMENTS_DIR.relative_to(STATEMENTS_DIR.parents[2])
        self.stdout.write(f"{len(rendered)} statements rendered into {where}/; {len(changed)} file(s) changed")
        for name in changed:
            self.stdout.write(f"  {name}")
