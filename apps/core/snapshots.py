"""Tables' snapshots (``apps.tables.state``) in Redis: the latest version of each table.

One hash per table, keyed by its id *and* its invite code (random and never reused, so a
snapshot can never be taken for another table's, even where ids are reused), holding the
version (``v``) and the snapshot as JSON (``d``). A store replaces the hash only with a higher
version (a Lua compare-and-set), so two writers finishing out of order leave the newer one.

Redis is a cache here: a snapshot lost (Redis restarted, a writer died before storing) is built
again from the database by the first reader that needs it; one of a version the database does
not have (a failover or a restore lost it) is replaced by the database's
(``apps.tables.selectors.refused_snapshot``, the sockets' hub). Snapshots hold hidden tiles;
they are read only by the server's own processes.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

from django.conf import settings

from apps.core import wire
from config.env import redis_client_options, redis_urls

log = logging.getLogger(__name__)

#: A quiet table's snapshot outlives its last change by this much; after that the next reader
#: builds it again (``SNAPSHOT_TTL_SECONDS`` shortens it: the soak lets it lapse).
TTL_SECONDS = 6 * 3600


def ttl_seconds() -> int:
    return int(getattr(settings, "SNAPSHOT_TTL_SECONDS", None) or TTL_SECONDS)

#: Keeps ARGV[2] as version ARGV[1] unless the version held is as new, and (given ARGV[4], the
#: database's version) no newer than the database: a version the database never reached is
#: replaced (issue 36).
_STORE = """
local cur = redis.call('HGET', KEYS[1], 'v')
if cur and tonumber(cur) >= tonumber(ARGV[1])
   and (ARGV[4] == '' or tonumber(cur) <= tonumber(ARGV[4])) then return 0 end
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

        url = redis_urls(settings.REDIS_STATE_URL)["redis"]
        _client = redis.Redis.from_url(url, **redis_client_options(url))
        _store_script = _client.register_script(_STORE)
    return _client


def encode(snap: dict) -> bytes:
    return wire.dumps_bytes(snap)


#: The last snapshot this process stored, per table: the next change at that table, made here,
#: builds on it without reading it back from Redis (``previous``). Only ever handed out for the
#: exact version asked, so a newer one written by another process is never missed.
_LOCAL_TABLES = 2000
_local: OrderedDict[int, dict] = OrderedDict()
_local_lock = threading.Lock()


def _remember(table_id: int, snap: dict) -> None:
    with _local_lock:
        _local[table_id] = snap
        _local.move_to_end(table_id)
        while len(_local) > _LOCAL_TABLES:
            _local.popitem(last=False)


def load_version(table_id: int, code: str, version: int) -> dict | None:
    """The snapshot of exactly ``version``, if it is the one this process stored last, or
    else whatever Redis holds (the caller checks its version)."""
    snap = _local.get(table_id)
    if snap is not None and snap["version"] == version and snap["table"]["code"] == code:
        return snap
    return load(table_id, code)


def remembered(table_id: int, code: str, at_least: int) -> dict | None:
    """The snapshot this process stored last for the table, if it is version ``at_least`` or
    newer: a web process that applied a move itself needs no read of it back from Redis when
    the move's doorbell reaches its sockets before the move's own answer does."""
    snap = _local.get(table_id)
    if snap is not None and snap["version"] >= at_least and snap["table"]["code"] == code:
        return snap
    return None


def store(table_id: int, snap: dict, *, pipe=None, ahead_of: int | None = None) -> bool:
    """Keep ``snap`` unless Redis already has this version or a newer one. Never raises: a
    snapshot not stored is built again by its first reader. Called after the commit of the
    change it shows, never before: a rolled-back version is never remembered.

    ``ahead_of`` is the database's version of the table, read after Redis was found to hold a
    newer one: a version above it was never committed (a database restored or failed over
    behind Redis) and is replaced, however high; else "only if newer" would keep it, and every
    reader would take it, until the table's real versions passed it.

    With ``pipe`` (a pipeline on :func:`client`, run with ``raise_on_error=False``) the store is
    only queued there, by the script's digest: redis-py's own pipelined scripts ask Redis
    whether the script exists on every run, a round trip more. Its caller hands the result
    to :func:`stored`, which loads the script when a restarted Redis lost it."""
    _remember(table_id, snap)
    try:
        client()
        keys = [key(table_id, snap["table"]["code"])]
        args = [snap["version"], encode(snap), ttl_seconds(),
                "" if ahead_of is None else ahead_of]
        if pipe is not None:
            pipe.evalsha(_store_script.sha, len(keys), *keys, *args)
            return True
        return bool(_store_script(keys=keys, args=args))
    except Exception:
        log.warning("could not store the snapshot of table %s", table_id, exc_info=True)
        return False


def stored(table_id: int, snap: dict, result) -> bool | None:
    """The answer to a pipelined :func:`store`: a Redis that lost the script (restarted) gets
    it again, and the snapshot is stored then. Whether it was kept (False: Redis holds this
    version or a newer one), None when Redis could not say."""
    import redis

    if isinstance(result, redis.exceptions.NoScriptError):
        return store(table_id, snap)
    if isinstance(result, Exception):
        log.warning("could not store the snapshot of table %s: %s", table_id, result)
        return None
    return bool(result)


def held_version(table_id: int, code: str) -> int | None:
    """The version of the snapshot Redis holds for the table (None: none, or Redis away)."""
    try:
        raw = client().hget(key(table_id, code), "v")
    except Exception:
        log.warning("could not read the snapshot of table %s", table_id, exc_info=True)
        return None
    return None if raw is None else int(raw)


def load(table_id: int, code: str) -> dict | None:
    """The stored snapshot, or None (not stored, expired, or Redis unreachable)."""
    try:
        raw = client().hget(key(table_id, code), "d")
    except Exception:
        log.warning("could not read the snapshot of table %s", table_id, exc_info=True)
        return None
    return None if raw is None else wire.loads(raw)


def forget_all() -> None:
    """Drop every stored snapshot (tests: table ids are reused between them)."""
    with _local_lock:
        _local.clear()
    c = client()
    for name in c.scan_iter(match=f"{settings.REDIS_KEY_PREFIX}:snap:*", count=500):
        c.delete(name)
