from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0010_people")]
    operations = [apply("0011_run_later.sql")]
