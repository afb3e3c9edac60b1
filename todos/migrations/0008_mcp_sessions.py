from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0007_bulk_jobs")]
    operations = [apply("0008_mcp_sessions.sql")]
