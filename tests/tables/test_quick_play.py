"""Quick play ("Online", seed 003) and "start with bots" (seed 002): services, the fill after the
wait (the clock moved, never slept), the timer and the sweep behind it, and the race on
PostgreSQL."""

from __future__ import annotations

import random
import threading
from datetime import timedelta

import pytest
from django.utils import timezone, translation

from apps.tables import selectors, services, tasks
from apps.tables.models import Match, Seat, Table
from apps.tables.services import NotDue, ServiceError

from .conftest import play_random_move, position


def refused(expected: str, fn, **kwargs):
    with pytest.raises(ServiceError) as info:
        fn(**kwargs)
    assert info.value.code == expected, info.value.message
    assert info.value.message
    return info.value


@pytest.fixture(autouse=True)
def fills(monkeypatch, settings):
    """The fill timers the services ask for, instead of Celery: (table id, when)."""
    settings.QUICK_PLAY_FILL_SECONDS = 20
    asked: list = []
    monkeypatch.setattr("apps.tables.scheduling.schedule_fill",
                        lambda table_id, when: asked.append((table_id, when)))
    return asked


@pytest.fixture
def users(make_user):
    return [make_user(f"p{i}") for i in range(9)]


def fresh(table: Table) -> Table:
    return Table.objects.get(pk=table.pk)


def people_at(table: Table) -> list[str]:
    return [s.user.username for s in Seat.objects.filter(table=table, user__isnull=False)
            .select_related("user").order_by("index")]


def version(table: Table) -> int:
    return fresh(table).version


# -- seating -------------------------------------------------------------------------------------

def test_the_first_opens_a_table_the_next_join_it_and_four_people_start_at_once(
        users, fills, django_capture_on_commit_callbacks):
    before = timezone.now()
    with django_capture_on_commit_callbacks(execute=True):
        table = services.quick_play(user=users[0], preset="partners")
    table = fresh(table)
    assert (table.quick, table.public, table.allow_bots, table.hidden) == (True, True, True,
                                                                           False)
    assert table.state == Table.State.WAITING and table.host == users[0]
    assert table.bot_level == "medium" and table.options["turn_seconds"] == 45
    assert before + timedelta(seconds=20) <= table.fill_at <= timezone.now() + timedelta(
        seconds=20)
    assert fills == [(table.pk, table.fill_at)]  # the timer is asked for after the commit
    for user in users[1:3]:
        assert services.quick_play(user=user, preset="partners").pk == table.pk
    assert fresh(table).state == Table.State.WAITING
    assert services.quick_play(user=users[3], preset="partners").pk == table.pk
    table = fresh(table)
    assert table.state == Table.State.PLAYING and table.fill_at is None
    assert not table.bot_filled and people_at(table) == ["p0", "p1", "p2", "p3"]
    assert position(table)[0].current is not None  # the first round is dealt
    assert len(fills) == 1
    # The fifth person finds no waiting table: a new one.
    assert services.quick_play(user=users[4], preset="partners").pk != table.pk


@pytest.mark.parametrize(("first", "second", "same"), [
    (("partners", None), ("partners", 4), True),
    (("partners", None), ("partners-66", None), False),
    (("draw", 2), ("draw", 2), True),
    (("draw", 2), ("draw", 3), False),
    (("draw", None), ("draw", 4), True),
    (("tranca", 3), ("block", 3), False),
])
def test_a_table_is_shared_only_by_the_same_game_and_number_of_players(users, first, second,
                                                                        same):
    a = services.quick_play(user=users[0], preset=first[0], players=first[1])
    b = services.quick_play(user=users[1], preset=second[0], players=second[1])
    assert (a.pk == b.pk) is same
    assert fresh(b).players == (second[1] or 4)


def test_a_two_player_game_starts_with_the_second_person(users):
    table = services.quick_play(user=users[0], preset="block", players=2)
    services.quick_play(user=users[1], preset="block", players=2)
    assert fresh(table).state == Table.State.PLAYING


@pytest.mark.parametrize(("preset", "players", "code"), [
    ("partners", 3, "bad_options"),
    ("draw", 5, "bad_options"),
    ("draw", 1, "bad_options"),
    ("chess", None, "bad_options"),
])
def test_bad_games_are_refused_and_open_nothing(users, preset, players, code):
    refused(code, services.quick_play, user=users[0], preset=preset, players=players)
    assert not Table.objects.exists()


def test_guests_anonymous_and_banned_people_cannot_quick_play(users):
    from django.contrib.auth.models import AnonymousUser

    from apps.moderation.models import Ban

    users[0].profile.guest = True
    users[0].profile.save(update_fields=["guest"])
    with translation.override("en"):
        err = refused("guest", services.quick_play, user=users[0], preset="partners")
    assert "sign up" in err.message.lower()
    refused("not_signed_in", services.quick_play, user=AnonymousUser(), preset="partners")
    Ban.objects.create(user=users[1], reason="spam", by=users[2])
    refused("banned", services.quick_play, user=users[1], preset="partners")
    assert not Table.objects.exists()


def test_pressing_twice_or_for_another_game_keeps_one_seat(users):
    table = services.quick_play(user=users[0], preset="draw", players=3)
    assert services.quick_play(user=users[0], preset="draw", players=3).pk == table.pk
    # Waiting at one quick table, "play now" for another game brings them back to it.
    assert services.quick_play(user=users[0], preset="partners").pk == table.pk
    assert Seat.objects.filter(user=users[0]).count() == 1 and Table.objects.count() == 1
    # Playing at a quick table, too.
    services.quick_play(user=users[1], preset="draw", players=3)
    services.quick_play(user=users[2], preset="draw", players=3)
    assert fresh(table).state == Table.State.PLAYING
    assert services.quick_play(user=users[1], preset="block", players=2).pk == table.pk


def test_a_person_seated_at_another_table_in_play_is_refused_with_its_name(users):
    other = services.create_table(host=users[0], preset="partners", name="Friday club")
    err = refused("seated_elsewhere", services.quick_play, user=users[0], preset="partners")
    assert "Friday club" in err.message
    unnamed = services.create_table(host=users[1], preset="block", players=2, public=True)
    err = refused("seated_elsewhere", services.quick_play, user=users[1], preset="partners")
    assert unnamed.code in err.message
    assert Table.objects.count() == 2 and not Table.objects.filter(quick=True).exists()
    # A practice table, a closed one or one whose match is over does not hold anybody.
    Table.objects.filter(pk=other.pk).update(practice=True)
    assert services.quick_play(user=users[0], preset="partners").quick
    Table.objects.filter(pk=unnamed.pk).update(state=Table.State.CLOSED)
    assert services.quick_play(user=users[1], preset="partners").quick


def test_a_quick_table_whose_match_is_over_is_left_for_the_new_one(users):
    old = services.quick_play(user=users[0], preset="block", players=2)
    services.quick_play(user=users[1], preset="block", players=2)
    rng = random.Random(5)
    while True:  # play the match out
        engine = position(old)[0]
        if engine.current is not None:
            play_random_move(old, rng)
        elif engine.over:
            break
        else:
            services.next_round(user=users[0], table_id=old.pk)
    new = services.quick_play(user=users[0], preset="block", players=2)
    assert new.pk != old.pk and people_at(new) == ["p0"]
    old = fresh(old)
    assert people_at(old) == ["p1"] and old.host == users[1]  # the host passed on


def test_leaving_a_waiting_quick_table_frees_the_seat_and_the_last_one_out_closes_it(users):
    table = services.quick_play(user=users[0], preset="partners")
    services.quick_play(user=users[1], preset="partners")
    services.quick_play(user=users[2], preset="partners")
    services.leave_table(user=users[1], table_id=table.pk)
    assert people_at(table) == ["p0", "p2"]
    assert services.quick_play(user=users[3], preset="partners").pk == table.pk
    assert people_at(table) == ["p0", "p3", "p2"]  # the free seat, in arrival order
    # The host is only whoever came first: they may leave, and the next person hosts.
    services.leave_table(user=users[0], table_id=table.pk)
    assert fresh(table).host == users[3]
    services.leave_table(user=users[3], table_id=table.pk)
    services.leave_table(user=users[2], table_id=table.pk)
    table = fresh(table)
    assert table.state == Table.State.CLOSED and table.closed_reason == "empty"
    with pytest.raises(NotDue):
        services.fill_quick_table(table_id=table.pk, now=timezone.now() + timedelta(minutes=1))
    assert services.quick_play(user=users[4], preset="partners").pk != table.pk


def test_a_table_nobody_holds_open_is_passed_over(users):
    table = services.quick_play(user=users[0], preset="partners")
    Table.objects.filter(pk=table.pk).update(empty_since=timezone.now())
    assert services.quick_play(user=users[1], preset="partners").pk != table.pk


def test_joining_from_the_lobby_counts_and_the_lobby_marks_quick_tables(users):
    table = services.quick_play(user=users[0], preset="draw", players=2)
    plain = services.create_table(host=users[1], preset="draw", players=3, public=True)
    rows = {row["table"].pk: row for row in selectors.lobby_rows()}
    assert rows[table.pk]["quick"] and not rows[plain.pk]["quick"]
    services.join_table(user=users[2], table_id=table.pk)
    assert fresh(table).state == Table.State.PLAYING


# -- the wait: bots fill the free seats ---------------------------------------------------------

def test_after_the_wait_the_sweep_fills_the_free_seats_with_bots_and_starts(users):
    table = services.quick_play(user=users[0], preset="partners")
    services.quick_play(user=users[1], preset="partners")
    fill_at = fresh(table).fill_at
    v = version(table)
    assert services.sweep(now=fill_at - timedelta(seconds=1))["filled"] == 0
    assert fresh(table).state == Table.State.WAITING and version(table) == v
    assert services.sweep(now=fill_at + timedelta(milliseconds=10))["filled"] == 1
    table = fresh(table)
    assert table.state == Table.State.PLAYING and table.bot_filled and table.fill_at is None
    seats = list(table.seats.order_by("index"))
    assert [s.is_bot for s in seats] == [False, False, True, True]
    assert {s.bot_level for s in seats if s.is_bot} == {"medium"}
    assert position(table)[0].current is not None
    state = selectors.table_state(table_id=table.pk, user=users[0])
    assert state["table"]["bot_filled"] is True and state["table"]["fill_at"] is None
    assert not table.paused
    # The timer late, or twice, or the sweep again: nothing more happens.
    v = version(table)
    tasks.fill_due(table.pk)
    tasks.fill_due(table.pk)
    assert version(table) == v
    # (This sweep may play a bot's due turn: only the filling is looked at.)
    assert services.sweep(now=fill_at + timedelta(seconds=5))["filled"] == 0
    assert fresh(table).seats.filter(is_bot=True).count() == 2
    assert Match.objects.filter(table=table).count() == 1


def test_the_timer_fills_when_it_is_due_and_an_early_one_does_nothing(users, monkeypatch):
    table = services.quick_play(user=users[0], preset="draw", players=3)
    fill_at = fresh(table).fill_at
    tasks.fill_due(table.pk)  # early (a clock ahead, a broker delivering too soon)
    assert fresh(table).state == Table.State.WAITING and version(table) == 0
    monkeypatch.setattr(timezone, "now", lambda: fill_at + timedelta(milliseconds=1))
    tasks.fill_due(table.pk)
    table = fresh(table)
    assert table.state == Table.State.PLAYING and table.bot_filled
    assert table.seats.filter(is_bot=True).count() == 2


def test_a_table_filled_while_nobody_holds_it_starts_paused(users):
    table = services.quick_play(user=users[0], preset="partners")
    Table.objects.filter(pk=table.pk).update(empty_since=timezone.now())
    services.fill_quick_table(table_id=table.pk, now=fresh(table).fill_at)
    table = fresh(table)
    assert table.state == Table.State.PLAYING and table.paused and table.paused_by is None
    assert table.turn_deadline is None  # no bot plays to an empty room


def test_the_state_carries_the_fill_time_and_nothing_hidden(users):
    table = services.quick_play(user=users[0], preset="partners")
    state = selectors.table_state(table_id=table.pk, user=users[1])
    at = fresh(table).fill_at
    assert state["table"]["quick"] is True and state["table"]["bot_filled"] is False
    assert state["table"]["fill_at"] == int(at.timestamp() * 1000)
    assert state["view"] is None and "private" not in state


# -- start with bots (seed 002) ----------------------------------------------------------------

def _table(users, *, allow_bots=True, people=2, level="easy"):
    table = services.create_table(host=users[0], preset="partners", public=True,
                                  allow_bots=allow_bots, bot_level=level)
    for user in users[1:people]:
        services.join_table(user=user, table_id=table.pk)
    return table


def test_start_with_bots_fills_every_free_seat_at_the_tables_level_and_starts(users):
    table = _table(users, people=2, level="easy")
    outcome = services.start_with_bots(user=users[0], table_id=table.pk)
    table = fresh(table)
    assert table.state == Table.State.PLAYING and table.bot_filled
    seats = list(table.seats.order_by("index"))
    assert [s.is_bot for s in seats] == [False, False, True, True]
    assert {s.bot_level for s in seats if s.is_bot} == {"easy"}
    kinds = [e["kind"] for e in outcome.events]
    assert "bot_filled" in kinds and "match_started" in kinds
    assert position(table)[0].current is not None


@pytest.mark.parametrize(("case", "code"), [
    ("not_host", "not_host"),
    ("no_bots", "no_bots"),
    ("alone", "too_few_people"),
    ("alone_with_a_bot", "too_few_people"),
    ("playing", "started"),
    ("closed", "closed"),
])
def test_start_with_bots_refusals_change_nothing(users, case, code):
    table = _table(users, allow_bots=case != "no_bots",
                   people=1 if case.startswith("alone") else 2)
    caller = users[0]
    if case == "not_host":
        caller = users[1]
    elif case == "alone_with_a_bot":
        services.add_bot(user=users[0], table_id=table.pk)
    elif case == "playing":
        services.start_with_bots(user=users[0], table_id=table.pk)
    elif case == "closed":
        Table.objects.filter(pk=table.pk).update(state=Table.State.CLOSED)
    v = version(table)
    bots = fresh(table).seats.filter(is_bot=True).count()
    refused(code, services.start_with_bots, user=caller, table_id=table.pk)
    assert version(table) == v
    assert fresh(table).seats.filter(is_bot=True).count() == bots


# -- races (PostgreSQL) -------------------------------------------------------------------------

def _at_once(calls) -> list:
    """Run every call at the same instant, each on its own thread and connection."""
    from django.db import connection

    barrier = threading.Barrier(len(calls))
    results: list = []

    def run(fn) -> None:
        try:
            barrier.wait()
            results.append(fn())
        except ServiceError as err:
            results.append(err.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(fn,)) for fn in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_eight_people_pressing_play_now_at_once_fill_two_tables(make_user):
    people = [make_user(f"racer{i}") for i in range(8)]
    results = _at_once([lambda u=u: services.quick_play(user=u, preset="tranca", players=4)
                        for u in people])
    assert all(isinstance(r, Table) for r in results), results
    tables = Table.objects.filter(quick=True)
    assert tables.count() == 2
    for table in tables:
        assert table.state == Table.State.PLAYING and not table.bot_filled
        assert table.seats.filter(user__isnull=False).count() == 4
    seated = list(Seat.objects.filter(user__isnull=False).values_list("user_id", flat=True))
    assert sorted(seated) == sorted(u.pk for u in people)  # each once: nobody at two tables


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_one_person_pressing_play_now_from_four_tabs_gets_one_seat(make_user):
    person = make_user("clicker")
    results = _at_once([lambda: services.quick_play(user=person, preset="partners")] * 2
                       + [lambda: services.quick_play(user=person, preset="draw", players=2)]
                       * 2)
    assert all(isinstance(r, Table) for r in results), results
    assert len({r.pk for r in results}) == 1
    assert Seat.objects.filter(user=person).count() == 1 and Table.objects.count() == 1


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_the_timer_and_the_sweep_racing_fill_once(make_user):
    people = [make_user(f"filler{i}") for i in range(2)]
    table = services.quick_play(user=people[0], preset="partners")
    services.quick_play(user=people[1], preset="partners")
    due = fresh(table).fill_at + timedelta(seconds=1)
    results = _at_once([lambda: services.fill_quick_table(table_id=table.pk, now=due),
                        lambda: services.sweep(now=due)["filled"],
                        lambda: services.fill_quick_table(table_id=table.pk, now=due)])
    filled = sum(1 for r in results if isinstance(r, services.Outcome)) + sum(
        r for r in results if isinstance(r, int))
    assert filled == 1, results
    table = fresh(table)
    assert table.state == Table.State.PLAYING
    assert table.seats.filter(is_bot=True).count() == 2
    assert Match.objects.filter(table=table).count() == 1
