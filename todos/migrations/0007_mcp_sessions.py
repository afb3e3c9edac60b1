from django.db import migrations

from todos.sql import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0005_assignee_index")]
    operations = [apply("0007_mcp_sessions.sql")]
