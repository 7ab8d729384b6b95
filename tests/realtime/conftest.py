"""Socket tests: real ASGI stack (origin check, session auth), real Redis channel layer.

Rows are written by the test and read by the consumer on another thread and connection, so
every test here uses ``django_db(transaction=True)``.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.test import Client

from config.asgi import application

ORIGIN = (b"origin", b"http://localhost")


def session_cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


@pytest.fixture
def make_user(transactional_db):
    def make(name: str):
        return get_user_model().objects.create_user(username=name, password="pw-" + name * 2)
    return make


@pytest.fixture
def people(make_user):
    return {name: make_user(name) for name in ("host", "ana", "bea", "caio", "outsider")}


class Socket:
    """A communicator that keeps every frame it received, in order."""

    def __init__(self, path: str, user=None, origin: tuple = ORIGIN, cookie: bytes | None = None):
        self.path, self.user, self.origin, self.cookie = path, user, origin, cookie
        self.comm = None
        self.frames: list[dict] = []
        self.raw: list[str] = []

    async def connect(self) -> bool:
        headers = [self.origin]
        if self.user is not None and self.cookie is None:
            self.cookie = await database_sync_to_async(session_cookie)(self.user)
        if self.cookie is not None:
            headers.append((b"cookie", self.cookie))
        self.comm = WebsocketCommunicator(application, self.path, headers=headers)
        connected, _ = await self.comm.connect(timeout=10)
        return connected

    async def recv(self, timeout: float = 5) -> dict:
        text = await self.comm.receive_from(timeout=timeout)
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

    async def state(self, min_version: int = -1, timeout: float = 10) -> dict:
        return await self.until(lambda m: m["type"] == "state" and m["version"] >= min_version,
                                timeout)

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
        await self.comm.disconnect()


db = database_sync_to_async
