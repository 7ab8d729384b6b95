"""Table sockets: authenticate, call one service or selector, send what it returns.

The consumer knows no rules. Every message it sends is this person's own state
(``apps.tables.selectors.table_state``), so another hand or the boneyard cannot leave the server.
The protocol is written down in ``docs/protocol.md``.
"""

from __future__ import annotations

import json

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from .notify import table_group, user_group

#: Frames above this are refused unread: a legitimate message is a few dozen bytes.
MAX_FRAME = 2048
#: Session key (list of table ids) written by the table page: this browser has the code.
KNOWN_TABLES_KEY = "tables_known"
#: Close code of a banned person's sockets (refused on connect, closed when banned).
BANNED_CLOSE_CODE = 4403
HOST_ACTIONS = ("start", "pause", "resume", "next_round", "new_match", "add_bot", "remove_bot")


class PingConsumer(AsyncWebsocketConsumer):
    """Echo consumer used by the smoke test: each text frame makes a round trip through the
    channel layer (Redis) before it is sent back, so it proves socket + layer both work."""

    async def connect(self):
        await self.accept()

    async def receive(self, text_data=None, bytes_data=None):
        await self.channel_layer.send(self.channel_name, {"type": "echo", "text": text_data or ""})

    async def echo(self, event):
        await self.send(text_data=event["text"])


def _language_of(user) -> str | None:
    profile = getattr(user, "profile", None)
    return getattr(profile, "language", None) or None


class Refusal(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


class TableConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.user = self.scope.get("user")
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        self.sent_version = -1
        self.joined = False
        if self.user is None or not self.user.is_authenticated:
            # Accept first: a close before the handshake reaches a browser as a bare 403/1006,
            # and the page must tell "sign in again" (4401) from a network drop.
            await self.accept()
            await self.close(code=4401)
            return
        if await self._call(_banned, self.user):
            await self.accept()
            await self.close(code=BANNED_CLOSE_CODE)
            return
        session = self.scope.get("session")
        known = list(session.get(KNOWN_TABLES_KEY, [])) if session is not None else []
        if not await self._call(_table_visible, self.table_id, self.user, known):
            await self.accept()
            await self.close(code=4404)
            return
        self.language = await database_sync_to_async(_profile_language)(self.user)
        await self.channel_layer.group_add(table_group(self.table_id), self.channel_name)
        await self.channel_layer.group_add(user_group(self.user.pk), self.channel_name)
        self.joined = True
        await self.accept()
        from apps.tables import services

        await self._call(services.connect, user=self.user, table_id=self.table_id,
                         channel_name=self.channel_name)
        await self.send_state()

    async def disconnect(self, code: int) -> None:
        if not getattr(self, "joined", False):
            return
        await self.channel_layer.group_discard(table_group(self.table_id), self.channel_name)
        await self.channel_layer.group_discard(user_group(self.user.pk), self.channel_name)
        from apps.tables import services

        await self._call(services.disconnect, channel_name=self.channel_name)

    # -- from the client ---------------------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        ref = None
        try:
            if text_data is None:
                raise Refusal("bad_frame", _("Only text frames are accepted."))
            if len(text_data) > MAX_FRAME or len(text_data.encode("utf-8", "replace")) > MAX_FRAME:
                raise Refusal("too_large", _("That message is too large."))
            try:
                msg = json.loads(text_data)
            except ValueError:
                raise Refusal("malformed", _("That message is not valid JSON.")) from None
            if not isinstance(msg, dict):
                raise Refusal("malformed", _("A message is a JSON object."))
            ref = msg.get("id") if isinstance(msg.get("id"), (str, int)) else None
            kind = msg.get("type")
            handler = {"sync": self.on_sync, "play": self.on_play, "pass": self.on_pass,
                       "host": self.on_host, "ping": self.on_ping,
                       "chat": self.on_chat, "report": self.on_report}.get(kind)
            if handler is None:
                raise Refusal("unknown", _("Unknown message type."))
            await handler(msg)
        except Refusal as err:
            with translation.override(getattr(self, "language", None)):
                message = str(err.message)
            await self.send_json({"type": "error", "code": err.code, "message": message,
                                  "id": ref})
            if err.code == "stale":
                # The client's picture is behind: always follow with the current state.
                await self.send_state(force=True)

    async def on_ping(self, msg: dict) -> None:
        await self.send_json({"type": "pong"})

    async def on_chat(self, msg: dict) -> None:
        from apps.moderation import services as moderation

        if not isinstance(msg.get("text"), str):
            raise Refusal("malformed", _("Write a message first."))
        await self._act(moderation.post_chat, user=self.user, table_id=self.table_id,
                        text=msg["text"])

    async def on_report(self, msg: dict) -> None:
        from apps.moderation import services as moderation
        from apps.tables.services import ServiceError

        kwargs = {"reason": msg.get("reason"), "note": msg.get("note") or ""}
        for key, name in (("message", "message_id"), ("seat", "seat_index")):
            value = msg.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise Refusal("malformed", _("A report names a message or a seat by number."))
            kwargs[name] = value
        if not isinstance(kwargs["reason"], str) or not isinstance(kwargs["note"], str):
            raise Refusal("malformed", _("Choose a reason for the report."))
        try:
            row = await self._call(moderation.report, user=self.user, table_id=self.table_id,
                                   **kwargs)
        except ServiceError as err:
            raise Refusal(err.code, err.message) from None
        await self.send_json({"type": "notice", "event": {"kind": "reported", "report": row.pk}})

    async def on_sync(self, msg: dict) -> None:
        await self.send_state(force=True)

    async def on_play(self, msg: dict) -> None:
        round_number, ply = _position(msg)
        tile, end = msg.get("tile"), msg.get("end")
        if not isinstance(tile, str) or len(tile) > 5:
            raise Refusal("malformed", _("Say which tile to play."))
        if end is not None and end not in ("A", "B", "C", "D"):
            raise Refusal("malformed", _("Choose end A, B, C or D."))
        from apps.tables import services

        await self._act(services.play_move, user=self.user, table_id=self.table_id,
                        round_number=round_number, ply=ply, tile=tile, end=end)

    async def on_pass(self, msg: dict) -> None:
        round_number, ply = _position(msg)
        from apps.tables import services

        await self._act(services.play_move, user=self.user, table_id=self.table_id,
                        round_number=round_number, ply=ply, is_pass=True)

    async def on_host(self, msg: dict) -> None:
        from apps.tables import services

        action = msg.get("action")
        if action not in HOST_ACTIONS:
            raise Refusal("unknown", _("Unknown host action."))
        kwargs = {"user": self.user, "table_id": self.table_id}
        if action == "remove_bot":
            seat = msg.get("seat")
            if isinstance(seat, bool) or not isinstance(seat, int):
                raise Refusal("malformed", _("Say which seat."))
            kwargs["seat_index"] = seat
        fn = {"start": services.start_match, "pause": services.pause,
              "resume": services.resume, "next_round": services.next_round,
              "new_match": services.new_match, "add_bot": services.add_bot,
              "remove_bot": services.remove_bot}[action]
        await self._act(fn, **kwargs)

    async def _act(self, fn, **kwargs) -> None:
        from apps.tables.services import ServiceError

        try:
            outcome = await self._call(fn, **kwargs)
        except ServiceError as err:
            raise Refusal(err.code, err.message) from None
        # Our own doorbell will also arrive (and be skipped as already sent); sending now keeps
        # the mover's page snappy, with the events of the change.
        await self.send_state(events=getattr(outcome, "events", None))

    # -- from the table ----------------------------------------------------------------------

    async def table_changed(self, event: dict) -> None:
        if event.get("version", 0) > self.sent_version:
            await self.send_state(events=event.get("events"))

    async def user_notified(self, event: dict) -> None:
        await self.send_json({"type": "notice", "event": event["event"]})

    async def user_banned(self, event: dict) -> None:
        await self.close(code=BANNED_CLOSE_CODE)

    async def send_state(self, events: list | None = None, force: bool = False) -> None:
        from apps.tables.selectors import table_state

        state = await self._call(table_state, table_id=self.table_id, user=self.user)
        if state["version"] <= self.sent_version and not force:
            return
        self.sent_version = max(self.sent_version, state["version"])
        await self.send_json({"type": "state", "version": state["version"], "state": state,
                              "events": events or []})

    async def send_json(self, content: dict) -> None:
        await self.send(text_data=json.dumps(content, separators=(",", ":")))

    async def _call(self, fn, *args, **kwargs):
        language = getattr(self, "language", None)

        def run():
            with translation.override(language):
                return fn(*args, **kwargs)

        return await database_sync_to_async(run)()


def _position(msg: dict) -> tuple[int, int]:
    round_number, ply = msg.get("round"), msg.get("ply")
    for value in (round_number, ply):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise Refusal("malformed", _("A move says which round and move number it is for."))
    return round_number, ply


def _banned(user) -> bool:
    from apps.moderation.selectors import is_banned

    return is_banned(user)


def _table_visible(table_id: int, user, known: list) -> bool:
    """Public tables, and invite-only ones for the host, the seated, the invited and whoever
    opened the table's page with its code (kept in the session): table ids are guessable."""
    from apps.tables.selectors import may_watch

    return may_watch(table_id=table_id, user=user, known_ids=known)


def _profile_language(user) -> str:
    from django.conf import settings

    lang = _language_of(user)
    return lang if lang in dict(settings.LANGUAGES) else settings.LANGUAGE_CODE


class MeConsumer(AsyncWebsocketConsumer):
    """``ws/me/``: the home page's live notices (invitations) for the signed-in person.

    It listens to the person's group only and accepts nothing but ``ping``.
    """

    async def connect(self) -> None:
        self.user = self.scope.get("user")
        self.joined = False
        await self.accept()
        if self.user is None or not self.user.is_authenticated:
            await self.close(code=4401)
            return
        await self.channel_layer.group_add(user_group(self.user.pk), self.channel_name)
        self.joined = True

    async def disconnect(self, code: int) -> None:
        if self.joined:
            await self.channel_layer.group_discard(user_group(self.user.pk), self.channel_name)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        if text_data is not None and len(text_data) <= MAX_FRAME:
            try:
                msg = json.loads(text_data)
            except ValueError:
                msg = None
            if isinstance(msg, dict) and msg.get("type") == "ping":
                await self.send(text_data='{"type":"pong"}')
                return
        await self.send(text_data=json.dumps({"type": "error", "code": "unknown",
                                              "message": "", "id": None}))

    async def user_notified(self, event: dict) -> None:
        await self.send(text_data=json.dumps({"type": "notice", "event": event["event"]}))

    async def user_banned(self, event: dict) -> None:
        await self.close(code=BANNED_CLOSE_CODE)
