"""Coins and experience: grants, the payout table per mode and rank, levels, the ledger key."""

from __future__ import annotations

import random
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone

from apps.club import numbers, selectors
from apps.club import services as club
from apps.club.models import LedgerEntry, Wallet
from apps.rules.presets import make_rules
from apps.tables import services
from apps.tables.models import Table
from apps.tables.services import ServiceError

from .conftest import play_match, seat_all

pytestmark = pytest.mark.usefixtures("sound_books")


def seat(index, user_id, *, bot=False, leaving=False, guest=False):
    user = None if user_id is None else SimpleNamespace(profile=SimpleNamespace(guest=guest))
    return SimpleNamespace(index=index, user_id=user_id, user=user, is_bot=bot,
                           leaving=leaving)


PARTNERS = make_rules({"preset": "partners"}, 4)
BLOCK4 = make_rules({"preset": "block"}, 4)
BLOCK3 = make_rules({"preset": "block"}, 3)
DRAW2 = make_rules({"preset": "draw"}, 2)


@pytest.mark.parametrize(("rules", "winner", "scores", "expected"), [
    (PARTNERS, 1, [80, 104], [2, 1]),
    (BLOCK4, 2, [10, 40, 70, 5], [3, 2, 1, 4]),
    (BLOCK4, 0, [65, 30, 30, 0], [1, 2, 2, 4]),  # equal points share the better rank
    (BLOCK3, 1, [20, 61, 40], [3, 1, 2]),
    (DRAW2, 0, [100, 99], [1, 2]),
])
def test_final_ranks(rules, winner, scores, expected):
    assert club.final_ranks(rules, winner, scores, [0] * rules.sides) == expected


def test_a_series_ranks_by_games_before_points():
    rules = make_rules({"preset": "pairs-series", "best_of": 3}, 4)
    assert club.final_ranks(rules, 0, [10, 250], [2, 1]) == [1, 2]


ON, PRIV, PRAC = club.ONLINE, club.PRIVATE, club.PRACTICE
HALF_WIN_PAIRS = int(numbers.ONLINE_COINS[2][0] * numbers.PRIVATE_FACTOR)
HALF_XP_PAIRS = int(numbers.ONLINE_XP[2][0] * numbers.PRIVATE_FACTOR)
C4, X4 = numbers.ONLINE_COINS[4], numbers.ONLINE_XP[4]
C2, X2 = numbers.ONLINE_COINS[2], numbers.ONLINE_XP[2]


@pytest.mark.parametrize(("mode", "rules", "ranks", "seats", "expected"), [
    # online pairs: the winning pair, then the other
    (ON, PARTNERS, [2, 1], [seat(0, 10), seat(1, 11), seat(2, 12), seat(3, 13)],
     {10: (C2[1], X2[1]), 11: (C2[0], X2[0]), 12: (C2[1], X2[1]), 13: (C2[0], X2[0])}),
    # online individual: 1st, 2nd, 3rd, 4th
    (ON, BLOCK4, [4, 2, 1, 3], [seat(0, 10), seat(1, 11), seat(2, 12), seat(3, 13)],
     {10: (C4[3], X4[3]), 11: (C4[1], X4[1]), 12: (C4[0], X4[0]), 13: (C4[2], X4[2])}),
    # private: only the winners, at half the online rate
    (PRIV, PARTNERS, [1, 2], [seat(0, 10), seat(1, 11), seat(2, 12), seat(3, 13)],
     {10: (HALF_WIN_PAIRS, HALF_XP_PAIRS), 12: (HALF_WIN_PAIRS, HALF_XP_PAIRS)}),
    (PRIV, BLOCK4, [4, 2, 1, 3], [seat(0, 10), seat(1, 11), seat(2, 12), seat(3, 13)],
     {12: (int(C4[0] * numbers.PRIVATE_FACTOR), int(X4[0] * numbers.PRIVATE_FACTOR))}),
    # practice pays nothing
    (PRAC, PARTNERS, [1, 2], [seat(0, 10), seat(1, 11), seat(2, 12), seat(3, 13)], {}),
    # bots, guests and a person who abandoned the match are paid nothing
    (ON, PARTNERS, [1, 2], [seat(0, 10), seat(1, None, bot=True), seat(2, 12, leaving=True),
                            seat(3, 13, guest=True)],
     {10: (C2[0], X2[0])}),
])
def test_payout_table(mode, rules, ranks, seats, expected):
    pays = club.payouts(mode=mode, rules=rules, ranks=ranks, seats=seats)
    assert {p.user_id: (p.coins, p.xp) for p in pays} == expected


def test_modes(people):
    host = people["host"]
    online = services.create_table(host=host, preset="partners", public=True)
    private = services.create_table(host=host, preset="partners")
    practice = services.create_table(host=host, preset="partners", public=True)
    Table.objects.filter(pk=practice.pk).update(practice=True)
    practice.refresh_from_db()
    assert [club.mode_of(t) for t in (online, private, practice)] == [ON, PRIV, PRAC]
    host.profile.guest = True
    host.profile.save(update_fields=["guest"])
    assert club.mode_of(Table.objects.get(pk=online.pk)) == PRAC


def test_new_accounts_get_the_welcome_grant_once(people, make_user):
    ana = people["ana"]
    assert selectors.balance(ana) == numbers.START_COINS
    ana.profile.save()  # later saves do not pay again
    assert club.grant_start(user=ana) is None
    assert LedgerEntry.objects.filter(user=ana, reason="start").count() == 1


def test_a_guest_gets_the_welcome_grant_when_they_sign_up(make_user):
    from apps.accounts.models import Profile

    user = make_user("visitor")
    LedgerEntry.objects.filter(user=user).delete()
    Wallet.objects.filter(pk=user.pk).update(coins=0)
    Profile.objects.filter(user=user).update(guest=True)
    profile = Profile.objects.select_related("user").get(user=user)
    user = profile.user
    assert club.grant_start(user=user) is None  # a guest has no coins
    profile.guest = False
    profile.save(update_fields=["guest"])
    assert selectors.balance(user) == numbers.START_COINS


def test_daily_grant_below_the_floor_once_a_day(people):
    ana = people["ana"]
    with pytest.raises(ServiceError) as info:
        club.claim_daily(user=ana)
    assert info.value.code == "above_floor" and str(numbers.DAILY_FLOOR) in info.value.message
    # Spend down below the floor (an entry at a stake table).
    table = club.open_stake_table(user=ana, entry=1000)
    assert selectors.balance(ana) == 0
    now = timezone.now()
    club.claim_daily(user=ana, now=now)
    assert selectors.balance(ana) == numbers.DAILY_COINS
    with pytest.raises(ServiceError) as info:
        club.claim_daily(user=ana, now=now + timedelta(minutes=5))
    assert info.value.code == "already_collected"
    club.claim_daily(user=ana, now=now + timedelta(days=1))
    assert selectors.balance(ana) == 2 * numbers.DAILY_COINS
    services.cancel_waiting(table_id=table.pk, reason="host_left")


def test_levels():
    assert [selectors.level_for(x) for x in (0, 99, 100, 299, 300, 600)] == [1, 1, 2, 2, 3, 4]


def _finished(table, people, *, names=("ana", "bea", "caio")):
    seat_all(table, people, names)
    services.start_match(user=people["host"], table_id=table.pk)
    play_match(table, people["host"])
    return Table.objects.get(pk=table.pk).current_match


@pytest.mark.parametrize("public", [True, False])
def test_a_finished_match_pays_in_its_own_transaction_once(people, public):
    table = services.create_table(host=people["host"], preset="partners", public=public,
                                  options={"target": 50})
    match = _finished(table, people)
    rows = LedgerEntry.objects.filter(match=match).order_by("user__username")
    winners = {people[n].pk for n in ("host", "ana", "bea", "caio")
               if table.seats.get(user=people[n]).index % 2 == match.winner}
    if public:
        assert rows.count() == 4
        for row in rows:
            assert (row.coins, row.xp, row.rank) == (
                (C2[0], X2[0], 1) if row.user_id in winners else (C2[1], X2[1], 2))
    else:
        assert {r.user_id for r in rows} == winners
        assert all(r.coins == HALF_WIN_PAIRS for r in rows)
    for row in rows:
        assert selectors.balance(row.user) == numbers.START_COINS + row.coins
    # The same match settled again (a retried task, another process) writes nothing.
    from apps.tables.models import Seat

    seats = list(Seat.objects.filter(table=table).select_related("user__profile"))
    assert club.match_finished(table=Table.objects.get(pk=table.pk), match=match,
                               seats=seats) == []


def test_a_practice_match_pays_nothing(people):
    table = services.create_table(host=people["host"], preset="partners",
                                  options={"target": 50})
    # People in the bots' seats, so that the match can be played by hand: nobody may join a
    # practice table, so it becomes one once they sit.
    seat_all(table, people, ("ana", "bea", "caio"))
    Table.objects.filter(pk=table.pk).update(practice=True)
    services.start_match(user=people["host"], table_id=table.pk)
    play_match(table, people["host"])
    match = Table.objects.get(pk=table.pk).current_match
    assert match.finished_at is not None or match.winner is not None
    assert not LedgerEntry.objects.filter(match=match).exists()


def test_who_left_during_the_match_is_paid_nothing(people):
    table = services.create_table(host=people["host"], preset="partners", public=True,
                                  options={"target": 50})
    seat_all(table, people)
    services.start_match(user=people["host"], table_id=table.pk)
    services.leave_table(user=people["bea"], table_id=table.pk)  # a bot plays her hand out
    rng = random.Random(5)
    from tests.tables.conftest import play_random_move, position

    while True:
        engine, _, _ = position(table)
        if engine.current is not None:
            seat = table.seats.get(index=engine.current.turn)
            if seat.standin:
                services.act_on_deadline(table_id=table.pk,
                                         now=timezone.now() + timedelta(minutes=1))
            else:
                play_random_move(table, rng)
        elif engine.over:
            break
        else:
            if table.seats.filter(user__isnull=True).exists():
                services.join_table(user=people["outsider"], table_id=table.pk)
            services.next_round(user=people["host"], table_id=table.pk)
    match = Table.objects.get(pk=table.pk).current_match
    paid = set(LedgerEntry.objects.filter(match=match).values_list("user_id", flat=True))
    assert people["bea"].pk not in paid
    assert people["ana"].pk in paid and people["host"].pk in paid


def test_signing_up_grants_the_welcome_coins_in_the_same_transaction(db):
    from apps.accounts.services import sign_up

    user = sign_up(username="newbie", email="n@example.com", password="pw-newbie-2026",
                   display_name="Newbie", avatar="cat", language="es")
    assert selectors.balance(user) == numbers.START_COINS
    assert LedgerEntry.objects.get(user=user).key == f"start:{user.pk}"
