from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0035_attempt_search_document_written")]
    operations = [apply("0036_children_done_in_one_call.sql")]
