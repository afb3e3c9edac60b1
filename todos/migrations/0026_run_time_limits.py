from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0025_rate_limits")]
    operations = [apply("0026_run_time_limits.sql")]
