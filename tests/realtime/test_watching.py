"""Watchers' sockets (issue 13): over whole matches a watcher's every frame holds no tile that
is not public yet; players see the count; watchers never count as present and cannot chat;
the host turning watching off closes their sockets with 4410."""

from __future__ import annotations

import copy
import json
import random
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Seat, Table
from tests.socket_client import Socket, db

from .test_table_socket import seat_table, tiles_in

pytestmark = pytest.mark.django_db(transaction=True)


def hidden_tiles(raw: str) -> set[str]:
    """Tiles in a watcher's frame that were not public when it was sent: anything but the
    round's moves (and the moves in its events), and the revealed hands once the round is
    over. Also checks the frame is the public view: no hand, no legal move."""
    frame = json.loads(raw)
    if frame.get("type") != "state":
        return tiles_in(raw)
    frame = copy.deepcopy(frame)
    st = frame["state"]
    assert st["you"]["seat"] is None and st["you"]["watching"] is True
    view = st.get("view")
    if view is not None:
        assert view["hand"] == [] and view["legal"] == [], view
        if st["result"] is None:
            assert view["revealed"] is None, view
        view.pop("revealed")
        view.pop("moves")
    for event in frame.get("events", []):
        if event.get("kind") == "move":
            event.pop("play", None)
    return tiles_in(json.dumps(frame))


def step(table_id: int, rng: random.Random) -> bool:
    """One thing happens at the table, through the services: a person's random legal move, a
    bot's move when it is due, or the host dealing the next round. False once the match is
    over."""
    table = Table.objects.get(pk=table_id)
    match = table.current_match
    engine = game.restore(match)
    rnd = engine.current
    if rnd is None:
        if engine.over:
            return False
        services.next_round(user=table.host, table_id=table_id)
        return True
    seat = Seat.objects.select_related("user").get(table=table, index=rnd.turn)
    if seat.played_by_bot:
        services.act_on_deadline(table_id=table_id, now=timezone.now() + timedelta(seconds=30))
        return True
    move = legal_dict(*rng.choice(rnd.legal()))
    services.play_move(user=seat.user, table_id=table_id, round_number=len(engine.rounds) - 1,
                       ply=len(rnd.history), tile=move.get("play"), end=move.get("end"),
                       is_pass=bool(move.get("pass")))
    return True


def bot_table(host, *, preset: str, players: int, target: int) -> Table:
    """The host and bots: the bots play through the table's own deadline service."""
    table = services.create_table(host=host, preset=preset, players=players, public=True,
                                  allow_bots=True, bot_level="easy", bot_think_ms=0,
                                  options={"target": target, "turn_seconds": None})
    for _ in range(players - 1):
        services.add_bot(user=host, table_id=table.pk)
    services.start_match(user=host, table_id=table.pk)
    return table


def people_table(people, *, preset: str, players: int, target: int) -> Table:
    table = services.create_table(host=people["host"], preset=preset, players=players,
                                  public=True, options={"target": target, "turn_seconds": None})
    for name in ("ana", "bea", "caio")[:players - 1]:
        services.join_table(user=people[name], table_id=table.pk)
    services.start_match(user=people["host"], table_id=table.pk)
    return table


def version_of(table_id: int) -> int:
    return Table.objects.get(pk=table_id).version


@pytest.mark.parametrize("kind, preset, players, target", [
    ("bots", "partners", 4, 50),      # 28 tiles dealt: every other hand hidden
    ("people", "draw", 3, 20),        # a boneyard drawn from: its faces never shown
    ("bots", "all-fives", 2, 80),     # a spinner, fives, and a boneyard of 14
])
async def test_a_watchers_every_frame_over_a_whole_match_is_public(people, kind, preset,
                                                                   players, target, monkeypatch):
    # Seeded deals: with the site's cryptographic shuffle a short match (15 steps) came up
    # now and then, and the match must be long enough to mean something.
    monkeypatch.setattr(game, "_deal_source", random.Random(target))
    if kind == "bots":
        table = await db(bot_table)(people["host"], preset=preset, players=players,
                                    target=target)
    else:
        table = await db(people_table)(people, preset=preset, players=players, target=target)
    watcher = Socket(f"/ws/table/{table.pk}/", people["outsider"])
    assert await watcher.connect()
    await watcher.state()
    rng = random.Random(players)
    steps = 0
    while await db(step)(table.pk, rng):
        steps += 1
        target_version = await db(version_of)(table.pk)
        await watcher.state(min_version=target_version)
    assert steps > 15
    # The last frame shows the match over, the last round's hands revealed.
    final = watcher.frames[-1]["state"]
    assert final["match"]["over"] and final["view"]["revealed"]
    states = [raw for raw, f in zip(watcher.raw, watcher.frames, strict=True)
              if f["type"] == "state"]
    assert len(states) > steps // 2
    for raw in watcher.raw:
        leaked = hidden_tiles(raw)
        assert not leaked, f"the watcher was sent {leaked}: {raw}"
    assert not any(f["type"] == "error" for f in watcher.frames)
    await watcher.close()


async def test_players_see_the_watchers_count_and_watchers_never_count_as_present(people):
    table = await db(seat_table)(people)
    host = Socket(f"/ws/table/{table.pk}/", people["host"])
    assert await host.connect()
    await host.state()
    watchers = [Socket(f"/ws/table/{table.pk}/", people["outsider"]),
                Socket(f"/ws/table/{table.pk}/", people["outsider"])]  # one person, two tabs
    for sock in watchers:
        assert await sock.connect()
        await sock.state()
    seen = await host.until(lambda m: m["type"] == "state" and m["state"]["watchers"] == 1)
    others = [s["connected"] for s in seen["state"]["seats"][1:]]
    assert others == [False, False, False]  # ana, bea and caio never opened the page
    await host.close()
    # The last player gone, the table pauses though the watcher stays.
    paused = await watchers[0].until(lambda m: m["type"] == "state"
                                     and m["state"]["table"]["paused"])
    assert paused["state"]["table"]["paused_by"] is None
    row = await db(Table.objects.get)(pk=table.pk)
    assert row.empty_since is not None
    await watchers[1].close()
    await watchers[0].close()


async def test_a_watcher_cannot_chat(people):
    table = await db(seat_table)(people)
    watcher = Socket(f"/ws/table/{table.pk}/", people["outsider"])
    assert await watcher.connect()
    first = await watcher.state()
    assert first["state"]["you"]["can_chat"] is False
    await watcher.send({"type": "chat", "text": "hello", "id": 3})
    error = await watcher.until(lambda m: m["type"] == "error")
    assert error["code"] == "not_seated" and error["id"] == 3 and error["message"]
    await watcher.close()


async def test_watching_turned_off_closes_the_watchers_sockets_with_4410(people):
    from apps.accounts.services import set_language

    table = await db(seat_table)(people)
    await db(set_language)(user=people["outsider"], language="pt-br")
    player = Socket(f"/ws/table/{table.pk}/", people["ana"])
    watcher = Socket(f"/ws/table/{table.pk}/", people["outsider"])
    for sock in (player, watcher):
        assert await sock.connect()
        await sock.state()
    await player.send({"type": "sync"})
    await player.state()
    outcome = await db(services.set_watching)(user=people["host"], table_id=table.pk,
                                              allowed=False)
    # The reason, in the watcher's language, in the frame just before the close (Daphne
    # drops a close's own reason).
    told = {"type": "closing", "code": 4410,
            "message": "O anfitrião desativou a opção de assistir."}
    assert await watcher.closing() == (told, services.WATCHING_OFF_CLOSE_CODE)
    # The close handshake ends with the disconnect a server (Daphne) hands the consumer.
    await watcher.comm.disconnect(code=services.WATCHING_OFF_CLOSE_CODE)
    after = await player.state(min_version=outcome.version)
    assert after["state"]["table"]["watchers_allowed"] is False
    # The closed socket is gone from the count.
    await player.until(lambda m: m["type"] == "state" and m["state"]["watchers"] == 0)
    again = Socket(f"/ws/table/{table.pk}/", people["outsider"])
    assert await again.connect()
    assert await again.closing() == (told, services.WATCHING_OFF_CLOSE_CODE)
    await again.comm.disconnect(code=services.WATCHING_OFF_CLOSE_CODE)
    # The players play on.
    await player.send({"type": "sync"})
    assert (await player.state())["state"]["you"]["seat"] == 1
    await player.close()
