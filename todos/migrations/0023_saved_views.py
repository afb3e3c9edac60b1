from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0018_value_domains")]
    operations = [apply("0023_saved_views.sql")]
