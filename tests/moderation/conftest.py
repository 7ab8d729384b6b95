"""Moderation fixtures: the five roles of the permission matrix and a started table."""

from __future__ import annotations

import asyncio
import importlib
import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, Group
from django.test import Client

from apps.tables import services
from apps.tables.models import Table

ROLES = ("anonymous", "player", "host", "moderator", "superuser")
ORIGIN = (b"origin", b"http://localhost")
db = database_sync_to_async


def moderator_group() -> Group:
    """The group the data migration made (a transactional test's flush removes it: remake)."""
    from django.contrib.auth.models import Permission

    codenames = importlib.import_module(
        "apps.moderation.migrations.0002_moderator_group").CODENAMES
    group, created = Group.objects.get_or_create(name="moderator")
    if created:
        group.permissions.add(*Permission.objects.filter(content_type__app_label="moderation",
                                                         codename__in=codenames))
    return group


def make_people() -> dict:
    User = get_user_model()
    people = {name: User.objects.create_user(username=name, password="pw-" + name * 2)
              for name in ("host", "ana", "bea", "caio", "outsider")}
    mod = User.objects.create_user(username="mod", password="pw-modmod", is_staff=True)
    mod.groups.add(moderator_group())
    people["mod"] = get_user_model().objects.get(pk=mod.pk)  # fresh permission cache
    people["root"] = User.objects.create_superuser(username="root", password="pw-rootroot",
                                                   email="root@example.com")
    return people


def actor_for(people: dict, role: str):
    return {"anonymous": AnonymousUser(), "player": people["ana"], "host": people["host"],
            "moderator": people["mod"], "superuser": people["root"]}[role]


def seat_table(people: dict, *, start: bool = True) -> Table:
    """A public partners table: host, ana, bea, caio in seats 0-3; no turn limit."""
    table = services.create_table(host=people["host"], preset="partners", public=True,
                                  options={"turn_seconds": None})
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk)
    if start:
        services.start_match(user=people["host"], table_id=table.pk)
    return Table.objects.get(pk=table.pk)


@pytest.fixture
def people(db):
    return make_people()


@pytest.fixture
def table(people):
    return seat_table(people)


def session_cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


class Socket:
    """A communicator that keeps every text frame it received, in order."""

    def __init__(self, path: str, user=None):
        self.path, self.user = path, user
        self.comm = None
        self.frames: list[dict] = []
        self.raw: list[str] = []
        self.closed: int | None = None

    async def connect(self) -> bool:
        headers = [ORIGIN]
        if self.user is not None:
            headers.append((b"cookie", await db(session_cookie)(self.user)))
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

    async def state(self, min_version: int = -1) -> dict:
        return await self.until(lambda m: m["type"] == "state" and m["version"] >= min_version)

    async def close_code(self, timeout: float = 10) -> int:
        msg = await self.until(lambda m: m["type"] == "__closed__", timeout)
        return msg["code"]

    async def quiet(self, timeout: float = 0.3) -> list[dict]:
        got = []
        while not await self.comm.receive_nothing(timeout=timeout):
            got.append(await self.recv())
        return got

    async def send(self, message) -> None:
        await self.comm.send_to(text_data=json.dumps(message))

    async def close(self) -> None:
        if self.closed is None:
            await self.comm.disconnect()


def _application():
    from config.asgi import application

    return application
