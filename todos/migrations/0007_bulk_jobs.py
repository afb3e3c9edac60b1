from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0006_change_log")]
    operations = [apply("0007_bulk_jobs.sql")]
