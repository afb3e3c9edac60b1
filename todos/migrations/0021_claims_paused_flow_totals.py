from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0020_attempt_errors")]
    operations = [apply("0021_claims_paused_flow_totals.sql")]
