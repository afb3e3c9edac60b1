from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0009_attempt_ended_by")]
    operations = [apply("0010_people.sql")]
