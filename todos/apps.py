from django.apps import AppConfig


class TodosConfig(AppConfig):
    name = "todos"
    verbose_name = "Todos"

    def ready(self) -> None:
        # Traces go out only when an OTLP endpoint is configured (docs/telemetry.md).
        from todos.core import telemetry

        telemetry.setup()
