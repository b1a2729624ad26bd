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
from kombu import Queue

from bots import builtin_names

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
    "axes",
    "csp",
    "ladder",
]

MIDDLEWARE = [
    # Outermost: reads what a view left of the request body, so that an
    # upload refused from its headers gets our answer, not a reset
    # (ladder.request_body).
    "ladder.request_body.DrainUnreadBodyMiddleware",
    # Then: public reads (standings, match lists, match pages) from the
    # shared cache for visitors, before any other middleware costs anything
    # (a cached response carries the security headers the others added when
    # it was built: ladder.caching).
    "ladder.caching.PublicReadCacheMiddleware",
    # Then: every response that may hold private data (a signed-in
    # request's, one setting a cookie, a new token) is "private, no-store"
    # (ladder.private_responses).
    "ladder.private_responses.PrivateResponseMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before any view: a NUL byte in a query parameter is a 400, an
    # Authorization header without a working token a 401 (ladder.request_checks).
    "ladder.request_checks.RequestChecksMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last (django-axes): turns a locked-out login into the lockout response.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    # First: refuses every login attempt while the account or the address is locked out.
    "ladder.auth_backends.LockoutBackend",
    "django.contrib.auth.backends.ModelBackend",
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
# The built-in bots installed on every ladder of their game (default: all of
# bots.BUILTINS). The search bot thinks 150 ms a move.
CARDROOM_BUILTIN_BOTS = env.list("CARDROOM_BUILTIN_BOTS", default=builtin_names())
if unknown_builtins := sorted(set(CARDROOM_BUILTIN_BOTS) - set(builtin_names())):
    raise ImproperlyConfigured(
        f"CARDROOM_BUILTIN_BOTS names {', '.join(unknown_builtins)}: the built-in bots are {', '.join(builtin_names())}"
    )
# The author's wheel that the site offers (make dist; the image builds it).
CARDROOM_DIST_DIR = Path(env("CARDROOM_DIST_DIR", default=str(BASE_DIR / "dist")))
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
        "bot": env("THROTTLE_BOT", default="30/hour"),
        # Password resets per client address, and e-mails (resets and
        # verification links) per target address, registered or not.
        "reset": env("THROTTLE_RESET", default="10/hour"),
        "mail-address": env("THROTTLE_MAIL_ADDRESS", default="5/hour"),
    },
    # The client address comes from ladder.client_address.client_address (our
    # throttles override DRF's get_ident); this keeps DRF's own view the same.
    "NUM_PROXIES": None,  # set below from CARDROOM_TRUSTED_PROXIES
    # JSON bodies over CARDROOM_MAX_JSON_BYTES are a 413 (ladder.api.parsers).
    "DEFAULT_PARSER_CLASSES": [
        "ladder.api.parsers.LimitedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "cardroom API",
    "DESCRIPTION": "Bots, ladders, standings, matches and replays of cardroom (docs/api.md).",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # The docs page serves Swagger UI from our own static files: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The path converters of ladder.converters: still plain integers in the schema.
    "PATH_CONVERTER_OVERRIDES": {"id": int, "seat": int, "version": int},
    # A match's status is one choice set wherever it is shown (matches, the
    # human seat, its list): one named enum, not a collision resolved by a hash.
    "ENUM_NAME_OVERRIDES": {"MatchStatusEnum": "ladder.models.Match.Status"},
}

# The shared cache: public reads (ladder.caching), rate-limit counters and
# whatever else every process must see. Production: Redis (CACHE_URL=
# redis://cache:6379/0); the limits use the same Redis under their own prefix.
# The embedded default: a file cache under var/ for public reads (the web
# processes and the worker, which records results and so invalidates, share
# it) and a table of the database for the limits (created by migrate, ladder
# migration 0001_initial, or `manage.py createcachetable`).
CACHES = {
    "default": env.cache("CACHE_URL", default=f"filecache://{VAR_DIR / 'cache'}"),
    "limits": {
        "BACKEND": "django.core.cache.backends.db.DatabaseCache",
        "LOCATION": "cardroom_cache",
        # Past MAX_ENTRIES the database cache drops a third of its keys: with
        # the default 300, many clients at once would wipe each other's counts.
        "OPTIONS": {"MAX_ENTRIES": 100_000},
    },
}
# Counters must not be evicted: LIMITS_CACHE_URL names a store that keeps
# them (compose: the broker's Redis), else they share CACHE_URL's.
if env("LIMITS_CACHE_URL", default=""):
    CACHES["limits"] = {**env.cache("LIMITS_CACHE_URL"), "KEY_PREFIX": "limits"}
elif env("CACHE_URL", default=""):
    CACHES["limits"] = {**env.cache("CACHE_URL"), "KEY_PREFIX": "limits"}
# Django's Redis backend builds a Redis client object for every call: ours
# keeps one per connection pool (ladder.hosting.redis_cache).
for _alias in CACHES.values():
    if _alias["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
        _alias["BACKEND"] = "ladder.hosting.redis_cache.RedisCache"
# Longest a cached public read is served; a recorded result (any match state
# change) invalidates them at once, this bounds what other writes leave stale.
CARDROOM_PUBLIC_CACHE_SECONDS = env.int("CARDROOM_PUBLIC_CACHE_SECONDS", default=300)
# How long the proxy (nginx) may keep a shared public page before it asks the
# app again (the app's answer is then current): a write reaches the proxy's
# visitors at most this late. 0: the proxy keeps none of them.
CARDROOM_PROXY_CACHE_SECONDS = env.int("CARDROOM_PROXY_CACHE_SECONDS", default=1)

# --- HTTPS, behind the proxy (docs/operations.md, "TLS") -----------------------
# CARDROOM_HTTPS=1 says the site is served over HTTPS (nginx terminates TLS):
# HTTP is redirected, cookies are secure-only, browsers are told HSTS.
CARDROOM_HTTPS = env.bool("CARDROOM_HTTPS", default=False)
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=CARDROOM_HTTPS)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=CARDROOM_HTTPS)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=CARDROOM_HTTPS)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000 if CARDROOM_HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=CARDROOM_HTTPS)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=CARDROOM_HTTPS)
# Trust the scheme the proxy reports only when a proxy that always sets it
# stands in front (deploy/nginx sets X-Forwarded-Proto on every request):
# CARDROOM_PROXY_SSL_HEADER=X-Forwarded-Proto.
_proxy_ssl_header = env("CARDROOM_PROXY_SSL_HEADER", default="")
if _proxy_ssl_header:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _proxy_ssl_header.upper().replace("-", "_"), "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

# Content-Security-Policy (django-csp 4): everything from this origin, no
# inline script or style anywhere (the pages' scripts are static files; no
# nonces, so cached pages stay valid for everyone), no framing, no plugins.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],  # (Swagger UI's icons are data: URLs)
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# --- abuse: client addresses, rate limits, lockouts --------------------------
# How many reverse proxies in front of the app append to X-Forwarded-For (0:
# the header is ignored and the peer's address is the client's). One function,
# ladder.client_address.client_address, reads it for DRF, the web forms and django-axes.
CARDROOM_TRUSTED_PROXIES = env.int("CARDROOM_TRUSTED_PROXIES", default=0)
if CARDROOM_TRUSTED_PROXIES < 0:
    raise ImproperlyConfigured("CARDROOM_TRUSTED_PROXIES is a number of proxies: 0 or more")
REST_FRAMEWORK["NUM_PROXIES"] = CARDROOM_TRUSTED_PROXIES
# A JSON request body larger than this is refused with a 413 (the API's
# inputs are a few hundred bytes; bot packages come as multipart uploads).
CARDROOM_MAX_JSON_BYTES = env.int("CARDROOM_MAX_JSON_BYTES", default=64 * 1024)
# django-axes: failed logins lock out the account and the address (each on
# its own), on the web form, the admin and the API's token endpoint.
AXES_FAILURE_LIMIT = env.int("CARDROOM_LOCKOUT_FAILURES", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("CARDROOM_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_CLIENT_IP_CALLABLE = "ladder.client_address.client_address"
AXES_USERNAME_CALLABLE = "ladder.client_address.login_username"
AXES_LOCKOUT_CALLABLE = "ladder.web.lockout.lockout_response"
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_VERBOSE = False
# Names nobody may sign up with (compared after NFKC, case-folded and as
# look-alikes); the system user that owns the built-in bots is always one.
CARDROOM_RESERVED_USERNAMES = env.list(
    "CARDROOM_RESERVED_USERNAMES",
    default=["cardroom", "admin", "administrator", "api", "staff", "root", "system", "support", "moderator", "operator", "ops", "static", "media"],
)

# --- e-mail (password resets) ---------------------------------------------------
# EMAIL_URL: smtp+tls://user:password@host:587 (or smtp://, smtps://) in
# production; the embedded default prints each message on the web process's
# standard output (consolemail://). DEFAULT_FROM_EMAIL is the sender.
globals().update(
    {k: v for k, v in env.email_url("EMAIL_URL", default="consolemail://").items() if v not in (None, "")}
)
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="cardroom <noreply@localhost>")
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=3 * 24 * 3600)

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
# Queues and their shares (docs/operations.md, "Queues and their shares").
# Every worker (`celery -A config worker`, no -Q) consumes all of them and
# takes its next message from each non-empty queue in turn (kombu's round
# robin): while ladder matches, validations and event matches all wait, each
# gets a third of the messages the workers take; while two wait, half each;
# an idle queue's turn goes to the others. Nothing is sent with a priority:
# on Redis a message priority outranks the rotation (kombu's BRPOP lists
# every queue's priority 0 before any priority 3), and the event matches
# waited behind every ladder match. An operator who wants each queue on its
# own worker processes starts workers with -Q. Another kind of work is one
# more queue here and one more route below. The ladder queue keeps Celery's
# default name, so a worker started with `-Q celery` still plays the ladder.
CARDROOM_QUEUES = {
    "ladder": "celery",
    "validation": "validation",
    # event matches: the ladder's task, sent to this queue (ladder.services.enqueue)
    "tournament": env("CARDROOM_TOURNAMENT_QUEUE", default="tournaments"),
    # e-mails (password resets, address verification): never sent while a page waits
    "mail": "mail",
    # the scheduler's periodic tasks (matchmaking, the reaper, events' starts):
    # never behind a match. Its own consumer takes it (the scheduler worker:
    # `celery -A config worker -Q scheduler --pool threads`, decision 194);
    # a worker without -Q takes its turn of it too, when it has a free slot.
    "scheduler": env("CARDROOM_SCHEDULER_QUEUE", default="scheduler"),
}
CELERY_TASK_DEFAULT_QUEUE = CARDROOM_QUEUES["ladder"]
CELERY_TASK_QUEUES = [Queue(name) for name in CARDROOM_QUEUES.values()]
# Casual matches (a person against bots, ladder.services.casual) wait minutes
# on their person: their own queue, deliberately NOT in CELERY_TASK_QUEUES,
# so a worker started without -Q (every ladder worker) never takes one. Only
# the casual worker consumes it: `celery -A config worker -Q casual --pool
# threads --concurrency 256` (decisions 135, 202; docs/operations.md).
CARDROOM_CASUAL_QUEUE = env("CARDROOM_CASUAL_QUEUE", default="casual")
CELERY_TASK_ROUTES = {
    "ladder.tasks.play_casual_match": {"queue": CARDROOM_CASUAL_QUEUE},
    "ladder.tasks.play_match": {"queue": CARDROOM_QUEUES["ladder"]},
    "ladder.tasks.validate_version": {"queue": CARDROOM_QUEUES["validation"]},
    "ladder.tasks.top_up_queues": {"queue": CARDROOM_QUEUES["scheduler"]},
    "ladder.tasks.reap_expired_leases": {"queue": CARDROOM_QUEUES["scheduler"]},
    "ladder.tasks.start_due_events": {"queue": CARDROOM_QUEUES["scheduler"]},
    "ladder.tasks.refresh_adjusted_rankings": {"queue": CARDROOM_QUEUES["scheduler"]},
    "ladder.tasks.send_password_reset": {"queue": CARDROOM_QUEUES["mail"]},
    "ladder.tasks.send_email_verification": {"queue": CARDROOM_QUEUES["mail"]},
}
# Our JSON logging config stays in charge (no duplicate lines from Celery).
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Each message expires after its period (the worker drops it unrun: the next
# one does the same work), so a scheduler consumer that was away or slow
# finds at most one live message of each, never a backlog (decision 195).
MATCHMAKING_INTERVAL = env.int("MATCHMAKING_INTERVAL", default=5)
REAPER_INTERVAL = env.int("REAPER_INTERVAL", default=15)
EVENT_START_INTERVAL = env.int("EVENT_START_INTERVAL", default=5)
# The ladders' adjusted rankings are recomputed at most this often, when
# they have new results (ladder.services.adjusted, decision 250).
ADJUSTED_RANKING_INTERVAL = env.int("ADJUSTED_RANKING_INTERVAL", default=60)
CELERY_BEAT_SCHEDULE = {
    name: {"task": f"ladder.tasks.{task}", "schedule": timedelta(seconds=period), "options": {"expires": period}}
    for name, task, period in (
        ("top-up-ladder-queues", "top_up_queues", MATCHMAKING_INTERVAL),
        ("reap-expired-leases", "reap_expired_leases", REAPER_INTERVAL),
        # open events start at their start time (the reaper's sweep starts them too)
        ("start-due-events", "start_due_events", EVENT_START_INTERVAL),
        ("refresh-adjusted-rankings", "refresh_adjusted_rankings", ADJUSTED_RANKING_INTERVAL),
    )
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# --- cardroom ------------------------------------------------------------------
CARDROOM_SANDBOX = env("CARDROOM_SANDBOX", default="")  # "" = bwrap where it works
# The ladder refuses to run uploaded bots unsandboxed unless this says so in so many words.
CARDROOM_ALLOW_UNSANDBOXED_UPLOADS = env.bool("CARDROOM_ALLOW_UNSANDBOXED_UPLOADS", default=False)
# Where workers unpack the bots of the match in play: one folder per match,
# owned (flock) by its process; a worker sweeps those of dead ones when it
# starts. One per host, on a local disk (docs/operations.md).
CARDROOM_SCRATCH_DIR = Path(env("CARDROOM_SCRATCH_DIR", default=str(VAR_DIR / "scratch")))
CARDROOM_MATCH_LEASE_SECONDS = env.int("CARDROOM_MATCH_LEASE_SECONDS", default=60)
CARDROOM_MATCH_MAX_ATTEMPTS = env.int("CARDROOM_MATCH_MAX_ATTEMPTS", default=3)
# A match's wall-clock ceiling is what its time control lets its bots think,
# plus this for the platform's own work (cardroom.ceiling, docs/ladder.md).
CARDROOM_MATCH_CEILING_ALLOWANCE_SECONDS = env.int("CARDROOM_MATCH_CEILING_ALLOWANCE_SECONDS", default=30)
# Fair shares of the workers (ladder.services.fairshare): the window of
# recent worker time over which owners' usage is compared.
CARDROOM_FAIR_SHARE_WINDOW_SECONDS = env.int("CARDROOM_FAIR_SHARE_WINDOW_SECONDS", default=600)
CARDROOM_QUEUE_TARGET = env.int("CARDROOM_QUEUE_TARGET", default=4)  # queued matches kept per ladder
# How matchmaking picks a first bot's opponents (ladder.services.matchmaking,
# docs/ladder.md "Pairing"): "elo", the nearest few in Elo; "informative",
# those whose order relative to it the adjusted ranking is least sure of.
CARDROOM_PAIRING = env("CARDROOM_PAIRING", default="elo")
if CARDROOM_PAIRING not in ("elo", "informative"):
    raise ImproperlyConfigured(f"CARDROOM_PAIRING is 'elo' or 'informative', not {CARDROOM_PAIRING!r}")
# How matchmaking seats a single match's bots (docs/ladder.md "Seating",
# decision 293): "balanced", each pair taking turns at the better seat;
# "shuffled", at random.
CARDROOM_SEATING = env("CARDROOM_SEATING", default="balanced")
if CARDROOM_SEATING not in ("balanced", "shuffled"):
    raise ImproperlyConfigured(f"CARDROOM_SEATING is 'balanced' or 'shuffled', not {CARDROOM_SEATING!r}")
# Whether matchmaking keeps one owner's bots to one seat a table
# (ladder.services.matchmaking, decision 278): off only for a private
# ladder where one person ranks their own bots.
CARDROOM_SEPARATE_OWNERS = env.bool("CARDROOM_SEPARATE_OWNERS", default=True)
# The ladders ("GAME:PLAYERS") whose pairings are played as duplicate sets,
# one deal in every seat rotation (ladder.services.duplicate_sets): none by
# default, since on runs held out every ladder measured settled its ranking
# later with them (Allegory: decision 291; Allegra, on runs each with deals
# of its own: decisions 296 and 297); an operator may still list one.
CARDROOM_DUPLICATE_SETS = env.list("CARDROOM_DUPLICATE_SETS", default=[])
# Queued matches whose task message may be lost are re-sent after this long.
CARDROOM_RESEND_STALE_SECONDS = env.int("CARDROOM_RESEND_STALE_SECONDS", default=120)
# Event matches: their own Celery queue, and how many of one event's matches
# are sent to the broker at a time.
CARDROOM_TOURNAMENT_QUEUE = CARDROOM_QUEUES["tournament"]
CARDROOM_TOURNAMENT_IN_FLIGHT = env.int("CARDROOM_TOURNAMENT_IN_FLIGHT", default=20)
# An open event's start is at least this far ahead when staff create it (time to enter).
CARDROOM_EVENT_MIN_LEAD_SECONDS = env.int("CARDROOM_EVENT_MIN_LEAD_SECONDS", default=60)
# The standing open event series (decision 208, ladder.services.open_series):
# one open event of each game always taking entries, the next opened by the
# scheduler's start_due_events sweep when one starts. CARDROOM_OPEN_SERIES=0
# turns it off.
CARDROOM_OPEN_SERIES = env.bool("CARDROOM_OPEN_SERIES", default=True)
CARDROOM_OPEN_SERIES_HOURS = env.float("CARDROOM_OPEN_SERIES_HOURS", default=24.0)  # starts at whole periods from 2000-01-01 00:00 UTC
CARDROOM_OPEN_SERIES_GAMES = env.list("CARDROOM_OPEN_SERIES_GAMES", default=["allegory", "allegra"])
CARDROOM_OPEN_SERIES_FORMAT = env("CARDROOM_OPEN_SERIES_FORMAT", default="swiss")
CARDROOM_OPEN_SERIES_PLAYERS = env.int("CARDROOM_OPEN_SERIES_PLAYERS", default=2)  # at a table
CARDROOM_OPEN_SERIES_DEALS = env.int("CARDROOM_OPEN_SERIES_DEALS", default=2)
CARDROOM_OPEN_SERIES_HOUSE_BOTS = env.list("CARDROOM_OPEN_SERIES_HOUSE_BOTS", default=["greedy", "random"])  # built-ins entered first
if CARDROOM_OPEN_SERIES:
    from cardroom.tournament.schedule import EventSpec, ScheduleError  # noqa: E402  (no Django in it)
    from engine import game_ids  # noqa: E402

    if CARDROOM_OPEN_SERIES_HOURS * 3600 < 2 * CARDROOM_EVENT_MIN_LEAD_SECONDS:
        raise ImproperlyConfigured(
            f"CARDROOM_OPEN_SERIES_HOURS is {CARDROOM_OPEN_SERIES_HOURS}: at least twice CARDROOM_EVENT_MIN_LEAD_SECONDS, in hours"
        )
    for _game in CARDROOM_OPEN_SERIES_GAMES:
        if _game not in game_ids():
            raise ImproperlyConfigured(f"CARDROOM_OPEN_SERIES_GAMES names {_game!r}: the games are {', '.join(game_ids())}")
        try:
            _field = max(CARDROOM_OPEN_SERIES_PLAYERS, 2)
            EventSpec(_game, CARDROOM_OPEN_SERIES_FORMAT, _field, CARDROOM_OPEN_SERIES_PLAYERS, CARDROOM_OPEN_SERIES_DEALS)
        except ScheduleError as _exc:
            raise ImproperlyConfigured(f"the open series (CARDROOM_OPEN_SERIES_FORMAT, _PLAYERS, _DEALS) cannot be scheduled: {_exc}") from None
    if unknown_house := sorted(set(CARDROOM_OPEN_SERIES_HOUSE_BOTS) - set(CARDROOM_BUILTIN_BOTS)):
        raise ImproperlyConfigured(f"CARDROOM_OPEN_SERIES_HOUSE_BOTS names {', '.join(unknown_house)}: not among CARDROOM_BUILTIN_BOTS")
# An event's stored standings are refreshed at most this often (and never
# sooner than ten times their last computation's time): ladder.services.tournaments.
CARDROOM_STANDINGS_REFRESH_SECONDS = env.int("CARDROOM_STANDINGS_REFRESH_SECONDS", default=2)
# Casual matches (decisions 130-136, 202-206, docs/ladder.md "Playing a bot
# yourself"): the person's clock per move and in all (decision 205: a minute
# a move, 45 minutes a match, so a seat that barely answers holds its place
# 45 minutes at most), the idle forfeit (no page asked for the seat this
# long), the open matches one user, and one network whatever its accounts,
# may hold (decision 204), and how often the casual worker's hub reads the
# waiting seats (decision 202).
CARDROOM_CASUAL_MOVE_SECONDS = env.int("CARDROOM_CASUAL_MOVE_SECONDS", default=60)
CARDROOM_CASUAL_TOTAL_SECONDS = env.int("CARDROOM_CASUAL_TOTAL_SECONDS", default=45 * 60)
CARDROOM_CASUAL_IDLE_SECONDS = env.int("CARDROOM_CASUAL_IDLE_SECONDS", default=120)
CARDROOM_CASUAL_OPEN_PER_USER = env.int("CARDROOM_CASUAL_OPEN_PER_USER", default=3)
CARDROOM_CASUAL_OPEN_PER_ADDRESS = env.int("CARDROOM_CASUAL_OPEN_PER_ADDRESS", default=6)
CARDROOM_CASUAL_POLL_SECONDS = env.float("CARDROOM_CASUAL_POLL_SECONDS", default=0.2)
# How many casual matches one casual worker process starts at once (the bots'
# start-up, a database connection each); the others wait their turn (decision 202).
CARDROOM_CASUAL_STARTING = env.int("CARDROOM_CASUAL_STARTING", default=4)
CARDROOM_HEARTBEAT_SECONDS = env.int("CARDROOM_HEARTBEAT_SECONDS", default=10)
# How often each worker checks that it reaches the database; while it does
# not, it takes no message (config.dbgate, decision 196). 0: never checks.
CARDROOM_WORKER_DB_CHECK_SECONDS = env.int("CARDROOM_WORKER_DB_CHECK_SECONDS", default=5)
CARDROOM_MAX_UPLOAD_BYTES = env.int("CARDROOM_MAX_UPLOAD_BYTES", default=10 * 1024 * 1024)
# Per-user quotas (ladder.services.quotas; staff are exempt).
CARDROOM_QUOTA_BOTS = env.int("CARDROOM_QUOTA_BOTS", default=10)
CARDROOM_QUOTA_VERSIONS_PER_DAY = env.int("CARDROOM_QUOTA_VERSIONS_PER_DAY", default=20)
CARDROOM_QUOTA_STORED_BYTES = env.int("CARDROOM_QUOTA_STORED_BYTES", default=50 * 1024 * 1024)
CARDROOM_QUOTA_QUEUED_MATCHES = env.int("CARDROOM_QUOTA_QUEUED_MATCHES", default=10)
DATA_UPLOAD_MAX_MEMORY_SIZE = 12 * 1024 * 1024
# Every multipart upload (API, web form, admin) goes through the UploadLimit
# guard first: a file over CARDROOM_MAX_UPLOAD_BYTES is dropped at the limit,
# never written in full. Up to the limit a package stays in memory (it is read
# whole to be checked anyway): nothing goes to /tmp.
FILE_UPLOAD_HANDLERS = [
    "ladder.uploads.UploadLimit",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
FILE_UPLOAD_MAX_MEMORY_SIZE = CARDROOM_MAX_UPLOAD_BYTES + 1

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "ladder.logging.JsonFormatter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "json"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
