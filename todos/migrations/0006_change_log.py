from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0005_assignee_index")]
    operations = [apply("0006_change_log.sql")]
