"""The ASGI stack and the channel layer, in-process, on the test Redis."""

import json

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
    told = json.loads((await communicator.receive_output(timeout=5))["text"])
    assert (told["type"], told["code"]) == ("closing", 4401) and told["message"]
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
@pytest.mark.parametrize("path", ["/ws/ping/", "/ws/anything/", "/nothing", "/ws/table/abc/",
                                  "/ws/me/extra/"])
async def test_a_path_with_no_route_is_told_4404_without_an_error(path, caplog):
    # ws/ping/ was an echo open to anyone: a free relay through our Redis. It is gone, and
    # asking for it (or any path no route serves) is the client's mistake, not a crash of the
    # router: accepted, told why, closed with 4404 (docs/protocol.md), nothing in the log.
    communicator = WebsocketCommunicator(
        application, path,
        headers=[(b"origin", b"http://localhost"), (b"cookie", b"django_language=en")],
    )
    with caplog.at_level("WARNING"):
        connected, _ = await communicator.connect()
        assert connected
        told = json.loads((await communicator.receive_output(timeout=5))["text"])
        closed = await communicator.receive_output(timeout=5)
    assert told == {"type": "closing", "code": 4404,
                    "message": "Nothing answers at this address. Reload the page."}
    assert (closed["type"], closed["code"]) == ("websocket.close", 4404)
    assert caplog.records == []


@pytest.mark.django_db(transaction=True)
async def test_a_path_with_no_route_from_a_foreign_origin_is_refused_first():
    communicator = WebsocketCommunicator(
        application, "/ws/anything/", headers=[(b"origin", b"http://evil.example")]
    )
    connected, _ = await communicator.connect()
    assert not connected


async def test_a_close_before_the_accept_is_a_bare_refusal():
    # A socket refused in the handshake cannot be sent the "closing" frame: Daphne would raise
    # on it (HTTP 500 instead of its 403).
    from apps.realtime.consumers import SafeConsumer

    class Early(SafeConsumer):
        async def connect(self) -> None:
            await self.close(code=4401)

    communicator = WebsocketCommunicator(Early.as_asgi(), "/ws/early/")
    assert await communicator.connect() == (False, 4401)
