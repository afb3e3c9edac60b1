from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0031_fan_in_count_off")]
    operations = [apply("0032_kind_index.sql")]
