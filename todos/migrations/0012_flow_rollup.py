from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0011_run_later")]
    operations = [apply("0012_flow_rollup.sql")]
