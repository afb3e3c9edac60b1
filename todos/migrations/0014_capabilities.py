from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0013_schedules")]
    operations = [apply("0014_capabilities.sql")]
