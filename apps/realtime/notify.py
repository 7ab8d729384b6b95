"""The one way sync code (services after commit, Celery tasks) rings a group's doorbell.

A doorbell carries only the table's version and public events; each socket then reads its own
seat's state from the database, so no hidden tile ever travels through the channel layer.

Each call builds a short-lived layer and closes its pools before returning: a shared layer's
connections are bound to the event loop that opened them, and ``async_to_sync`` from a Celery
worker makes a new loop per call ("Event loop is closed", channels_redis #332).
"""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.layers import DEFAULT_CHANNEL_LAYER, channel_layers

log = logging.getLogger(__name__)


def table_group(table_id: int) -> str:
    return f"table.{table_id}"


def user_group(user_id: int) -> str:
    return f"user.{user_id}"


def table_changed(table_id: int, version: int, events: list[dict]) -> None:
    send_to_group(table_group(table_id),
                  {"type": "table.changed", "version": version, "events": events})


def user_notified(user_id: int, event: dict) -> None:
    send_to_group(user_group(user_id), {"type": "user.notified", "event": event})


def send_to_group(group: str, message: dict) -> None:
    try:
        async_to_sync(_send_and_close)(group, message)
    except Exception:  # the layer is a doorbell: clients resync on a version gap
        log.exception("could not ring %s", group)


async def _send_and_close(group: str, message: dict) -> None:
    layer = channel_layers.make_backend(DEFAULT_CHANNEL_LAYER)
    try:
        await layer.group_send(group, message)
    finally:
        close = getattr(layer, "close_pools", None)
        if close is not None:
            await close()
