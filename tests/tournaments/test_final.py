"""A knockout final where neither side shows (docs/tournaments.md, "Knockout"): nobody is
champion. What would have been the winner's (the first prize, and the club's coins for it)
is not paid to anyone who did not play: the first prize goes back to the entrants, an equal
part for each entry paid; the two finalists share the second prize, and every other place is
paid as usual. The page says so."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.test import Client

from apps.club.models import LedgerEntry
from apps.tables.models import Table
from apps.tournaments import pairing, running, services
from apps.tournaments.models import Entrant, Game, Tournament

from .conftest import current_games, later, new_tournament, play_out, show_up, start

pytestmark = pytest.mark.usefixtures("books")


def play_game(game: Game, rng) -> None:
    show_up(game)
    while not Game.objects.get(pk=game.pk).decided:
        play_out(game.table_id, rng)


def test_a_final_nobody_came_to_has_no_champion_and_gives_the_first_prize_back(people):
    names = ("ana", "bea", "caio", "dani")
    t = new_tournament(people, format="knockout", entry=100, prize_split=[50, 30, 20],
                       prize_added=1000)
    for name in names:
        services.register(user=people[name], tournament_id=t.pk)
    t = start(t)
    for game in current_games(t):
        play_game(game, random.Random(5))
    assert running.advance(tournament_id=t.pk, now=later()) == "next"
    final, = current_games(t)
    finalists = {u for team in (final.team_a_id, final.team_b_id)
                 for u in Entrant.objects.filter(team_id=team).values_list("user_id", flat=True)}
    # Nobody comes to the final's table: after the no-show limit nobody wins it.
    assert running.forfeits_due(now=final.opened_at + timedelta(minutes=2)) == 1
    final.refresh_from_db()
    assert final.outcome == "no_show" and final.winner_id is None
    t.refresh_from_db()
    assert t.state == Tournament.State.FINISHED
    assert Table.objects.get(pk=final.table_id).closed_reason == "forfeit"
    # The pot is 400: the first prize (200) goes back, 50 for each entry; the finalists share
    # the second (120: 60 each), the semi-finalists the third and fourth (80: 40 each).
    prizes = dict(LedgerEntry.objects.filter(reason="t_prize").values_list("user_id", "coins"))
    for name in names:
        user = people[name]
        assert prizes[user.pk] == (50 + 60 if user.pk in finalists else 50 + 40), name
    assert sum(prizes.values()) == 400
    # The club's 1000 coins: nobody is paid the winner's 500; the finalists share the second's
    # 300, the semi-finalists the rest's 200.
    awards = dict(LedgerEntry.objects.filter(reason="t_award").values_list("user_id", "coins"))
    assert sorted(awards.values()) == [100, 100, 150, 150]
    assert all(awards[u] == 150 for u in finalists)

    root = people["root"]
    root.profile.language = "en"
    root.profile.save()
    client = Client()
    client.force_login(root)
    html = client.get(f"/tournaments/{t.pk}/").content.decode()
    assert "Nobody won: neither finalist came to the final." in html


def test_returned_coins_are_an_equal_part_per_entry_to_whoever_paid():
    assert pairing.returned_shares(200, [(1, 1), (2, 2), (3, 1)]) == {1: 50, 2: 100, 3: 50}
    # What does not divide goes one coin each to the first entries paid (2 paid two).
    assert pairing.returned_shares(7, [(1, 1), (2, 2), (3, 1)]) == {1: 2, 2: 4, 3: 1}
    assert pairing.returned_shares(0, [(1, 1)]) == {}
    assert pairing.returned_shares(5, []) == {}


def test_without_a_champion_the_finalists_share_the_second_prize_only():
    places = [[1, 2], [3, 4]]
    shares = pairing.prize_shares(places, [50, 30, 20], 400, champion=False)
    assert shares == {1: 60, 2: 60, 3: 40, 4: 40}
    # With a champion, as before: every coin is given.
    assert sum(pairing.prize_shares([[1], [2], [3, 4]], [50, 30, 20], 400).values()) == 400
