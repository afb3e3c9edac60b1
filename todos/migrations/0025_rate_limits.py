from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0024_dependencies")]
    operations = [apply("0025_rate_limits.sql")]
