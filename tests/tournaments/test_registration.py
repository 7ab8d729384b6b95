"""Creating, registering, withdrawing and cancelling: every bad input refused with a clear
message and nothing changed; entries in and out of the club's purse, and the invariant."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from apps.club.models import LedgerEntry, Purse, Wallet
from apps.club.selectors import wallet_problems
from apps.core.errors import ServiceError
from apps.tournaments import services
from apps.tournaments.models import Entrant, Team, Tournament

from .conftest import new_tournament, register_pair, start

pytestmark = pytest.mark.usefixtures("books")


def coins(user) -> int:
    return Wallet.objects.get(pk=user.pk).coins


def books_state():
    return (list(Entrant.objects.order_by("pk").values_list("user_id", "team_id")),
            Team.objects.count(), list(Tournament.objects.values_list("state", "version")),
            LedgerEntry.objects.count(), list(Wallet.objects.order_by("pk")
                                              .values_list("coins", flat=True)))


def refused(code: str, fn, *args, **kwargs) -> ServiceError:
    before = books_state()
    with pytest.raises(ServiceError) as err:
        fn(*args, **kwargs)
    assert err.value.code == code, err.value
    assert str(err.value.message)
    assert books_state() == before  # nothing changed
    assert wallet_problems() == []
    return err.value


def test_registration_refusals(people):
    ana, bea, caio = people["ana"], people["bea"], people["caio"]
    solo = new_tournament(people, entry=100, max_teams=2)
    pairs = new_tournament(people, preset="partners", players=4, target=50, entry=100)
    services.register(user=ana, tournament_id=solo.pk)
    refused("registered", services.register, user=ana, tournament_id=solo.pk)
    refused("no_pairs", services.register, user=bea, tournament_id=solo.pk, partner="caio")
    services.register(user=bea, tournament_id=solo.pk)
    refused("full", services.register, user=caio, tournament_id=solo.pk)
    # Pairs: a partner who is yourself, unknown, registered already; none named.
    refused("self_partner", services.register, user=ana, tournament_id=pairs.pk,
            partner="ANA")
    refused("no_such_player", services.register, user=ana, tournament_id=pairs.pk,
            partner="nobody")
    refused("no_partner", services.register, user=ana, tournament_id=pairs.pk)
    register_pair(pairs, bea, caio)
    refused("partner_registered", services.register, user=ana, tournament_id=pairs.pk,
            partner="caio")
    refused("registered", services.register, user=caio, tournament_id=pairs.pk,
            find_partner=True)
    # Too few coins: the message gives the entry and the balance. (Coins leave a wallet the
    # honest way: dani's 1000 and 900 of eva's go to another tournament's entries.)
    dear = new_tournament(people, entry=1000)
    services.register(user=people["dani"], tournament_id=dear.pk)
    err = refused("short", services.register, user=people["dani"], tournament_id=pairs.pk,
                  find_partner=True)
    assert "100" in str(err.message) and " 0" in str(err.message)
    # A pair's 200 coins with only 150: refused whole, the first entry too.
    cheap = new_tournament(people, entry=850)
    services.register(user=people["eva"], tournament_id=cheap.pk)
    refused("short", services.register, user=people["eva"], tournament_id=pairs.pk,
            partner="fabio")
    # After the start: closed.
    start(solo)
    refused("closed", services.register, user=caio, tournament_id=solo.pk)
    refused("closed", services.withdraw, user=ana, tournament_id=solo.pk)


def test_registration_closes_at_the_start_time(people):
    t = new_tournament(people)
    refused("closed", services.register, user=people["ana"], tournament_id=t.pk,
            now=t.starts_at)
    services.register(user=people["ana"], tournament_id=t.pk,
                      now=t.starts_at - timedelta(seconds=1))


def test_withdrawing_gives_the_entries_back_to_who_paid_them(people):
    ana, bea = people["ana"], people["bea"]
    t = new_tournament(people, preset="partners", players=4, target=50, entry=100)
    register_pair(t, ana, bea)
    assert (coins(ana), coins(bea)) == (800, 1000)
    services.withdraw(user=bea, tournament_id=t.pk)  # the partner takes the pair out
    assert (coins(ana), coins(bea)) == (1000, 1000)
    assert not Entrant.objects.filter(tournament=t).exists()
    assert Purse.objects.get(key=t.purse_key).escrow == 0
    refused("not_registered", services.withdraw, user=ana, tournament_id=t.pk)
    register_pair(t, ana, bea)  # and again
    assert coins(ana) == 800


def test_cancelling_refunds_every_entry_and_a_started_one_cannot_be(people):
    names = ("ana", "bea", "caio")
    t = new_tournament(people, entry=250)
    for name in names:
        services.register(user=people[name], tournament_id=t.pk)
    assert wallet_problems() == []
    refused("forbidden", services.cancel, user=people["ana"], tournament_id=t.pk)
    services.cancel(user=people["root"], tournament_id=t.pk)
    assert [coins(people[n]) for n in names] == [1000, 1000, 1000]
    assert Purse.objects.get(key=t.purse_key).state == "refunded"
    refunds = LedgerEntry.objects.filter(reason="t_refund")
    assert refunds.count() == 3
    refused("cancelled", services.cancel, user=people["root"], tournament_id=t.pk)
    assert refunds.count() == 3  # once
    started = new_tournament(people, entry=10)
    for name in names:
        services.register(user=people[name], tournament_id=started.pk)
    start(started)
    refused("started", services.cancel, user=people["root"], tournament_id=started.pk)


def test_too_few_teams_at_the_start_cancels_and_refunds(people):
    t = new_tournament(people, entry=100)
    services.register(user=people["ana"], tournament_id=t.pk)
    t = start(t)
    assert t.state == "cancelled" and t.ended_reason == "too_few"
    assert coins(people["ana"]) == 1000


def test_creating_is_for_staff_and_every_option_is_checked(people):
    now = timezone.now()
    base = {"name": "Copa", "preset": "block", "players": 2, "format": "swiss",
            "starts_at": now + timedelta(hours=1), "now": now}
    refused("forbidden", services.create_tournament, user=people["ana"], **base)
    root = people["root"]
    bad = [
        ({"name": ""}, "bad_name"),
        ({"preset": "partners", "players": 2}, "bad_game"),
        ({"preset": "draw", "players": 4}, "bad_game"),
        ({"preset": "chess"}, "bad_game"),
        ({"format": "league"}, "bad_format"),
        ({"rounds": 0}, "bad_rounds"),
        ({"rounds": 10}, "bad_rounds"),
        ({"format": "knockout", "best_of": 2}, "bad_best_of"),
        ({"starts_at": now}, "bad_start"),
        ({"entry": -1}, "bad_entry"),
        ({"prize_split": [50, 40]}, "bad_prizes"),
        ({"prize_split": [40, 60]}, "bad_prizes"),
        ({"max_teams": 1}, "bad_size"),
        ({"turn_seconds": 0}, "bad_options"),
        ({"target": 0}, "bad_options"),
    ]
    for change, code in bad:
        refused(code, services.create_tournament, user=root, **{**base, **change})
    t = services.create_tournament(user=root, **{**base, "preset": "tranca", "players": 4,
                                                 "target": 50})
    assert t.pairs and t.team_size == 2
    t = services.create_tournament(user=root, **{**base, "preset": "tranca", "players": 2})
    assert not t.pairs


@override_settings(TOURNAMENT_MEMBER_LEVEL=2)
def test_members_from_the_operators_level_may_create_without_the_clubs_coins(people):
    now = timezone.now()
    base = {"name": "Copa do bairro", "preset": "block", "players": 2, "format": "swiss",
            "starts_at": now + timedelta(hours=1), "now": now}
    err = refused("forbidden", services.create_tournament, user=people["ana"], **base)
    assert "2" in str(err.message)
    LedgerEntry.objects.create(user=people["ana"], xp=100, reason="match", key="test:xp")
    Wallet.objects.filter(pk=people["ana"].pk).update(xp=100)  # level 2
    refused("forbidden", services.create_tournament, user=people["ana"], prize_added=500,
            **base)
    t = services.create_tournament(user=people["ana"], **base)
    # The member who made it may cancel it; another member may not.
    refused("forbidden", services.cancel, user=people["bea"], tournament_id=t.pk)
    services.cancel(user=people["ana"], tournament_id=t.pk)


def test_club_added_prizes_are_minted_and_shared_by_the_split(people):
    import random

    from apps.tournaments import selectors

    from .conftest import current_games, play_out, show_up

    t = new_tournament(people, rounds=1, prize_added=1000, prize_split=[70, 30])
    for name in ("ana", "bea"):
        services.register(user=people[name], tournament_id=t.pk)
    t = start(t)
    game, = current_games(t)
    show_up(game)
    play_out(game.table_id, random.Random(4))
    t.refresh_from_db()
    assert t.state == "finished"
    awards = dict(LedgerEntry.objects.filter(reason="t_award").values_list("user_id", "coins"))
    winner = selectors.places(t)[0][0]
    top = Entrant.objects.get(team_id=winner).user_id
    assert awards[top] == 700 and sorted(awards.values()) == [300, 700]


def test_who_left_matches_lately_waits_before_registering_and_nothing_changes(people):
    """Fair play's growing wait (apps.fairplay) closes tournaments as it closes play now."""
    from django.utils import translation

    from apps.fairplay.models import Record

    ana = people["ana"]
    t = new_tournament(people, entry=100)
    now = timezone.now()
    Record.objects.update_or_create(user=ana, defaults={
        "started": 5, "finished": 3, "abandoned": 2,
        "abandoned_at": [(now - timedelta(hours=1)).isoformat(),
                         (now - timedelta(minutes=1)).isoformat()]})
    with translation.override("en"):
        err = refused("wait", services.register, user=ana, tournament_id=t.pk)
    assert "2 matches" in err.message and "tournaments" in err.message
    Record.objects.filter(user=ana).update(abandoned_at=[
        (now - timedelta(days=2)).isoformat(), (now - timedelta(days=2)).isoformat()])
    services.register(user=ana, tournament_id=t.pk)  # a day later she may
