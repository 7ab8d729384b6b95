"""Players of the real site, driven from outside: what the load test and the chaos run share.

- :func:`make_players` and :func:`session_cookie`: people with real session cookies, as
  signing in leaves them.
- :func:`open_table`: a started table, through the table services (the only writers).
- :class:`SeatClient`: one table page's socket, behaving as ``static/js/table.js`` does
  (ignore older versions but a rewound one, sync on a gap and after every reconnect,
  reconnect 0.5 s doubling to 15 s with jitter, never after 4401/4403/4404 nor to a closed
  table, ping with its version every 25 s), and playing a random legal move from
  ``state.view.legal`` after a think time.
- :class:`TableWatch`: what the seats of one table saw: when each move was sent, when each
  seat first held it, which versions each seat saw, and any position seen with two moves.

Only the protocol of ``docs/protocol.md`` is relied on (``version``, ``state.view.moves``,
``state.view.legal``, ``state.view.round``, ``state.seats[i].connected``), never the realtime
internals. The client half imports no Django, so client processes need no settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import time
from collections import Counter
from dataclasses import asdict, dataclass, field

from apps.core import wire

#: Close codes after which the page stops reconnecting (protocol.md).
FINAL_CLOSE_CODES = frozenset({4401, 4403, 4404, 4410})
PING_SECONDS = 25.0
BACKOFF_FIRST, BACKOFF_MAX = 0.5, 15.0


# -- people and tables (Django) ----------------------------------------------------------------

def make_players(count: int, prefix: str) -> list:
    """``count`` people named ``prefix0`` ... without a usable password (nobody hashes one)."""
    from django.contrib.auth import get_user_model

    users = get_user_model().objects
    return [users.create_user(username=f"{prefix}{i}") for i in range(count)]


def session_cookie(user) -> str:
    """A session signed in as ``user``, as ``django.contrib.auth.login`` leaves it; returns the
    value of the session cookie."""
    from importlib import import_module

    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY

    session = import_module(settings.SESSION_ENGINE).SessionStore()
    session[SESSION_KEY] = user._meta.pk.value_to_string(user)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return session.session_key


@dataclass
class OpenTable:
    table_id: int
    preset: str
    #: Per seat: the person's user id, or None for a bot.
    seats: list[int | None]


def open_table(*, people: list, preset: str = "partners", players: int | None = None,
               order: str | None = None, options: dict | None = None, bot_level: str = "easy",
               bot_think_ms: int = 1000, next_round_seconds: int | None = None,
               public: bool = False) -> OpenTable:
    """A started table: ``people[0]`` hosts; ``order`` says who takes seats 1, 2, ... in
    arrival order ("p" a person, the next of ``people``; "b" a bot the host adds)."""
    from apps.tables import services
    from apps.tables.models import Table

    host, others = people[0], list(people[1:])
    order = order if order is not None else "p" * len(others)
    table = services.create_table(host=host, preset=preset, players=players,
                                  options=options or {}, public=public,
                                  allow_bots="b" in order, bot_level=bot_level,
                                  bot_think_ms=bot_think_ms)
    if next_round_seconds is not None:
        # Setup, not play: how long the result stays up before the table deals by itself.
        Table.objects.filter(pk=table.pk).update(next_round_seconds=next_round_seconds)
    for who in order:
        if who == "b":
            services.add_bot(user=host, table_id=table.pk)
        else:
            services.join_table(user=others.pop(0), table_id=table.pk, code=table.code)
    services.start_match(user=host, table_id=table.pk)
    seats = [None if s.is_bot else s.user_id for s in table.seats.order_by("index")]
    return OpenTable(table.pk, preset, seats)


# -- what a table's seats saw ------------------------------------------------------------------

def position_of(state: dict) -> tuple[int, int, int] | None:
    """(match number, round, ply): the move the seat to play would be sending."""
    view = state.get("view") if state else None
    if not view:
        return None
    match = state.get("match") or {}
    return match.get("number", 1), view["round"], len(view["moves"])


def _move_text(move: dict) -> str:
    # A move is the same move whatever the server adds to describe it (at, by).
    return json.dumps({k: move.get(k) for k in ("seat", "play", "end", "pass")})


class TableWatch:
    """What the seats of one table saw. Positions are (match, round, ply)."""

    def __init__(self, table_id: int, seats: list[int], clock=time.monotonic) -> None:
        self.table_id = table_id
        self.seats = list(seats)
        self.clock = clock
        self.sent: dict[tuple, float] = {}
        self.seen: dict[tuple, dict[int, float]] = {}
        self.moves: dict[tuple, str] = {}
        self.conflicts: list[str] = []
        #: Versions each seat saw while ``recording``.
        self.versions: dict[int, set[int]] = {s: set() for s in seats}
        self.recording = False
        self._held: dict[int, tuple[int, int, int]] = {}

    def move_sent(self, position: tuple[int, int, int]) -> None:
        self.sent.setdefault(position, self.clock())

    def saw(self, seat: int, version: int, state: dict) -> None:
        now = self.clock()
        if self.recording:
            self.versions.setdefault(seat, set()).add(version)
        view = state.get("view")
        if not view:
            return
        match = (state.get("match") or {}).get("number", 1)
        rnd, moves = view["round"], view["moves"]
        for ply, move in enumerate(moves):
            key, text = (match, rnd, ply), _move_text(move)
            known = self.moves.setdefault(key, text)
            if known != text:
                self.conflicts.append(f"table {self.table_id} {key}: {known} then {text}")
                self.moves[key] = text
            self.seen.setdefault(key, {}).setdefault(seat, now)
        held = self._held.get(seat)
        here = (match, rnd, len(moves))
        if held is not None and held[:2] != here[:2] and held < here:
            # The seat went past the end of a round it never saw whole: it holds those moves
            # only as of now (and a version went missing, which the versions show).
            for key in self.sent:
                if key[:2] == held[:2] and key[2] >= held[2]:
                    self.seen.setdefault(key, {}).setdefault(seat, now)
        if held is None or here > held:
            self._held[seat] = here

    def latencies(self, since: float, until: float) -> tuple[list[float], int]:
        """Seconds from each move sent in [since, until] to the moment the last seat held it;
        and how many such moves some seat never held."""
        out, unseen = [], 0
        for key, sent in self.sent.items():
            if not since <= sent <= until:
                continue
            seen = self.seen.get(key, {})
            if all(seat in seen for seat in self.seats):
                out.append(max(seen[s] for s in self.seats) - sent)
            else:
                unseen += 1
        return out, unseen

    def moves_first_seen(self, since: float, until: float) -> int:
        return sum(1 for seen in self.seen.values()
                   if seen and since <= min(seen.values()) <= until)

    def missed_versions(self) -> dict[int, int]:
        """Per seat, how many versions another seat saw and this one never did. Versions below
        the last seat's first recorded one straddle the start of recording and do not count."""
        firsts = [min(got) for got in self.versions.values() if got]
        floor = max(firsts) if firsts else 0
        every = {v for got in self.versions.values() for v in got if v >= floor}
        return {seat: len(every - got) for seat, got in self.versions.items()}


# -- one table page's socket -------------------------------------------------------------------

@dataclass
class SeatSpec:
    table_id: int
    seat: int
    session: str
    #: Socket URLs; each reconnect takes the next, as a proxy in front of several web
    #: processes would send a returning page to any live one.
    urls: list[str]
    origin: str
    #: "active" plays after ``think`` seconds (± 25%); "silent" never moves.
    mode: str = "active"
    think: float = 2.0
    host: bool = False
    #: As host: deal the next round when one ends, start a new match when one is over.
    deal: bool = False
    rematch: bool = False
    cookie_name: str = "sessionid"

    def to_json(self) -> dict:
        return asdict(self)


@dataclass
class SeatStats:
    frames: int = 0
    state_frames: int = 0
    state_bytes: int = 0
    opens: int = 0
    failed_opens: int = 0
    syncs: int = 0
    moves_sent: int = 0
    errors: Counter = field(default_factory=Counter)
    closes: Counter = field(default_factory=Counter)


class SeatClient:
    """One table page: a socket that keeps the last state and plays like a person."""

    def __init__(self, spec: SeatSpec, watch: TableWatch | None = None,
                 rng: random.Random | None = None, clock=time.monotonic) -> None:
        self.spec = spec
        self.watch = watch
        self.rng = rng or random.Random()
        self.clock = clock
        self.state: dict | None = None
        self.version = -1
        #: (time, version) of every state frame, in arrival order.
        self.history: list[tuple[float, int]] = []
        self.stats = SeatStats()
        self.playing = False
        self.is_open = False
        self.final_code: int | None = None
        #: A closed table stays closed: the page stops reconnecting to it.
        self.table_closed = False
        self._ws = None
        self._task: asyncio.Task | None = None
        self._stopping = False
        self._url = spec.seat % len(spec.urls)
        self._ids = itertools.count(1)
        self._move_for: tuple | None = None
        self._move_id: int | None = None
        self._host_for: tuple | None = None
        self._thinking: asyncio.Task | None = None
        self._state_waiters: list[asyncio.Future] = []
        self._open_waiters: list[asyncio.Future] = []

    # -- life -----------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Close the socket as a closing tab does (1000) and stop reconnecting."""
        self._stopping = True
        self.playing = False
        if self._thinking:
            self._thinking.cancel()
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._ws.close(), 5)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    @property
    def done(self) -> bool:
        return self._stopping or self.final_code is not None

    async def _run(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import ConnectionClosed

        delay = BACKOFF_FIRST
        headers = {"Cookie": f"{self.spec.cookie_name}={self.spec.session}"}
        while not self._stopping:
            url = self.spec.urls[self._url]
            try:
                ws = await connect(url, origin=self.spec.origin, additional_headers=headers,
                                   open_timeout=10, ping_interval=None, close_timeout=5,
                                   proxy=None, compression=None, max_queue=64)
            except Exception:  # refused, reset, timed out: the page just tries again later
                self.stats.failed_opens += 1
            else:
                self._ws, self.is_open = ws, True
                self.stats.opens += 1
                delay = BACKOFF_FIRST
                self._move_for = self._host_for = None  # what was in flight may be lost
                self._wake(self._open_waiters, True)
                pinger = asyncio.get_running_loop().create_task(self._ping(ws))
                try:
                    if self.version >= 0:
                        await self._send({"type": "sync"})
                    async for text in ws:
                        self._on_frame(text)
                except ConnectionClosed:
                    pass
                finally:
                    self.is_open = False
                    pinger.cancel()
                    if self._thinking:
                        self._thinking.cancel()
                code = ws.close_code if ws.close_code is not None else 1006
                self.stats.closes[code] += 1
                if code in FINAL_CLOSE_CODES or self.table_closed:
                    self.final_code = code
                    return
            if self._stopping:
                return
            self._url = (self._url + 1) % len(self.spec.urls)
            await asyncio.sleep(delay + self.rng.random() * delay / 2)
            delay = min(delay * 2, BACKOFF_MAX)

    async def _ping(self, ws) -> None:
        while True:
            await asyncio.sleep(PING_SECONDS)
            # The version rides along: a server that knows it can tell the page it is behind.
            with contextlib.suppress(Exception):
                await ws.send(json.dumps({"type": "ping", "version": self.version}))

    async def _send(self, message: dict) -> bool:
        ws = self._ws
        if ws is None or not self.is_open:
            return False
        try:
            await ws.send(json.dumps(message, separators=(",", ":")))
        except Exception:
            return False
        return True

    # -- waiting on it --------------------------------------------------------------------------

    @staticmethod
    def _wake(waiters: list[asyncio.Future], value) -> None:
        while waiters:
            fut = waiters.pop()
            if not fut.done():
                fut.set_result(value)

    async def wait_open(self, timeout: float) -> bool:
        if self.is_open:
            return True
        fut = asyncio.get_running_loop().create_future()
        self._open_waiters.append(fut)
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            return False

    async def wait_state(self, timeout: float) -> bool:
        """Wait for the first state frame (or return at once if one came)."""
        if self.state is not None:
            return True
        return await self._next_state(timeout)

    async def _next_state(self, timeout: float) -> bool:
        fut = asyncio.get_running_loop().create_future()
        self._state_waiters.append(fut)
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            return False

    async def sync(self, timeout: float = 10.0) -> bool:
        """Ask for the full state; True once a state frame arrives after the request."""
        fut = asyncio.get_running_loop().create_future()
        self._state_waiters.append(fut)
        if not await self._send({"type": "sync"}):
            fut.cancel()
            return False
        self.stats.syncs += 1
        try:
            return await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            return False

    # -- frames ---------------------------------------------------------------------------------

    def _on_frame(self, text: str) -> None:
        self.stats.frames += 1
        try:
            # orjson, as the server: the load test's clients share the two cores with what
            # they measure.
            msg = wire.loads(text)
        except ValueError:
            self.stats.errors["unreadable"] += 1
            return
        kind = msg.get("type")
        if kind == "state":
            self._on_state(msg, len(text))
        elif kind == "error":
            code = msg.get("code") or "?"
            self.stats.errors[code] += 1
            if msg.get("id") is not None and msg.get("id") == self._move_id and code != "stale":
                # Refused for a reason other than the table moving on: think and try again.
                self._move_for = None
                self._consider()

    def _on_state(self, msg: dict, size: int) -> None:
        version = msg.get("version", -1)
        state = msg.get("state") or {}
        self.stats.state_frames += 1
        self.stats.state_bytes += size
        self.history.append((self.clock(), version))
        if self.watch is not None:
            self.watch.saw(self.spec.seat, version, state)
        self._wake(self._state_waiters, True)
        if version < self.version and not msg.get("rewound"):
            return  # an older picture arriving late (a rewound one replaces it: the page's too)
        gap = self.version >= 0 and version > self.version + 1
        self.version, self.state = version, state
        self.table_closed = (state.get("table") or {}).get("state") == "closed"
        if gap:
            asyncio.get_running_loop().create_task(self._send({"type": "sync"}))
        self._consider()

    # -- playing --------------------------------------------------------------------------------

    def _consider(self) -> None:
        if not self.playing or self.spec.mode != "active" or self.state is None:
            return
        state = self.state
        table = state.get("table") or {}
        view = state.get("view")
        if table.get("paused") or table.get("state") == "closed" or not view:
            return
        seat = (state.get("you") or {}).get("seat", self.spec.seat)
        here = position_of(state)
        if view.get("turn") == seat and view.get("legal"):
            if here != self._move_for:
                self._move_for = here
                self._later(self._play, here)
        elif self.spec.host and view.get("turn") is None:
            match = state.get("match") or {}
            if match.get("over") and self.spec.rematch:
                action = "new_match"
            elif not match.get("over") and self.spec.deal:
                action = "next_round"
            else:
                return
            if here != self._host_for:
                self._host_for = here
                self._later(self._host, here, action)

    def _later(self, fn, *args) -> None:
        if self._thinking and not self._thinking.done():
            self._thinking.cancel()
        think = self.spec.think * self.rng.uniform(0.75, 1.25)
        self._thinking = asyncio.get_running_loop().create_task(self._after(think, fn, *args))

    async def _after(self, seconds: float, fn, *args) -> None:
        await asyncio.sleep(seconds)
        if self.playing and position_of(self.state) == args[0]:
            await fn(*args)

    async def _play(self, here: tuple[int, int, int]) -> None:
        move = self.rng.choice(self.state["view"]["legal"])
        _match, rnd, ply = here
        self._move_id = next(self._ids)
        msg = {"type": "pass" if move.get("pass") else "play", "round": rnd, "ply": ply,
               "id": self._move_id}
        if not move.get("pass"):
            msg["tile"] = move["play"]
            if move.get("end"):
                msg["end"] = move["end"]
        if self.watch is not None:
            self.watch.move_sent(here)
        if await self._send(msg):
            self.stats.moves_sent += 1
        else:
            self._move_for = None

    async def _host(self, here: tuple[int, int, int], action: str) -> None:
        if not await self._send({"type": "host", "action": action, "id": next(self._ids)}):
            self._host_for = None

    def summary(self) -> dict:
        return {"table": self.spec.table_id, "seat": self.spec.seat, "version": self.version,
                "open": self.is_open, "final_code": self.final_code,
                **{k: v for k, v in asdict(self.stats).items()}}
