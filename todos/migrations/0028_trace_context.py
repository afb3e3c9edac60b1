from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0027_sign_in_identities")]
    operations = [apply("0028_trace_context.sql")]
