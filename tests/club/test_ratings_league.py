"""Ratings move the right way with team results; the weekly league counts and pays once."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from apps.club import numbers, ratings, selectors
from apps.club import services as club
from apps.club.models import LeaguePoints, LeagueWeek, LedgerEntry, Rating, RatingChange
from apps.tables import services
from apps.tables.models import Table
from apps.tables.services import ServiceError
from tests.tables.conftest import race

from .conftest import play_match, seat_all

pytestmark = pytest.mark.usefixtures("sound_books")


def _online_match(people, *, preset="partners", options=None, names=("ana", "bea", "caio")):
    table = services.create_table(host=people["host"], preset=preset, public=True,
                                  options=options or {"target": 50})
    seat_all(table, people, names)
    services.start_match(user=people["host"], table_id=table.pk)
    play_match(table, people["host"])
    return Table.objects.get(pk=table.pk)


def test_a_team_result_moves_both_partners_the_right_way(people):
    table = _online_match(people)
    match = table.current_match
    seats = {s.user_id: s.index for s in table.seats.all()}
    fresh = ratings.shown(*ratings.initial())
    for r in Rating.objects.filter(kind="pairs"):
        won = seats[r.user_id] % 2 == match.winner
        assert (r.shown > fresh) if won else (r.shown < fresh), (r, won)
        assert r.matches == 1
    by_team = {}
    for r in Rating.objects.filter(kind="pairs"):
        by_team.setdefault(seats[r.user_id] % 2, set()).add(r.shown)
    assert all(len(v) == 1 for v in by_team.values())  # partners move together
    assert RatingChange.objects.filter(match=match).count() == 4
    assert not Rating.objects.filter(kind="solo").exists()
    mine = selectors.ratings_of(people["ana"])
    assert mine["pairs"]["provisional"] and mine["pairs"]["matches"] == 1


def test_private_and_practice_matches_are_not_rated(people):
    table = services.create_table(host=people["host"], preset="partners",
                                  options={"target": 50})
    seat_all(table, people)
    services.start_match(user=people["host"], table_id=table.pk)
    play_match(table, people["host"])
    assert not Rating.objects.exists() and not LeaguePoints.objects.exists()


def test_individual_presets_rate_each_seat_by_rank():
    first, second, third = ratings.rate([[ratings.initial()]] * 3, [1, 2, 3])
    assert first[0][0] > second[0][0] > third[0][0]


def test_a_bot_is_a_fixed_opponent():
    # A person beating a bot gains; the bot's own rating is never given back (nor kept).
    me = ratings.initial()
    (mine,), (bot,) = ratings.rate([[me], [None]], [1, 2])
    assert bot is None and mine[0] > me[0]


def test_league_points_per_rank_and_halved_with_bots(people):
    table = _online_match(people)
    match = table.current_match
    rows = LeaguePoints.objects.filter(match=match)
    assert sorted(r.points for r in rows) == sorted(
        [numbers.LEAGUE_POINTS[2][0]] * 2 + [numbers.LEAGUE_POINTS[2][1]] * 2)
    assert rows.first().week == club.week_of(match.finished_at)
    bot_filled = services.create_table(host=people["host"], preset="partners", public=True,
                                       options={"target": 50})
    Table.objects.filter(pk=bot_filled.pk).update(bot_filled=True)
    seat_all(bot_filled, people)
    services.start_match(user=people["host"], table_id=bot_filled.pk)
    play_match(bot_filled, people["host"], seed=8)
    halved = LeaguePoints.objects.filter(match=Table.objects.get(pk=bot_filled.pk)
                                         .current_match)
    assert all(r.halved for r in halved)
    assert sorted(r.points for r in halved) == sorted(
        [numbers.LEAGUE_POINTS[2][0] // 2] * 2 + [numbers.LEAGUE_POINTS[2][1] // 2] * 2)


def test_weeks_run_monday_to_sunday_utc():
    assert club.week_of(datetime(2026, 11, 30, 0, 0, tzinfo=UTC)) == date(2026, 11, 30)
    assert club.week_of(datetime(2026, 12, 6, 23, 59, 59, tzinfo=UTC)) == date(2026, 11, 30)
    assert club.week_of(datetime(2026, 12, 7, 0, 0, tzinfo=UTC)) == date(2026, 12, 7)


def _points(user, week, points, match):
    LeaguePoints.objects.create(user=user, week=week, match=match, rank=1, points=points)


def test_the_week_closes_once_and_pays_the_top_places(people):
    table = _online_match(people)
    match = table.current_match
    week = date(2026, 11, 23)
    LeaguePoints.objects.all().delete()
    _points(people["ana"], week, 30, match)
    _points(people["bea"], week, 20, match)
    _points(people["caio"], week, 20, match)  # shares second place: both get its prize
    after = datetime(2026, 11, 30, 0, 5, tzinfo=UTC)
    with pytest.raises(ServiceError):
        club.close_week(week=week, now=datetime(2026, 11, 29, 23, 0, tzinfo=UTC))
    closed = club.close_last_week(now=after)
    assert closed is not None and closed.week == week
    prizes = dict(LedgerEntry.objects.filter(reason="league").values_list("user_id", "coins"))
    assert prizes == {people["ana"].pk: numbers.LEAGUE_PRIZES[0],
                      people["bea"].pk: numbers.LEAGUE_PRIZES[1],
                      people["caio"].pk: numbers.LEAGUE_PRIZES[1]}
    # Beat runs again, restarts, runs later in the week: nothing more.
    assert club.close_last_week(now=after) is None
    assert club.close_last_week(now=after + timedelta(days=3)) is None
    assert LedgerEntry.objects.filter(reason="league").count() == 3
    standings = selectors.league_table(week)
    assert [(r.rank, r.points) for r in standings] == [(1, 30), (2, 20), (2, 20)]


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_beats_closing_the_same_week_pay_once(people):
    table = _online_match(people)
    match = table.current_match
    week = date(2026, 11, 23)
    LeaguePoints.objects.all().delete()
    _points(people["ana"], week, 30, match)
    after = datetime(2026, 11, 30, 0, 5, tzinfo=UTC)
    results = race(*[(f"b{i}", lambda: club.close_week(week=week, now=after))
                     for i in range(4)])
    assert len(results) == 4
    assert LeagueWeek.objects.filter(week=week).count() == 1
    assert LedgerEntry.objects.filter(reason="league", user=people["ana"]).count() == 1


def test_seats_show_their_ratings_in_the_table_state(people):
    from apps.tables import state

    table = _online_match(people)
    snap = state.build_latest(table.pk)
    mine = state.compose(snap, state.Viewer(user_id=people["ana"].pk, language="en"))
    rated = {s["index"]: s for s in mine["seats"] if "rating" in s}
    assert len(rated) == 4
    ana = next(s for s in mine["seats"] if s["name"] == people["ana"].profile.display_name)
    assert ana["rating"] == Rating.objects.get(user=people["ana"], kind="pairs").shown
    assert ana["rating_provisional"] and "provisional" in ana["rating_label"]
