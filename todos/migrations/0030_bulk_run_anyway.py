from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0029_search_indexes")]
    operations = [apply("0030_bulk_run_anyway.sql")]
