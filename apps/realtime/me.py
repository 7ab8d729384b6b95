"""``ws/me/``: the home page's socket, for the signed-in person's live notices (invitations).
The table socket's machinery (``apps.realtime.consumers``), without a table."""

from __future__ import annotations

import contextlib

from apps.core.doorbell import user_group
from apps.core.protocol import BANNED_CLOSE_CODE, SIGNED_OUT_CLOSE_CODE

from .consumers import SafeConsumer, join_group, scope_language, standing_of
from .hub import db


class MeConsumer(SafeConsumer):
    """``ws/me/``: the home page's live notices (invitations) for the signed-in person.

    It listens to the person's group only and accepts nothing but ``ping``.
    """

    handlers = {"ping": "on_ping"}

    async def connect(self) -> None:
        self.user = self.scope.get("user")
        self.joined = False
        await self.accept()
        if self.user is None or not self.user.is_authenticated:
            await self.close(code=SIGNED_OUT_CLOSE_CODE)
            return
        banned, language = await db(standing_of, self.user)
        self.language = language or scope_language(self.scope)
        if banned:
            await self.close(code=BANNED_CLOSE_CODE)
            return
        await join_group(self.channel_layer, user_group(self.user.pk), self.channel_name)
        self.joined = True

    async def cleanup(self) -> None:
        if self.joined:
            self.joined = False
            with contextlib.suppress(Exception):
                await self.channel_layer.group_discard(user_group(self.user.pk),
                                                       self.channel_name)

    async def user_notified(self, event: dict) -> None:
        await self.send_json({"type": "notice", "event": event["event"]})

    async def user_banned(self, event: dict) -> None:
        await self.close(code=BANNED_CLOSE_CODE)
