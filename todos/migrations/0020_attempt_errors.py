from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0019_bulk_run_now")]
    operations = [apply("0020_attempt_errors.sql")]
