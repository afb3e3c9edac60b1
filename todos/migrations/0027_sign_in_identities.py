from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0026_run_time_limits")]
    operations = [apply("0027_sign_in_identities.sql")]
