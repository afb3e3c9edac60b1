from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0004_board_indexes")]
    operations = [apply("0005_assignee_index.sql")]
