from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0017_take_concurrency_slot")]
    operations = [apply("0018_value_domains.sql")]
