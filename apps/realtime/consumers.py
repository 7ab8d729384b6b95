"""Table sockets: authenticate, call one service, send what it returns.

The consumers know no rules. Every state they send is composed from the table's snapshot for
this person (``apps.tables.state.compose``): their own seat's hand or none, so another hand or
the boneyard cannot leave the server. The protocol is written down in ``docs/protocol.md``.

No frame can break a socket: every text frame is answered (a state, a pong, a notice or an
``error`` with a code from the protocol), and an unexpected exception inside a handler is
logged with its frame and answered with the code ``internal`` (``unavailable`` when PostgreSQL
or Redis is out of reach: the same frame works again once they are back). Whatever ends a
socket (a close, a crash, the process being cancelled), its presence and its groups are cleaned
up on the way out; a process that dies outright is covered by its presence lease
(``apps.realtime.hub``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from types import SimpleNamespace

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer
from django.http.cookie import parse_cookie
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from apps.accounts import activity
from apps.accounts.selectors import profile_language
from apps.core import wire
from apps.core.doorbell import table_group, user_group
from apps.core.errors import ServiceError
from apps.core.outages import OUTAGES, warn
from apps.core.protocol import (
    BANNED_CLOSE_CODE,
    KNOWN_TABLES_KEY,
    MAX_FRAME,
    NOT_FOUND_CLOSE_CODE,
    SIGNED_OUT_CLOSE_CODE,
    WATCHING_OFF_CLOSE_CODE,
)
from apps.moderation import quick_chat
from apps.moderation import services as moderation
from apps.moderation.selectors import is_banned
from apps.tables import services
from apps.tables.hooks import hidden_from
from apps.tables.state import Viewer, compose, events_since

from .hub import db, hub

try:  # Daphne's WebSocket protocol says so when the peer has already closed
    from autobahn.exception import Disconnected as PeerGone
except ImportError:  # pragma: no cover - another ASGI server
    class PeerGone(Exception):
        pass

log = logging.getLogger(__name__)

#: Frames a page sends by itself (keep-alives, catching up): not the person's activity.
PASSIVE_FRAMES = frozenset({"ping", "sync"})

HOST_ACTIONS = ("start", "start_with_bots", "pause", "resume", "next_round", "new_match",
                "add_bot", "remove_bot", "adjourn", "rematch")


class Refusal(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


#: Said when a frame's text holds a lone surrogate.
NOT_UNICODE_MESSAGE = _("That message holds text that is not valid Unicode.")


def parse_frame(text_data: str | None) -> dict:
    """The frame as a JSON object, or the :class:`Refusal` that answers it."""
    if text_data is None:
        raise Refusal("bad_frame", _("Only text frames are accepted."))
    if len(text_data) > MAX_FRAME:
        raise Refusal("too_large", _("That message is too large."))
    try:
        size = len(text_data.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: Daphne never passes one on, a test may
        raise Refusal("malformed", NOT_UNICODE_MESSAGE) from None
    if size > MAX_FRAME:
        raise Refusal("too_large", _("That message is too large."))
    try:
        msg = json.loads(text_data)
    except (ValueError, RecursionError):  # "[[[[..." nests deeper than the parser goes
        raise Refusal("malformed", _("That message is not valid JSON.")) from None
    if not isinstance(msg, dict):
        raise Refusal("malformed", _("A message is a JSON object."))
    # "\ud800" is valid JSON, and Python reads it as a lone surrogate, which no UTF-8 (no
    # answer echoing it, no database, no snapshot) can hold: refused here, before anything
    # is echoed or stored. Only an escape makes one, so most frames skip the walk.
    if "\\u" in text_data and _holds_surrogate(msg):
        raise Refusal("malformed", NOT_UNICODE_MESSAGE)
    return msg


def _holds_surrogate(value) -> bool:
    # A loop, not recursion: a frame may nest as deep as the parser went.
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if wire.SURROGATES.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


#: Said to a watcher whose socket closes because watching was turned off.
WATCHING_OFF_MESSAGE = _("The host has turned watching off.")
#: What a socket is told, in a ``closing`` frame just before it is closed with one of these
#: codes (docs/protocol.md, "Opening"). Not as the close's reason: Daphne drops that, so a
#: browser would get the bare code.
CLOSE_REASONS = {
    SIGNED_OUT_CLOSE_CODE: _("You are signed out. Sign in again to play."),
    BANNED_CLOSE_CODE: _("Your account has been suspended: you cannot play for now."),
    NOT_FOUND_CLOSE_CODE: _("This table does not exist or is not open to you."),
    WATCHING_OFF_CLOSE_CODE: WATCHING_OFF_MESSAGE,
}


def scope_language(scope: dict) -> str:
    """The language of the browser's pages, for a socket that knows no profile (signed out,
    ``ws/me/``): the language cookie (set at sign-in and by the language menu), else
    Accept-Language, as Django's LocaleMiddleware picks it for a page."""
    headers = dict(scope.get("headers") or ())
    cookies = scope.get("cookies")
    if cookies is None:
        cookies = parse_cookie(headers.get(b"cookie", b"").decode("latin-1"))
    request = SimpleNamespace(COOKIES=cookies, META={
        "HTTP_ACCEPT_LANGUAGE": headers.get(b"accept-language", b"").decode("latin-1")})
    return translation.get_language_from_request(request)


def standing_of(user) -> tuple[bool, str | None]:
    """What a socket that is not at a table asks as it opens: whether its person is banned (a
    banned person's session outlives the ban until their next page load, where the ban
    middleware signs them out, so the socket checks for itself), and the language of their
    profile, which its answers are in (as the table socket's)."""
    return is_banned(user), profile_language(user)


def watching_closed(state: dict) -> bool:
    """Whether this composed state is for a watcher the host no longer lets watch: once the
    match is on, people without a seat get no state when watching is off."""
    table = state["table"]
    return (state["you"].get("watching", False) and not table.get("watchers_allowed", True)
            and table["state"] != "waiting")


#: The largest integer a browser's JSON reads exactly (Number.MAX_SAFE_INTEGER). An id or a
#: number beyond it is nobody's real id; echoed, it would not even read back as sent.
SAFE_INTEGER = 2**53 - 1


def _ref(msg: dict):
    ref = msg.get("id")
    if isinstance(ref, bool) or not isinstance(ref, (str, int)):
        return None
    if isinstance(ref, int):
        return ref if -SAFE_INTEGER <= ref <= SAFE_INTEGER else None
    return ref if len(ref) <= 64 else None


#: Tries at joining a group, and the pause before the next (growing with each). Just after a
#: Redis restart channels-redis's pub/sub layer re-makes its connection: its reader and a
#: SUBSCRIBE may then both wait on the handshake ("read() called while another coroutine is
#: already waiting for incoming data"), and a person arriving on a quiet site got a 1011 close
#: (tests/realtime/test_idle_site.py, one run in several). Joining twice is harmless.
JOIN_TRIES = 4
JOIN_PAUSE = 0.25


async def join_group(layer, group: str, channel: str) -> None:
    """``layer.group_add``, tried again while the layer's Redis connection is being re-made."""
    for attempt in range(JOIN_TRIES):
        try:
            await layer.group_add(group, channel)
            return
        except (RuntimeError, *OUTAGES) as err:
            if attempt == JOIN_TRIES - 1:
                raise
            warn(log, f"joining {group}", err)
            await asyncio.sleep(JOIN_PAUSE * (attempt + 1))


class SafeConsumer(AsyncWebsocketConsumer):
    """A socket whose end, however it comes, runs :meth:`cleanup`; and whose frames always get
    an answer."""

    language: str | None = None
    #: Frame types this socket accepts, to method names.
    handlers: dict[str, str] = {}
    #: Application close codes, to what the socket is told just before such a close.
    close_reasons = CLOSE_REASONS
    closed_with: int | None = None
    accepted = False

    async def __call__(self, scope, receive, send):
        try:
            await super().__call__(scope, receive, send)
        finally:
            # Runs after a normal close, after an exception escaped the consumer (the server
            # then closes the socket with 1011) and when the task is cancelled.
            with contextlib.suppress(Exception):
                await asyncio.shield(self.cleanup())

    async def cleanup(self) -> None:
        pass

    async def accept(self, subprotocol: str | None = None, headers=None) -> None:
        await super().accept(subprotocol, headers)
        self.accepted = True

    async def close(self, code: int | None = None, reason: str | None = None) -> None:
        """Close the socket once. Before an application close (``close_reasons``) the page gets
        one ``closing`` frame with the code and why, in the person's language: Daphne sends no
        close reason, and every way a socket is refused or ended goes through here."""
        if self.closed_with is not None:
            return  # a ban and watching turned off at once: one close says it
        self.closed_with = 1000 if code is None else code
        self.closing = True  # no state after it
        said = self.close_reasons.get(code)
        if said is not None and self.accepted:  # before the accept, no frame can go out
            with translation.override(self.language or scope_language(self.scope)):
                message = str(said)
            await self.send_json({"type": "closing", "code": code, "message": message})
        await super().close(code=code, reason=reason)

    async def dispatch(self, message: dict) -> None:
        # Channels' own dispatch first sends close_old_connections to the process's one sync
        # thread, for every frame and every doorbell: a thread hop each, all queued on that
        # thread (14% of a web process's CPU at 600 tables). It cleans connections of that
        # thread only, and these sockets never query there: every call goes through ``db``,
        # whose DatabaseSyncToAsync closes old connections around it on the thread it runs on.
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None):
        ref = None
        try:
            msg = parse_frame(text_data)
            ref = _ref(msg)
            kind = msg.get("type")
            name = self.handlers.get(kind) if isinstance(kind, str) else None
            if name is None:
                raise Refusal(self.unknown_code, _("Unknown message type."))
            if kind not in PASSIVE_FRAMES:
                self.active()
            await getattr(self, name)(msg)
        except Refusal as err:
            await self.refuse(err, ref)
            await self.refused(err)
        except OUTAGES as err:
            warn(log, f"socket frame {(text_data or '')[:100]!r} met an outage", err)
            await self.refuse(Refusal("unavailable", _(
                "The game server cannot reach its database right now. Try again in a "
                "moment.")), ref)
        except Exception:
            log.exception("socket frame failed: %r", (text_data or bytes_data or "")[:300])
            await self.refuse(Refusal("internal", _("Something went wrong on our side; "
                                                    "nothing was changed.")), ref)

    unknown_code = "unknown"

    def active(self) -> None:
        """The person did something here (a move, a line of chat): no mail or push for them
        now. Only noted: the process's heartbeat writes it (``apps.accounts.activity``), so a
        move's path makes no query for it."""
        user = getattr(self, "user", None)
        if user is not None and user.is_authenticated:
            activity.note(user.pk)

    async def refuse(self, err: Refusal, ref) -> None:
        with translation.override(self.language):
            message = str(err.message)
        await self.send_json({"type": "error", "code": err.code, "message": message, "id": ref})

    async def refused(self, err: Refusal) -> None:
        """After a refusal was sent: what else the client needs."""

    async def send_json(self, content: dict) -> None:
        try:
            await self.send(text_data=wire.dumps(content))
        except PeerGone:
            # The browser closed while this answer was on its way: nobody is left to read it,
            # and the disconnect that follows does the cleanup. Not an error of ours.
            log.debug("frame to a closed socket dropped: %s", content.get("type"))

    async def on_ping(self, msg: dict) -> None:
        await self.send_json({"type": "pong"})

    async def call(self, fn, *args, **kwargs):
        """One service call on the database threads, in this person's language."""
        language = self.language

        def run():
            with translation.override(language):
                return fn(*args, **kwargs)

        return await db(run)


def _blocks_may_have_changed(events: list[dict] | None, version: int, sent: int) -> bool:
    """Whether the person may have blocked or unblocked someone since the state this socket
    last sent (a ``chat_view`` event, or a jump the table's log does not reach back over):
    their blocks are read again before the next state is composed."""
    if sent < 0:
        return False  # the first state: read as the socket opened
    if events is None or (version > sent and not events):
        return True
    return any(event.get("kind") == "chat_view" for event in events)


class TableSocket(SafeConsumer):
    """What the table socket and the staff observer share: a table's states, kept current."""

    observer = False
    #: Whose chat lines this person does not want to see: their blocks, applied to the chat
    #: whether they sit or watch (staff observers see every line).
    hidden: frozenset[int] = frozenset()
    #: Whether this socket holds its person's presence at the table (a Connection row).
    presence = False

    async def start_table(self, code: str, version: int) -> None:
        self.code = code
        self.lock = asyncio.Lock()
        await join_group(self.channel_layer, table_group(self.table_id), self.channel_name)
        await join_group(self.channel_layer, user_group(self.user.pk), self.channel_name)
        self.joined = True
        hub().join(self)
        await self.send_state(at_least=version, force=True)

    async def cleanup(self) -> None:
        if not getattr(self, "joined", False):
            return
        self.joined = False
        hub().leave(self)
        for group in (table_group(self.table_id), user_group(self.user.pk)):
            with contextlib.suppress(Exception):
                await self.channel_layer.group_discard(group, self.channel_name)

    async def send_state(self, *, at_least: int = -1, force: bool = False,
                         since: int | None = None, snap: dict | None = None,
                         rewound: bool = False) -> None:
        """Send this person's state at version ``at_least`` or newer, with every event since
        the version this socket last had (or ``since``); never an older version than one
        already sent, unless ``force`` (an answer to sync) or ``rewound`` (the database is
        behind what was sent: its state, which the page takes whatever its version)."""
        async with self.lock:
            if getattr(self, "closing", False):
                return
            if snap is None or snap["version"] < at_least:
                snap = await hub().snapshot(self.table_id, self.code, at_least)
            if snap is None:
                return
            version = snap["version"]
            rewinding = rewound and version < self.sent_version
            if version <= self.sent_version and not (force or rewinding):
                return
            events = None  # rewinding: the events since the page's version never happened
            if not rewinding:
                base = self.sent_version if since is None else min(since, self.sent_version)
                events = events_since(snap, base)
            if not self.observer and _blocks_may_have_changed(events, version,
                                                              self.sent_version):
                self.hidden = frozenset(await db(hidden_from, self.user.pk))
            viewer = Viewer(self.user.pk, self.language, self.observer, self.hidden)
            state = compose(snap, viewer)
            if watching_closed(state):
                await self.close_watcher()
                return
            frame = {"type": "state", "version": version, "state": state,
                     "events": events or []}
            if rewinding:
                frame["rewound"] = True
            await self.send_json(frame)
            self.sent_version = version if rewinding else max(self.sent_version, version)

    async def close_watcher(self) -> None:
        """The host turned watching off: this watcher's socket closes, saying why."""
        await self.close(code=WATCHING_OFF_CLOSE_CODE)

    async def refused(self, err: Refusal) -> None:
        if err.code == "stale":
            # The client's picture is behind: the refusal is always followed by the state.
            await self.send_state(force=True)

    async def catch_up(self, version: int) -> None:
        """The hub saw the table at a version this socket never got (a lost doorbell)."""
        with contextlib.suppress(Exception):
            await self.send_state(at_least=version)

    async def table_changed(self, event: dict) -> None:
        version = event.get("version", 0)
        if version > self.sent_version:
            try:
                await self.send_state(at_least=version)
            except Exception:  # Redis or the database away: the heartbeat will catch up
                log.warning("could not send table %s v%s", self.table_id, version,
                            exc_info=True)

    async def user_notified(self, event: dict) -> None:
        await self.send_json({"type": "notice", "event": event["event"]})

    async def user_banned(self, event: dict) -> None:
        await self.close(code=BANNED_CLOSE_CODE)

    async def on_sync(self, msg: dict) -> None:
        await self.send_state(force=True, since=-1)

    async def on_ping(self, msg: dict) -> None:
        await self.send_json({"type": "pong"})
        known = msg.get("version")
        if isinstance(known, int) and not isinstance(known, bool):
            # The page says which version it shows: behind what Redis has, it gets the state
            # (and the events it missed) now, even if every doorbell since was lost.
            latest = await hub().latest_version(self.table_id, self.code)
            if latest > known:
                await self.send_state(at_least=latest, force=True, since=known)


class TableConsumer(TableSocket):
    presence = True
    handlers = {"sync": "on_sync", "play": "on_play", "pass": "on_pass", "host": "on_host",
                "ping": "on_ping", "chat": "on_chat", "phrase": "on_phrase",
                "report": "on_report"}

    async def connect(self) -> None:
        self.user = self.scope.get("user")
        self.table_id = int(self.scope["url_route"]["kwargs"]["table_id"])
        self.sent_version = -1
        self.joined = False
        # Accept first: a close before the handshake reaches a browser as a bare 403/1006, the
        # page must tell "sign in again" (4401) from a network drop, and under load the
        # handshake must not wait for the database.
        await self.accept()
        hub().claim(self.channel_name)
        self.claimed = True
        opened = await self._open()
        if opened.close_code is not None:
            if opened.close_code == WATCHING_OFF_CLOSE_CODE:
                await self.close_watcher()
            else:
                await self.close(code=opened.close_code)
            return
        await self.start_table(opened.code, opened.version)

    async def _open(self):
        user = self.user
        if user is None or not user.is_authenticated:
            return services.SocketOpened(SIGNED_OUT_CLOSE_CODE, self.language or "")
        lease = await hub().lease(self.scope)
        session = self.scope.get("session")
        known = list(session.get(KNOWN_TABLES_KEY, [])) if session is not None else []
        opened = await db(services.open_socket, user=user, table_id=self.table_id,
                          channel_name=self.channel_name, lease=lease, known_ids=known)
        self.language = opened.language
        self.hidden = opened.hidden
        return opened

    async def reconnect_presence(self) -> None:
        """The sweep ended this open socket's presence (its process was too slow to renew
        the lease): say again that it is open, or close it if it may no longer stay (the
        table was deleted meanwhile, the person banned)."""
        if not self.joined:
            return  # closing: its cleanup ends the presence
        with contextlib.suppress(Exception):
            opened = await self._open()
            if opened.close_code is not None:
                await self.close(code=opened.close_code)

    async def cleanup(self) -> None:
        if getattr(self, "claimed", False):
            # Whatever became of the connect (refused, crashed half-way, opened), no
            # presence may outlive the socket.
            self.claimed = False
            await super().cleanup()
            await db(services.disconnect, channel_name=self.channel_name)
            hub().release(self.channel_name)

    # -- from the client ---------------------------------------------------------------------

    async def on_chat(self, msg: dict) -> None:
        if not isinstance(msg.get("text"), str):
            raise Refusal("malformed", _("Write a message first."))
        await self._act(moderation.post_chat, user=self.user, table_id=self.table_id,
                        text=msg["text"])

    async def on_phrase(self, msg: dict) -> None:
        if not isinstance(msg.get("phrase"), str):
            raise Refusal("malformed", _("Say which phrase."))
        await self._act(quick_chat.post_phrase, user=self.user, table_id=self.table_id,
                        phrase=msg["phrase"])

    async def on_report(self, msg: dict) -> None:
        kwargs = {"reason": msg.get("reason"), "note": msg.get("note") or ""}
        for key, name in (("message", "message_id"), ("seat", "seat_index")):
            value = msg.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 0 <= value <= SAFE_INTEGER):
                raise Refusal("malformed", _("A report names a message or a seat by number."))
            kwargs[name] = value
        if not isinstance(kwargs["reason"], str) or not isinstance(kwargs["note"], str):
            raise Refusal("malformed", _("Choose a reason for the report."))
        try:
            row = await self.call(moderation.report, user=self.user, table_id=self.table_id,
                                  **kwargs)
        except ServiceError as err:
            raise Refusal(err.code, err.message) from None
        await self.send_json({"type": "notice", "event": {"kind": "reported", "report": row.pk}})

    async def on_play(self, msg: dict) -> None:
        round_number, ply = _position(msg)
        tile, end = msg.get("tile"), msg.get("end")
        if not isinstance(tile, str) or len(tile) > 5:
            raise Refusal("malformed", _("Say which tile to play."))
        if end is not None and end not in ("A", "B", "C", "D"):
            raise Refusal("malformed", _("Choose end A, B, C or D."))
        await self._act(services.play_move, user=self.user, table_id=self.table_id,
                        round_number=round_number, ply=ply, tile=tile, end=end)

    async def on_pass(self, msg: dict) -> None:
        round_number, ply = _position(msg)
        await self._act(services.play_move, user=self.user, table_id=self.table_id,
                        round_number=round_number, ply=ply, is_pass=True)

    async def on_host(self, msg: dict) -> None:
        action = msg.get("action")
        if not isinstance(action, str) or action not in HOST_ACTIONS:
            raise Refusal("unknown", _("Unknown host action."))
        kwargs = {"user": self.user, "table_id": self.table_id}
        if action == "remove_bot":
            seat = msg.get("seat")
            if isinstance(seat, bool) or not isinstance(seat, int):
                raise Refusal("malformed", _("Say which seat."))
            kwargs["seat_index"] = seat
        fn = {"start": services.start_match, "start_with_bots": services.start_with_bots,
              "pause": services.pause,
              "resume": services.resume, "next_round": services.next_round,
              "new_match": services.new_match, "add_bot": services.add_bot,
              "remove_bot": services.remove_bot, "adjourn": services.adjourn,
              # Any seated person's (the service checks): offered or accepted.
              "rematch": services.rematch}[action]
        await self._act(fn, **kwargs)

    async def _act(self, fn, **kwargs) -> None:
        try:
            outcome = await self.call(fn, **kwargs)
        except ServiceError as err:
            raise Refusal(err.code, err.message) from None
        # The mover's page gets its state at once, from the snapshot the service built here;
        # the doorbell that follows finds this socket already up to date.
        snap = getattr(outcome, "snapshot", None)
        hub().offer(self.table_id, snap)
        await self.send_state(at_least=getattr(outcome, "version", -1), snap=snap)


def _position(msg: dict) -> tuple[int, int]:
    round_number, ply = msg.get("round"), msg.get("ply")
    for value in (round_number, ply):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10_000:
            raise Refusal("malformed", _("A move says which round and move number it is for."))
    return round_number, ply


class NoRouteConsumer(SafeConsumer):
    """A socket at a path no route serves (a page older than a change of routes, a typo, a
    scanner): accepted and closed with 4404, saying so. Left to channels' router it raised, and
    Daphne answered HTTP 500 and logged a traceback for the client's mistake
    (``apps.realtime.routing.SocketRouter`` sends such sockets here)."""

    close_reasons = {**CLOSE_REASONS,
                     NOT_FOUND_CLOSE_CODE: _("Nothing answers at this address. Reload the page.")}

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=NOT_FOUND_CLOSE_CODE)
