from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0034_attempt_search_document")]
    operations = [apply("0035_attempt_search_document_written.sql")]
