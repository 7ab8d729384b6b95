"""A quiet site serves its next visitor: every lease and cached identity outlives a gap longer
than its expiry (issue "a site that holds up through a whole day").

The defect this guards against: a web process's last socket closed, its heartbeat stopped,
the sweep deleted its lease (``WebNode``), and the process kept the deleted row's id; every
later socket then pointed its connection at a row that no longer existed and closed with 1011,
until a restart. The list of what assumes ongoing activity, and why each holds, is written
beside the code (``apps/tables/services/presence.py``; ``apps/realtime/hub.py``).

In-process tests here run on either database; the end-to-end ones start the README's run
command (SQLite + the embedded Redis) and, where the environment gives them, PostgreSQL and a
Redis server of their own that they restart during the quiet spell.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.realtime.hub import hub
from apps.tables import services
from apps.tables.models import Connection, Table, WebNode
from tests.socket_client import Socket, db

from .test_table_socket import seat_table, seated

pytestmark = pytest.mark.django_db(transaction=True)


def _after_the_lease() -> timezone.datetime:
    return timezone.now() + services.lease_length() + timedelta(seconds=5)


def _mover_message(state: dict) -> dict:
    view = state["view"]
    legal = view["legal"][0]
    if "play" in legal:
        return {"type": "play", "round": view["round"], "ply": len(view["moves"]),
                "tile": legal["play"], "end": legal.get("end")}
    return {"type": "pass", "round": view["round"], "ply": len(view["moves"])}


async def test_a_socket_opened_after_the_sweep_deleted_the_lease_gets_its_state_and_plays(people):
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    first = Socket(f"/ws/table/{table.pk}/", users[0])
    assert await first.connect()
    await first.state()
    await first.close()
    # The whole process is quiet past its lease: the sweep ends nothing (the socket closed
    # cleanly) and deletes the lease, which holds no connection any more.
    await db(services.expire_leases)(now=_after_the_lease())
    assert await db(WebNode.objects.count)() == 0

    sockets = []
    for user in users:  # four people arrive at the quiet site
        sock = Socket(f"/ws/table/{table.pk}/", user)
        assert await sock.connect()
        sockets.append(sock)
    states = [(await sock.state(timeout=5))["state"] for sock in sockets]
    assert all(seat["connected"] for seat in states[-1]["seats"])
    turn = states[0]["view"]["turn"]
    version = await db(lambda: Table.objects.get(pk=table.pk).version)()
    await sockets[turn].send(_mover_message(states[turn]))
    for sock in sockets:
        await sock.until(lambda m: m["type"] == "state" and m["version"] > version
                         and len(m["state"]["view"]["moves"]) == 1, timeout=5)
    assert not [f for s in sockets for f in s.frames if f["type"] == "error"]
    # Every connection names a lease that exists.
    boots = await db(lambda: set(Connection.objects.values_list("node_id", flat=True)))()
    assert boots == {hub().boot}
    assert await db(WebNode.objects.filter(boot=hub().boot).exists)()
    for sock in sockets:
        await sock.close()


async def test_a_stalled_process_gets_back_the_presence_the_sweep_ended(people):
    """The process held sockets but did not renew in time (a long pause): the sweep ended their
    presence and deleted the lease. Its next beat writes the lease again and says that the
    sockets are open: their people are connected again, nobody had to reload."""
    table = await db(seat_table)(people)
    users = await db(seated)(table)
    sockets = []
    for user in users:
        sock = Socket(f"/ws/table/{table.pk}/", user)
        assert await sock.connect()
        await sock.state()
        sockets.append(sock)
    await sockets[0].until(lambda m: m["type"] == "state"
                           and all(s["connected"] for s in m["state"]["seats"]))
    assert await db(services.expire_leases)(now=_after_the_lease()) == 4
    assert await db(WebNode.objects.count)() == 0
    away = await sockets[0].until(lambda m: m["type"] == "state"
                                  and not any(s["connected"] for s in m["state"]["seats"]))
    assert away["state"]["table"]["paused"]  # nobody held the table: it paused by itself
    await hub().renew()
    back = await sockets[0].until(lambda m: m["type"] == "state"
                                  and all(s["connected"] for s in m["state"]["seats"]))
    assert not back["state"]["table"]["paused"]
    assert await db(Connection.objects.filter(node_id=hub().boot).count)() == 4
    for sock in sockets:
        await sock.close()


def test_the_sweep_leaves_a_lease_renewed_after_it_expired(people):
    """A lease found expired is ended only if it is still expired once each table is locked:
    a process that renewed meanwhile keeps its sockets (no away and back)."""
    table = seat_table(people)
    lease = services.Lease("boot-a", "web-a")
    services.register_node(lease)
    services.connect(user=people["host"], table_id=table.pk, channel_name="c-a", lease=lease)
    late = timezone.now() + services.lease_length() + timedelta(seconds=1)
    services.hold_lease(lease, now=late)  # renewed at the very moment the sweep looks
    assert services.expire_leases(now=late) == 0
    assert Connection.objects.filter(channel_name="c-a", node_id="boot-a").exists()
    assert WebNode.objects.filter(boot="boot-a").exists()


def test_an_earlier_run_of_the_same_process_is_ended_at_the_next_start(people):
    table = seat_table(people)
    before = services.Lease("boot-1", "web-a")
    services.register_node(before)
    services.connect(user=people["ana"], table_id=table.pk, channel_name="c-1", lease=before)
    services.register_node(services.Lease("boot-2", "web-a"))  # restarted, same place
    assert not Connection.objects.filter(channel_name="c-1").exists()
    assert list(WebNode.objects.values_list("boot", flat=True)) == ["boot-2"]


# -- end to end: the site's own processes ------------------------------------------------------

#: The lease and its heartbeat shortened, so that a quiet spell of a few seconds outlasts them.
QUIET_ENV = {"PRESENCE_LEASE_SECONDS": "2", "PRESENCE_HEARTBEAT_SECONDS": "1"}


def _error_lines(log: str) -> list[str]:
    """Lines of errors in Django's log format (``... ERROR name: ...``) and Celery's
    (``[...: ERROR/MainProcess] ...``), and tracebacks."""
    import re

    error = re.compile(r"\b(ERROR|CRITICAL)\b|^Traceback")
    return [line for line in log.splitlines() if error.search(line)]


def _play_one_move(clients, timeout: float = 5.0) -> None:
    state = clients[0].state()
    mover = clients[state["view"]["turn"]]
    before = len(state["view"]["moves"])
    mover.send(_mover_message(mover.state()))
    for client in clients:
        client.wait_state(lambda s: len(s["view"]["moves"]) == before + 1, timeout=timeout)


def _open_and_time(url: str, sessions: list[str], origin: str):
    import time

    from ..live import Client

    clients, waits = [], []
    for session in sessions:
        began = time.monotonic()
        client = Client(url, session, origin)
        client.wait(lambda f: f.get("type") == "state", timeout=10)
        waits.append(time.monotonic() - began)
        clients.append(client)
    return clients, waits


def _leases_in(sqlite_path) -> int:
    import sqlite3

    with sqlite3.connect(f"file:{sqlite_path}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT count(*) FROM tables_webnode").fetchone()[0]


@pytest.mark.slow
def test_the_run_command_serves_the_first_visitor_after_a_quiet_spell(run_site):
    """`make run`'s site on its embedded defaults: a page opened and closed, the whole site
    quiet until the sweep has deleted the lease, then four people open the table: each gets
    the state within 2 s and the first move reaches all of them; no ERROR in the log."""
    import time

    from ..live import seed_site

    site = run_site(env=QUIET_ENV)
    made = seed_site(site)
    url = f"{site.ws_url}/ws/table/{made['id']}/"
    first, _waits = _open_and_time(url, made["sessions"][:1], site.base_url)
    first[0].close()
    deadline = time.monotonic() + 30
    while _leases_in(site.var_dir / "db.sqlite3") and time.monotonic() < deadline:
        time.sleep(0.5)
    assert _leases_in(site.var_dir / "db.sqlite3") == 0, "the sweep never deleted the lease"
    time.sleep(2)  # and quiet a little longer
    clients, waits = _open_and_time(url, made["sessions"], site.base_url)
    assert max(waits) < 2, waits
    _play_one_move(clients)
    assert all(c.closed is None for c in clients)
    for client in clients:
        client.close()
    assert site.stop(timeout=40) == 0
    assert _error_lines(site.log()) == []


#: The site's processes connect under this name, so that only their connections are cut (the
#: test process's own, in its socket threads, are other tests' to use).
SITE_APPLICATION = "idle-site"


def _cut_database_connections() -> int:
    """What a PostgreSQL restart does to the site's idle connections, without restarting the
    server under everything else on the machine."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND application_name = %s",
                       [SITE_APPLICATION])
        return cursor.fetchone()[0]


@pytest.mark.postgres
@pytest.mark.slow
def test_a_quiet_site_whose_redis_restarted_and_connections_were_cut_serves_the_next_visitor(
        tmp_path):
    """Two web processes, a worker and beat on PostgreSQL and a redis-server of their own.
    Quiet past the lease; during the quiet spell Redis restarts (losing every key, the broker's
    queue and the snapshots) and every database connection of the site is cut. Then people
    arrive on both web processes: states within 2 s, moves applied and heard by everyone, and
    no ERROR after the faults' moment."""
    import time

    from tools.procs import RedisServer

    from ..live import Stack, session_of, started_table

    redis = RedisServer(tmp_path)
    redis.start()
    site = Stack(tmp_path / "site", dict(QUIET_ENV, REDIS_URL=redis.url,
                                         CELERY_BROKER_URL=redis.url.rsplit("/", 1)[0] + "/1"))
    site.env["DATABASE_URL"] += f"?application_name={SITE_APPLICATION}"
    try:
        table, users = started_table(turn_seconds=30)
        sessions = [session_of(u) for u in users]
        urls = [site.web("web1"), site.web("web2")]
        site.worker()
        site.beat()
        one, _ = _open_and_time(f"{urls[0]}/ws/table/{table.pk}/", sessions[:1],
                                urls[0].replace("ws:", "http:"))
        one[0].close()
        time.sleep(6)  # past the lease: the sweep deletes it
        assert not WebNode.objects.exists()
        redis.proc.kill()
        redis.start()
        # The two Daphnes (the socket threads; /healthz) and the worker: beat keeps none.
        assert _cut_database_connections() >= 3
        time.sleep(4)  # every process notices (the channel layer's reader reconnects)
        marks = {name: len(site.log(name)) for name in ("web1", "web2", "worker", "beat")}
        clients = []
        waits = []
        for i, session in enumerate(sessions):
            url = urls[i % 2]
            got, took = _open_and_time(f"{url}/ws/table/{table.pk}/", [session],
                                       url.replace("ws:", "http:"))
            clients += got
            waits += took
        assert max(waits) < 2, waits
        for _ in range(3):
            _play_one_move(clients)
        assert all(c.closed is None for c in clients)
        for client in clients:
            client.close()
        errors = {name: _error_lines(site.log(name)[mark:]) for name, mark in marks.items()}
        assert errors == {name: [] for name in marks}, errors
    finally:
        site.stop()
        redis.stop()
