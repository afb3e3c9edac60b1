from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0030_bulk_run_anyway")]
    operations = [apply("0032_kind_index.sql")]
