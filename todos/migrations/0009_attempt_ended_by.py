from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0008_mcp_sessions")]
    operations = [apply("0009_attempt_ended_by.sql")]
