"""The ASGI stack and the channel layer, in-process, on the test Redis."""

import pytest
from channels.testing import WebsocketCommunicator

from config.asgi import application


async def test_channel_layer_round_trip(channel_layer):
    name = await channel_layer.new_channel()
    await channel_layer.send(name, {"type": "hello", "n": 1})
    assert await channel_layer.receive(name) == {"type": "hello", "n": 1}


async def test_channel_layer_group_send(channel_layer):
    name = await channel_layer.new_channel()
    await channel_layer.group_add("tests-group", name)
    await channel_layer.group_send("tests-group", {"type": "table.event", "version": 3})
    assert (await channel_layer.receive(name))["version"] == 3
    await channel_layer.group_discard("tests-group", name)


@pytest.mark.django_db(transaction=True)
async def test_ping_socket_echoes_through_the_layer(channel_layer):
    communicator = WebsocketCommunicator(
        application, "/ws/ping/", headers=[(b"origin", b"http://localhost")]
    )
    connected, _ = await communicator.connect()
    assert connected
    await communicator.send_to(text_data="hola")
    assert await communicator.receive_from(timeout=5) == "hola"
    await communicator.disconnect()


@pytest.mark.django_db(transaction=True)
async def test_socket_from_a_foreign_origin_is_refused():
    communicator = WebsocketCommunicator(
        application, "/ws/ping/", headers=[(b"origin", b"http://evil.example")]
    )
    connected, _ = await communicator.connect()
    assert not connected
