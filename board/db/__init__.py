"""Where Board's PostgreSQL lives: an external server named by ``DATABASE_URL``, or an embedded one.

Settings call :func:`database_settings` once; nothing here opens a connection at import time. The
embedded server is started lazily by the database backend in :mod:`board.db.backend` the first time
Django (or the store's pool) connects, so ``manage.py help`` never boots PostgreSQL.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

EMBEDDED_ENGINE = "board.db.backend"
EMBEDDED_DATABASE_NAME = "board"


def parse_database_url(url: str, *, setting: str = "DATABASE_URL") -> dict:
    """Turn ``postgresql://user:pass@host:port/name?opt=v`` into a Django ``DATABASES`` entry
    (``setting``: where it came from, for the error message)."""
    parts = urlsplit(url)
    if parts.scheme not in ("postgres", "postgresql"):
        raise ImproperlyConfigured(f"{setting} must start with postgresql:// (got scheme {parts.scheme!r})")
    options = dict(parse_qsl(parts.query))
    host = options.pop("host", None) or (unquote(parts.hostname) if parts.hostname else "")
    name = unquote(parts.path.lstrip("/"))
    if not name:
        raise ImproperlyConfigured(f"{setting} must name a database (…/dbname)")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": host,
        "PORT": str(parts.port or ""),
        "OPTIONS": options,
    }


def database_settings(database_url: str | None) -> dict:
    if database_url:
        config = parse_database_url(database_url)
    else:
        config = {
            "ENGINE": EMBEDDED_ENGINE,
            "NAME": EMBEDDED_DATABASE_NAME,
            "USER": "postgres",
            "PASSWORD": "",
            "HOST": "",  # filled in by the backend once the embedded server runs
            "PORT": "",
            "OPTIONS": {},
        }
    config["CONN_MAX_AGE"] = 0
    config["CONN_HEALTH_CHECKS"] = True
    config["TEST"] = {"NAME": f"test_{config['NAME']}"}
    return config
