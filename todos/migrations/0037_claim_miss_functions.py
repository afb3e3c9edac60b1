from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0036_children_done_in_one_call")]
    operations = [apply("0037_claim_miss_functions.sql")]
