"""Races on PostgreSQL (row locks are real there): the last place taken twice, a payout run
three times at once, the no-show decision made by three beats at once, a cancellation racing
a registration. Money moves once and the books agree after each."""

from __future__ import annotations

from datetime import timedelta

import pytest

from apps.club import purses
from apps.club.models import LedgerEntry, Wallet
from apps.club.selectors import wallet_problems
from apps.tournaments import running, services
from apps.tournaments.models import Entrant, Game, Tournament
from tests.tables.conftest import race

from .conftest import current_games, new_tournament, show_up, start

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_two_people_racing_for_the_last_place(people):
    for attempt in range(3):
        t = new_tournament(people, entry=100, max_teams=2)
        services.register(user=people["ana"], tournament_id=t.pk)
        a, b = ("bea", "caio") if attempt % 2 else ("caio", "bea")
        results = race(*[(n, lambda n=n, t=t: services.register(user=people[n],
                                                                  tournament_id=t.pk))
                         for n in (a, b)])
        assert sorted(results).count("full") == 1, results
        assert Entrant.objects.filter(tournament=t).count() == 2
        assert wallet_problems() == []


def test_the_payout_run_three_times_at_once_pays_once(people):
    purses.open_purse(key="tournament:race", entry=100)
    for name in ("ana", "bea"):
        purses.pay_entry(key="tournament:race", user=people[name])
    prizes = {people["ana"].pk: 150, people["bea"].pk: 50}
    race(*[(f"pay{i}", lambda: purses.pay_prizes(key="tournament:race", prizes=prizes))
           for i in range(3)])
    assert LedgerEntry.objects.filter(reason="t_prize").count() == 2
    assert Wallet.objects.get(pk=people["ana"].pk).coins == 1050
    assert wallet_problems() == []


def test_three_beats_deciding_the_same_no_show_pay_the_prizes_once(people):
    t = new_tournament(people, rounds=1, entry=100)
    for name in ("ana", "bea"):
        services.register(user=people[name], tournament_id=t.pk)
    t = start(t)
    game, = current_games(t)
    show_up(game, [people["ana"]])
    due = game.opened_at + timedelta(minutes=2)
    race(*[(f"beat{i}", lambda: running.forfeits_due(now=due)) for i in range(3)])
    assert Game.objects.get(pk=game.pk).outcome == "forfeit"
    assert Tournament.objects.get(pk=t.pk).state == "finished"
    assert list(LedgerEntry.objects.filter(reason="t_prize").values_list("coins", flat=True)) \
        == [200]
    assert wallet_problems() == []


def test_a_cancellation_racing_a_registration(people):
    for _attempt in range(3):
        t = new_tournament(people, entry=100)
        services.register(user=people["ana"], tournament_id=t.pk)
        race(("register", lambda t=t: services.register(user=people["bea"],
                                                         tournament_id=t.pk)),
             ("cancel", lambda t=t: services.cancel(user=people["root"], tournament_id=t.pk)))
        assert Tournament.objects.get(pk=t.pk).state == "cancelled"
        assert Wallet.objects.get(pk=people["bea"].pk).coins == 1000
        assert wallet_problems() == []
