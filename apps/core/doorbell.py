"""The one way sync code (services after commit, Celery tasks) reaches the sockets.

:func:`publish_state` stores a table's new snapshot (``apps.core.snapshots``) and then
rings the table's doorbell: a message carrying only the version, so no hidden tile travels
through the channel layer, and each socket composes its own frame from the snapshot.

The layer is channels-redis's pub/sub layer (``config.env.channel_layers``). Sync code does not
build an async layer per call (a layer's connections belong to the event loop that opened them,
and ``async_to_sync`` from a Celery worker makes a new loop each time: "Event loop is closed",
channels_redis #332); it publishes the layer's own message format on the group's channel with
the process's synchronous Redis client. The socket tests (``tests/realtime/``) ring through it
to real consumers, so a change in channels-redis's format cannot go unnoticed.
"""

from __future__ import annotations

import logging

import redis
from django.conf import settings

from config.env import redis_client_options, redis_urls

from . import snapshots

log = logging.getLogger(__name__)


def table_group(table_id: int) -> str:
    return f"table.{table_id}"


def user_group(user_id: int) -> str:
    return f"user.{user_id}"


def publish_state(table_id: int, snapshot: dict, *, also=None) -> bool | None:
    """After a commit: keep the version's snapshot, then ring the table's doorbell, in one
    round trip when the state and the layer share a Redis (two otherwise, the store first:
    a socket reads the snapshot when it hears the bell). ``also(pipe)`` queues more of the
    state Redis's commands in the same trip (the table's timer); never raises. Whether the
    snapshot was kept (False: Redis holds the same version or a newer one; None: Redis could
    not be reached)."""
    version = snapshot["version"]
    pipe = snapshots.client().pipeline(transaction=False)
    snapshots.store(table_id, snapshot, pipe=pipe)
    if also is not None:
        also(pipe)
    shared = client() is snapshots.client()
    if shared:
        table_changed(table_id, version, pipe=pipe)
    try:
        results = pipe.execute(raise_on_error=False)
    except Exception:
        log.warning("could not store and ring table %s v%s", table_id, version, exc_info=True)
        return None
    kept = snapshots.stored(table_id, snapshot, results[0])
    for result in results[1:]:
        if isinstance(result, Exception):
            log.warning("after table %s v%s: %s", table_id, version, result)
    if not shared:
        table_changed(table_id, version)
    return kept


def table_changed(table_id: int, version: int, *, pipe=None) -> None:
    send_to_group(table_group(table_id), {"type": "table.changed", "version": version},
                  pipe=pipe)


def user_notified(user_id: int, event: dict) -> None:
    send_to_group(user_group(user_id), {"type": "user.notified", "event": event})


def send_to_group(group: str, message: dict, *, pipe=None) -> None:
    """Publish ``message`` to every socket in ``group``, at most once; never raises (the
    layer is a doorbell: a socket that misses one is brought up to date by the next, by its
    client's ping, or by its web process's heartbeat). With ``pipe`` it is only queued."""
    if pipe is not None:
        pipe.publish(*_ring_message(group, message))
        return
    try:
        client().publish(*_ring_message(group, message))
    except Exception:
        log.warning("could not ring %s", group, exc_info=True)


def _ring_message(group: str, message: dict) -> tuple[str, bytes]:
    return _group_channel(group), _serializer().serialize(message)


_client = None


def client():
    """The process's synchronous client of the channel layer's Redis: the state's own client
    when both roles share a server (one pool, and one round trip after each change)."""
    global _client
    if _client is None:
        if settings.REDIS_LAYER_URL == settings.REDIS_STATE_URL:
            _client = snapshots.client()
        else:
            url = redis_urls(settings.REDIS_LAYER_URL)["redis"]
            _client = redis.Redis.from_url(url, **redis_client_options(url))
    return _client


def _layer_config() -> dict:
    return settings.CHANNEL_LAYERS["default"].get("CONFIG", {})


_serializer_cache = None


def _serializer():
    global _serializer_cache
    if _serializer_cache is None:
        from channels_redis.serializers import registry

        config = _layer_config()
        _serializer_cache = registry.get_serializer(
            config.get("serializer_format", "msgpack"),
            symmetric_encryption_keys=config.get("symmetric_encryption_keys"))
    return _serializer_cache


def _group_channel(group: str) -> str:
    # channels_redis.pubsub.RedisPubSubLoopLayer._get_group_channel_name
    return f"{_layer_config().get('prefix', 'asgi')}__group__{group}"
