"""Turn-based deadlines survive a full restart and a Redis flush (docs/turn-based.md).

Real processes (tests/live.py ``Stack``: a worker and beat on the test's PostgreSQL database):
a turn-based table with a short time per move, every process stopped before its deadline and
started again past it. The deadline is in the database, so nothing is lost; the outage moves
the person's clock on by its length (Lichess's rule), and the move is played once.
"""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from django.utils import timezone

from apps.core import snapshots
from apps.tables import scheduling, services
from apps.tables.models import BeatMark, Move, Table, TableEvent

from ..live import Stack

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.timeout(300),
              pytest.mark.django_db(transaction=True)]

MOVE = 8


def _table(settings) -> Table:
    settings.TURN_BASED_MOVE_SECONDS = (MOVE,)  # as the stack's processes have it
    users = [get_user_model().objects.create_user(username=n, password="pw-" + n * 2)
             for n in ("ana", "bea")]
    table = services.create_table(host=users[0], preset="block", players=2, pace="turn",
                                  move_seconds=MOVE)
    services.join_table(user=users[1], table_id=table.pk, code=table.code)
    services.start_match(user=users[0], table_id=table.pk)
    return Table.objects.get(pk=table.pk)


def _first_moves(table: Table) -> list[Move]:
    return list(Move.objects.filter(round__match__table=table, round__number=0, ply=0))


def _wait(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.2)
    return False


def _running(tmp_path, name: str, env: dict) -> Stack:
    site = Stack(tmp_path / name, {"TURN_BASED_MOVE_SECONDS": str(MOVE), **env})
    site.worker()
    site.beat()
    return site


def _up_then_table(tmp_path, settings, env: dict) -> tuple[Stack, Table]:
    """The first stack up (beat has run once), then the table: its time per move starts once
    the processes are there, however long a loaded machine took to start them."""
    site = _running(tmp_path, "a", env)
    assert _wait(lambda: BeatMark.objects.filter(name="sweep").exists(), 90), site.log("beat")
    return site, _table(settings)


def _down_until_past(site: Stack, table: Table) -> None:
    """The table's timer is in the stack's Redis and beat has run since the table was made
    (its mark is fresh), then everything stops before the deadline and stays down until 4 s
    past it."""
    made = timezone.now()
    with override_settings(REDIS_KEY_PREFIX=site.prefix):
        scheduling.schedule_deadline(table.pk, (0, 0), table.turn_deadline)
    assert _wait(lambda: BeatMark.objects.filter(name="sweep", seen_at__gte=made).exists(),
                 MOVE / 2), site.log("beat")
    assert not _first_moves(table)
    site.stop()
    wait = table.turn_deadline.timestamp() + 4 - time.time()
    assert wait > 4, "the site took too long to start: the deadline passed while it ran"
    time.sleep(wait)
    assert not _first_moves(table)


def _timeouts(table: Table) -> list[dict]:
    return [e for row in TableEvent.objects.filter(table=table) for e in row.events
            if e.get("kind") == "timeout"]


def test_a_full_restart_past_the_deadline_plays_the_move_once_after_the_time_left(
        tmp_path, settings):
    # The stack's beat counts a 3 s silence as an outage.
    env = {"TURN_BASED_OUTAGE_SECONDS": "3"}
    site, table = _up_then_table(tmp_path, settings, env)
    deadline = table.turn_deadline
    _down_until_past(site, table)
    last_beat = BeatMark.objects.get(name="sweep").seen_at
    site = _running(tmp_path, "b", env)
    try:
        assert _wait(lambda: _first_moves(table), 90), site.log("worker")
        time.sleep(3)  # a second act would land here
        moves = _first_moves(table)
        assert len(moves) == 1 and moves[0].by == Move.By.TABLE
        assert len([e for e in _timeouts(table) if e["seat"] == moves[0].seat]) >= 1
        # The deadline it acted on is the old one moved on by the outage (at least the 4 s
        # the site stayed down past it), so the time left when beat last ran came back.
        assert moves[0].due_at - deadline >= timedelta(seconds=4)
        assert moves[0].due_at - last_beat >= deadline - last_beat
        assert moves[0].created_at >= moves[0].due_at
    finally:
        site.stop()


def test_a_redis_flush_while_down_loses_no_deadline(tmp_path, settings):
    # Outages are not counted here (a long threshold): the deadline, past when the site comes
    # back, is acted on by the sweep from the database alone.
    env = {"TURN_BASED_OUTAGE_SECONDS": "600"}
    site, table = _up_then_table(tmp_path, settings, env)
    _down_until_past(site, table)
    client = snapshots.client()
    keys = list(client.scan_iter(f"{site.prefix}:*"))
    assert f"{site.prefix}:timers".encode() in keys
    client.delete(*keys)
    site = _running(tmp_path, "b", env)
    try:
        assert _wait(lambda: _first_moves(table), 90), site.log("worker")
        time.sleep(3)
        moves = _first_moves(table)
        assert len(moves) == 1 and moves[0].by == Move.By.TABLE
        assert moves[0].due_at == table.turn_deadline
        assert len([e for e in _timeouts(table) if e["seat"] == moves[0].seat]) == 1
    finally:
        site.stop()
