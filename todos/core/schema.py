"""The schema, as hand-written SQL files in ``todos/sql/`` applied in order by ``manage.py migrate``.

Each file has a Django migration in ``todos/migrations/`` that runs it (:func:`apply`), so the
schema's history is Django's migration history and ``migrate`` is the only command an operator
needs. Files are never edited once released: a change is a new file and a new migration.
"""

from pathlib import Path

from django.db import migrations

# The numbered files live in ``todos/sql/``, a folder of data beside the code that applies them.
SQL_DIR = Path(__file__).resolve().parent.parent / "sql"


def apply(filename: str) -> migrations.RunSQL:
    return migrations.RunSQL((SQL_DIR / filename).read_text(), reverse_sql=migrations.RunSQL.noop)
