from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0016_flow_functions")]
    operations = [apply("0017_take_concurrency_slot.sql")]
