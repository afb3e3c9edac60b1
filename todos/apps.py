from django.apps import AppConfig


class TodosConfig(AppConfig):
    name = "todos"
    verbose_name = "Todos"
    default_auto_field = "django.db.models.BigAutoField"
