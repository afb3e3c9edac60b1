from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0014_capabilities")]
    operations = [apply("0015_schedule_requires.sql")]
