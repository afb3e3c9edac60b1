from django.db import migrations

from todos.sql import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0008_mcp_sessions")]
    operations = [apply("0012_flow_rollup.sql")]
