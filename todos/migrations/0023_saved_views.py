from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0022_person_preferences")]
    operations = [apply("0023_saved_views.sql")]
