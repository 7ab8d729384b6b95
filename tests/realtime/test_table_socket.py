"""The table socket (docs/protocol.md) over the real ASGI stack and Redis channel layer."""

from __future__ import annotations

import json
import random
import re

import pytest

from apps.core.protocol import MAX_FRAME
from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Move, Table
from tests.socket_client import Socket, db

pytestmark = pytest.mark.django_db(transaction=True)

TILE = re.compile(r"(?<![\d-])([0-6])-([0-6])(?![\d-])")


def tiles_in(text: str) -> set[str]:
    """Every "a-b" in a frame, but the preset's name ("Partners, open with the 6-6") is no tile."""
    frame = json.loads(text)
    if frame.get("type") == "state":
        frame["state"]["table"].pop("preset_name", None)
    text = json.dumps(frame)
    return {f"{max(a, b)}-{min(a, b)}" for a, b in TILE.findall(text)}


def seat_table(people, *, preset="partners", public=True, start=True) -> Table:
    table = services.create_table(host=people["host"], preset=preset, public=public,
                                  options={"turn_seconds": None})
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk, code=table.code)
    if start:
        services.start_match(user=people["host"], table_id=table.pk)
    return Table.objects.get(pk=table.pk)


def position(table_id: int):
    table = Table.objects.get(pk=table_id)
    match = table.current_match
    engine = game.load(match)
    return table, match, engine


def seated(table: Table) -> list:
    return [s.user for s in table.seats.order_by("index")]


def version_of(table_id: int) -> int:
    return Table.objects.get(pk=table_id).version


async def open_seats(table: Table, users) -> list[Socket]:
    sockets = []
    for user in users:
        sock = Socket(f"/ws/table/{table.pk}/", user)
        assert await sock.connect()
        await sock.state()
        sockets.append(sock)
    return sockets


async def test_four_seats_play_a_round_and_never_see_a_hidden_tile(people):
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    sockets = await open_seats(table, users)
    _t, match, engine = await db(position)(table.pk)
    dealt = (await db(lambda: list(match.rounds.get(number=0).hands))())
    dealt = [set(h) for h in dealt]
    played: set[str] = set()
    checked = [0] * 4
    rng = random.Random(3)

    def check_new_frames():
        for seat, sock in enumerate(sockets):
            for raw, frame in zip(sock.raw[checked[seat]:], sock.frames[checked[seat]:],
                                  strict=True):
                if frame.get("type") == "state" and frame["state"].get("result"):
                    continue  # the round is over: every hand is revealed
                leaked = tiles_in(raw) - dealt[seat] - played
                assert not leaked, f"seat {seat} was sent {leaked}: {raw}"
            checked[seat] = len(sock.frames)

    moves = 0
    while engine.current is not None:
        rnd = engine.current
        round_no, ply, turn = len(engine.rounds) - 1, len(rnd.history), rnd.turn
        move = legal_dict(*rng.choice(rnd.legal()))
        if "pass" in move:
            await sockets[turn].send({"type": "pass", "round": round_no, "ply": ply})
        else:
            await sockets[turn].send({"type": "play", "round": round_no, "ply": ply,
                                      "tile": move["play"], "end": move.get("end")})
            played.add(move["play"])
        moves += 1
        target = await db(version_of)(table.pk)
        for sock in sockets:  # the mover gets its answer; the others, the doorbell
            await sock.until(lambda m, ply=ply: m["type"] == "state"
                             and len(m["state"]["view"]["moves"]) > ply, timeout=10)
        assert target >= 1
        check_new_frames()
        _t, match, engine = await db(position)(table.pk)
    assert moves >= 7
    for sock in sockets:
        await sock.quiet()
    check_new_frames()
    # Everyone's last picture shows the result, the revealed hands and the same history.
    finals = [sock.frames[-1] for sock in sockets]
    assert all(f["type"] == "state" and f["state"]["result"]["sentence"] for f in finals)
    assert len({json.dumps(f["state"]["view"]["moves"]) for f in finals}) == 1
    assert all(f["state"]["view"]["revealed"] for f in finals)
    assert all(not any(m["type"] == "error" for m in s.frames) for s in sockets)
    for sock in sockets:
        await sock.close()


def _play_until_a_pass(table_id: int, rng: random.Random) -> int:
    """Random legal moves through the services until somebody has passed; their seat."""
    for _ in range(400):
        table, match, engine = position(table_id)
        rnd = engine.current
        if rnd is None:
            services.next_round(user=table.host, table_id=table_id)
            continue
        passes = [m["seat"] for m in rnd.public_moves if m.get("pass")]
        if passes:
            return passes[-1]
        seat_user = table.seats.get(index=rnd.turn).user
        move = legal_dict(*rng.choice(rnd.legal()))
        services.play_move(user=seat_user, table_id=table_id, round_number=len(engine.rounds) - 1,
                           ply=len(rnd.history), tile=move.get("play"), end=move.get("end"),
                           is_pass=bool(move.get("pass")))
    raise AssertionError("nobody passed in 400 moves")


async def test_reconnect_mid_round_gets_the_same_hand_and_the_passes(people):
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    sockets = await open_seats(table, users)
    passer = await db(_play_until_a_pass)(table.pk, random.Random(11))
    version = await db(version_of)(table.pk)
    before = (await sockets[passer].state(version))["state"]
    assert before["view"]["passed_on"] and before["passed"]
    await sockets[passer].close()

    again = Socket(f"/ws/table/{table.pk}/", users[passer])
    assert await again.connect()
    after = (await again.state())["state"]
    assert after["you"]["seat"] == passer
    assert after["view"]["hand"] == before["view"]["hand"]
    assert after["view"]["passed_on"] == before["view"]["passed_on"]
    assert after["passed"] == before["passed"]
    assert after["view"]["moves"] == before["view"]["moves"]
    # The others saw the seat go away and come back.
    other = sockets[(passer + 1) % 4]
    seen = await other.until(lambda m: m["type"] == "state"
                             and m["state"]["seats"][passer]["connected"])
    assert seen["state"]["seats"][passer]["connected"]
    for sock in [again] + [s for i, s in enumerate(sockets) if i != passer]:
        await sock.close()


async def test_sync_returns_the_full_state_at_the_current_version(people):
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    sock = Socket(f"/ws/table/{table.pk}/", users[0])
    assert await sock.connect()
    first = await sock.state()
    await sock.send({"type": "sync"})
    again = await sock.state()
    assert again["version"] == first["version"] == await db(version_of)(table.pk)
    assert again["state"]["view"]["hand"] == first["state"]["view"]["hand"]
    # A change made elsewhere while the doorbell is missed: sync catches up in one frame.
    await db(_play_until_a_pass)(table.pk, random.Random(5))
    await sock.send({"type": "sync", "id": "s1"})
    current = await db(version_of)(table.pk)
    caught_up = await sock.state(current)
    assert caught_up["version"] == current
    await sock.close()


async def test_a_move_sent_twice_is_applied_once_and_the_copy_is_stale(people):
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    _t, _m, engine = await db(position)(table.pk)
    rnd = engine.current
    turn, ply = rnd.turn, len(rnd.history)
    move = legal_dict(*rnd.legal()[0])
    sock = Socket(f"/ws/table/{table.pk}/", users[turn])
    assert await sock.connect()
    await sock.state()
    message = {"type": "play", "round": 0, "ply": ply, "tile": move["play"],
               "end": move.get("end"), "id": 7}
    await sock.send(message)
    await sock.send(message)
    error = await sock.until(lambda m: m["type"] == "error")
    assert error["code"] == "stale" and error["id"] == 7 and error["message"]
    fresh = await sock.until(lambda m: m["type"] == "state")
    assert fresh["version"] == await db(version_of)(table.pk)
    assert len(fresh["state"]["view"]["moves"]) == ply + 1
    assert await db(Move.objects.filter(round__match__table=table, ply=ply).count)() == 1
    await sock.close()


async def test_refused_move_gets_the_services_message(people):
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    _t, _m, engine = await db(position)(table.pk)
    waiting = (engine.current.turn + 1) % 4
    sock = Socket(f"/ws/table/{table.pk}/", users[waiting])
    assert await sock.connect()
    await sock.state()
    before = await db(version_of)(table.pk)
    await sock.send({"type": "pass", "round": 0, "ply": len(engine.current.history)})
    error = await sock.until(lambda m: m["type"] == "error")
    assert error["code"] == "not_your_turn"
    assert await db(version_of)(table.pk) == before
    await sock.close()


BAD_FRAMES = [
    ("malformed", "{not json"),
    ("malformed", "[1, 2]"),
    ("malformed", '"play"'),
    ("unknown", '{"type": "shuffle"}'),
    ("unknown", '{"type": "host", "action": "win"}'),
    ("malformed", '{"type": "play", "round": "0", "ply": 0, "tile": "6-6"}'),
    ("malformed", '{"type": "play", "round": 0, "ply": 0, "tile": 66}'),
    ("malformed", '{"type": "play", "round": 0, "ply": 0, "tile": "6-6", "end": "Z"}'),
    ("too_large", json.dumps({"type": "ping", "pad": "x" * (MAX_FRAME + 10)})),
    # Found from outside: each of these closed the socket with 1011.
    ("unknown", '{"type": []}'),
    ("unknown", '{"type": {"type": "sync"}}'),
    ("malformed", "[" * 1000 + "]" * 1000),  # 2,000 bytes: deeper than the JSON parser goes
    ("unknown", '{"type": "host", "action": ["start"]}'),
    # A tile that is not a tile gets the socket's own code, not the harness's bad_record.
    ("bad_tile", '{"type": "play", "round": 0, "ply": 0, "tile": "9-9"}'),
]


async def test_bad_frames_get_an_error_and_change_nothing(people):
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    sock = Socket(f"/ws/table/{table.pk}/", users[0])
    assert await sock.connect()
    await sock.state()
    before = await db(version_of)(table.pk)
    for code, text in BAD_FRAMES:
        await sock.comm.send_to(text_data=text)
        reply = await sock.recv()
        assert reply["type"] == "error" and reply["code"] == code, (text[:60], reply)
        assert reply["message"]
    await sock.comm.send_to(bytes_data=b'{"type": "sync"}')
    reply = await sock.recv()
    assert reply["type"] == "error" and reply["code"] == "bad_frame"
    await sock.send({"type": "ping"})
    assert (await sock.recv()) == {"type": "pong"}  # still open and answering
    assert await sock.quiet() == []
    assert await db(version_of)(table.pk) == before
    await sock.close()


async def test_numbers_beyond_a_browsers_reach_are_refused_not_fatal(people):
    """An id (or a report's message number) larger than 64 bits: orjson cannot write such an
    integer, and echoing it in the refusal once killed the socket (found by test_frames)."""
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    sock = Socket(f"/ws/table/{table.pk}/", users[1])
    me = Socket("/ws/me/", users[1])
    assert await sock.connect() and await me.connect()
    await sock.state()
    before = await db(version_of)(table.pk)
    huge = 2**70
    for frame, code in (({"type": "shuffle", "id": huge}, "unknown"),
                        ({"type": "play", "round": 0, "ply": huge, "tile": "6-6", "id": -huge},
                         "malformed"),
                        ({"type": "report", "reason": "abuse", "message": huge}, "malformed"),
                        ({"type": "report", "reason": "abuse", "seat": -huge}, "malformed"),
                        ({"type": "host", "action": "remove_bot", "seat": huge, "id": 2**53},
                         "not_host")):
        await sock.send(frame)
        reply = await sock.recv()
        assert (reply["type"], reply["code"], reply["id"]) == ("error", code, None), reply
    await sock.send({"type": "shuffle", "id": 2**53 - 1})  # the largest a browser holds
    assert (await sock.recv())["id"] == 2**53 - 1
    await me.send({"type": "what", "id": huge})
    assert (await me.recv())["type"] == "error"
    await sock.send({"type": "ping", "version": huge})
    assert await sock.recv() == {"type": "pong"}
    await sock.send({"type": "sync"})
    assert (await sock.state())["version"] == before
    await me.send({"type": "ping"})
    assert await me.recv() == {"type": "pong"}
    assert sock.closed is None and me.closed is None
    assert await db(version_of)(table.pk) == before
    await sock.close()
    await me.close()


#: Valid JSON whose strings hold a lone surrogate: Python reads "\ud800" as one, and it can be
#: written neither as UTF-8 nor by orjson (echoed, such an id closed the socket with 1011).
SURROGATE_FRAMES = [
    r'{"type": "ping", "id": "\ud800"}',
    r'{"type": "\udfff"}',
    r'{"type": "ping", "\ud800": 1}',
    r'{"type": "sync", "pad": [1, {"deep": ["a\udbff"]}]}',
    r'{"type": "play", "round": 0, "ply": 0, "tile": "\ud800", "id": "m1"}',
    r'{"type": "chat", "text": "good luck \ud83d"}',
    r'{"type": "report", "reason": "abuse", "note": "\udc00 x"}',
    # Unescaped: Daphne never passes one on (it is not UTF-8), a test client can.
    '{"type": "ping", "id": "\ud800"}',
]


@pytest.mark.parametrize("path", ["table", "me"])
async def test_a_lone_surrogate_is_refused_as_malformed_not_a_close(people, caplog, path):
    from apps.accounts.services import set_language
    from apps.moderation.models import ChatMessage

    table = await db(seat_table)(people)
    users = await db(seated)(table)
    await db(set_language)(user=users[1], language="es")
    sock = Socket(f"/ws/table/{table.pk}/" if path == "table" else "/ws/me/", users[1])
    assert await sock.connect()
    if path == "table":
        await sock.state()
    before = await db(version_of)(table.pk)
    with caplog.at_level("WARNING"):
        for text in SURROGATE_FRAMES:
            await sock.comm.send_to(text_data=text)
            reply = await sock.recv()
            assert (reply["type"], reply["code"], reply["id"]) == ("error", "malformed", None), (
                text, reply)
            if path == "table":  # ws/me/ knows no profile language
                assert reply["message"] == "Ese mensaje contiene texto que no es Unicode válido."
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")], caplog.text
    await sock.send({"type": "ping"})
    assert await sock.recv() == {"type": "pong"}  # still open and answering
    assert sock.closed is None
    assert await db(version_of)(table.pk) == before
    assert not await db(ChatMessage.objects.exists)()
    await sock.close()


async def test_an_unexpected_failure_is_an_internal_error_not_a_close(people, monkeypatch):
    from apps.tables import services as table_services

    def broken(**kwargs):
        raise RuntimeError("a bug")

    table = await db(seat_table)(people)
    users = await db(seated)(table)
    sock = Socket(f"/ws/table/{table.pk}/", users[0])
    assert await sock.connect()
    await sock.state()
    before = await db(version_of)(table.pk)
    monkeypatch.setattr(table_services, "pause", broken)
    await sock.send({"type": "host", "action": "pause", "id": "p1"})
    reply = await sock.recv()
    assert (reply["type"], reply["code"], reply["id"]) == ("error", "internal", "p1")
    await sock.send({"type": "sync"})
    assert (await sock.state())["version"] == before
    assert sock.closed is None
    await sock.close()


@pytest.mark.parametrize("outage", ["postgres", "redis"])
async def test_an_outage_is_unavailable_not_internal(people, monkeypatch, caplog, outage):
    """PostgreSQL restarting or Redis away is no bug: the player is told to try again, in
    their language, the log has a warning and no traceback, and the retry works."""
    from django.db import OperationalError
    from redis.exceptions import ConnectionError as RedisConnectionError

    from apps.accounts.services import set_language
    from apps.tables import services as table_services

    failure = (OperationalError("consuming input failed: server closed the connection "
                                "unexpectedly") if outage == "postgres"
               else RedisConnectionError("Error 111 connecting to 127.0.0.1:6379."))
    real_pause = table_services.pause

    def away(**kwargs):
        raise failure

    table = await db(seat_table)(people)
    await db(set_language)(user=people["host"], language="es")
    sock = Socket(f"/ws/table/{table.pk}/", people["host"])
    assert await sock.connect()
    await sock.state()
    before = await db(version_of)(table.pk)
    monkeypatch.setattr(table_services, "pause", away)
    with caplog.at_level("WARNING", logger="apps.realtime.consumers"):
        await sock.send({"type": "host", "action": "pause", "id": "p1"})
        reply = await sock.recv()
    assert (reply["type"], reply["code"], reply["id"]) == ("error", "unavailable", "p1")
    assert reply["message"] == ("El servidor del juego no logra conectar con su base de datos "
                                "ahora mismo. Vuelve a intentarlo en un momento.")
    assert "met an outage" in caplog.text and "Traceback" not in caplog.text
    assert await db(version_of)(table.pk) == before
    monkeypatch.setattr(table_services, "pause", real_pause)
    await sock.send({"type": "host", "action": "pause", "id": "p2"})
    assert (await sock.state(min_version=before + 1))["state"]["table"]["paused"]
    assert sock.closed is None
    await sock.close()


async def test_errors_speak_the_profile_language(people):
    from apps.accounts.services import set_language

    table = await db(seat_table)(people)
    await db(set_language)(user=people["host"], language="pt-br")
    sock = Socket(f"/ws/table/{table.pk}/", people["host"])
    assert await sock.connect()
    await sock.state()
    await sock.comm.send_to(text_data="{oops")
    assert (await sock.recv())["message"] == "Essa mensagem não é um JSON válido."
    await sock.close()


async def test_unauthenticated_socket_is_told_why_and_closed_with_4401(people):
    table = await db(seat_table)(people, start=False)
    # Nobody's profile: the language of the browser's pages (the language cookie).
    sock = Socket(f"/ws/table/{table.pk}/", cookie=b"django_language=pt-br")
    assert await sock.connect()
    # Daphne drops a close's reason: the reason comes in a frame just before the close.
    assert await sock.recv() == {"type": "closing", "code": 4401,
                                 "message": "Sua sessão terminou. Entre de novo para jogar."}
    closed = await sock.comm.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": 4401}
    english = Socket(f"/ws/table/{table.pk}/", cookie=b"django_language=en")
    assert await english.connect()
    assert await english.closing() == ({"type": "closing", "code": 4401, "message":
                                        "You are signed out. Sign in again to play."}, 4401)


async def test_foreign_origin_is_refused(people):
    table = await db(seat_table)(people, start=False)
    sock = Socket(f"/ws/table/{table.pk}/", people["host"], origin=(b"origin", b"http://evil.example"))
    assert not await sock.connect()


async def test_unknown_or_invite_only_table_is_closed_with_4404(people):
    from apps.accounts.services import set_language

    await db(set_language)(user=people["host"], language="es")
    sock = Socket("/ws/table/999999/", people["host"])
    assert await sock.connect()
    assert await sock.closing() == ({"type": "closing", "code": 4404, "message":
                                     "Esta mesa no existe o no está abierta para ti."}, 4404)
    private = await db(seat_table)(people, public=False, start=False)
    await db(set_language)(user=people["outsider"], language="en")
    sock = Socket(f"/ws/table/{private.pk}/", people["outsider"])
    assert await sock.connect()
    assert await sock.closing() == ({"type": "closing", "code": 4404, "message":
                                     "This table does not exist or is not open to you."}, 4404)
    # Seated people, and whoever opened the page with the code, may watch it.
    sock = Socket(f"/ws/table/{private.pk}/", people["ana"])
    assert await sock.connect()
    assert (await sock.state())["state"]["you"]["seat"] == 1
    await sock.close()


async def test_watcher_with_the_code_sees_no_hand(people):
    from django.test import Client

    table = await db(seat_table)(people, public=False)

    def browse():
        client = Client()
        client.force_login(people["outsider"])
        assert client.get(f"/t/{table.code}/").status_code == 200
        return f"sessionid={client.cookies['sessionid'].value}".encode()

    cookie = await db(browse)()
    sock = Socket(f"/ws/table/{table.pk}/", cookie=cookie)
    assert await sock.connect()
    state = (await sock.state())["state"]
    assert state["you"]["seat"] is None and state["view"]["hand"] == []
    played = {m["play"] for m in state["view"]["moves"] if "play" in m}
    assert tiles_in(sock.raw[-1]) <= played
    await sock.close()


async def test_host_actions_over_the_socket(people):
    table = await db(services.create_table)(host=people["host"], preset="partners",
                                            allow_bots=True, public=True)
    await db(services.join_table)(user=people["ana"], table_id=table.pk)
    sock = Socket(f"/ws/table/{table.pk}/", people["host"])
    assert await sock.connect()
    await sock.state()
    for _ in range(2):
        await sock.send({"type": "host", "action": "add_bot"})
        await sock.until(lambda m: m["type"] == "state")
    await sock.send({"type": "host", "action": "start"})
    state = (await sock.until(lambda m: m["type"] == "state"
                              and m["state"]["table"]["state"] == "playing"))["state"]
    assert state["view"]["hand"] and len(state["view"]["hand"]) == 7
    assert [s["bot"] for s in state["seats"]] == [False, False, True, True]
    await sock.send({"type": "host", "action": "pause"})
    paused = await sock.until(lambda m: m["type"] == "state" and m["state"]["table"]["paused"])
    assert paused["state"]["table"]["paused_by"]
    ana = Socket(f"/ws/table/{table.pk}/", people["ana"])
    assert await ana.connect()
    await ana.state()
    await ana.send({"type": "host", "action": "resume"})
    assert (await ana.until(lambda m: m["type"] == "error"))["code"] == "not_host"
    await ana.close()
    await sock.close()


async def test_invitation_arrives_live_as_a_notice(people):
    table = await db(services.create_table)(host=people["host"], preset="partners")
    me = Socket("/ws/me/", people["bea"])
    assert await me.connect()
    elsewhere = await db(services.create_table)(host=people["caio"], preset="draw", players=2,
                                                public=True)
    on_table = Socket(f"/ws/table/{elsewhere.pk}/", people["bea"])
    assert await on_table.connect()
    await on_table.state()
    name = await db(lambda: people["bea"].profile.display_name)()
    await db(services.invite)(user=people["host"], table_id=table.pk, display_name=name)
    for sock in (me, on_table):
        notice = await sock.until(lambda m: m["type"] == "notice")
        assert notice["event"] == {"kind": "invitation", "table": table.pk, "code": table.code}
    await me.send({"type": "ping"})
    assert await me.recv() == {"type": "pong"}
    await me.close()
    await on_table.close()


async def test_me_socket_needs_a_session(db_no_rollback=None):
    sock = Socket("/ws/me/", cookie=b"django_language=es")
    assert await sock.connect()
    assert await sock.closing() == ({"type": "closing", "code": 4401, "message":
                                     "Tu sesión se cerró. Inicia sesión de nuevo para jugar."},
                                    4401)


async def test_frames_and_doorbells_do_not_queue_on_the_sync_thread(people, monkeypatch):
    """Channels' dispatch would send close_old_connections to the one sync thread before every
    frame and doorbell; the table socket and ws/me dispatch without it (their database calls
    clean up on their own threads)."""
    import channels.consumer

    hops = []

    async def counted():
        hops.append(1)

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", counted)
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    sockets = await open_seats(table, users)
    me = Socket("/ws/me/", users[1])
    assert await me.connect()
    await me.send({"type": "ping"})
    assert await me.recv() == {"type": "pong"}
    await db(_play_until_a_pass)(table.pk, random.Random(5))
    current = await db(version_of)(table.pk)
    for sock in sockets:
        await sock.send({"type": "ping"})
        assert (await sock.state(current))["version"] == current
    assert hops == []
    for sock in [*sockets, me]:
        await sock.close()
