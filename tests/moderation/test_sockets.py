"""Moderation over the real ASGI stack and Redis channel layer."""

from __future__ import annotations

import json
import random
import re

import pytest

from apps.moderation import services as mod
from apps.moderation.models import Ban
from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Table
from tests.socket_client import Socket, db, session_cookie

from .conftest import make_people, seat_table

pytestmark = pytest.mark.django_db(transaction=True)

TILE = re.compile(r"(?<![\d-])([0-6])-([0-6])(?![\d-])")


def tiles_in(text: str) -> set[str]:
    frame = json.loads(text)
    if frame.get("type") == "state":
        frame["state"]["table"].pop("preset_name", None)
    return {f"{max(a, b)}-{min(a, b)}" for a, b in TILE.findall(json.dumps(frame))}


def norm(tile: str) -> str:
    a, b = tile.split("-")
    return f"{max(a, b)}-{min(a, b)}"


@pytest.fixture
def people(transactional_db):
    return make_people()


#: The frame before a ban's close, in Spanish (the profile's, or the language cookie's).
BANNED = {"type": "closing", "code": 4403,
          "message": "Tu cuenta está suspendida: por ahora no puedes jugar."}


async def test_a_banned_users_open_socket_is_closed(people):
    from apps.accounts.services import set_language

    table = await db(seat_table)(people)
    await db(set_language)(user=people["caio"], language="es")
    sock = Socket(f"/ws/table/{table.pk}/", people["caio"])
    me = Socket("/ws/me/", people["caio"])
    assert await sock.connect() and await me.connect()
    await sock.state()
    await db(mod.ban)(actor=people["root"], user_id=people["caio"].pk, days=1, reason="abuse")
    assert await sock.closing() == (BANNED, 4403)
    frame, code = await me.closing()
    assert (frame["type"], frame["code"], code) == ("closing", 4403, 4403) and frame["message"]


async def test_a_banned_user_cannot_open_a_socket(people):
    from apps.accounts.services import set_language

    table = await db(seat_table)(people)
    await db(set_language)(user=people["caio"], language="es")
    await db(Ban.objects.create)(user=people["caio"], reason="abuse", by=people["root"])
    sock = Socket(f"/ws/table/{table.pk}/", people["caio"])
    await sock.connect()
    assert await sock.closing() == (BANNED, 4403)
    # ws/me/ reads no profile: the language cookie (set at sign-in) says which.
    me = Socket("/ws/me/", people["caio"])
    me.cookie = (await db(session_cookie)(people["caio"])) + b"; django_language=es"
    await me.connect()
    assert await me.closing() == (BANNED, 4403)


async def test_chat_over_the_socket_and_a_muted_users_refusal(people):
    table = await db(seat_table)(people)
    ana = Socket(f"/ws/table/{table.pk}/", people["ana"])
    bea = Socket(f"/ws/table/{table.pk}/", people["bea"])
    for sock in (ana, bea):
        assert await sock.connect()
        await sock.state()
    await ana.send({"type": "chat", "text": "good luck"})
    got = await bea.until(lambda m: m["type"] == "state" and m["state"]["chat"])
    assert got["state"]["chat"][-1]["text"] == "good luck"
    await db(mod.mute)(actor=people["mod"], user_id=people["ana"].pk, minutes=30,
                       reason="too loud")
    muted = await ana.until(lambda m: m["type"] == "state" and m["state"]["you"]["muted"])
    assert muted["state"]["you"]["muted"]["reason"] == "too loud"
    await ana.send({"type": "chat", "text": "hey", "id": 9})
    err = await ana.until(lambda m: m["type"] == "error")
    assert err["code"] == "muted" and "too loud" in err["message"] and err["id"] == 9
    await ana.send({"type": "report", "reason": "abuse", "seat": 2, "note": "x"})
    note = await ana.until(lambda m: m["type"] == "notice"
                           and m["event"]["kind"] != "muted")
    assert note["event"]["kind"] == "reported"
    for sock in (ana, bea):
        await sock.close()


async def test_players_see_a_closure_and_why(people):
    table = await db(seat_table)(people)
    ana = Socket(f"/ws/table/{table.pk}/", people["ana"])
    assert await ana.connect()
    await ana.state()
    await db(mod.close_table)(actor=people["mod"], table_id=table.pk, reason="cheating")
    got = await ana.until(lambda m: m["type"] == "state"
                          and m["state"]["table"]["state"] == "closed")
    assert "cheating" in got["state"]["table"]["closed_reason"]
    assert got["events"][0]["kind"] == "closed"
    await ana.close()


async def test_only_staff_may_observe(people):
    table = await db(seat_table)(people)
    for name in ("ana", "host", "outsider"):
        sock = Socket(f"/ws/observe/{table.pk}/", people[name])
        await sock.connect()
        frame, code = await sock.closing()
        assert (frame["type"], frame["code"], code) == ("closing", 4404, 4404)
        assert frame["message"]
    anon = Socket(f"/ws/observe/{table.pk}/", cookie=b"django_language=en")
    await anon.connect()
    assert await anon.closing() == ({"type": "closing", "code": 4401, "message":
                                     "You are signed out. Sign in again to play."}, 4401)


def _move(table_id: int, rng: random.Random):
    table = Table.objects.get(pk=table_id)
    engine = game.load(table.current_match)
    rnd = engine.current
    if rnd is None:
        return None
    move = legal_dict(*rng.choice(rnd.legal()))
    user = table.seats.get(index=rnd.turn).user
    services.play_move(user=user, table_id=table_id, round_number=len(engine.rounds) - 1,
                       ply=len(rnd.history), tile=move.get("play"), end=move.get("end"),
                       is_pass=bool(move.get("pass")))
    return move


async def test_the_observer_never_receives_a_hidden_tile(people):
    table = await db(seat_table)(people)
    watcher = Socket(f"/ws/observe/{table.pk}/", people["mod"])
    assert await watcher.connect()
    first = await watcher.state()
    assert first["state"]["view"]["hand"] == [] and first["state"]["you"]["seat"] is None
    conns = await db(lambda: list(table.connections.all()))()
    assert conns == []  # silent: no presence
    rng = random.Random(5)
    played: set[str] = set()
    checked = 0
    over = False
    for _ in range(40):
        move = await db(_move)(table.pk, rng)
        if move is None:
            break
        if move.get("play"):
            played.add(norm(move["play"]))
        await watcher.quiet(0.2)
        for raw, frame in zip(watcher.raw[checked:], watcher.frames[checked:], strict=True):
            if frame["type"] == "state" and frame["state"].get("result"):
                over = True
                break
            assert tiles_in(raw) <= played, "a hidden tile reached the observer"
        checked = len(watcher.raw)
        if over:
            break
    assert played and len(watcher.frames) > 3
    await watcher.send({"type": "play", "round": 0, "ply": 0, "tile": "6-6"})
    err = await watcher.until(lambda m: m["type"] == "error")
    assert err["code"] == "observer"
    await watcher.close()


async def test_an_observers_frame_with_a_lone_surrogate_is_refused_not_a_close(people, caplog):
    table = await db(seat_table)(people)
    sock = Socket(f"/ws/observe/{table.pk}/", people["root"])
    assert await sock.connect()
    await sock.state()
    with caplog.at_level("WARNING"):
        for text in (r'{"type": "sync", "id": "\ud800"}', r'{"\udfff": "ping"}'):
            await sock.comm.send_to(text_data=text)
            reply = await sock.recv()
            assert (reply["type"], reply["code"], reply["id"]) == ("error", "malformed", None)
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")], caplog.text
    await sock.send({"type": "ping"})
    assert await sock.recv() == {"type": "pong"}
    await sock.close()


async def test_error_frames_on_every_socket_are_in_the_persons_language(people):
    """As the table socket's: the profile's language."""
    from apps.accounts.services import set_language
    from tests.tournaments.conftest import new_tournament

    table = await db(seat_table)(people)
    tournament = await db(new_tournament)(people)
    await db(set_language)(user=people["mod"], language="es")
    await db(set_language)(user=people["ana"], language="pt-br")
    unknown = {"type": "hello", "id": 1}
    for path, user, said in (
            ("/ws/me/", people["ana"], "Tipo de mensagem desconhecido."),
            (f"/ws/tournament/{tournament.pk}/", people["ana"],
             "Tipo de mensagem desconhecido."),
            (f"/ws/observe/{table.pk}/", people["mod"], None)):
        sock = Socket(path, user)
        assert await sock.connect()
        await sock.send(unknown)
        err = await sock.until(lambda m: m["type"] == "error")
        if said is None:  # the observer's own code, in Spanish
            assert err["code"] == "observer" and err["message"] == "Tipo de mensaje desconocido."
        else:
            assert err["message"] == said, path
        await sock.close()
