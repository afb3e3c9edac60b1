from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0015_schedule_requires")]
    operations = [apply("0016_flow_functions.sql")]
