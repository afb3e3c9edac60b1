from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0012_flow_rollup")]
    operations = [apply("0013_schedules.sql")]
