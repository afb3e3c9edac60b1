from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0003_audit")]
    operations = [apply("0004_board_indexes.sql")]
