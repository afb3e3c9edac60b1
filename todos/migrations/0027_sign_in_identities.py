from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    dependencies = [("todos", "0023_saved_views")]
    operations = [apply("0027_sign_in_identities.sql")]
