from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0001_tenancy")]
    operations = [apply("0002_todos.sql")]
