"""Presence that survives crashes and restarts, with real Daphne processes, worker and beat on
PostgreSQL and Redis (docs/protocol.md, "Presence").

(a) a socket the server closes with 1011 shows its person away at once;
(b) of two web nodes, one SIGKILLed: the seats it held show away within 30 s, then the table
    plays for them after 5 s on their turn, and a bot stands in after the away limit;
(c) the whole site restarted: with nobody coming back the table pauses and closes; with
    everyone coming back, presence is right and nothing was played for them.
"""

from __future__ import annotations

import signal
import time

import pytest

from apps.tables.models import Move, Table

from ..live import Client, Stack, session_of, started_table

pytestmark = [pytest.mark.postgres, pytest.mark.slow,
              pytest.mark.django_db(transaction=True)]

#: Presence limits of tables.md shortened where a test would otherwise wait minutes; the lease
#: (15 s) and the grace on a turn (5 s) stay as they are in production.
FAST = {"PRESENCE_AWAY_LIMIT_SECONDS": "12", "PRESENCE_EMPTY_LIMIT_SECONDS": "12"}


def _table(turn_seconds: int | None):
    return started_table(turn_seconds)


def _clients(table, users, urls: list[str]) -> list[Client]:
    """One socket per seat; seat i on urls[i % len(urls)]... unless urls has one per seat."""
    out = []
    for i, user in enumerate(users):
        base = urls[i] if len(urls) == len(users) else urls[i % len(urls)]
        origin = base.replace("ws://", "http://")
        out.append(Client(f"{base}/ws/table/{table.pk}/", session_of(user), origin))
    for client in out:
        client.wait(lambda f: f.get("type") == "state")
    return out


def _connected(state: dict) -> list[bool]:
    return [s["connected"] for s in state["seats"]]


@pytest.fixture
def stack(tmp_path):
    stacks = []

    def make(env=None) -> Stack:
        s = Stack(tmp_path / f"stack{len(stacks)}", dict(FAST, **(env or {})))
        stacks.append(s)
        return s

    yield make
    for s in stacks:
        s.stop()


def test_a_socket_the_server_closes_with_1011_is_away_at_once(stack):
    from apps.core import doorbell, snapshots
    from apps.tables.models import Connection

    table, users = _table(turn_seconds=None)
    site = stack()
    url = site.web("web1")
    site.beat()
    clients = _clients(table, users, [url])
    # The last seat's arrival reaches seat 0 a moment after that seat's own first state.
    assert all(_connected(clients[0].wait_state(lambda s: all(_connected(s)), timeout=10)))
    # Crash the consumer of seat 1 from inside: a channel message it has no handler for makes
    # channels raise, the application dies and Daphne closes the socket with 1011; the
    # consumer's disconnect never runs.
    channel = Connection.objects.get(user=users[1]).channel_name
    snapshots.client().publish(channel, doorbell._serializer().serialize({"type": "no.such"}))
    deadline = time.monotonic() + 15
    while clients[1].closed is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert clients[1].closed == 1011
    started = time.monotonic()
    state = clients[0].wait_state(lambda s: not s["seats"][1]["connected"], timeout=30)
    assert time.monotonic() - started < 30
    assert _connected(state) == [True, False, True, True]
    assert not Connection.objects.filter(user=users[1]).exists()
    for c in clients:
        c.close()


def test_a_killed_web_node_leaves_its_seats_away_then_the_rules_apply(stack):
    table, users = _table(turn_seconds=60)
    engine_turn = _turn(table)
    site = stack()
    url1, url2 = site.web("web1"), site.web("web2")
    site.worker()
    site.beat()
    # The player to move and the one after sit on web2; the others on web1.
    on2 = {engine_turn, (engine_turn + 1) % 4}
    clients = _clients(table, users, [url2 if i in on2 else url1 for i in range(4)])
    watcher = clients[(engine_turn + 2) % 4]
    # A later seat's arrival reaches the watcher a moment after the watcher's own first state.
    assert all(_connected(watcher.wait_state(lambda s: all(_connected(s)), timeout=10)))
    killed = time.monotonic()
    site.kill("web2", signal.SIGKILL)
    state = watcher.wait_state(lambda s: [s["seats"][i]["connected"] for i in on2]
                               == [False, False], timeout=30)
    away_after = time.monotonic() - killed
    assert away_after < 30, away_after
    assert all(state["seats"][i]["connected"] for i in range(4) if i not in on2)
    # The player to move is away with 60 s on the clock: the table plays for them after 5 s.
    move = watcher.wait(lambda f: f.get("type") == "state" and any(
        e.get("kind") == "move" and e.get("seat") == engine_turn for e in f["events"]),
        timeout=20)
    by = [e["by"] for e in move["events"] if e.get("kind") == "move"
          and e.get("seat") == engine_turn][0]
    assert by == "table"
    first = Move.objects.filter(round__match__table=table, seat=engine_turn).order_by("ply")[0]
    assert first.by == "table" and first.due_at is not None
    # Away past the (shortened) limit: a bot stands in, and every seat says so.
    state = watcher.wait_state(lambda s: all(s["seats"][i]["standin"] for i in on2), timeout=40)
    assert not any(state["seats"][i]["standin"] for i in range(4) if i not in on2)
    for c in clients:
        c.close()


def test_after_a_restart_nobody_back_pauses_and_closes_everybody_back_plays_on(stack):
    table, users = _table(turn_seconds=None)
    site = stack()
    url = site.web("web1")
    site.worker()
    site.beat()
    clients = _clients(table, users, [url])
    version = clients[0].state()["version"]
    site.stop()  # the whole site goes down at once; the sockets drop with it
    for c in clients:
        c.close()
    # Everybody comes back: presence is right and nothing was played for anyone.
    site = stack()
    url = site.web("web1")
    site.worker()
    site.beat()
    clients = _clients(table, users, [url])
    state = clients[0].wait_state(lambda s: all(_connected(s)), timeout=30)
    assert not state["table"]["paused"]
    assert not Move.objects.filter(round__match__table=table, by="table").exists()
    assert state["version"] >= version
    # Down again; this time nobody comes back: the leases run out, the table pauses, and it
    # closes after the (shortened) empty limit.
    site.stop()
    for c in clients:
        c.close()
    site = stack()
    site.web("web1")
    site.worker()
    site.beat()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        table.refresh_from_db()
        if table.state == Table.State.CLOSED:
            break
        time.sleep(0.5)
    assert table.state == Table.State.CLOSED and table.closed_reason == "empty"
    assert table.paused and not table.connections.exists()
    assert not Move.objects.filter(round__match__table=table, by="table").exists()


def _turn(table) -> int:
    from apps.tables import game

    return game.restore(table.current_match).current.turn
