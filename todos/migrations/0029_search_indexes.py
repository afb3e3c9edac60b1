from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0028_trace_context")]
    operations = [apply("0029_search_indexes.sql")]
