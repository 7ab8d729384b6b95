"""What each seat sees of a change (docs/protocol.md, "Versions, events and resync"): every event
reaches every socket even when doorbells are coalesced or lost, a lost last doorbell never
stalls a page, stand-ins show for as long as they last, and moves say when and by whom."""

from __future__ import annotations

import random
from datetime import datetime

import pytest

from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Seat, Table
from apps.tables.state import LOG_LENGTH
from tests.socket_client import Socket, db

from .test_table_socket import open_seats, seat_table, seated

pytestmark = pytest.mark.django_db(transaction=True)


def random_move(table_id: int, rng: random.Random) -> None:
    table = Table.objects.get(pk=table_id)
    engine = game.restore(table.current_match)
    rnd = engine.current
    move = legal_dict(*rng.choice(rnd.legal()))
    services.play_move(user=table.seats.get(index=rnd.turn).user, table_id=table_id,
                       round_number=len(engine.rounds) - 1, ply=len(rnd.history),
                       tile=move.get("play"), end=move.get("end"),
                       is_pass=bool(move.get("pass")))


def lose_doorbells(monkeypatch) -> list[int]:
    """From now on changes are stored but their doorbells are lost (as the layer drops
    messages over capacity); returns the versions that were not rung."""
    from apps.core import doorbell as notify

    lost: list[int] = []
    monkeypatch.setattr(notify, "table_changed",
                        lambda table_id, version, **kwargs: lost.append(version))
    return lost


async def settled(table, users) -> tuple[list[Socket], int]:
    """Every seat's socket open and quiet; the table's version then."""
    from .test_table_socket import version_of

    sockets = await open_seats(table, users)
    for sock in sockets:
        await sock.quiet()
    return sockets, await db(version_of)(table.pk)


async def test_coalesced_doorbells_still_carry_every_event(people, monkeypatch):
    from apps.core import doorbell as notify

    table = await db(seat_table)(people)
    sockets, start = await settled(table, await db(seated)(table))
    seen = [len(sock.frames) for sock in sockets]
    rng = random.Random(5)
    real = notify.table_changed
    lose_doorbells(monkeypatch)
    await db(random_move)(table.pk, rng)
    await db(random_move)(table.pk, rng)
    monkeypatch.setattr(notify, "table_changed", real)
    await db(random_move)(table.pk, rng)  # only this doorbell rings
    for sock, since in zip(sockets, seen, strict=True):
        frame = await sock.until(lambda m: m["type"] == "state" and m["version"] == start + 3)
        moves = [e for f in sock.frames[since:] if f["type"] == "state" for e in f["events"]
                 if e["kind"] == "move"]
        assert [m["ply"] for m in moves] == [0, 1, 2], moves
        assert all(m["by"] == "player" and m["at"] for m in moves)
        assert frame["events"][0]["kind"] == "move"
    for sock in sockets:
        await sock.close()


async def test_a_socket_too_far_behind_gets_the_state_and_no_events(people, monkeypatch):
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    sock = Socket(f"/ws/table/{table.pk}/", users[0])
    assert await sock.connect()
    start = (await sock.state())["version"]
    lose_doorbells(monkeypatch)
    for _ in range(LOG_LENGTH + 3):
        await db(services.touch)(table_id=table.pk, events=[{"kind": "renamed"}])
    await sock.send({"type": "ping", "version": start})
    frame = await sock.state(min_version=start + LOG_LENGTH + 3)
    assert frame["events"] == []
    await sock.send({"type": "ping", "version": frame["version"] - 2})  # two behind: both
    again = await sock.state(min_version=frame["version"])
    assert [e["kind"] for e in again["events"]] == ["renamed", "renamed"]
    await sock.close()


async def test_a_lost_last_doorbell_is_made_good_by_the_next_ping(people, monkeypatch):
    table = await db(seat_table)(people)
    sockets, start = await settled(table, await db(seated)(table))
    assert lose_doorbells(monkeypatch) == []
    await db(random_move)(table.pk, random.Random(1))
    for sock in sockets[1:]:
        assert [m for m in await sock.quiet() if m["type"] == "state"] == []  # nothing came
        await sock.send({"type": "ping", "version": start})
        frame = await sock.state(min_version=start + 1)
        assert [e["kind"] for e in frame["events"]] == ["move"]
    for sock in sockets:
        await sock.close()


async def test_without_any_ping_the_process_heartbeat_catches_up(people, monkeypatch,
                                                                settings):
    settings.PRESENCE_HEARTBEAT_SECONDS = 0.3
    table = await db(seat_table)(people)
    sockets, start = await settled(table, await db(seated)(table))
    lost = lose_doorbells(monkeypatch)
    await db(random_move)(table.pk, random.Random(2))
    assert lost == [start + 1]
    for sock in sockets:
        frame = await sock.state(min_version=start + 1, timeout=5)
        assert [e["kind"] for e in frame["events"]] == ["move"]
    for sock in sockets:
        await sock.close()


async def test_a_stand_in_shows_in_the_seats_for_as_long_as_it_lasts(people):
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    watcher = Socket(f"/ws/table/{table.pk}/", users[0])
    assert await watcher.connect()
    await watcher.state()
    turn = await db(lambda: game.restore(Table.objects.get(pk=table.pk).current_match)
                    .current.turn)()
    away = (turn + 2) % 4  # not the one to move: the move below is a person's
    await db(Seat.objects.filter(table=table, index=away).update)(standin=True)
    await db(services.touch)(table_id=table.pk, events=[{"kind": "seat", "seat": away,
                                                         "action": "standin"}])
    state = (await watcher.state(min_version=1))["state"]
    assert [s["standin"] for s in state["seats"]] == [i == away for i in range(4)]
    # It stays in every later state, not only in the event that announced it.
    await db(random_move)(table.pk, random.Random(4))
    later = await watcher.until(lambda m: m["type"] == "state" and m["version"]
                                > state["version"])
    assert later["state"]["seats"][away]["standin"] is True
    await watcher.close()


def test_moves_say_when_and_by_whom_in_views_and_in_the_record(people):
    table = seat_table(people)
    random_move(table.pk, random.Random(6))
    state = services_state(table, people["host"])
    move = state["view"]["moves"][0]
    assert move["by"] == "player"
    assert datetime.fromisoformat(move["at"]).utcoffset() is not None
    from apps.tables.models import Move

    row = Move.objects.get(round__match__table=table, ply=0)
    assert row.as_record() == move


def services_state(table, user) -> dict:
    from apps.tables.selectors import table_state

    return table_state(table_id=table.pk, user=user)
