"""Tables' snapshots (``apps.tables.state``) in Redis: the latest version of each table.

One hash per table, keyed by its id *and* its invite code (random and never reused, so a
snapshot can never be taken for another table's, even where ids are reused), holding the
version (``v``) and the snapshot as JSON (``d``). A store replaces the hash only with a higher
version (a Lua compare-and-set), so two writers finishing out of order leave the newer one.

Redis is a cache here: a snapshot lost (Redis restarted, a writer died before storing) is built
again from the database by the first reader that needs it. Snapshots hold hidden tiles; they
are read only by the server's own processes.
"""

from __future__ import annotations

import json
import logging

from django.conf import settings

log = logging.getLogger(__name__)

#: A quiet table's snapshot outlives its last change by this much; after that the next reader
#: builds it again.
TTL_SECONDS = 6 * 3600

_STORE = """
local cur = redis.call('HGET', KEYS[1], 'v')
if cur and tonumber(cur) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'd', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""

_client = None
_store_script = None


def key(table_id: int, code: str) -> str:
    return f"{settings.REDIS_KEY_PREFIX}:snap:{table_id}:{code}"


def client():
    """The process's synchronous Redis client (thread-safe pool; redis-py resets it after a
    fork, so Celery's prefork children get their own)."""
    global _client, _store_script
    if _client is None:
        import redis

        from config.env import redis_client_options, redis_urls

        url = redis_urls(settings.REDIS_URL)["redis"]
        _client = redis.Redis.from_url(url, **redis_client_options(url))
        _store_script = _client.register_script(_STORE)
    return _client


def encode(snap: dict) -> str:
    return json.dumps(snap, separators=(",", ":"))


def store(table_id: int, snap: dict) -> bool:
    """Keep ``snap`` unless Redis already has this version or a newer one. Never raises: a
    snapshot not stored is built again by its first reader."""
    try:
        client()
        return bool(_store_script(keys=[key(table_id, snap["table"]["code"])],
                                  args=[snap["version"], encode(snap), TTL_SECONDS]))
    except Exception:
        log.warning("could not store the snapshot of table %s", table_id, exc_info=True)
        return False


def load(table_id: int, code: str | None = None) -> dict | None:
    """The stored snapshot, or None (not stored, expired, or Redis unreachable)."""
    if code is None:
        from apps.tables.models import Table

        code = Table.objects.filter(pk=table_id).values_list("code", flat=True).first()
        if code is None:
            return None
    try:
        raw = client().hget(key(table_id, code), "d")
    except Exception:
        log.warning("could not read the snapshot of table %s", table_id, exc_info=True)
        return None
    return None if raw is None else json.loads(raw)


def forget_all() -> None:
    """Drop every stored snapshot (tests: table ids are reused between them)."""
    c = client()
    for name in c.scan_iter(match=f"{settings.REDIS_KEY_PREFIX}:snap:*", count=500):
        c.delete(name)
