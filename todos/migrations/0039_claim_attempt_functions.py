from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0038_has_children")]
    operations = [apply("0039_claim_attempt_functions.sql")]
