"""A web process's side of the table sockets, shared by all of them (one hub per event loop).

- **Snapshots.** A doorbell carries a version; the first socket of the process that needs that
  version reads the table's snapshot from Redis, the others wait for the same read, and all
  compose their frames from it (``apps.tables.state.compose``). Only when Redis does not have
  the version does one of them build it from the database (and store it). A doorbell's version
  is a hint the database may contradict (a crossed site, a database restored behind Redis):
  when the database has not got it, its state is the one sent.
- **Database calls** run on a pool of threads (``REALTIME_DB_THREADS``), not on the single
  thread ``database_sync_to_async`` uses by default: one socket's connect or move no longer
  waits behind every other socket's.
- **The presence lease.** While the process holds sockets, it renews its
  :class:`~apps.tables.models.WebNode` lease every few seconds. That one call also ends the
  presence of sockets that died without closing, says which open sockets lost theirs (the
  process stalled past its lease), and returns the version of every table the process holds
  sockets at: a socket behind it (its doorbell was lost) is brought up to date, and sockets
  ahead of it (the database lost versions Redis kept) get the database's state. A process that
  dies stops renewing; beat's sweep then ends the presence of all its sockets.
- **Pages that follow a mark** (a tournament's page, :meth:`Hub.follow`): the same beat reads
  what each shows once for all its sockets, and a page told an older mark is told again.

What here assumes ongoing activity, and why a quiet spell longer than any expiry cannot hurt
it (tests/realtime/test_idle_site.py opens a socket after such a spell):
- the lease: renewed only while sockets are open; when the last closes the heartbeat stops and
  the sweep deletes the row. Nothing of the row is cached: the process's identity is
  ``boot``, made here, and every connection and renewal writes the row again if it is gone.
- ``snaps``: a table's snapshot is kept only while this process holds a socket at the table.
- the snapshot reader's Redis pool: a connection Redis dropped while idle (a restart, a
  server ``timeout``) fails its next command, which redis-py retries on a new connection.
- the database threads' connections: ``db`` runs Django's ``close_old_connections`` around
  every call, and its health check (a ``SELECT 1``) before the first query of any call on a
  connection idle for ``HEALTH_CHECK_GRACE`` or longer, so a connection PostgreSQL cut while
  idle (a restart) is replaced, never reused. A connection cut within the grace fails that one
  call (answered ``unavailable``), and Django closes it before the next.
- the channel layer's connections and group memberships belong to ``channels_redis``: its
  receive loop reconnects; a group expires after ``group_expiry`` (config/env.py), which the
  heartbeat's version check covers if a doorbell is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import socket
import time
import uuid
import weakref
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from channels.db import DatabaseSyncToAsync
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, close_old_connections, connections

from apps.accounts import activity
from apps.core import snapshots, wire
from apps.tables.selectors import rebuilt_snapshot
from apps.tables.services import HEARTBEAT, Lease, register_node, renew_lease
from config.env import redis_client_options, redis_urls

log = logging.getLogger(__name__)

#: Redis connections a web process uses to read snapshots; more requests wait their turn.
SNAPSHOT_CONNECTIONS = 32

_executor: ThreadPoolExecutor | None = None


def _db_threads() -> int:
    if settings.REALTIME_DB_THREADS:
        return settings.REALTIME_DB_THREADS
    return 1 if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3") else 8


def executor() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        _executor = ThreadPoolExecutor(max_workers=_db_threads(), thread_name_prefix="db")
    return _executor


def close_threads() -> None:
    """Stop the database threads and close their connections (tests, before the test
    database is dropped)."""
    global _executor
    import threading

    from asgiref.sync import SyncToAsync
    from django.db import connections

    # database_sync_to_async's own thread, for calls made outside any sync thread.
    SyncToAsync.single_thread_executor.submit(connections.close_all).result(timeout=30)
    if _executor is None:
        return

    # One task per thread, held at a barrier so that each lands on a different thread: a
    # connection belongs to the thread that opened it.
    workers = _executor._max_workers
    barrier = threading.Barrier(workers)

    def close_mine() -> None:
        barrier.wait(timeout=30)
        connections.close_all()

    for _ in range(workers):
        _executor.submit(close_mine)
    _executor.shutdown(wait=True)
    _executor = None


#: Seconds a database connection stays trusted after a call used it: the next call on it skips
#: Django's health check (as pgbouncer's ``server_check_delay`` does). Under play a thread's
#: connection is used many times a second, and every socket's move paid a round trip to
#: PostgreSQL for a ``SELECT 1`` (2% of a web process's CPU per move, and a statement for
#: PostgreSQL) to learn what the move's own first query would have told it.
HEALTH_CHECK_GRACE = 1.0


def _trusted_while_busy(fn):
    def run(*args, **kwargs):
        conn = connections[DEFAULT_DB_ALIAS]
        used_at = getattr(conn, "club_used_at", None)
        if (conn.connection is not None and used_at is not None
                and time.monotonic() - used_at < HEALTH_CHECK_GRACE):
            conn.health_check_done = True
        try:
            return fn(*args, **kwargs)
        finally:
            conn.club_used_at = time.monotonic()
    return run


async def db(fn, *args, **kwargs):
    """Run a sync function that uses the database on the process's database threads.

    With one thread (SQLite, which writes one transaction at a time anyway) that is Django's
    own sync thread, so that nothing else in the process touches the database beside it.
    """
    if _db_threads() == 1:
        return await DatabaseSyncToAsync(_trusted_while_busy(fn))(*args, **kwargs)
    # What DatabaseSyncToAsync does on a pool of its own, without asgiref's bookkeeping for
    # thread-sensitive calls and async_to_sync inside them (nothing called here uses either):
    # the hop cost a quarter more (136 against 102 us of CPU for a call doing nothing).
    context = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(
        executor(), context.run, _in_thread, fn, args, kwargs)


def _in_thread(fn, args: tuple, kwargs: dict):
    # As DatabaseSyncToAsync.thread_handler: a connection past its age or broken is closed
    # before the call and after it, on the thread that owns it.
    close_old_connections()
    try:
        return _trusted_while_busy(fn)(*args, **kwargs)
    finally:
        close_old_connections()


#: Reads of a table's snapshot that one wait for a version may take (a read that began before
#: the version was rung is followed by another) before the database's state is taken as it is.
SNAPSHOT_TRIES = 3


@dataclass(frozen=True)
class Flight:
    """One read of a table's snapshot that every socket of the process needing it awaits,
    begun for a doorbell of version ``at_least``."""

    task: asyncio.Task
    at_least: int


def heartbeat_seconds() -> float:
    return settings.PRESENCE_HEARTBEAT_SECONDS or HEARTBEAT.total_seconds()


class Hub:
    def __init__(self) -> None:
        self.sockets: dict[int, set] = defaultdict(set)
        #: Channels of this process's sockets from their first moment, before their presence
        #: is written: the heartbeat must never end a socket that is still opening.
        self.channels: set[str] = set()
        self.snaps: dict[int, dict] = {}
        self.flights: dict[tuple[int, str], Flight] = {}
        #: Tables whose doorbells announced a version their database never reached (said once).
        self.warned: set[int] = set()
        #: Sockets of pages that follow a mark (:meth:`follow`), by what they follow.
        self.followers: dict[object, set] = defaultdict(set)
        self.mark_flights: dict[object, tuple[int, asyncio.Task]] = {}
        self.mark_reads = 0
        self.boot = uuid.uuid4().hex
        self.name: str | None = None
        self._registered = False
        self._node_lock = asyncio.Lock()
        self._beat: asyncio.Task | None = None
        self._redis = None

    # -- the lease -----------------------------------------------------------------------------

    async def lease(self, scope: dict):
        """This process's lease, as its connections name it. The first socket of the process
        registers it (ending what an earlier run of the process left connected); after that
        nothing needs the database here: whoever writes a connection writes the lease too."""
        async with self._node_lock:
            self.name = self.name or _node_name(scope)
            lease = Lease(self.boot, self.name)
            if not self._registered:
                await db(register_node, lease)
                self._registered = True
        return lease

    def claim(self, channel_name: str) -> None:
        self.channels.add(channel_name)
        self._keep_beating()

    def release(self, channel_name: str) -> None:
        self.channels.discard(channel_name)
        self._rest_when_idle()

    def _keep_beating(self) -> None:
        if self._beat is None or self._beat.done():
            self._beat = asyncio.get_running_loop().create_task(self._heartbeat())

    def _rest_when_idle(self) -> None:
        if not self.channels and not self.followers and self._beat is not None:
            self._beat.cancel()
            self._beat = None

    def join(self, consumer) -> None:
        self.claim(consumer.channel_name)
        self.sockets[consumer.table_id].add(consumer)

    def leave(self, consumer) -> None:
        at_table = self.sockets.get(consumer.table_id)
        if at_table is not None:
            at_table.discard(consumer)
            if not at_table:
                del self.sockets[consumer.table_id]
                self.snaps.pop(consumer.table_id, None)
                self.warned.discard(consumer.table_id)
        self.release(consumer.channel_name)

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(heartbeat_seconds())
            for step, what in ((self.renew, "presence heartbeat"),
                               (self.check_marks, "pages' catch-up"),
                               (self.write_activity, "people's activity")):
                try:
                    await step()
                except asyncio.CancelledError:
                    raise
                except Exception:  # the database or Redis is away: try again next beat
                    log.warning("%s failed", what, exc_info=True)

    async def write_activity(self) -> None:
        """The people whose sockets sent frames since the last beat are active on the site
        (no mail or push for them now: docs/notifications.md), in one statement."""
        if activity.pending():
            await db(activity.flush)

    async def renew(self) -> None:
        """One beat: renew the lease, give back the presence the sweep took from sockets that
        are still open, and bring every socket behind its table up to date."""
        if self.name is None:
            return  # no socket got as far as the lease yet
        consumers = [c for group in self.sockets.values() for c in group]
        present = [c.channel_name for c in consumers if c.presence]
        # Taken before the database is read: every version sent or kept here was committed
        # before it was, so the database's can only be behind it if it lost that version.
        had = self._versions_held()
        renewal = await db(renew_lease, Lease(self.boot, self.name),
                           channels=list(self.channels), present=present,
                           table_ids=list(self.sockets))
        loop = asyncio.get_running_loop()
        if renewal.missing:
            log.warning("presence of %d open socket(s) of %s was ended (the lease %s); "
                        "saying again that they are open", len(renewal.missing), self.name,
                        "had expired" if renewal.rewritten else "was renewed late")
            missing = set(renewal.missing)
            for consumer in consumers:
                if consumer.channel_name in missing:
                    loop.create_task(consumer.reconnect_presence())
        for table_id, version in renewal.versions.items():
            if had.get(table_id, -1) > version:
                loop.create_task(self.rewind(table_id))
                continue
            for consumer in list(self.sockets.get(table_id, ())):
                if consumer.sent_version < version:
                    loop.create_task(consumer.catch_up(version))

    def _versions_held(self) -> dict[int, int]:
        """The highest version of each table this process sent to a socket or keeps."""
        held = {table_id: max((c.sent_version for c in group), default=-1)
                for table_id, group in self.sockets.items()}
        for table_id, snap in self.snaps.items():
            held[table_id] = max(held.get(table_id, -1), snap["version"])
        return held

    async def rewind(self, table_id: int) -> None:
        """The database is behind versions this process sent (a failover or a restore lost
        them while Redis kept them): its state is the truth. Redis's snapshot is replaced, and
        every socket at the table gets the database's state, marked ``rewound`` so that the
        page takes a version lower than the one it shows; the table's next versions then
        reach the sockets as ever."""
        try:
            snap = await db(rebuilt_snapshot, table_id)
        except Exception:
            log.warning("could not read table %s from the database", table_id, exc_info=True)
            return
        if snap is None or table_id not in self.sockets:
            return
        version = snap["version"]
        group = [c for c in self.sockets[table_id] if c.code == snap["table"]["code"]]
        if self._versions_held().get(table_id, -1) <= version:
            return  # nothing sent from here is ahead of it any more (rewound already)
        log.warning("table %s: the database is at v%s, behind v%s sent from here; its state "
                    "is sent again (a failover or restore lost the versions after it?)",
                    table_id, version, self._versions_held()[table_id])
        self.snaps[table_id] = snap
        for consumer in group:
            with contextlib.suppress(Exception):
                await consumer.send_state(snap=snap, rewound=True)

    # -- pages that follow a mark (a tournament's) ---------------------------------------------

    def follow(self, consumer) -> None:
        """A socket whose page shows what ``consumer.read_mark(consumer.follows)`` sums up (a
        tournament page: its version, its live tables' states and scores). The page is rung
        when that changes, and a ring can be lost (Redis restarting under the subscription,
        the layer dropping it): every beat reads each mark once for all the process's sockets
        on it, and a socket whose page was told an older one tells it again
        (``consumer.heard``), as the table sockets are caught up."""
        self.followers[consumer.follows].add(consumer)
        self._keep_beating()

    def unfollow(self, consumer) -> None:
        group = self.followers.get(consumer.follows)
        if group is not None:
            group.discard(consumer)
            if not group:
                del self.followers[consumer.follows]
        self._rest_when_idle()

    async def mark(self, key, read) -> tuple[int, object]:
        """``read(key)`` on a database thread, once for every socket asking meanwhile; with the
        number of the read (later reads, higher numbers), so that a socket keeps the newest."""
        flight = self.mark_flights.get(key)
        if flight is None:
            self.mark_reads += 1
            task = asyncio.get_running_loop().create_task(db(read, key))
            flight = self.mark_flights[key] = (self.mark_reads, task)
            task.add_done_callback(lambda _t: self._mark_read(key, flight))
        number, task = flight
        return number, await asyncio.shield(task)

    def _mark_read(self, key, flight: tuple[int, asyncio.Task]) -> None:
        if self.mark_flights.get(key) is flight:
            del self.mark_flights[key]

    async def check_marks(self) -> None:
        loop = asyncio.get_running_loop()
        for key, group in list(self.followers.items()):
            if not group:
                continue
            number, mark = await self.mark(key, next(iter(group)).read_mark)
            for consumer in list(group):
                loop.create_task(consumer.heard(number, mark))

    # -- snapshots -----------------------------------------------------------------------------

    def offer(self, table_id: int, snap: dict | None) -> None:
        """A snapshot this process built itself (a move made here): no read needed."""
        if snap is None or table_id not in self.sockets:
            return
        known = self.snaps.get(table_id)
        if known is None or known["version"] < snap["version"] \
                or known["table"]["code"] != snap["table"]["code"]:
            self.snaps[table_id] = snap

    async def snapshot(self, table_id: int, code: str, at_least: int = -1) -> dict | None:
        """The table's snapshot at version ``at_least`` or newer, or the database's when the
        database does not have that version (the doorbell that asked for it is then wrong).

        A doorbell is a hint: another site sharing the Redis and its key prefix rings its own
        ``table.N``, and a database restored or failed over behind Redis never reaches versions
        Redis announced. Asking again until the version comes would wait for ever (it recursed
        until Python's limit, leaving a read pending that every later state waited on): a read
        that the database itself answered, and at most :data:`SNAPSHOT_TRIES` reads in all,
        settle it."""
        snap = None
        for _attempt in range(SNAPSHOT_TRIES):
            known = self.snaps.get(table_id)
            if known is not None and known["table"]["code"] == code \
                    and known["version"] >= at_least:
                return known
            if at_least >= 0:
                # A version this process may have stored itself (a move applied on one of its
                # database threads, whose doorbell came round before the move's answer).
                mine = snapshots.remembered(table_id, code, at_least)
                if mine is not None:
                    self.offer(table_id, mine)
                    return mine
            flight = self.flights.get((table_id, code))
            if flight is None:
                flight = self._fly(table_id, code, at_least)
            snap, built = await asyncio.shield(flight.task)
            if snap is None or snap["version"] >= at_least:
                return snap
            if built and flight.at_least >= at_least:
                # Read from the database after the version was announced (a flight starts only
                # once its doorbell came, and a version is rung only after its commit).
                break
            # Else the read began before this version was rung: read again.
        self._behind(table_id, at_least, snap)
        return snap

    def _fly(self, table_id: int, code: str, at_least: int) -> Flight:
        flight = Flight(asyncio.get_running_loop().create_task(
            self._fetch(table_id, code, at_least)), at_least)
        self.flights[(table_id, code)] = flight
        flight.task.add_done_callback(lambda _t: self._landed(table_id, code, flight))
        return flight

    def _landed(self, table_id: int, code: str, flight: Flight) -> None:
        if self.flights.get((table_id, code)) is flight:
            del self.flights[(table_id, code)]

    def _behind(self, table_id: int, announced: int, snap: dict | None) -> None:
        """The database has not got a version a doorbell announced: its state stands. Said
        once per table while this process holds sockets there (a site crossing this one's
        doorbells would say it at every move)."""
        if table_id in self.warned:
            return
        self.warned.add(table_id)
        log.warning("table %s: a doorbell announced v%s but the database has v%s; the "
                    "database's state is sent (another site on this Redis with the same "
                    "REDIS_KEY_PREFIX, or a database restored behind Redis?)", table_id,
                    announced, None if snap is None else snap["version"])

    async def _fetch(self, table_id: int, code: str, at_least: int) -> tuple[dict | None, bool]:
        """The snapshot from Redis, or built from the database when Redis has none as new as
        ``at_least``; and whether it was built."""
        snap, built = None, False
        try:
            raw = await self._client().hget(snapshots.key(table_id, code), "d")
            snap = None if raw is None else wire.loads(raw)
        except Exception:
            log.warning("could not read the snapshot of table %s", table_id, exc_info=True)
        if snap is None or snap["version"] < at_least:
            snap, built = await db(rebuilt_snapshot, table_id), True
        if snap is not None and snap["table"]["code"] == code:
            self.offer(table_id, snap)
            return snap, built
        return None, built

    def _client(self):
        if self._redis is None:
            import redis.asyncio

            url = redis_urls(settings.REDIS_STATE_URL)["redis"]
            # A burst of doorbells (hundreds of tables) must queue for a connection, not fail
            # with "Too many connections" and fall back to rebuilding the state from the
            # database, which is what made a 400-table overload worse.
            pool = redis.asyncio.BlockingConnectionPool.from_url(
                url, max_connections=SNAPSHOT_CONNECTIONS, timeout=10,
                **redis_client_options(url, asyncio=True))
            self._redis = redis.asyncio.Redis(connection_pool=pool)
        return self._redis

    async def latest_version(self, table_id: int, code: str) -> int:
        """The highest version Redis has a snapshot of (-1 when none)."""
        with contextlib.suppress(Exception):
            raw = await self._client().hget(snapshots.key(table_id, code), "v")
            if raw is not None:
                return int(raw)
        return -1




def _node_name(scope: dict) -> str:
    """Where this process serves: the same name across its restarts (``WEB_NODE``, else the
    host and the port its sockets come in on)."""
    import os

    if os.environ.get("WEB_NODE"):
        return os.environ["WEB_NODE"]
    server = scope.get("server") or ("", "")
    return f"{socket.gethostname()}:{server[1] if len(server) > 1 else ''}"


_hubs: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def hub() -> Hub:
    """The hub of the running event loop (Daphne runs one loop per process)."""
    loop = asyncio.get_running_loop()
    found = _hubs.get(loop)
    if found is None:
        found = _hubs[loop] = Hub()
    return found
