"""The shape of the work a move costs, measured as counts (not times): one state is built per
version however many sockets watch, and closing many sockets at once leaves no presence."""

from __future__ import annotations

import asyncio
import threading

import pytest
from django.db.backends import utils as db_utils

from apps.tables import game
from apps.tables.models import Connection, Seat, Table
from tests.socket_client import Socket, db

from .test_table_socket import seat_table, seated

pytestmark = pytest.mark.django_db(transaction=True)

#: Every query of the move and of the answers to every socket, all threads included. The
#: service needs seven (lock the table, its match, its seats; write the move, the version, its
#: events, the engine's position), one more when a pass is looked up for the next player; what
#: matters most is that sockets add nothing, and that no per-move read (the watcher count, a
#: profile) comes back.
QUERIES_PER_MOVE = 8


class QueryCounter:
    """Counts the queries of every thread while it is on."""

    def __init__(self, monkeypatch) -> None:
        self.count = 0
        self.on = False
        self.lock = threading.Lock()
        real = db_utils.CursorWrapper._execute_with_wrappers

        def counted(cursor, sql, *args, **kwargs):
            if self.on:
                with self.lock:
                    self.count += 1
            return real(cursor, sql, *args, **kwargs)

        monkeypatch.setattr(db_utils.CursorWrapper, "_execute_with_wrappers", counted)


async def _queries_for_one_move(table, users, watchers: list, counter: QueryCounter) -> int:
    seats = [Socket(f"/ws/table/{table.pk}/", u) for u in users]
    lookers = [Socket(f"/ws/table/{table.pk}/", u) for u in watchers]
    for sock in seats + lookers:
        assert await sock.connect()
        await sock.state()
    for sock in seats + lookers:
        await sock.quiet()
    engine = await db(lambda: game.restore(Table.objects.get(pk=table.pk).current_match))()
    rnd = engine.current
    legal = rnd.legal()[0]
    from apps.rules.engine import legal_dict

    move = legal_dict(*legal)
    ply = len(rnd.history)
    counter.count, counter.on = 0, True
    await seats[rnd.turn].send({"type": "play", "round": 0, "ply": ply, "tile": move["play"],
                                "end": move.get("end")})
    await asyncio.gather(*(s.until(lambda m: m["type"] == "state"
                                   and len(m["state"]["view"]["moves"]) > ply)
                           for s in seats + lookers))
    await asyncio.sleep(0.2)  # anything a socket would still ask of the database
    counter.on = False
    for sock in seats + lookers:
        await sock.close()
    return counter.count


async def test_a_move_costs_the_same_queries_for_4_sockets_as_for_16(people, make_user,
                                                                     monkeypatch, settings):
    settings.PRESENCE_HEARTBEAT_SECONDS = 3600  # no lease renewal inside the window
    counter = QueryCounter(monkeypatch)
    few = await db(seat_table)(people)
    four = await _queries_for_one_move(few, await db(seated)(few), [], counter)
    many = await db(seat_table)(people)
    watchers = [await db(make_user)(f"watcher{i}") for i in range(12)]
    sixteen = await _queries_for_one_move(many, await db(seated)(many), watchers, counter)
    assert 0 < four <= QUERIES_PER_MOVE, four
    # No socket reads the database for a change: twelve more sockets cost nothing. (The two
    # deals differ: a pass looked up for the next player can make one query of difference.)
    assert abs(sixteen - four) <= 1, (four, sixteen)


async def test_two_hundred_sockets_closed_at_once_leave_no_presence(people, make_user):
    tables = []
    for k in range(5):
        host = await db(make_user)(f"h{k}")
        players = {"host": host, "ana": await db(make_user)(f"a{k}"),
                   "bea": await db(make_user)(f"b{k}"), "caio": await db(make_user)(f"c{k}")}
        tables.append(await db(seat_table)(players))
    from tests.socket_client import session_cookie

    sockets = []
    for table in tables:
        for user in await db(seated)(table):
            cookie = await db(session_cookie)(user)
            for _tab in range(10):  # ten tabs each: 5 tables x 4 people x 10 = 200 sockets
                sockets.append(Socket(f"/ws/table/{table.pk}/", user, cookie=cookie))
    results = await asyncio.gather(*(s.connect() for s in sockets))
    assert all(results)
    await asyncio.gather(*(s.state(timeout=60) for s in sockets))  # accepted, then opened
    assert await db(Connection.objects.count)() == 200
    await asyncio.gather(*(s.close() for s in sockets))
    for _ in range(100):
        if await db(Connection.objects.count)() == 0:
            break
        await asyncio.sleep(0.1)
    assert await db(Connection.objects.count)() == 0
    away = await db(lambda: Seat.objects.filter(table__in=tables, away_since__isnull=True)
                    .count())()
    assert away == 0  # every seated person is away
    paused = await db(lambda: Table.objects.filter(pk__in=[t.pk for t in tables],
                                                   paused=True, empty_since__isnull=False)
                      .count())()
    assert paused == len(tables)
