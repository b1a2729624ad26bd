"""cardroom settings, all read from the environment (docs/operations.md lists
every variable). The embedded default needs nothing: an SQLite file and a
broker on SQLite under ./var. No secret has a production default: without
SECRET_KEY, only DEBUG mode starts (with a key generated into ./var)."""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
env = environ.Env()

VAR_DIR = Path(env("CARDROOM_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env.bool("DEBUG", default=False)


def _secret_key() -> str:
    key = env("SECRET_KEY", default="")
    if key:
        return key
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set. Set SECRET_KEY in the environment (production), "
            "or DEBUG=1 for local development, where a key is generated into var/secret_key."
        )
    path = VAR_DIR / "secret_key"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(50))
        path.chmod(0o600)
    return path.read_text().strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "ladder",
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
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'cardroom.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # A file, not memory, for the test database too: worker processes started
    # by the tests must see the same data.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test-db.sqlite3")}
    # WAL and a busy timeout let the web app and a worker share the file.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 30, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", "transaction_mode": "IMMEDIATE"}
    )
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DB_CONN_MAX_AGE", default=60))
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 8}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)  # whitenoise warns on every request without it
MEDIA_ROOT = Path(env("CARDROOM_MEDIA_ROOT", default=str(VAR_DIR / "media")))
STORAGES = {
    # Replays, bot packages and logs go through this storage: point it at a
    # shared object store (django-storages) when workers run on several machines.
    "default": {"BACKEND": env("CARDROOM_FILE_STORAGE", default="django.core.files.storage.FileSystemStorage")},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/my/bots/"
LOGOUT_REDIRECT_URL = "/"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticatedOrReadOnly"],
    "DEFAULT_PAGINATION_CLASS": "ladder.api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "ladder.api.errors.exception_handler",
    "DEFAULT_THROTTLE_RATES": {
        "register": env("THROTTLE_REGISTER", default="20/hour"),
        "login": env("THROTTLE_LOGIN", default="30/min"),
        "upload": env("THROTTLE_UPLOAD", default="30/hour"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "cardroom API",
    "DESCRIPTION": "Bots, ladders, standings, matches and replays of cardroom (contract section 4).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # The docs page serves Swagger UI from our own static files: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if env("CACHE_URL", default=""):
    CACHES["default"] = env.cache("CACHE_URL")

# --- Celery ------------------------------------------------------------------
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default=f"sqla+sqlite:///{VAR_DIR / 'broker.sqlite3'}")
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600)}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Celery's Django fix-up closes the database connection before and after
# every task unless this is set: a new PostgreSQL backend for every match
# (a fork and a cold catalogue cache on the server each time, the cost of
# which grows with the number of workers). With it, a worker keeps its
# connection for this many tasks; config.celery still drops a connection
# that is broken or older than CONN_MAX_AGE before and after each task.
CELERY_DB_REUSE_MAX = env.int("CELERY_DB_REUSE_MAX", default=500)
# Our JSON logging config stays in charge (no duplicate lines from Celery).
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_BEAT_SCHEDULE = {
    "top-up-ladder-queues": {"task": "ladder.tasks.top_up_queues", "schedule": timedelta(seconds=env.int("MATCHMAKING_INTERVAL", default=5))},
    "reap-expired-leases": {"task": "ladder.tasks.reap_expired_leases", "schedule": timedelta(seconds=env.int("REAPER_INTERVAL", default=15))},
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# --- cardroom ------------------------------------------------------------------
CARDROOM_SANDBOX = env("CARDROOM_SANDBOX", default="")  # "" = bwrap where it works
# The ladder refuses to run uploaded bots unsandboxed unless this says so in so many words.
CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = env.bool("CARDROOM_ALLOW_UNSANDBOXED_UPLOADS", default=False)
CARDROOM_MATCH_LEASE_SECONDS = env.int("CARDROOM_MATCH_LEASE_SECONDS", default=60)
CARDROOM_MATCH_MAX_ATTEMPTS = env.int("CARDROOM_MATCH_MAX_ATTEMPTS", default=3)
CARDROOM_QUEUE_TARGET = env.int("CARDROOM_QUEUE_TARGET", default=4)  # queued matches kept per ladder
# Queued matches whose task message may be lost are re-sent after this long.
CARDROOM_RESEND_STALE_SECONDS = env.int("CARDROOM_RESEND_STALE_SECONDS", default=120)
# Tournament matches: their own Celery queue and message priority (0-9), and
# how many of one event's matches are sent to the broker at a time.
CARDROOM_TOURNAMENT_QUEUE = env("CARDROOM_TOURNAMENT_QUEUE", default="tournaments")
CARDROOM_TOURNAMENT_PRIORITY = env.int("CARDROOM_TOURNAMENT_PRIORITY", default=3)
CARDROOM_TOURNAMENT_IN_FLIGHT = env.int("CARDROOM_TOURNAMENT_IN_FLIGHT", default=20)
CARDROOM_HEARTBEAT_SECONDS = env.int("CARDROOM_HEARTBEAT_SECONDS", default=10)
CARDROOM_MAX_UPLOAD_BYTES = env.int("CARDROOM_MAX_UPLOAD_BYTES", default=10 * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = 12 * 1024 * 1024

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "ladder.logging.JsonFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
