"""No frame can break a socket: hypothesis throws arbitrary JSON values, near-miss messages,
strings with lone surrogates, deep nesting, oversized text and byte strings at the real
consumers (``ws/table/`` as a watcher and as a seated, muted player who is not to move;
``ws/me/``; ``ws/observe/``; ``ws/tournament/``).

Every frame gets an answer, none of them ``internal``, and no socket closes; the table's
version never changes (none of these people may change it); ``sync`` is still answered with
the same version afterwards. At least FUZZ_FRAMES frames (5,000 by default,
``FUZZ_FRAMES=50000`` for a longer run) go to each table socket.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.core.protocol import MAX_FRAME
from apps.realtime.consumers import HOST_ACTIONS
from apps.tables.models import Table
from tests.moderation.conftest import make_people, seat_table
from tests.socket_client import Socket

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

FUZZ_FRAMES = int(os.environ.get("FUZZ_FRAMES", "5000"))
BATCH = 50
TYPES = ["sync", "play", "pass", "host", "ping", "chat", "phrase", "report", "", "shuffle",
         "__init__", "websocket.receive", "table.changed", "user.banned", "dispatch",
         "tournament.changed", "register"]

#: Code points of every category, lone surrogates (Cs) included: a client's "\\ud800" is valid
#: JSON that Python reads as one (echoed, it once closed the socket). st.text() leaves them
#: out, and among all code points hypothesis almost never draws one, so they get a branch of
#: their own (and are drawn one by one: st.text() would merge the branches back).
codepoints = (st.characters(categories=["L", "M", "N", "P", "S", "Z", "C"])
              | st.characters(categories=["Cs"]))


def plain_text(max_size: int):
    return st.text(max_size=max_size)


def odd_text(max_size: int):
    return st.lists(codepoints, max_size=max_size).map("".join)


def json_values(text):
    scalars = (st.none() | st.booleans() | st.integers(-2**70, 2**70)
               | st.floats(allow_nan=False, allow_infinity=False) | text(30))
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                        | st.dictionaries(text(8), inner, max_size=4), max_leaves=12)


def near_misses(text):
    values = json_values(text)
    return st.fixed_dictionaries(
        {"type": st.sampled_from(TYPES) | values},
        optional={
            "round": st.integers(-3, 3) | values, "ply": st.integers(-3, 40) | values,
            "tile": st.sampled_from(["6-6", "0-0", "9-9", "6-", "-", "66", "6-6-6", ""])
            | values,
            "end": st.sampled_from(["A", "B", "C", "D", "E", "a"]) | values,
            "action": st.sampled_from(list(HOST_ACTIONS) + ["win", ""]) | values,
            "seat": st.integers(-1, 5) | values, "text": text(300) | values,
            "reason": st.sampled_from(["abuse", "spam", "other", "x"]) | values,
            "note": text(600) | values, "message": st.integers(-1, 10**6) | values,
            "version": st.integers(-5, 10**9) | values,
            # Echoed in the refusal: what a client may send (strings, integers), and more.
            "id": text(70) | st.integers(-2**60, 2**60) | values,
        })


text_frames = (
    near_misses(plain_text).map(json.dumps)
    | near_misses(odd_text).map(json.dumps)
    | json_values(plain_text).map(json.dumps)
    | json_values(odd_text).map(json.dumps)
    | plain_text(400)
    | odd_text(400)
    # Nesting as deep as a frame under the size limit allows (the parser's recursion limit
    # is below it), and then some.
    | st.integers(1, MAX_FRAME // 2 + 10).map(lambda n: "[" * n + "]" * n)
    | st.integers(1, MAX_FRAME // 5 + 10).map(lambda n: '{"":' * n + "1" + "}" * n)
    | st.integers(MAX_FRAME - 10, MAX_FRAME + 50).map(lambda n: json.dumps(
        {"type": "ping", "pad": "x" * n}))
    | st.sampled_from(['{"type": []}', '{"type": {"type": "sync"}}', '{"type": 1.5}',
                       '{"type": null}', '{"type": "host", "action": []}',
                       '{"type": "play", "round": 0, "ply": 0, "tile": "nine-nine"}',
                       '{"type": "pass", "round": true, "ply": false}',
                       "[" * 1000 + "]" * 1000, "[" * 1020 + "]" * 1020,
                       # Beyond 64 bits: orjson cannot write these back (an echoed id once
                       # closed the socket).
                       '{"type": "nope", "id": 1180591620717411303424}',
                       '{"type": "report", "reason": "spam", "message": -99999999999999999999}'])
    | st.integers(900, MAX_FRAME // 2).map(lambda n: "[" * n + "]" * n)
)
frames = st.one_of(text_frames.map(lambda t: ("text", t)),
                   st.binary(max_size=MAX_FRAME + 100).map(lambda b: ("bytes", b)))

#: Close codes the protocol documents; none of them is due here.
DOCUMENTED_CLOSES = {4401, 4403, 4404}


class Loop:
    """An event loop on its own thread: the sockets stay open across hypothesis examples."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro, timeout: float = 300):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=10)
        self.loop.close()


def _tournament(people):
    from django.utils import timezone

    from apps.tournaments.services import create_tournament

    return create_tournament(user=people["root"], name="Copa", preset="block", players=2,
                             format="swiss", starts_at=timezone.now() + timedelta(hours=1))


@pytest.fixture
def sockets(transactional_db):
    from django.utils import timezone

    from apps.moderation.models import Mute
    from apps.tables import game

    people = make_people()
    table = seat_table(people)
    turn = game.restore(table.current_match).current.turn
    seated = next(s.user for s in table.seats.order_by("index")
                  if s.index != turn and s.user_id != people["host"].pk)
    Mute.objects.create(user=seated, reason="fuzzing", by=people["root"],
                        until=timezone.now() + timedelta(hours=1))
    loop = Loop()
    socks = {
        "watcher": Socket(f"/ws/table/{table.pk}/", people["outsider"]),
        "seated": Socket(f"/ws/table/{table.pk}/", seated),
        "me": Socket("/ws/me/", people["outsider"]),
        "observer": Socket(f"/ws/observe/{table.pk}/", people["root"]),
        "tournament": Socket(f"/ws/tournament/{_tournament(people).pk}/", people["outsider"]),
    }

    async def open_all():
        for name, sock in socks.items():
            assert await sock.connect(), name
            if name == "tournament":
                assert await sock.recv() == {"type": "changed"}
            elif name != "me":
                await sock.state()
    loop.run(open_all())
    counts = dict.fromkeys(socks, 0)
    yield table, socks, loop, counts
    async def close_all():
        from channels.layers import get_channel_layer

        await asyncio.gather(*(s.close() for s in socks.values()), return_exceptions=True)
        await get_channel_layer().flush()  # its receive task belongs to this loop
    loop.run(close_all())
    loop.stop()
    assert all(n >= FUZZ_FRAMES for name, n in counts.items() if name in ("watcher", "seated"))


async def _throw(sock: Socket, batch) -> None:
    for kind, payload in batch:
        # Straight to the application: the test communicator refuses empty frames, a browser
        # does not.
        await sock.comm.send_input({"type": "websocket.receive", kind: payload})
        answer = await sock.recv(timeout=10)  # every frame gets an answer ...
        assert answer["type"] != "__closed__", (payload, answer)  # ... and nothing closes
        # ... nor fails on the server: "internal" is for the unforeseen.
        assert answer.get("code") != "internal", (payload, answer)
    await sock.quiet(timeout=0.05)
    assert sock.closed is None or sock.closed in DOCUMENTED_CLOSES


@settings(max_examples=max(1, FUZZ_FRAMES // BATCH), deadline=None, derandomize=False,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(batch=st.lists(frames, min_size=BATCH, max_size=BATCH))
def test_no_frame_breaks_a_socket(sockets, batch):
    table, socks, loop, counts = sockets
    before = Table.objects.get(pk=table.pk).version

    async def run():
        await asyncio.gather(*(_throw(sock, batch) for sock in socks.values()))
        for name, sock in socks.items():
            counts[name] += len(batch)
            assert sock.closed is None, (name, sock.closed, sock.frames[-3:])
        for name in ("watcher", "seated", "observer"):
            await socks[name].send({"type": "sync"})
            state = await socks[name].state()
            assert state["version"] == before
        for name in ("me", "tournament"):
            await socks[name].send({"type": "ping"})
            assert (await socks[name].until(lambda m: m["type"] == "pong"))["type"] == "pong"
    loop.run(run())
    assert Table.objects.get(pk=table.pk).version == before


async def test_an_answer_to_a_socket_closed_meanwhile_is_dropped_quietly(caplog):
    """A ping answered just after the browser closed: no error in the log, nothing raised."""
    from autobahn.exception import Disconnected

    from apps.realtime.me import MeConsumer

    consumer = MeConsumer()
    consumer.language = "en"

    async def closed(message):
        raise Disconnected("Attempt to send on a closed protocol")

    consumer.base_send = closed
    with caplog.at_level("DEBUG", logger="apps.realtime.consumers"):
        await consumer.receive(text_data='{"type": "ping"}')
    assert "socket frame failed" not in caplog.text
    assert "frame to a closed socket dropped: pong" in caplog.text
