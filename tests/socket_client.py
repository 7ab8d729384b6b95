"""One WebSocket test client for socket tests: the real ASGI stack (origin check, session
auth) and the real Redis channel layer, keeping every frame it received in order."""

from __future__ import annotations

import asyncio
import json

from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

ORIGIN = (b"origin", b"http://localhost")
db = database_sync_to_async


def session_cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


def _application():
    from config.asgi import application

    return application


class Socket:
    """A communicator that keeps every text frame; a close arrives as {"type": "__closed__"}."""

    def __init__(self, path: str, user=None, origin: tuple = ORIGIN, cookie: bytes | None = None):
        self.path, self.user, self.origin, self.cookie = path, user, origin, cookie
        self.comm = None
        self.frames: list[dict] = []
        self.raw: list[str] = []
        self.closed: int | None = None

    async def connect(self) -> bool:
        headers = [self.origin]
        if self.user is not None and self.cookie is None:
            self.cookie = await db(session_cookie)(self.user)
        if self.cookie is not None:
            headers.append((b"cookie", self.cookie))
        self.comm = WebsocketCommunicator(_application(), self.path, headers=headers)
        connected, _ = await self.comm.connect(timeout=10)
        return connected

    async def recv(self, timeout: float = 5) -> dict:
        out = await self.comm.receive_output(timeout=timeout)
        if out["type"] == "websocket.close":
            self.closed = out.get("code", 1000)
            return {"type": "__closed__", "code": self.closed}
        text = out["text"]
        self.raw.append(text)
        msg = json.loads(text)
        self.frames.append(msg)
        return msg

    async def until(self, pred, timeout: float = 10) -> dict:
        """Receive until a frame satisfies pred; return it (all frames are kept)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"no matching frame; last frames: {self.frames[-3:]}")
            msg = await self.recv(timeout=left)
            if pred(msg):
                return msg
            if msg["type"] == "__closed__":
                raise AssertionError(f"socket closed with {msg['code']}")

    async def state(self, min_version: int = -1, timeout: float = 10) -> dict:
        return await self.until(lambda m: m["type"] == "state" and m["version"] >= min_version,
                                timeout)

    async def close_code(self, timeout: float = 10) -> int:
        msg = await self.until(lambda m: m["type"] == "__closed__", timeout)
        return msg["code"]

    async def closing(self, timeout: float = 10) -> tuple[dict | None, int]:
        """Receive until the socket closes: the frame that came just before the close (the
        server's ``closing`` frame, docs/protocol.md), and the close code."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        before = None
        while True:
            left = deadline - loop.time()
            if left <= 0:
                raise TimeoutError(f"no close; last frames: {self.frames[-3:]}")
            msg = await self.recv(timeout=left)
            if msg["type"] == "__closed__":
                return before, msg["code"]
            before = msg

    async def quiet(self, timeout: float = 0.3) -> list[dict]:
        """Everything that arrives within `timeout` of silence."""
        got = []
        # receive_nothing, not a timed-out receive: a receive that times out cancels the app.
        while not await self.comm.receive_nothing(timeout=timeout):
            got.append(await self.recv())
        return got

    async def send(self, message) -> None:
        await self.comm.send_to(text_data=json.dumps(message))

    async def close(self) -> None:
        if self.closed is None:
            await self.comm.disconnect()
