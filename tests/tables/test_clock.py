"""Turn clocks, pause, presence, stand-ins and reservations, through the services."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.tables import services
from apps.tables.models import Connection, Move, Table
from apps.tables.services import NotDue, ServiceError, StaleMove

from .conftest import play_random_move, position, race, seat_user


def fresh(table: Table) -> Table:
    return Table.objects.get(pk=table.pk)


def connect_all(table: Table) -> None:
    for seat in table.seats.exclude(user=None):
        services.connect(user=seat.user, table_id=table.pk, channel_name=f"c{seat.index}")


@pytest.fixture
def timed(people):
    """partners, 20 s turns, four people connected, the match started."""
    table = services.create_table(host=people["host"], preset="partners", public=True,
                                  options={"turn_seconds": 20})
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk)
    connect_all(table)
    services.start_match(user=people["host"], table_id=table.pk)
    return fresh(table)


def test_the_deadline_is_the_turn_time_and_the_table_plays_the_first_tile_that_fits(timed):
    started, deadline = timed.turn_started_at, timed.turn_deadline
    assert deadline - started == timedelta(seconds=20)
    engine, rnd, ply = position(timed)
    with pytest.raises(NotDue):
        services.act_on_deadline(table_id=timed.pk, round_number=rnd, ply=ply,
                                 now=deadline - timedelta(seconds=1))
    first = engine.current.legal()[0]
    services.act_on_deadline(table_id=timed.pk, round_number=rnd, ply=ply, now=deadline)
    move = Move.objects.get()
    assert move.by == Move.By.TABLE and move.seat == engine.current.turn
    from apps.rules.tiles import NAMES

    assert move.tile == NAMES[first[0]]


def test_a_late_or_repeated_deadline_does_nothing(timed):
    engine, rnd, ply = position(timed)
    deadline = timed.turn_deadline
    services.act_on_deadline(table_id=timed.pk, round_number=rnd, ply=ply, now=deadline)
    # The same timer again (redelivered), and the sweep for the old position: no second move.
    with pytest.raises(ServiceError):
        services.act_on_deadline(table_id=timed.pk, round_number=rnd, ply=ply, now=deadline)
    assert Move.objects.count() == 1
    # A timer for a turn the player already played is a no-op.
    table = fresh(timed)
    play_random_move(table, random.Random(1))
    with pytest.raises(StaleMove):
        services.act_on_deadline(table_id=table.pk, round_number=rnd, ply=ply + 1,
                                 now=fresh(table).turn_deadline)
    assert Move.objects.count() == 2


def test_pause_freezes_the_clock_and_resume_gives_back_the_time_left(timed, people):
    before = timed.turn_deadline - timezone.now()
    services.pause(user=people["host"], table_id=timed.pk)
    table = fresh(timed)
    assert table.paused and table.turn_deadline is None
    assert services.sweep(now=timezone.now() + timedelta(hours=1))["deadlines"] == 0
    with pytest.raises(ServiceError):
        services.pause(user=people["ana"], table_id=timed.pk)
    # Pretend the pause began 90 s ago: the turn's start and the pause move back together.
    ago = timedelta(seconds=90)
    Table.objects.filter(pk=timed.pk).update(paused_at=table.paused_at - ago,
                                             turn_started_at=table.turn_started_at - ago)
    services.resume(user=people["host"], table_id=timed.pk)
    after = fresh(timed).turn_deadline - timezone.now()
    assert abs((after - before).total_seconds()) < 1


def test_an_absent_player_gets_5_seconds_with_a_turn_time(timed):
    engine, rnd, ply = position(timed)
    turn = engine.current.turn
    Connection.objects.filter(channel_name=f"c{turn}").delete()
    services.disconnect(channel_name="nobody")  # unknown sockets change nothing
    conn = Connection.objects.create(table=timed, user=seat_user(timed, turn),
                                     channel_name="gone")
    services.disconnect(channel_name=conn.channel_name)
    table = fresh(timed)
    seat = table.seats.get(index=turn)
    assert seat.away_since is not None
    assert table.turn_deadline == seat.away_since + timedelta(seconds=5)
    # Coming back never extends the turn past its own time.
    services.connect(user=seat.user, table_id=table.pk, channel_name="back")
    assert fresh(timed).turn_deadline == table.turn_started_at + timedelta(seconds=20)


def test_an_absent_player_gets_30_seconds_without_a_turn_time(full_table, people):
    connect_all(full_table)
    Table.objects.filter(pk=full_table.pk).update(options={"turn_seconds": None})
    services.start_match(user=people["host"], table_id=full_table.pk)
    table = fresh(full_table)
    assert table.turn_deadline is None
    engine, _, _ = position(table)
    services.disconnect(channel_name=f"c{engine.current.turn}")
    table = fresh(full_table)
    seat = table.seats.get(index=engine.current.turn)
    assert table.turn_deadline == max(seat.away_since, table.turn_started_at) + timedelta(
        seconds=30)


def test_away_two_minutes_a_bot_stands_in_and_gives_the_hand_back(timed):
    services.disconnect(channel_name="c2")
    seat = fresh(timed).seats.get(index=2)
    soon = seat.away_since + timedelta(seconds=119)
    assert services.sweep(now=soon)["standins"] == 0
    later = seat.away_since + timedelta(seconds=121)
    assert services.sweep(now=later)["standins"] == 1
    assert fresh(timed).seats.get(index=2).standin
    with pytest.raises(ServiceError) as info:
        engine, rnd, ply = position(timed)
        services.play_move(user=seat.user, table_id=timed.pk, round_number=rnd, ply=ply,
                           is_pass=True)
    assert info.value.code in ("standin", "not_your_turn")
    services.connect(user=seat.user, table_id=timed.pk, channel_name="c2-again")
    seat = fresh(timed).seats.get(index=2)
    assert not seat.standin and seat.away_since is None


def test_a_bot_standing_in_plays_on_its_deadline(timed):
    engine, rnd, ply = position(timed)
    absent = (engine.current.turn + 1) % 4
    services.disconnect(channel_name=f"c{absent}")
    away = fresh(timed).seats.get(index=absent).away_since
    services.stand_in(table_id=timed.pk, seat_index=absent, now=away + timedelta(seconds=121))
    play_random_move(fresh(timed), random.Random(2))  # the seat before plays; now it is theirs
    table = fresh(timed)
    assert position(table)[0].current.turn == absent
    assert table.turn_deadline == table.turn_started_at + timedelta(milliseconds=1000)
    services.act_on_deadline(table_id=table.pk, now=table.turn_deadline)
    assert Move.objects.order_by("-id").first().by == Move.By.BOT


def test_nobody_connected_pauses_and_closes_after_two_minutes(timed):
    for i in range(4):
        services.disconnect(channel_name=f"c{i}")
    table = fresh(timed)
    assert table.paused and table.paused_by is None and table.empty_since is not None
    assert services.sweep(now=table.empty_since + timedelta(seconds=100))["closed"] == 0
    # Somebody back: the table resumes by itself.
    services.connect(user=seat_user(table, 1), table_id=table.pk, channel_name="back")
    table = fresh(timed)
    assert not table.paused and table.empty_since is None and table.turn_deadline
    services.disconnect(channel_name="back")
    table = fresh(timed)
    assert services.sweep(now=table.empty_since + timedelta(seconds=121))["closed"] == 1
    table = fresh(timed)
    assert table.state == Table.State.CLOSED and table.current_match.rounds.exists()


def test_a_host_pause_is_not_lifted_by_a_return(timed, people):
    services.pause(user=people["host"], table_id=timed.pk)
    for i in range(4):
        services.disconnect(channel_name=f"c{i}")
    services.connect(user=people["ana"], table_id=timed.pk, channel_name="back")
    assert fresh(timed).paused


@pytest.fixture
def with_bots(people):
    table = services.create_table(host=people["host"], preset="partners", allow_bots=True,
                                  bot_think_ms=500, options={"turn_seconds": 10})
    for _ in range(3):
        services.add_bot(user=people["host"], table_id=table.pk)
    connect_all(table)
    services.start_match(user=people["host"], table_id=table.pk)
    return fresh(table)


def _finish_round(table: Table) -> None:
    for _ in range(200):
        t = fresh(table)
        engine, rnd, ply = position(t)
        if engine.current is None:
            return
        services.act_on_deadline(table_id=t.pk, round_number=rnd, ply=ply,
                                 now=t.turn_deadline)
    raise AssertionError("the round did not end")


def test_bots_play_through_the_same_service_after_their_think_time(with_bots):
    engine, rnd, ply = position(with_bots)
    table = fresh(with_bots)
    if engine.current.turn != 0:
        assert table.turn_deadline == table.turn_started_at + timedelta(milliseconds=500)
    _finish_round(with_bots)
    assert Move.objects.filter(by=Move.By.BOT).exists()
    assert Move.objects.filter(by=Move.By.TABLE).exists()  # the host never moved


def test_taking_a_bots_seat_mid_round_is_a_reservation_honoured_at_the_round_end(with_bots,
                                                                                 people):
    services.join_table(user=people["ana"], table_id=with_bots.pk, code=with_bots.code)
    seat = fresh(with_bots).seats.get(reserved_for=people["ana"])
    assert seat.is_bot and seat.user is None
    services.remove_bot(user=people["host"], table_id=with_bots.pk,
                        seat_index=(seat.index % 3) + 1)
    leaving = fresh(with_bots).seats.get(index=(seat.index % 3) + 1)
    assert leaving.is_bot and leaving.bot_leaving  # still playing this round
    _finish_round(with_bots)
    table = fresh(with_bots)
    seat = table.seats.get(index=seat.index)
    assert seat.user == people["ana"] and not seat.is_bot and seat.reserved_for is None
    assert table.seats.get(index=leaving.index).empty
    # With a seat empty the table waits instead of dealing.
    assert table.turn_deadline is None
    services.add_bot(user=people["host"], table_id=table.pk)
    assert fresh(with_bots).turn_deadline is not None


def test_leaving_mid_round_leaves_a_bot_until_the_round_ends(timed, people):
    services.leave_table(user=people["bea"], table_id=timed.pk)
    seat = fresh(timed).seats.get(index=2)
    assert seat.standin and seat.leaving and seat.user == people["bea"]
    _finish_round(timed)
    assert fresh(timed).seats.get(index=2).empty


def test_the_next_round_is_dealt_by_itself_after_the_result(timed):
    _finish_round(timed)
    table = fresh(timed)
    assert table.turn_deadline == table.turn_started_at + timedelta(seconds=10)
    services.act_on_deadline(table_id=table.pk, now=table.turn_deadline)
    engine, rnd, ply = position(table)
    assert (rnd, ply) == (1, 0) and engine.current is not None


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_human_move_racing_the_deadline_applies_one_move(people):
    table = services.create_table(host=people["host"], preset="partners", public=True,
                                  options={"turn_seconds": 5})
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk)
    connect_all(table)
    services.start_match(user=people["host"], table_id=table.pk)
    table = fresh(table)
    engine, rnd, ply = position(table)
    user = seat_user(table, engine.current.turn)
    from apps.rules.engine import legal_dict

    move = legal_dict(*engine.current.legal()[-1])
    results = race(
        ("human", lambda: services.play_move(user=user, table_id=table.pk, round_number=rnd,
                                             ply=ply, tile=move.get("play"),
                                             end=move.get("end"))),
        ("timer", lambda: services.act_on_deadline(table_id=table.pk, round_number=rnd,
                                                   ply=ply, now=table.turn_deadline)),
    )
    # The loser finds the table moved on, or (the human first) the next turn not yet due.
    applied = [r for r in results if r in ("human", "timer")]
    assert len(applied) == 1 and len(results) == 2
    assert set(results) - set(applied) <= {"stale", "not_due"}
    assert Move.objects.filter(round__match__table=table).count() == 1


def test_a_table_nobody_ever_opened_leaves_the_lobby_and_closes(people):
    """shared/specs/tables.md: with nobody connected a table leaves the lobby and closes after
    2 minutes. A table whose host never opened its page (nor anyone else) counts from when it
    was made; one with a page open does not close."""
    from apps.tables import selectors

    ghost = services.create_table(host=people["host"], preset="partners", public=True)
    services.join_table(user=people["ana"], table_id=ghost.pk, code=ghost.code)
    held = services.create_table(host=people["bea"], preset="partners", public=True)
    Connection.objects.create(table=held, user=people["bea"], channel_name="test-channel")
    made = Table.objects.get(pk=ghost.pk).created_at
    assert {ghost.pk, held.pk} <= {t.pk for t in selectors.lobby_tables()}

    done = services.sweep(now=made + timedelta(seconds=110))
    assert done["unopened"] == 0 and Table.objects.get(pk=ghost.pk).state == Table.State.WAITING
    done = services.sweep(now=made + timedelta(minutes=2, seconds=1))
    assert done["unopened"] == 1 and done["closed"] == 1
    ghost = Table.objects.get(pk=ghost.pk)
    assert (ghost.state, ghost.closed_reason) == (Table.State.CLOSED, "empty")
    assert Table.objects.get(pk=held.pk).state == Table.State.WAITING
    assert ghost.pk not in {t.pk for t in selectors.lobby_tables()}
    assert held.pk in {t.pk for t in selectors.lobby_tables()}
