from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0021_claims_paused_flow_totals")]
    operations = [apply("0022_person_preferences.sql")]
