from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0002_todos")]
    operations = [apply("0003_audit.sql")]
