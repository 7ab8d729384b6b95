"""Joining a socket's groups survives the channel layer re-making its Redis connection (after
a Redis restart its reader and a SUBSCRIBE can both wait on the handshake): the join is tried
again instead of the socket dying with 1011."""

from __future__ import annotations

import asyncio

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError

from apps.realtime import consumers


class Layer:
    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.calls: list[tuple[str, str]] = []

    async def group_add(self, group: str, channel: str) -> None:
        self.calls.append((group, channel))
        if self.failures:
            raise self.failures.pop(0)


def test_a_join_met_by_the_layer_reconnecting_is_tried_again(monkeypatch):
    monkeypatch.setattr(consumers, "JOIN_PAUSE", 0)
    layer = Layer([RuntimeError("read() called while another coroutine is already waiting "
                                "for incoming data"), RedisConnectionError("Connection lost")])
    asyncio.run(consumers.join_group(layer, "table.7", "chan!1"))
    assert layer.calls == [("table.7", "chan!1")] * 3


def test_a_layer_that_stays_away_still_fails_the_join(monkeypatch):
    monkeypatch.setattr(consumers, "JOIN_PAUSE", 0)
    layer = Layer([RedisConnectionError("refused")] * 10)
    with pytest.raises(RedisConnectionError):
        asyncio.run(consumers.join_group(layer, "user.3", "chan!2"))
    assert len(layer.calls) == consumers.JOIN_TRIES


def test_other_errors_are_not_retried(monkeypatch):
    layer = Layer([ValueError("bad group name")])
    with pytest.raises(ValueError):
        asyncio.run(consumers.join_group(layer, "bad name", "chan!3"))
    assert len(layer.calls) == 1
