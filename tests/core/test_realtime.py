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
async def test_a_signed_out_socket_is_accepted_then_told_4401():
    communicator = WebsocketCommunicator(
        application, "/ws/me/", headers=[(b"origin", b"http://localhost")]
    )
    connected, _ = await communicator.connect()
    assert connected
    closed = await communicator.receive_output(timeout=5)
    assert (closed["type"], closed["code"]) == ("websocket.close", 4401)


@pytest.mark.django_db(transaction=True)
async def test_socket_from_a_foreign_origin_is_refused():
    communicator = WebsocketCommunicator(
        application, "/ws/me/", headers=[(b"origin", b"http://evil.example")]
    )
    connected, _ = await communicator.connect()
    assert not connected


@pytest.mark.django_db(transaction=True)
async def test_there_is_no_echo_socket_for_anonymous_visitors():
    # ws/ping/ was an echo open to anyone: a free relay through our Redis. It is gone.
    communicator = WebsocketCommunicator(
        application, "/ws/ping/", headers=[(b"origin", b"http://localhost")]
    )
    with pytest.raises(ValueError, match="No route found"):
        await communicator.connect()
