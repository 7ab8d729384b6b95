"""The tables' timers in Redis and the worker's dispatcher that fires them
(``apps.tables.timers``, ``apps.tables.dispatch``), through the services."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.tables import dispatch, services, timers
from apps.tables.models import Move, Table

from .conftest import play_random_move
from .test_clock import connect_all, fresh

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_timers():
    timers.clear()
    yield
    timers.clear()


@pytest.fixture
def timed(people):
    table = services.create_table(host=people["host"], preset="partners", public=True,
                                  options={"turn_seconds": 20})
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk)
    connect_all(table)
    services.start_match(user=people["host"], table_id=table.pk)
    return fresh(table)


def test_one_timer_per_table_the_newest_replaces_the_older():
    now = timezone.now()
    timers.set_timer(7, now + timedelta(seconds=45), round_number=0, ply=3)
    timers.set_timer(7, now + timedelta(seconds=1), round_number=0, ply=4)
    timers.set_timer(8, now + timedelta(seconds=2), round_number=1, ply=0, slow_bot=True)
    timers.set_timer(9, now + timedelta(seconds=30), round_number=None, ply=None)
    assert timers.pop_due(now) == []
    assert timers.pop_due(now + timedelta(seconds=5)) == [(7, 0, 4, False), (8, 1, 0, True)]
    assert timers.pop_due(now + timedelta(seconds=5)) == []  # taken once
    assert timers.pop_due(now + timedelta(seconds=60)) == [(9, None, None, False)]
    assert timers.next_due() is None


def test_every_change_sets_the_tables_timer_for_its_new_deadline(timed):
    """After a commit the table's deadline is its one timer: a move made in time replaces the
    turn's timer with the next turn's, which carries the position the table is now at."""
    first = fresh(timed)
    play_random_move(first, random.Random(1))
    after = fresh(timed)
    assert after.turn_deadline > first.turn_deadline
    assert timers.pop_due(first.turn_deadline) == []  # the opener's timer is gone
    assert timers.pop_due(after.turn_deadline) == [(timed.pk, 0, 1, False)]


def test_the_dispatcher_plays_for_a_person_whose_time_ran_out_and_only_once(timed):
    deadline = fresh(timed).turn_deadline
    assert dispatch.fire_due(now=deadline - timedelta(seconds=1)) == 0
    assert not Move.objects.filter(round__match__table=timed).exists()
    assert dispatch.fire_due(now=deadline + timedelta(milliseconds=10)) == 1
    moves = Move.objects.filter(round__match__table=timed)
    assert [m.by for m in moves] == ["table"]
    # A timer set for that position again (a late copy, a second worker) changes nothing.
    timers.set_timer(timed.pk, deadline, round_number=0, ply=0)
    assert dispatch.fire_due(now=deadline + timedelta(seconds=1)) == 1
    assert Move.objects.filter(round__match__table=timed).count() == 1


def test_a_slow_bots_turn_goes_to_the_bots_queue_when_due(timed, monkeypatch):
    sent = []
    monkeypatch.setattr(dispatch.current_app, "send_task",
                        lambda name, args, **kw: sent.append((name, args, kw)))
    timers.set_timer(timed.pk, timezone.now(), round_number=0, ply=0, slow_bot=True)
    assert dispatch.fire_due(now=timezone.now()) == 1
    assert sent == [("apps.tables.tasks.turn_due", (timed.pk, 0, 0, True), {"queue": "bots"})]
    assert not Move.objects.filter(round__match__table=timed).exists()


def test_redis_away_leaves_the_deadline_to_the_sweep(timed, monkeypatch, caplog):
    from redis.exceptions import ConnectionError as RedisConnectionError

    from apps.tables import scheduling

    def away(*args, **kwargs):
        raise RedisConnectionError("Connection refused")

    monkeypatch.setattr(timers, "set_timer", away)
    with caplog.at_level("WARNING", logger="apps.tables.scheduling"):
        scheduling.schedule_deadline(timed.pk, (0, 1), timezone.now(), actor="table")
    assert "the sweep will act" in caplog.text
    assert all(r.levelname == "WARNING" for r in caplog.records)
    assert Table.objects.get(pk=timed.pk).turn_deadline is not None
