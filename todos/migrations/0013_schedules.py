from django.db import migrations

from todos.sql import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0011_run_later")]
    operations = [apply("0013_schedules.sql")]
