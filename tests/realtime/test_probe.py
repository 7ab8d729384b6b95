"""The measuring clients' bookkeeping (tools.probe) and the relay's frames, without a
server: what counts as a seat holding a move, a version missed, a move seen twice."""

from __future__ import annotations

import asyncio
import json

from tools import probe
from tools.relay import RELAY_PLIES, relay_frame


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def state(version: int, rnd: int, moves: list[dict], match: int = 1, turn: int | None = 0,
          legal: list | None = None, seat: int = 0) -> dict:
    return {"version": version, "match": {"number": match, "over": False},
            "you": {"seat": seat, "host": seat == 0}, "table": {"paused": False},
            "view": {"round": rnd, "moves": moves, "turn": turn, "legal": legal or []}}


def test_latency_runs_from_the_send_to_the_last_seat_holding_the_move():
    clock = Clock()
    watch = probe.TableWatch(1, [0, 1], clock=clock)
    watch.saw(0, 1, state(1, 0, []))
    watch.saw(1, 1, state(1, 0, []))
    clock.now = 10.0
    watch.move_sent((1, 0, 0))
    clock.now = 10.2
    watch.saw(0, 2, state(2, 0, [{"seat": 0, "play": "6-6"}]))
    assert watch.latencies(0, 20) == ([], 1)  # seat 1 does not hold it yet
    clock.now = 10.5
    watch.saw(1, 2, state(2, 0, [{"seat": 0, "play": "6-6", "by": "player"}]))
    latencies, unseen = watch.latencies(0, 20)
    assert unseen == 0 and [round(x, 3) for x in latencies] == [0.5]
    assert watch.latencies(11, 20) == ([], 0)  # sent before the window
    assert watch.conflicts == []  # "by" (or "at") describes a move, it does not change it


def test_a_seat_that_jumps_to_the_next_round_holds_the_moves_it_skipped_from_then_on():
    clock = Clock()
    watch = probe.TableWatch(1, [0], clock=clock)
    watch.saw(0, 5, state(5, 0, [{"seat": 0, "pass": True}]))
    watch.move_sent((1, 0, 1))
    clock.now = 3.0
    watch.saw(0, 7, state(7, 1, []))
    assert watch.latencies(0, 10) == ([3.0], 0)


def test_the_same_position_with_another_move_is_a_move_applied_twice():
    watch = probe.TableWatch(4, [0, 1])
    watch.saw(0, 2, state(2, 0, [{"seat": 0, "play": "6-6"}]))
    watch.saw(1, 2, state(2, 0, [{"seat": 0, "play": "6-5", "end": "A"}]))
    assert len(watch.conflicts) == 1 and "table 4" in watch.conflicts[0]
    # A new match starts again at round 0: its moves are other positions.
    watch.saw(0, 9, state(9, 0, [{"seat": 1, "play": "5-5"}], match=2))
    assert len(watch.conflicts) == 1


def test_missed_versions_count_what_another_seat_saw():
    watch = probe.TableWatch(1, [0, 1, 2])
    watch.recording = True
    for seat, versions in ((0, [3, 4, 5]), (1, [3, 5]), (2, [3, 4, 5])):
        for v in versions:
            watch.saw(seat, v, state(v, 0, []))
    assert watch.missed_versions() == {0: 0, 1: 1, 2: 0}


def test_versions_from_before_a_seat_started_recording_are_not_missed():
    watch = probe.TableWatch(1, [0, 1])
    watch.recording = True
    for seat, versions in ((0, [5, 6]), (1, [3, 4, 5, 6])):
        for v in versions:
            watch.saw(seat, v, state(v, 0, []))
    assert watch.missed_versions() == {0: 0, 1: 0}


def make_client(**spec) -> probe.SeatClient:
    base = {"table_id": 1, "seat": 0, "session": "s", "urls": ["ws://x/"], "origin": "http://x"}
    return probe.SeatClient(probe.SeatSpec(**{**base, **spec}))


async def test_a_client_plays_only_on_its_turn_after_thinking_and_only_once():
    client = make_client(think=0.01)
    sent: list[dict] = []

    async def send(message):
        sent.append(message)
        return True

    client._send = send
    client.playing = True
    legal = [{"play": "6-4", "end": "A"}]
    client._on_state({"type": "state", "version": 3,
                      "state": state(3, 0, [{"seat": 3, "play": "6-6"}], turn=1)}, 100)
    await asyncio.sleep(0.05)
    assert sent == []  # seat 1 is to play
    frame = {"type": "state", "version": 4,
             "state": state(4, 0, [{"seat": 3, "play": "6-6"}], turn=0, legal=legal)}
    client._on_state(frame, 100)
    client._on_state(frame, 100)  # the same picture again (a sync answer) plays nothing more
    await asyncio.sleep(0.1)
    assert sent == [{"type": "play", "round": 0, "ply": 1, "tile": "6-4", "end": "A", "id": 1}]


async def test_a_silent_client_never_moves_and_a_gap_asks_for_a_sync():
    client = make_client(mode="silent", think=0.0)
    sent: list[dict] = []

    async def send(message):
        sent.append(message)
        return True

    client._send = send
    client.playing = True
    client._on_state({"type": "state", "version": 1,
                      "state": state(1, 0, [], legal=[{"play": "6-6"}])}, 10)
    client._on_state({"type": "state", "version": 5,
                      "state": state(5, 0, [], legal=[{"play": "6-6"}])}, 10)
    client._on_state({"type": "state", "version": 4, "state": state(4, 0, [])}, 10)
    await asyncio.sleep(0.05)
    assert sent == [{"type": "sync"}]
    assert client.version == 5  # an older picture arriving late is ignored
    # Unless the server says the table's history went back (docs/protocol.md): as the page.
    client._on_state({"type": "state", "version": 3, "rewound": True,
                      "state": state(3, 0, [])}, 10)
    assert client.version == 3


def test_relay_frames_are_padded_to_the_size_asked_and_count_like_a_table():
    text = relay_frame(2, 5, 1800)
    frame = json.loads(text)
    assert len(text) == 1800
    assert frame["version"] == frame["state"]["version"] == 2 * RELAY_PLIES + 5
    view = frame["state"]["view"]
    assert view["round"] == 2 and len(view["moves"]) == 5 and view["turn"] == (2 + 5) % 4
    assert probe.position_of(frame["state"]) == (1, 2, 5)
    # The move after the last of a relay round opens the next one, one version later.
    assert json.loads(relay_frame(3, 0, 0))["version"] == 2 * RELAY_PLIES + RELAY_PLIES
