from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0037_claim_miss_functions")]
    operations = [apply("0038_has_children.sql")]
