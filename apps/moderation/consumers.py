"""``ws/observe/<table id>/``: staff watch any table silently.

The observer is not a player: no presence (the table neither wakes nor counts them), no
actions, and the state it gets is ``table_state`` for nobody, the public view, so it never
holds a hand during a round. It accepts ``sync`` and ``ping`` only.
"""

from __future__ import annotations

import json

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from apps.realtime.consumers import MAX_FRAME
from apps.realtime.notify import table_group, user_group


def _may_observe(user, table_id: int) -> bool:
    from apps.tables.models import Table

    from .selectors import is_banned

    return (user is not None and user.is_authenticated and user.is_active and user.is_staff
            and user.has_perm("moderation.observe_table") and not is_banned(user)
            and Table.objects.filter(pk=table_id).exists())


def _observer_state(table_id: int) -> dict:
    from apps.tables.selectors import table_state

    state = table_state(table_id=table_id, user=None)
    state["you"]["observer"] = True
    return state


class ObserverConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.user = self.scope.get("user")
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        self.sent_version = -1
        self.joined = False
        await self.accept()
        if self.user is None or not self.user.is_authenticated:
            await self.close(code=4401)
            return
        if not await database_sync_to_async(_may_observe)(self.user, self.table_id):
            await self.close(code=4404)
            return
        await self.channel_layer.group_add(table_group(self.table_id), self.channel_name)
        await self.channel_layer.group_add(user_group(self.user.pk), self.channel_name)
        self.joined = True
        await self.send_state(force=True)

    async def disconnect(self, code: int) -> None:
        if self.joined:
            await self.channel_layer.group_discard(table_group(self.table_id), self.channel_name)
            await self.channel_layer.group_discard(user_group(self.user.pk), self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        msg = None
        if text_data is not None and len(text_data.encode("utf-8", "replace")) <= MAX_FRAME:
            try:
                msg = json.loads(text_data)
            except ValueError:
                msg = None
        kind = msg.get("type") if isinstance(msg, dict) else None
        if kind == "ping":
            await self.send_json({"type": "pong"})
        elif kind == "sync":
            await self.send_state(force=True)
        else:
            await self.send_json({"type": "error", "code": "observer",
                                  "message": "", "id": None})

    async def table_changed(self, event: dict) -> None:
        if event.get("version", 0) > self.sent_version:
            await self.send_state(events=event.get("events"))

    async def user_notified(self, event: dict) -> None:
        pass

    async def user_banned(self, event: dict) -> None:
        await self.close(code=4403)

    async def send_state(self, events: list | None = None, force: bool = False) -> None:
        state = await database_sync_to_async(_observer_state)(self.table_id)
        if state["version"] <= self.sent_version and not force:
            return
        self.sent_version = max(self.sent_version, state["version"])
        await self.send_json({"type": "state", "version": state["version"], "state": state,
                              "events": events or []})

    async def send_json(self, content: dict) -> None:
        await self.send(text_data=json.dumps(content, separators=(",", ":")))
