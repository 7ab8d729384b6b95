"""Tournaments played through the real table services: a Swiss of three with a bye, a
knockout of four at best of three, pairs found for people alone, forfeits after the no-show
limit (the clock driven by ``now=``), leaving mid-match, prizes paid once, and the coin
invariant after each step."""

from __future__ import annotations

import itertools
import random
from datetime import timedelta

import pytest
from django.utils import translation

from apps.club import purses
from apps.club.models import LeaguePoints, LedgerEntry, Purse, Rating, RatingChange, Wallet
from apps.club.selectors import wallet_problems
from apps.tables import services as tables
from apps.tables.models import Match, Table
from apps.tournaments import running, selectors, services
from apps.tournaments.models import Entrant, Game, Tournament

from .conftest import (
    current_games,
    later,
    new_tournament,
    one_on_one,
    play_out,
    register_pair,
    show_up,
    socket_of,
    start,
)

pytestmark = pytest.mark.usefixtures("books")


def coins(user) -> int:
    return Wallet.objects.get(pk=user.pk).coins


def team_of(tournament, user) -> int:
    return Entrant.objects.get(tournament=tournament, user=user).team_id


def play_game(game: Game, rng) -> None:
    """Everyone comes; matches are played until the tie is decided."""
    show_up(game)
    assert Table.objects.get(pk=game.table_id).state == Table.State.PLAYING
    while not Game.objects.get(pk=game.pk).decided:
        play_out(game.table_id, rng)


def test_a_swiss_of_three_with_a_bye_is_played_to_its_prizes(people):
    rng = random.Random(5)
    ana, bea, caio = people["ana"], people["bea"], people["caio"]
    t = new_tournament(people, entry=100, prize_split=[60, 40], rounds=3)
    for person in (ana, bea, caio):
        services.register(user=person, tournament_id=t.pk)
        assert wallet_problems() == []
    assert [coins(p) for p in (ana, bea, caio)] == [900, 900, 900]
    assert Purse.objects.get(key=t.purse_key).escrow == 300
    t = start(t)
    assert t.state == Tournament.State.RUNNING and t.rounds == 3
    byes, met = [], set()
    for number in (1, 2, 3):
        games = current_games(t)
        assert t.current_round == number
        played = [g for g in games if g.team_b_id is not None]
        bye = [g for g in games if g.team_b_id is None]
        assert len(played) == 1 and len(bye) == 1 and bye[0].outcome == "bye"
        byes.append(bye[0].team_a_id)
        game = played[0]
        table = Table.objects.get(pk=game.table_id)
        # An ordinary table: public, watchable, no bots, the tournament's clock and target.
        assert table.public and table.watchers_allowed and not table.allow_bots
        assert table.state == Table.State.WAITING  # waits for its people
        play_game(game, rng)
        met.add(frozenset((game.team_a_id, game.team_b_id)))
        assert wallet_problems() == []
        t.refresh_from_db()
        if number < 3:
            assert t.next_round_at is not None  # the break; beat starts the next round
            assert running.advance(tournament_id=t.pk) == "break"
            assert running.advance(tournament_id=t.pk, now=later()) == "next"
    t.refresh_from_db()
    assert t.state == Tournament.State.FINISHED
    teams = set(byes)
    assert len(teams) == 3  # each team had exactly one bye
    assert met == {frozenset(p) for p in itertools.combinations(teams, 2)}  # no rematch
    # Prizes: 60% and 40% of the 300-coin pot to the first two places, once.
    final = selectors.places(t)
    first, second = final[0][0], final[1][0]
    prize_rows = LedgerEntry.objects.filter(reason=LedgerEntry.Reason.TOURNAMENT_PRIZE)
    assert sorted(prize_rows.values_list("coins", flat=True)) == [120, 180]
    paid = {Entrant.objects.get(team_id=first).user_id: 180,
            Entrant.objects.get(team_id=second).user_id: 120}
    assert dict(prize_rows.values_list("user_id", "coins")) == paid
    assert Purse.objects.get(key=t.purse_key).escrow == 0
    # The payout running again (a retried task, a second beat) pays nothing more.
    before = list(LedgerEntry.objects.order_by("pk").values_list("pk", flat=True))
    running.finish(Tournament.objects.get(pk=t.pk), now=later())
    assert purses.pay_prizes(key=t.purse_key, prizes={ana.pk: 300}) == []
    assert running.advance(tournament_id=t.pk, now=later()) == "idle"
    assert list(LedgerEntry.objects.order_by("pk").values_list("pk", flat=True)) == before
    # The matches were ordinary online matches: rated, paid and counted by the league.
    matches = Match.objects.filter(table__tournament_game__round__tournament=t)
    assert matches.count() == 3
    for match in matches:
        assert RatingChange.objects.filter(match=match).count() == 2
        assert LeaguePoints.objects.filter(match=match).count() == 2
        assert LedgerEntry.objects.filter(match=match, reason="match").count() == 2


def test_a_knockout_of_four_at_best_of_three(people):
    rng = random.Random(11)
    names = ("ana", "bea", "caio", "dani")
    # Ratings seed the bracket: ana strongest, dani weakest.
    for shown, name in zip((1400, 1300, 1200, 1100), names, strict=True):
        Rating.objects.create(user=people[name], kind=Rating.Kind.SOLO, mu=25, sigma=8,
                              shown=shown)
    t = new_tournament(people, format="knockout", best_of=3, entry=50,
                       prize_split=[50, 30, 20])
    for name in reversed(names):  # registration order does not seed
        services.register(user=people[name], tournament_id=t.pk)
    t = start(t)
    assert t.rounds == 2
    semis = current_games(t)
    seeds = [(team_of(t, people[a]), team_of(t, people[b])) for a, b in
             (("ana", "dani"), ("bea", "caio"))]
    assert [(g.team_a_id, g.team_b_id) for g in semis] == seeds  # 1 v 4, 2 v 3
    for game in semis:
        play_game(game, rng)
        game.refresh_from_db()
        # Best of three: two wins decide it, at the same table, in two or three matches.
        assert max(game.wins_a, game.wins_b) == 2 and min(game.wins_a, game.wins_b) <= 1
        assert Match.objects.filter(table_id=game.table_id).count() == game.wins_a + \
            game.wins_b
        # The decided tie's table plays no more: its host's "new match" is refused.
        with pytest.raises(services.ServiceError) as err:
            tables.new_match(user=Table.objects.get(pk=game.table_id).host,
                             table_id=game.table_id)
        assert err.value.code in ("tournament_over", "match_on")
    assert running.advance(tournament_id=t.pk, now=later()) == "next"
    final, = current_games(t)
    winners = {g.winner_id for g in semis}
    assert {final.team_a_id, final.team_b_id} == winners
    play_game(final, rng)
    t.refresh_from_db()
    assert t.state == Tournament.State.FINISHED
    places = selectors.places(t)
    assert [len(group) for group in places] == [1, 1, 2]  # the semi-finalists share third
    prizes = dict(LedgerEntry.objects.filter(reason="t_prize").values_list("user_id", "coins"))
    by_team = {Entrant.objects.get(team_id=team).user_id: team for team in
               itertools.chain.from_iterable(places)}
    assert prizes[next(u for u, tm in by_team.items() if tm == places[0][0])] == 100
    assert prizes[next(u for u, tm in by_team.items() if tm == places[1][0])] == 60
    assert sorted(prizes[u] for u, tm in by_team.items() if tm in places[2]) == [20, 20]
    assert sum(prizes.values()) == 200


def test_people_alone_are_paired_at_the_start_and_an_odd_one_is_refunded(people):
    rng = random.Random(2)
    t = new_tournament(people, preset="partners", players=4, rounds=1, entry=100,
                       target=50, turn_seconds=None)
    ratings = {"ana": 1500, "bea": 1400, "caio": 1100, "dani": 1000, "eva": 1200}
    for name, shown in ratings.items():
        Rating.objects.create(user=people[name], kind=Rating.Kind.PAIRS, mu=25, sigma=8,
                              shown=shown)
    register_pair(t, people["fabio"], people["gil"])
    for name in ratings:  # eva registers last: the odd one out
        services.register(user=people[name], tournament_id=t.pk, find_partner=True)
    assert coins(people["fabio"]) == 800  # paid for gil too
    t = start(t)
    eva = Entrant.objects.get(tournament=t, user=people["eva"])
    assert eva.left_out and eva.team_id is None and coins(people["eva"]) == 1000
    # Strongest with weakest: ana with dani, bea with caio.
    assert team_of(t, people["ana"]) == team_of(t, people["dani"])
    assert team_of(t, people["bea"]) == team_of(t, people["caio"])
    assert team_of(t, people["fabio"]) == team_of(t, people["gil"])
    games = current_games(t)
    played = [g for g in games if g.team_b_id is not None]
    game = played[0]
    seats = list(Table.objects.get(pk=game.table_id).seats.order_by("index")
                 .values_list("user_id", flat=True))
    a = [e.user_id for e in Entrant.objects.filter(team_id=game.team_a_id).order_by("pk")]
    # Partners sit across the table: team A in seats 0 and 2.
    assert {seats[0], seats[2]} == set(a)
    play_game(game, rng)
    t.refresh_from_db()
    assert t.state == Tournament.State.FINISHED


def test_a_team_not_at_its_table_two_minutes_after_it_opened_loses_by_forfeit(people):
    ana, bea = people["ana"], people["bea"]
    t, game = one_on_one(people, entry=100, prize_split=[100])
    show_up(game, [ana])  # bea never comes
    opened = game.opened_at
    assert running.forfeits_due(now=opened + timedelta(seconds=119)) == 0
    assert not Game.objects.get(pk=game.pk).decided
    assert running.forfeits_due(now=opened + timedelta(seconds=120)) == 1
    game.refresh_from_db()
    assert game.outcome == "forfeit" and game.winner_id == team_of(t, ana)
    table = Table.objects.get(pk=game.table_id)
    assert table.state == Table.State.CLOSED and table.closed_reason == "forfeit"
    assert not Match.objects.filter(table=table).exists()
    t.refresh_from_db()
    assert t.state == Tournament.State.FINISHED
    assert coins(ana) == 1100 and coins(bea) == 900  # the whole pot to the winner
    assert running.forfeits_due(now=opened + timedelta(minutes=5)) == 0


def test_neither_side_showing_up_loses_both(people):
    ana, bea, caio, dani = (people[n] for n in ("ana", "bea", "caio", "dani"))
    t = new_tournament(people, rounds=2)
    for person in (ana, bea, caio, dani):
        services.register(user=person, tournament_id=t.pk)
    t = start(t)
    first, second = current_games(t)
    play_game(first, random.Random(1))
    assert running.forfeits_due(now=second.opened_at + timedelta(minutes=2)) == 1
    second.refresh_from_db()
    assert second.outcome == "no_show" and second.winner_id is None
    assert running.advance(tournament_id=t.pk, now=later()) == "next"


def test_a_table_closed_before_its_match_decides_the_game_as_a_no_show(people):
    bea = people["bea"]
    t, game = one_on_one(people)
    show_up(game, [bea])
    tables.cancel_waiting(table_id=game.table_id, reason="unfilled")
    game.refresh_from_db()
    assert game.outcome == "forfeit" and game.winner_id == team_of(t, bea)


def test_leaving_during_the_match_loses_the_game(people):
    _, game = one_on_one(people, target=100)
    show_up(game)
    table = Table.objects.get(pk=game.table_id)
    leaver = table.seats.get(index=1).user
    tables.leave_table(user=leaver, table_id=table.pk)
    game.refresh_from_db()
    assert game.outcome == "forfeit" and game.winner_id == game.team_a_id


def test_only_the_games_people_sit_at_its_table(people):
    bea = people["bea"]
    _, game = one_on_one(people)
    tables.leave_table(user=bea, table_id=game.table_id)  # before the match: only a free seat
    assert not Game.objects.get(pk=game.pk).decided
    with translation.override("en"), pytest.raises(services.ServiceError) as err:
        tables.join_table(user=people["caio"], table_id=game.table_id)
    assert err.value.code == "refused" and "tournament" in str(err.value.message)
    tables.join_table(user=bea, table_id=game.table_id)  # back in her seat
    show_up(game)
    assert Table.objects.get(pk=game.table_id).state == Table.State.PLAYING


def test_who_came_before_the_site_restarted_is_not_a_no_show(people):
    """A restart of the site ends every socket (the sweep, or the killed process's lease): a
    person who had come to the tournament table and is away when the no-show limit passes,
    because the site was down, still counts as having come."""
    ana = people["ana"]
    t, game = one_on_one(people)
    show_up(game, [ana])  # bea never comes
    tables.disconnect(channel_name=socket_of(game, ana))  # the site goes down
    assert Table.objects.get(pk=game.table_id).seats.get(user=ana).away_since is not None
    assert running.forfeits_due(now=game.opened_at + timedelta(minutes=10)) == 1
    game.refresh_from_db()
    assert game.outcome == "forfeit" and game.winner_id == team_of(t, ana)
