from django.db import migrations

from todos.core.schema import apply


class Migration(migrations.Migration):
    initial = True
    dependencies = [("auth", "0012_alter_user_first_name_max_length")]
    operations = [apply("0001_tenancy.sql")]
