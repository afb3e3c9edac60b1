from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0039_claim_attempt_functions")]
    operations = [apply("0040_agent_miss_function.sql")]
