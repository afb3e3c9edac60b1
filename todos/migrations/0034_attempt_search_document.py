from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0033_drop_global_finished_index")]
    operations = [apply("0034_attempt_search_document.sql")]
