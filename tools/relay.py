"""The bare Channels relay the load test measures the table socket against.

``application`` is the project's ASGI application plus one route, ``ws/relay/<id>/``, served
only by the load test's own Daphne processes (never by the site). A relay socket does what the
table socket does minus the database and the rules: on a client's ``play`` (or ``pass``) it
builds one frame the size of the product's state frames and ``group_send``s it, through the
configured channel layer, to the group of that relay table; each of the four consumers
forwards it to its client. The frame looks enough like a ``state`` frame (``version``,
``view.round``, ``view.moves``, ``view.turn``, ``view.legal``) for the load test's clients to
play it exactly as they play a table.

Query string: ``seat`` (0-3) and ``size`` (bytes to pad each frame to).
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs

from channels.auth import AuthMiddlewareStack
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.routing import URLRouter
from channels.security.websocket import AllowedHostsOriginValidator
from django.urls import path

from config.asgi import application as site

#: Moves in a relay round; the next move opens the next round (a table's round has 28 at most).
RELAY_PLIES = 28
SEATS = 4


def relay_group(relay_id: int) -> str:
    return f"relay.{relay_id}"


def relay_frame(rnd: int, moves: int, size: int) -> str:
    """The picture after ``moves`` moves of relay round ``rnd``, padded to ``size`` bytes."""
    version = rnd * RELAY_PLIES + moves
    turn = (rnd + moves) % SEATS
    state = {
        "version": version,
        "seats": [{"index": i, "connected": True} for i in range(SEATS)],
        "match": {"number": 1},
        "view": {"round": rnd, "turn": turn,
                 "moves": [{"seat": (rnd + k) % SEATS, "play": "6-6"} for k in range(moves)],
                 "legal": [{"play": "6-6"}]},
        "pad": "",
    }
    frame = {"type": "state", "version": version, "events": [], "state": state}
    text = json.dumps(frame, separators=(",", ":"))
    if len(text) < size:
        state["pad"] = "x" * (size - len(text))
        text = json.dumps(frame, separators=(",", ":"))
    return text


class RelayConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.relay_id = int(self.scope["url_route"]["kwargs"]["relay_id"])
        query = parse_qs(self.scope.get("query_string", b"").decode())
        self.size = int(query.get("size", ["0"])[0])
        self.group = relay_group(self.relay_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.last = relay_frame(0, 0, self.size)
        await self.send(text_data=self.last)

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        try:
            msg = json.loads(text_data or "")
        except ValueError:
            return
        kind = msg.get("type") if isinstance(msg, dict) else None
        if kind in ("play", "pass"):
            rnd, ply = int(msg.get("round", 0)), int(msg.get("ply", 0))
            rnd, moves = (rnd, ply + 1) if ply + 1 < RELAY_PLIES else (rnd + 1, 0)
            await self.channel_layer.group_send(
                self.group, {"type": "relay.frame", "text": relay_frame(rnd, moves, self.size)})
        elif kind == "sync":
            await self.send(text_data=self.last)
        elif kind == "ping":
            await self.send(text_data='{"type":"pong"}')

    async def relay_frame(self, event: dict) -> None:
        self.last = event["text"]
        await self.send(text_data=self.last)


_relay = AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter([
    path("ws/relay/<int:relay_id>/", RelayConsumer.as_asgi()),
])))


async def application(scope, receive, send):
    """The site unchanged (whatever config.asgi becomes), plus the relay route."""
    if scope["type"] == "websocket" and scope.get("path", "").startswith("/ws/relay/"):
        return await _relay(scope, receive, send)
    return await site(scope, receive, send)
