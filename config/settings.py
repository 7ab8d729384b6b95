"""Django settings for the Domino Club. Everything that varies comes from the environment.

Defaults give a one-command local run: SQLite in var/ and the Redis started by scripts/run.py.
"""

import os
import sys
from datetime import timedelta
from pathlib import Path

from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    cache_settings,
    celery_broker_options,
    channel_layers,
    default_key_prefix,
    env_bool,
    env_list,
    parse_database_url,
    parse_email_url,
    redis_urls,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("VAR_DIR") or BASE_DIR / "var").resolve()

DEBUG = env_bool("DEBUG", default=False)
TESTING = "pytest" in sys.modules or env_bool("DJANGO_TESTING")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if DEBUG or TESTING:
        SECRET_KEY = "django-insecure-dev-only-key-do-not-use-in-production"
    else:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list(
    "CSRF_TRUSTED_ORIGINS", ["http://localhost:8000", "http://127.0.0.1:8000"]
)

INSTALLED_APPS = [
    "daphne",
    "channels",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "apps.core",
    "apps.accounts",
    "apps.tables",
    "apps.friends",
    "apps.realtime",
    "apps.moderation",
    "apps.club",
    "apps.fairplay",
    "apps.tournaments",
    "apps.reviews",
    "apps.notifications",
    "axes",
    "csp",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "apps.core.csp.CSPMiddleware",  # after WhiteNoise: static files need no policy
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "apps.accounts.middleware.ProfileLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "apps.moderation.middleware.BanMiddleware",  # after messages: a banned user is signed out
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last: turns a lockout into the 429 sign-in page
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = None
ASGI_APPLICATION = "config.asgi.application"

# Database -------------------------------------------------------------------------------------
DATABASE_URL = os.environ.get("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
DATABASES = {"default": parse_database_url(DATABASE_URL, base_dir=BASE_DIR)}
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # Celery's Django fixup closes "obsolete" connections after every task; keeping them a
    # minute spares each timer a new PostgreSQL connection.
    # Tests close them: a pooled consumer thread holding one would keep the test database from
    # being dropped.
    DATABASES["default"]["CONN_MAX_AGE"] = int(
        os.environ.get("DB_CONN_MAX_AGE", "0" if TESTING else "60"))
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Lets psycopg prepare statements (Django turns it off for connection poolers; the site
    # has none). Only the move path's server-binding cursors prepare (apps.tables.rows): the
    # ORM's client-binding ones never do.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("prepare_threshold", 5)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Redis: channel layer, cache and Celery broker ----------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
#: Prefix of the site's keys and pub/sub channels in Redis (pub/sub channels are not scoped
#: by database number: two sites sharing a Redis need two prefixes). Unset, it is made from
#: the site's database, so two sites on one Redis get two (docs/production.md).
REDIS_KEY_PREFIX = (os.environ.get("REDIS_KEY_PREFIX")
                    or default_key_prefix(DATABASES["default"]))
#: Redis has three roles, each on REDIS_URL unless given its own server (docs/capacity.md):
#: the channel layer (the sockets' doorbells), the state (the tables' snapshots and timers),
#: and Celery's broker (CELERY_BROKER_URL). The cache stays on REDIS_URL.
REDIS_LAYER_URL = os.environ.get("REDIS_LAYER_URL") or REDIS_URL
REDIS_STATE_URL = os.environ.get("REDIS_STATE_URL") or REDIS_URL
CHANNEL_LAYERS = channel_layers(REDIS_LAYER_URL, prefix=REDIS_KEY_PREFIX)
# The cache holds the rate limiters' counters (wrong invite codes): in Redis, so that every
# web process counts against the same limit. Tests point it at local memory (tests/conftest.py).
CACHES = cache_settings(REDIS_URL, prefix=REDIS_KEY_PREFIX)

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL") or redis_urls(REDIS_URL)["celery"]
CELERY_BROKER_TRANSPORT_OPTIONS = celery_broker_options(REDIS_URL)
#: Slow bots' turns have a queue of their own (apps.tables.scheduling); workers take both.
CELERY_TASK_DEFAULT_QUEUE = "celery"
#: The collusion check has a queue of its own, which only the judging worker takes (at a lower
#: CPU priority: apps.core.processes.judge_worker), so tables never wait behind it.
CELERY_TASK_ROUTES = {"apps.fairplay.tasks.judge_match": {"queue": "collusion"}}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ACKS_LATE = False
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
# Celery 5.7's Django fixup closes every database connection before and after every task unless
# this is set (celery/fixups/django.py, close_database): each timer then opened a PostgreSQL
# connection of its own, a server process forked per move (measured: 86 new processes a second
# at 86 automatic moves a second, a third of the machine's CPU in the kernel). Set, the fixup
# closes them only every this many tasks, and config/celery.py closes the broken and obsolete
# ones around each task (CONN_MAX_AGE, health checks), as Django does around a request.
CELERY_DB_REUSE_MAX = 1000
# Periodic tasks: {"name": {"task": "apps.x.tasks.y", "schedule": 1.0}}. Filled by later apps.
CELERY_BEAT_SCHEDULE: dict = {
    # The guarantee behind per-turn timers: due deadlines, absences and empty tables.
    "sweep-tables": {"task": "apps.tables.tasks.sweep", "schedule": 1.0,
                     "options": {"expires": 5}},
    # Stake tables not started in time are cancelled and their entries refunded (apps.club).
    "club-cancel-unfilled": {"task": "apps.club.tasks.cancel_unfilled", "schedule": 15.0,
                             "options": {"expires": 15}},
    # The weekly league's prizes; paid once per week however often this runs (apps.club).
    "club-close-league": {"task": "apps.club.tasks.close_league", "schedule": 600.0,
                          "options": {"expires": 600}},
    # Table events older than any state carries (apps.tables.services.prune_table_events).
    "prune-table-events": {"task": "apps.tables.tasks.prune_events", "schedule": 60.0,
                           "options": {"expires": 60}},
    # Django's clearsessions, hourly: expired sessions stay in their table otherwise.
    "clear-expired-sessions": {"task": "apps.accounts.tasks.clear_expired_sessions",
                               "schedule": 3600.0, "options": {"expires": 3600}},
    # Tournaments: starts, no-shows and the next rounds (apps.tournaments.tasks).
    "tournaments-tick": {"task": "apps.tournaments.tasks.tick",
                         "schedule": float(os.environ.get("TOURNAMENT_TICK_SECONDS") or 5),
                         "options": {"expires": 10}},
    # Collusion checks whose task was lost are sent again (apps.fairplay.judging).
    "fairplay-judge-waiting": {"task": "apps.fairplay.tasks.judge_waiting", "schedule": 300.0,
                               "options": {"expires": 300}},
    # Match reviews whose worker went away are started again (apps.reviews.tasks).
    "reviews-restart-stalled": {"task": "apps.reviews.tasks.restart_stalled", "schedule": 60.0,
                                "options": {"expires": 60}},
    # Notifications: what a lost task left (unsent, due) and tournaments about to start
    # (apps.notifications.tasks); old ones pruned hourly.
    "notifications-sweep": {"task": "apps.notifications.tasks.sweep",
                            "schedule": float(os.environ.get("NOTIFY_SWEEP_SECONDS") or 10),
                            "options": {"expires": 30}},
    "notifications-prune": {"task": "apps.notifications.tasks.prune", "schedule": 3600.0,
                            "options": {"expires": 3600}},
}

# Presence and the table sockets (apps.tables.services, apps.realtime.hub) ----------------
# The 5 s / 30 s / 2 min rules of shared/specs/tables.md; changed only by end-to-end tests.
PRESENCE_GRACE_TIMED_SECONDS = None
PRESENCE_GRACE_UNTIMED_SECONDS = None
PRESENCE_AWAY_LIMIT_SECONDS = None
PRESENCE_EMPTY_LIMIT_SECONDS = None
#: A web process renews its sockets' lease this often; a lease not renewed for this long ends
#: (apps.tables.services.HEARTBEAT and LEASE when unset).
PRESENCE_HEARTBEAT_SECONDS = None
PRESENCE_LEASE_SECONDS = None
for _name in ("PRESENCE_AWAY_LIMIT_SECONDS", "PRESENCE_EMPTY_LIMIT_SECONDS",
              "PRESENCE_GRACE_TIMED_SECONDS", "PRESENCE_GRACE_UNTIMED_SECONDS",
              "PRESENCE_LEASE_SECONDS", "PRESENCE_HEARTBEAT_SECONDS"):
    if os.environ.get(_name):
        globals()[_name] = float(os.environ[_name])
# Turn-based tables (apps/tables/pace.py, docs/turn-based.md): the times per move a host may
# choose (seconds, comma-separated), vacation days a year, unfinished matches allowed (base and
# most), days an adjourned match is kept, and the gap between beats that counts as an outage.
TURN_BASED_MOVE_SECONDS = tuple(
    int(s) for s in (os.environ.get("TURN_BASED_MOVE_SECONDS") or "").split(",") if s.strip()
) or None
TURN_BASED_VACATION_DAYS = float(os.environ.get("TURN_BASED_VACATION_DAYS") or 0) or None
TURN_BASED_UNFINISHED_BASE = int(os.environ.get("TURN_BASED_UNFINISHED_BASE") or 0) or None
TURN_BASED_UNFINISHED_MAX = int(os.environ.get("TURN_BASED_UNFINISHED_MAX") or 0) or None
ADJOURNED_DAYS = float(os.environ.get("ADJOURNED_DAYS") or 0) or None
TURN_BASED_QUICK_FILL_SECONDS = (float(os.environ["TURN_BASED_QUICK_FILL_SECONDS"])
                                 if os.environ.get("TURN_BASED_QUICK_FILL_SECONDS") else None)
TURN_BASED_OUTAGE_SECONDS = (float(os.environ["TURN_BASED_OUTAGE_SECONDS"])
                             if os.environ.get("TURN_BASED_OUTAGE_SECONDS") else None)
# Quick play ("Online", seed 003): how long a table opened by "play now" waits for people
# before bots take the free seats and the match starts by itself.
QUICK_PLAY_FILL_SECONDS = float(os.environ.get("QUICK_PLAY_FILL_SECONDS") or 20)
# Tournaments (docs/tournaments.md): from which club level members may create one (unset:
# staff only); a team not at its table this long after it opens loses by forfeit (120 s); the
# break between rounds (30 s). The last two change only for end-to-end tests.
TOURNAMENT_MEMBER_LEVEL = int(os.environ.get("TOURNAMENT_MEMBER_LEVEL") or 0) or None
TOURNAMENT_NO_SHOW_SECONDS = float(os.environ.get("TOURNAMENT_NO_SHOW_SECONDS") or 120)
TOURNAMENT_ROUND_BREAK_SECONDS = float(os.environ.get("TOURNAMENT_ROUND_BREAK_SECONDS") or 30)
# Match reviews (docs/review.md, "On the site"): matches a person may have reviewed in an hour
# (one somebody already asked for costs nothing); deals per candidate move (the CLI's --deals;
# unset: apps.bots.review's own budget, tests set a small one); a queued or running review that
# has not moved for this long is started again; how many reviews the site computes at once (the
# worker's threads also play the slow bots' turns).
REVIEWS_PER_HOUR = int(os.environ.get("REVIEWS_PER_HOUR") or 5)
REVIEW_DEALS = int(os.environ.get("REVIEW_DEALS") or 0) or None
REVIEW_STALL_SECONDS = float(os.environ.get("REVIEW_STALL_SECONDS") or 120)
REVIEWS_AT_ONCE = int(os.environ.get("REVIEWS_AT_ONCE") or 1)
#: Threads a web process gives its sockets' database calls. Django's default for
#: database_sync_to_async is one thread per process, which queued every socket behind every
#: other; SQLite writes one at a time anyway.
REALTIME_DB_THREADS = int(os.environ.get("REALTIME_DB_THREADS", "0")) or None
#: How long a quiet table's snapshot stays in Redis (apps.core.snapshots; 6 h unset).
SNAPSHOT_TTL_SECONDS = int(os.environ.get("SNAPSHOT_TTL_SECONDS", "0")) or None

# Practice against bots and guests (docs/practice-and-guests.md) ------------------------------
#: Open practice tables per client address (one per person: a new one ends the previous).
PRACTICE_TABLES_PER_ADDRESS = int(os.environ.get("PRACTICE_TABLES_PER_ADDRESS", "10"))
#: A practice table is closed (then deleted) this long after it opened, even if played on.
PRACTICE_MAX_AGE_SECONDS = int(os.environ.get("PRACTICE_MAX_AGE_SECONDS", str(6 * 3600)))
#: Guest sessions started per client address in an hour (the shared cache counts them).
GUESTS_PER_ADDRESS_PER_HOUR = int(os.environ.get("GUESTS_PER_ADDRESS_PER_HOUR", "20"))
#: A guest with no table left who did nothing for this long is deleted by the beat sweep.
GUEST_IDLE_SECONDS = int(os.environ.get("GUEST_IDLE_SECONDS", str(24 * 3600)))

# Auth -----------------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
if os.environ.get("PASSWORD_HASHING") == "fast-for-tests":
    # Set by tests/conftest.py for the test process and every site it starts: a password hash
    # costs 0.25 s with Django's PBKDF2, and the suite makes users by the thousand. Nothing
    # outside the tests sets it.
    PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
AUTHENTICATION_BACKENDS = [
    "apps.accounts.ratelimit.RateLimitBackend",  # django-axes: refuses locked-out sign-ins
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"
# Failed sign-ins (django-axes, counted in the database): 5 failures for one username from one
# IP address lock that pair out for 15 minutes; a success resets the count.
AXES_FAILURE_LIMIT = 5
AXES_COOLOFF_TIME = timedelta(minutes=15)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_USERNAME_CALLABLE = "apps.accounts.ratelimit.username_key"
AXES_LOCKOUT_CALLABLE = "apps.accounts.ratelimit.lockout_response"
AXES_HTTP_RESPONSE_CODE = 429

# Moderation: words a table name may not hold, beyond apps/core/words.py's own list
# (comma-separated in the environment).
MODERATION_EXTRA_BLOCKED_WORDS = env_list("MODERATION_EXTRA_BLOCKED_WORDS", [])

# Internationalisation -------------------------------------------------------------------------
LANGUAGE_CODE = os.environ.get("LANGUAGE_CODE", "es")
LANGUAGES = [
    ("es", "Español"),
    ("pt-br", "Português (Brasil)"),
    ("en", "English"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = os.environ.get("TIME_ZONE", "UTC")
USE_TZ = True

# Static files ---------------------------------------------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or VAR_DIR / "staticfiles")
# Serve straight from the app/static folders in development (no collectstatic needed).
WHITENOISE_USE_FINDERS = DEBUG or TESTING
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG or TESTING
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

# E-mail ---------------------------------------------------------------------------------------
# Production: an SMTP server, EMAIL_URL=smtp://user:password@host:587 (STARTTLS) or
# smtps://user:password@host:465 (TLS from the start), or EMAIL_HOST with EMAIL_PORT,
# EMAIL_HOST_USER, EMAIL_HOST_PASSWORD, EMAIL_USE_TLS / EMAIL_USE_SSL. Neither set (make run):
# every mail is written as a file under var/mails/, so nothing needs installing.
_email = parse_email_url(os.environ.get("EMAIL_URL", ""))
EMAIL_HOST = _email.get("EMAIL_HOST") or os.environ.get("EMAIL_HOST", "")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = int(_email.get("EMAIL_PORT") or os.environ.get("EMAIL_PORT", "587"))
    EMAIL_HOST_USER = _email.get("EMAIL_HOST_USER", os.environ.get("EMAIL_HOST_USER", ""))
    EMAIL_HOST_PASSWORD = _email.get("EMAIL_HOST_PASSWORD",
                                     os.environ.get("EMAIL_HOST_PASSWORD", ""))
    EMAIL_USE_SSL = _email.get("EMAIL_USE_SSL", env_bool("EMAIL_USE_SSL", default=False))
    EMAIL_USE_TLS = _email.get("EMAIL_USE_TLS",
                               env_bool("EMAIL_USE_TLS", default=not EMAIL_USE_SSL))
    #: Seconds an SMTP conversation may wait on the server before the send is tried again.
    EMAIL_TIMEOUT = int(os.environ.get("EMAIL_TIMEOUT") or 20)
else:
    EMAIL_BACKEND = "django.core.mail.backends.filebased.EmailBackend"
    EMAIL_FILE_PATH = VAR_DIR / "mails"
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "Domino Club <noreply@localhost>")
#: The site's address as people reach it, for the links in mails and pushes (sent by the
#: worker, which has no request to take the host from).
SITE_URL = (os.environ.get("SITE_URL") or f"http://127.0.0.1:{os.environ.get('PORT') or 8000}"
            ).rstrip("/")

# Notifications (docs/notifications.md): every window and limit, from the environment --------
#: "Your turn" mails are gathered: at most one per person in this window, listing every table.
NOTIFY_GATHER_SECONDS = float(os.environ.get("NOTIFY_GATHER_SECONDS") or 15 * 60)
#: No mail or push to a person active on the site this recently (the bell still counts it).
NOTIFY_ACTIVE_SECONDS = float(os.environ.get("NOTIFY_ACTIVE_SECONDS") or 2 * 60)
#: A person's last activity is written at most this often (apps.accounts.activity).
ACTIVITY_WRITE_SECONDS = float(os.environ.get("ACTIVITY_WRITE_SECONDS") or 30)
#: Notifications are kept this many days, then beat deletes them.
NOTIFY_KEEP_DAYS = float(os.environ.get("NOTIFY_KEEP_DAYS") or 30)
#: Tries of one mail or push before it is given up; the wait before the second try, doubled
#: at each further one, up to the cap.
NOTIFY_MAX_ATTEMPTS = int(os.environ.get("NOTIFY_MAX_ATTEMPTS") or 6)
NOTIFY_RETRY_SECONDS = float(os.environ.get("NOTIFY_RETRY_SECONDS") or 30)
NOTIFY_RETRY_MAX_SECONDS = float(os.environ.get("NOTIFY_RETRY_MAX_SECONDS") or 3600)
#: A send claimed by a worker that has not recorded its end after this long (the worker was
#: killed) is tried again.
NOTIFY_SEND_LEASE_SECONDS = float(os.environ.get("NOTIFY_SEND_LEASE_SECONDS") or 120)
#: Beat's pass over what a lost task left (unsent, due), and the tournaments about to start.
NOTIFY_SWEEP_SECONDS = float(os.environ.get("NOTIFY_SWEEP_SECONDS") or 10)
#: "A tournament you entered starts in 5 minutes".
NOTIFY_TOURNAMENT_LEAD_SECONDS = float(os.environ.get("NOTIFY_TOURNAMENT_LEAD_SECONDS")
                                       or 5 * 60)
#: Web push (VAPID, RFC 8292): `python manage.py make_vapid_keys` prints a pair. Without them
#: push is off and the page offers no "Notify me on this device".
VAPID_PUBLIC_KEY = os.environ.get("VAPID_PUBLIC_KEY", "")
VAPID_PRIVATE_KEY = os.environ.get("VAPID_PRIVATE_KEY", "")
VAPID_SUBJECT = os.environ.get("VAPID_SUBJECT") or "mailto:noreply@localhost"
#: The push services a browser's subscription may name (host suffixes; the worker posts to
#: them, so an address elsewhere, a machine of the site's own network, is refused). Chrome's,
#: Firefox's, Safari's and Edge's by default. 127.0.0.1 in the list also lets http:// loopback
#: endpoints in (the tests' own push service); never set it in production.
PUSH_ENDPOINT_HOSTS = env_list("PUSH_ENDPOINT_HOSTS", [
    "fcm.googleapis.com", "android.googleapis.com", "push.services.mozilla.com",
    "push.apple.com", "notify.windows.com"])
#: Seconds a push service may take to answer before the push is tried again.
PUSH_TIMEOUT_SECONDS = float(os.environ.get("PUSH_TIMEOUT_SECONDS") or 10)
#: How long a push service keeps a push for a browser that is offline (its TTL header).
PUSH_TTL_SECONDS = int(os.environ.get("PUSH_TTL_SECONDS") or 24 * 3600)

# Security behind a TLS-terminating proxy ------------------------------------------------------
# SECURE_PROXY_SSL=1 says the site is served only over HTTPS by a proxy that sets
# X-Forwarded-Proto: cookies are then Secure, plain HTTP is redirected and browsers are told
# (HSTS) never to use plain HTTP again. Each part can be turned down from the environment, e.g.
# a first deploy with SECURE_HSTS_SECONDS=300 before committing browsers for a year.
HTTPS = env_bool("SECURE_PROXY_SSL", default=False)
# The language cookie carries no secret, but without SameSite it rides along on cross-site
# requests, and nothing in the page's scripts reads it.
LANGUAGE_COOKIE_SAMESITE = "Lax"
LANGUAGE_COOKIE_HTTPONLY = True
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    LANGUAGE_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
    # The container health check asks Daphne directly over plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", str(365 * 24 * 3600)))
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", default=True)

# Content-Security-Policy (django-csp): only the site's own scripts, styles and images, no
# inline code. apps.core.csp adds the page's own ws:/wss: origin to connect-src, which 'self'
# does not cover in every browser.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF],
        "font-src": [SELF],
        "connect-src": [SELF],
        # The service worker (/sw.js, apps.notifications) and the web app manifest.
        "worker-src": [SELF],
        "manifest-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

# Logging --------------------------------------------------------------------------------------
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
    },
    "filters": {
        # A refused request (403) is one line, not a traceback (apps/core/request_log.py).
        "one_line_refusals": {"()": "apps.core.request_log.OneLineRefusals"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "plain"},
    },
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django": {"handlers": ["console"], "level": LOG_LEVEL, "propagate": False},
        "django.request": {"filters": ["one_line_refusals"]},
    },
}
