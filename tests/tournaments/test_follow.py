"""What the tables tell a tournament is done by a worker (apps/tournaments/follow.py, the task
``follow_table``), not on the call that made the table's version: a move that ends a match
answers without starting the next one; the worker then does, once however often or late its
task runs."""

from __future__ import annotations

import random

import pytest
from celery.exceptions import Retry
from django.db import OperationalError

from apps.tables import services as tables
from apps.tables.models import Match, Table
from apps.tournaments import follow, tasks
from apps.tournaments.models import Game

from .conftest import one_on_one, play_out, show_up

pytestmark = pytest.mark.usefixtures("books")


def matches(game: Game) -> int:
    return Match.objects.filter(table_id=game.table_id).count()


def test_a_move_that_ends_a_match_does_not_start_the_next_one_itself(people, worker):
    _, game = one_on_one(people, format="knockout", best_of=3)
    worker.held = True
    show_up(game)
    # Everyone came: the match starts when the worker hears it, not on the socket's call.
    assert Table.objects.get(pk=game.table_id).state == Table.State.WAITING
    came = {"name": "apps.tournaments.tasks.follow_table",
            "kwargs": {"game_id": game.pk, "came": True, "left": [], "match_over": False,
                       "closed": False}}
    assert worker.queued == [came, came]  # one per arrival: the second finds it started
    assert worker.run() == 2
    assert Table.objects.get(pk=game.table_id).state == Table.State.PLAYING
    play_out(game.table_id, random.Random(3))  # the last move's call returns...
    assert matches(game) == 1  # ...with no second match started
    game.refresh_from_db()
    assert game.counted == [] and not game.decided
    last = worker.queued[-1]
    assert last["kwargs"]["match_over"] is True
    assert worker.run() >= 1  # the worker counts the match and starts the next
    game.refresh_from_db()
    assert len(game.counted) == 1 and matches(game) == 2
    # Sent again (redelivered, tried again after an outage) or late: nothing more happens.
    worker.queued.append(last)
    assert worker.run() == 1
    game.refresh_from_db()
    assert len(game.counted) == 1 and matches(game) == 2
    assert set(worker.queues) == {None}  # the default queue, not the slow bots'


def test_a_seat_left_before_the_match_is_no_forfeit_however_late_the_worker(people, worker):
    bea = people["bea"]
    _, game = one_on_one(people)
    worker.held = True
    tables.leave_table(user=bea, table_id=game.table_id)  # before the match: only a free seat
    assert worker.queued == []  # settled at the news: nothing for the worker
    tables.join_table(user=bea, table_id=game.table_id)
    show_up(game)
    worker.run()
    assert Table.objects.get(pk=game.table_id).state == Table.State.PLAYING
    assert not Game.objects.get(pk=game.pk).decided


def test_a_match_over_heard_after_the_closing_still_counts(people, worker):
    """Two tasks may run in either order: the closing's first, the match just won still
    counts for the side ahead."""
    _, game = one_on_one(people, format="knockout", best_of=3)
    show_up(game)
    worker.held = True
    play_out(game.table_id, random.Random(3))
    tables.close_by_staff(table_id=game.table_id, reason="test")
    assert [m["kwargs"]["closed"] for m in worker.queued] == [False, True]
    worker.queued.reverse()
    worker.run()
    game.refresh_from_db()
    assert game.outcome == "abandoned" and len(game.counted) == 1
    winner = Match.objects.get(table_id=game.table_id).winner
    assert game.winner_id == (game.team_a_id, game.team_b_id)[winner]


def test_the_tables_that_are_no_tournaments_cost_no_task(people, worker):
    table = tables.create_table(host=people["ana"], preset="block", players=2, public=True)
    tables.join_table(user=people["bea"], table_id=table.pk)
    tables.leave_table(user=people["bea"], table_id=table.pk)
    assert worker.queued == [] and worker.queues == []


def test_an_outage_tries_the_news_again(monkeypatch, caplog):
    def away(**kwargs):
        raise OperationalError("connection failed: server closed the connection unexpectedly")

    monkeypatch.setattr(follow, "follow_up", away)
    with caplog.at_level("WARNING", logger="apps.tournaments.tasks"), pytest.raises(Retry):
        tasks.follow_table(game_id=7, match_over=True)
    record, = caplog.records
    assert record.getMessage().startswith(
        "tournament game 7: what its table told is tried again: OperationalError")
    assert record.exc_info is None
