"""When Redis and the database disagree about a table, the database is the truth (issue 36).

Two ways they come to disagree: a doorbell announcing a version the table's stored state never
reaches (two sites on one Redis with one key prefix hear each other's ``table.N``), and a
snapshot in Redis newer than the database (a failover or a restore lost the last committed
versions while Redis kept them). Either way the sockets get the database's state and the table
plays on.
"""

from __future__ import annotations

import asyncio
import logging
import random

import pytest

from apps.core import doorbell, snapshots
from apps.tables import selectors
from apps.tables.models import Table
from tests.socket_client import Socket, db

from .test_idle_site import _mover_message
from .test_table_socket import open_seats, seat_table, seated, version_of
from .test_versions import random_move

pytestmark = pytest.mark.django_db(transaction=True)


async def _move_reaches_everyone(sockets: list[Socket], after: int) -> int:
    """The player whose turn it is moves over their socket; every socket gets that move's
    state. Returns its version."""
    states = [f["state"] for s in sockets for f in s.frames[-1:] if f["type"] == "state"]
    turn = states[0]["view"]["turn"]
    mover = sockets[turn]
    latest = next(f for f in reversed(mover.frames) if f["type"] == "state")
    moves = len(latest["state"]["view"]["moves"])
    await mover.send(_mover_message(latest["state"]))
    frames = [await s.until(lambda m: m["type"] == "state" and m["version"] > after
                            and len(m["state"]["view"]["moves"]) == moves + 1, timeout=8)
              for s in sockets]
    return frames[0]["version"]


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def saying(self, text: str) -> list[logging.LogRecord]:
        return [r for r in self.records if text in r.getMessage()]


@pytest.fixture
def warnings():
    """The sockets' warnings. On the loggers themselves, not pytest's caplog: the first socket
    of a test session sets Django up, whose logging configuration replaces the root's
    handlers, caplog's among them."""
    kept = Kept()
    names = ("apps.realtime.hub", "apps.realtime.consumers")
    for name in names:
        logging.getLogger(name).addHandler(kept)
    yield kept
    for name in names:
        logging.getLogger(name).removeHandler(kept)


async def test_a_doorbell_for_a_version_the_database_never_reaches_does_not_stop_the_table(
        people, warnings):
    table = await db(seat_table)(people)
    sockets = await open_seats(table, await db(seated)(table))
    for sock in sockets:
        await sock.quiet()
    start = await db(version_of)(table.pk)
    # Another site's table with the same id, far ahead: twice, as its moves go on.
    await db(doorbell.table_changed)(table.pk, start + 5000)
    await db(doorbell.table_changed)(table.pk, start + 5001)
    await asyncio.sleep(0.5)
    version = await _move_reaches_everyone(sockets, start)
    assert version == start + 1
    assert not warnings.saying("could not send table")
    assert not [r for r in warnings.records if r.exc_info and r.exc_info[0] is RecursionError]
    # Said once for the table, not once per socket and doorbell.
    assert len(warnings.saying("the database has")) == 1, warnings.records
    assert not [f for s in sockets for f in s.frames if f["type"] == "error"]
    for sock in sockets:
        await sock.close()


def _lost_versions_in_redis(table_id: int, lost: int) -> dict:
    """What a failover or a restore leaves: the database at its version, Redis holding the
    snapshot of a version ``lost`` versions later, which the database never reached. Stored
    from this process, as a web process that applied those moves itself would have."""
    snap = selectors.current_snapshot(table_id)
    ahead = dict(snap, version=snap["version"] + lost)
    assert snapshots.store(table_id, ahead)
    return ahead


def _held(table_id: int) -> int | None:
    table = Table.objects.get(pk=table_id)
    held = snapshots.client().hget(snapshots.key(table.pk, table.code), "v")
    return None if held is None else int(held)


def test_a_page_shows_the_databases_state_not_a_newer_one_redis_kept(people):
    table = seat_table(people)
    _lost_versions_in_redis(table.pk, 20)
    state = selectors.table_state(table_id=table.pk, user=people["ana"])
    assert state["version"] == table.version
    assert _held(table.pk) == table.version  # and Redis holds the database's again


async def test_versions_redis_kept_that_the_database_lost_give_way_to_the_database(
        people, settings, warnings):
    settings.PRESENCE_HEARTBEAT_SECONDS = 0.3
    table = await db(seat_table)(people)
    sockets = await open_seats(table, await db(seated)(table))
    for sock in sockets:
        await sock.quiet()
    start = await db(version_of)(table.pk)
    # Before the failover the pages were sent versions the database then lost.
    await db(_lost_versions_in_redis)(table.pk, 20)
    await db(doorbell.table_changed)(table.pk, start + 20)
    for sock in sockets:
        await sock.state(min_version=start + 20)
    # Within a few heartbeats every page gets the database's state, which it takes although
    # its number is lower, and Redis holds it again.
    for sock in sockets:
        frame = await sock.until(lambda m: m["type"] == "state" and m.get("rewound"),
                                 timeout=5)
        assert frame["version"] == start and frame["events"] == []
    assert await db(_held)(table.pk) == start
    assert warnings.saying("behind")
    # The table's next versions, numbered below the lost ones, reach every page.
    assert await _move_reaches_everyone(sockets, start) == start + 1
    assert await _move_reaches_everyone(sockets, start + 1) == start + 2
    assert await db(_held)(table.pk) == start + 2
    assert not [f for s in sockets for f in s.frames if f["type"] == "error"]
    for sock in sockets:
        await sock.close()


def test_a_move_whose_snapshot_redis_refused_for_a_lost_version_replaces_it(people):
    """No socket needed: the move's own store, refused because Redis holds a version the
    database never reached, puts the database's in its place."""
    table = seat_table(people)
    _lost_versions_in_redis(table.pk, 20)
    random_move(table.pk, random.Random(3))
    assert _held(table.pk) == table.version + 1
