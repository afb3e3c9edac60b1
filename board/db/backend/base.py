"""Django's PostgreSQL backend, pointed at the embedded server, which it starts on first connect."""

from django.conf import settings
from django.db.backends.postgresql import base

from board.db.embedded import ensure_server


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self):
        server = ensure_server(
            settings.BOARD_DATA_DIR,
            dbname=self.settings_dict["NAME"] or "postgres",
            ephemeral=settings.BOARD_DATA_DIR_EPHEMERAL,
        )
        self.settings_dict["HOST"] = server.host
        self.settings_dict["PORT"] = server.port
        return super().get_connection_params()
