"""Stake tables: sit, stand, fill, cancel, refund, settle; the coin invariant under crashes and
(on PostgreSQL) under concurrency."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from django.utils import timezone

from apps.club import numbers, selectors
from apps.club import services as club
from apps.club.models import LedgerEntry, Stake, Wallet
from apps.rules.engine import legal_dict
from apps.tables import services
from apps.tables.models import Seat, Table, TableEvent
from apps.tables.services import ServiceError
from tests.tables.conftest import position, race, seat_user

from .conftest import play_match

START = numbers.START_COINS


def refused(code: str, fn, **kwargs) -> ServiceError:
    with pytest.raises(ServiceError) as info:
        fn(**kwargs)
    assert info.value.code == code, info.value.message
    return info.value


def stake(table) -> Stake:
    return Stake.objects.get(table=table)


def coins(*users) -> list[int]:
    return [selectors.balance(u) for u in users]


def books_ok() -> None:
    assert selectors.wallet_problems() == []


def drain(user, keep: int) -> None:
    """Spend a person's coins down to ``keep`` at a 1000-table they then cancel... without a
    refund: the test moves the coins to a sink account through the ledger's own grant row."""
    wallet = Wallet.objects.get(pk=user.pk)
    LedgerEntry.objects.create(user=user, coins=keep - wallet.coins, reason="daily",
                               key=f"test-drain:{user.pk}")
    Wallet.objects.filter(pk=user.pk).update(coins=keep)


class TestLifecycle:
    def test_sit_pays_the_entry_and_standing_up_gives_it_back(self, people):
        host, ana = people["host"], people["ana"]
        table = club.open_stake_table(user=host, entry=250)
        assert table.public and not table.allow_bots
        assert coins(host) == [START - 250] and stake(table).escrow == 250
        services.join_table(user=ana, table_id=table.pk)
        assert coins(ana) == [START - 250] and stake(table).escrow == 500
        services.leave_table(user=ana, table_id=table.pk)
        assert coins(ana) == [START] and stake(table).escrow == 250
        services.join_table(user=ana, table_id=table.pk)  # and again: a new entry, a new key
        assert coins(ana) == [START - 250] and stake(table).escrow == 500
        assert LedgerEntry.objects.filter(user=ana, reason="stake").count() == 2
        books_ok()

    def test_a_short_balance_is_refused_and_changes_nothing(self, people):
        host, ana = people["host"], people["ana"]
        table = club.open_stake_table(user=host, entry=500)
        drain(ana, 499)
        version = Table.objects.get(pk=table.pk).version
        err = refused("short", services.join_table, user=ana, table_id=table.pk)
        assert "500" in err.message and "499" in err.message
        assert seat_user(table, 1) is None and Table.objects.get(pk=table.pk).version == version
        assert coins(ana) == [499] and stake(table).escrow == 500
        refused("short", club.open_stake_table, user=ana, entry=500)
        refused("bad_entry", club.open_stake_table, user=ana, entry=300)
        books_ok()

    def test_only_people_sit_there(self, people):
        table = club.open_stake_table(user=people["host"], entry=100)
        Table.objects.filter(pk=table.pk).update(allow_bots=True)  # even if someone allows them
        refused("people_only", services.add_bot, user=people["host"], table_id=table.pk)
        assert not Seat.objects.filter(table=table, is_bot=True).exists()

    def test_a_full_table_plays_and_the_pot_goes_to_the_winners(self, people):
        host = people["host"]
        table = club.open_stake_table(user=host, entry=100)
        for name in ("ana", "bea", "caio"):
            services.join_table(user=people[name], table_id=table.pk)
        services.start_match(user=host, table_id=table.pk)
        assert stake(table).state == Stake.State.PLAYING
        play_match(table, host, seed=11)
        match = Table.objects.get(pk=table.pk).current_match
        winners = [s.user for s in Seat.objects.filter(table=table).select_related("user")
                   if s.index % 2 == match.winner and s.user_id]
        final = stake(table)
        assert final.state == Stake.State.PAID and final.escrow == 0
        pot = LedgerEntry.objects.filter(table=table, reason="pot")
        assert sum(p.coins for p in pot) == 400  # the whole pot, no commission
        assert {p.user_id for p in pot} <= {w.pk for w in winners}
        # XP is paid as online; the coins are the pot's only.
        assert not LedgerEntry.objects.filter(match=match, coins__gt=0).exists()
        assert LedgerEntry.objects.filter(match=match, xp__gt=0).exists()
        books_ok()

    def test_nobody_sits_down_once_the_pot_is_closed(self, people):
        host = people["host"]
        table = club.open_stake_table(user=host, entry=100)
        for name in ("ana", "bea", "caio"):
            services.join_table(user=people[name], table_id=table.pk)
        services.start_match(user=host, table_id=table.pk)
        services.leave_table(user=people["caio"], table_id=table.pk)  # a bot plays it out
        assert coins(people["caio"]) == [START - 100]  # no refund after the start
        _finish_round(table)
        assert seat_user(table, 3) is None
        refused("pot_closed", services.join_table, user=people["outsider"], table_id=table.pk)
        # Closed before the end with an entrant gone: the rest share the pot; 400 over three
        # leaves one coin, which goes to the lowest seat.
        services.close_by_staff(table_id=table.pk, reason="test")
        pot = dict(LedgerEntry.objects.filter(table=table, reason="pot")
                   .values_list("user_id", "coins"))
        assert pot == {host.pk: 134, people["ana"].pk: 133, people["bea"].pk: 133}
        assert stake(table).escrow == 0
        books_ok()

    def test_not_filled_in_time_it_is_cancelled_and_every_entry_refunded(self, people):
        host, ana = people["host"], people["ana"]
        table = club.open_stake_table(user=host, entry=1000)
        services.join_table(user=ana, table_id=table.pk)
        assert club.cancel_unfilled() == 0
        later = timezone.now() + numbers.STAKE_FILL_TIME + timedelta(seconds=1)
        assert club.cancel_unfilled(now=later) == 1
        assert club.cancel_unfilled(now=later) == 0  # beat again: nothing twice
        table.refresh_from_db()
        assert table.state == Table.State.CLOSED and table.closed_reason == "unfilled"
        assert coins(host, ana) == [START, START]
        assert stake(table).state == Stake.State.CANCELLED and stake(table).escrow == 0
        books_ok()

    def test_the_opener_standing_up_cancels_the_table(self, people):
        host, ana = people["host"], people["ana"]
        table = club.open_stake_table(user=host, entry=100)
        services.join_table(user=ana, table_id=table.pk)
        club.stand_up(user=ana, table_id=table.pk)
        services.join_table(user=ana, table_id=table.pk)
        club.stand_up(user=host, table_id=table.pk)
        assert coins(host, ana) == [START, START]
        assert Table.objects.get(pk=table.pk).state == Table.State.CLOSED
        books_ok()


def _finish_round(table) -> None:
    rng = random.Random(2)
    while True:
        engine, rnd_no, ply = position(table)
        rnd = engine.current
        if rnd is None:
            return
        seat = Seat.objects.get(table=table, index=rnd.turn)
        if seat.standin:
            services.act_on_deadline(table_id=table.pk,
                                     now=timezone.now() + timedelta(minutes=1))
            continue
        move = legal_dict(*rng.choice(rnd.legal()))
        services.play_move(user=seat.user, table_id=table.pk, round_number=rnd_no, ply=ply,
                           tile=move.get("play"), end=move.get("end"),
                           is_pass=bool(move.get("pass")))


# -- crash points ---------------------------------------------------------------------------

def fingerprint() -> tuple:
    return (
        sorted(LedgerEntry.objects.values_list("key", "coins", "xp")),
        sorted(Wallet.objects.values_list("pk", "coins", "xp")),
        sorted(Stake.objects.values_list("table_id", "escrow", "state")),
        sorted(Seat.objects.values_list("table_id", "index", "user_id")),
        sorted(Table.objects.values_list("pk", "version", "state")),
        TableEvent.objects.count(),
    )


class Killed(Exception):
    pass


def _kill_after(monkeypatch, owner, name: str) -> None:
    """The process dies right after ``owner.name`` returns (inside the transaction)."""
    real = getattr(owner, name)

    def dying(*args, **kwargs):
        real(*args, **kwargs)
        raise Killed(name)

    monkeypatch.setattr(owner, name, dying)


def _steps():
    from apps.tables import state

    return [
        (club, "_locked_wallets"), (club, "_write"), (club, "_charge"), (club, "_refund"),
        (club, "_split"), (Stake, "save"), (TableEvent.objects, "create"),
        (state, "build"),
    ]


def _crash_each_step(monkeypatch, action) -> int:
    """Run ``action`` once per step with the process dying after that step; each attempt
    must leave no trace. Returns how many steps the action went through."""
    from django.db import transaction

    class Undo(Exception):
        pass

    hit = 0
    for owner, name in _steps():
        before = fingerprint()
        try:
            # The action never reaching this step goes through; undone for the next step.
            with transaction.atomic(), monkeypatch.context() as patch:
                _kill_after(patch, owner, name)
                try:
                    action()
                except Killed:
                    hit += 1
                    assert fingerprint() == before, f"a crash after {name} left a trace"
                    books_ok()
                raise Undo
        except Undo:
            pass
        assert fingerprint() == before
    action()  # and without a crash it goes through
    books_ok()
    return hit


class TestCrashPoints:
    def test_sit_down(self, people, monkeypatch):
        table = club.open_stake_table(user=people["host"], entry=100)
        hits = _crash_each_step(monkeypatch, lambda: services.join_table(
            user=people["ana"], table_id=table.pk))
        assert hits >= 5 and coins(people["ana"]) == [START - 100]

    def test_stand_up(self, people, monkeypatch):
        table = club.open_stake_table(user=people["host"], entry=100)
        services.join_table(user=people["ana"], table_id=table.pk)
        hits = _crash_each_step(monkeypatch, lambda: services.leave_table(
            user=people["ana"], table_id=table.pk))
        assert hits >= 5 and coins(people["ana"]) == [START]

    def test_start(self, people, monkeypatch):
        table = club.open_stake_table(user=people["host"], entry=100)
        for name in ("ana", "bea", "caio"):
            services.join_table(user=people[name], table_id=table.pk)
        hits = _crash_each_step(monkeypatch, lambda: services.start_match(
            user=people["host"], table_id=table.pk))
        assert hits >= 3 and stake(table).state == Stake.State.PLAYING

    def test_cancel_and_refund(self, people, monkeypatch):
        table = club.open_stake_table(user=people["host"], entry=100)
        services.join_table(user=people["ana"], table_id=table.pk)
        later = timezone.now() + numbers.STAKE_FILL_TIME + timedelta(seconds=1)

        def cancel():
            # The beat task swallows refusals; a crash is no refusal and goes through.
            assert club.cancel_unfilled(now=later) == 1

        hits = _crash_each_step(monkeypatch, cancel)
        assert hits >= 5 and coins(people["host"], people["ana"]) == [START, START]

    def test_settle(self, people, monkeypatch):
        host = people["host"]
        table = club.open_stake_table(user=host, entry=100)
        for name in ("ana", "bea", "caio"):
            services.join_table(user=people[name], table_id=table.pk)
        services.start_match(user=host, table_id=table.pk)
        # Play with the settlement dying until the move that ends the match is found.
        rng = random.Random(4)
        while True:
            engine, rnd_no, ply = position(table)
            rnd = engine.current
            if rnd is None:
                services.next_round(user=host, table_id=table.pk)
                continue
            move = legal_dict(*rng.choice(rnd.legal()))
            user = seat_user(table, rnd.turn)

            def play(move=move, user=user, rnd_no=rnd_no, ply=ply):
                services.play_move(user=user, table_id=table.pk, round_number=rnd_no, ply=ply,
                                   tile=move.get("play"), end=move.get("end"),
                                   is_pass=bool(move.get("pass")))

            with monkeypatch.context() as patch:
                _kill_after(patch, club, "match_finished")
                try:
                    play()
                except Killed:
                    break
        hits = _crash_each_step(monkeypatch, play)
        assert hits >= 5 and stake(table).state == Stake.State.PAID
        assert sum(LedgerEntry.objects.filter(table=table, reason="pot")
                   .values_list("coins", flat=True)) == 400


# -- concurrency (PostgreSQL) ---------------------------------------------------------------

@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
class TestConcurrency:
    def test_one_balance_cannot_pay_two_entries_at_once(self, people):
        ana = people["ana"]
        drain(ana, 150)
        tables = [club.open_stake_table(user=people[n], entry=100) for n in ("host", "bea")]
        for _attempt in range(5):
            results = race(*[(f"t{t.pk}", lambda t=t: services.join_table(
                user=ana, table_id=t.pk)) for t in tables])
            assert sorted(r.startswith("t") for r in results) == [False, True]
            assert "short" in results
            assert coins(ana) == [50]
            seated = next(t for t in tables if Seat.objects.filter(table=t, user=ana).exists())
            services.leave_table(user=ana, table_id=seated.pk)
            assert coins(ana) == [150]
        books_ok()

    def test_many_people_race_for_the_last_seats(self, make_user):
        host = make_user("host")
        crowd = [make_user(f"p{i}") for i in range(6)]
        table = club.open_stake_table(user=host, entry=250)
        results = race(*[(u.username, lambda u=u: services.join_table(
            user=u, table_id=table.pk)) for u in crowd])
        assert sorted(results).count("full") == 3
        assert stake(table).escrow == 4 * 250
        books_ok()

    def test_standing_up_racing_the_cancellation_refunds_once(self, people):
        for _attempt in range(4):
            table = club.open_stake_table(user=people["host"], entry=100)
            services.join_table(user=people["ana"], table_id=table.pk)
            later = timezone.now() + numbers.STAKE_FILL_TIME + timedelta(seconds=1)
            race(("leave", lambda t=table: services.leave_table(user=people["ana"],
                                                                table_id=t.pk)),
                 ("cancel", lambda later=later: club.cancel_unfilled(now=later)),
                 ("host", lambda t=table: club.stand_up(user=people["host"], table_id=t.pk)))
            assert Table.objects.get(pk=table.pk).state == Table.State.CLOSED
            assert coins(people["host"], people["ana"]) == [START, START]
            books_ok()

    def test_the_last_move_sent_twice_pays_the_pot_once(self, people):
        host = people["host"]
        table = club.open_stake_table(user=host, entry=500)
        for name in ("ana", "bea", "caio"):
            services.join_table(user=people[name], table_id=table.pk)
        services.start_match(user=host, table_id=table.pk)
        rng = random.Random(9)
        while Table.objects.get(pk=table.pk).current_match.finished_at is None:
            engine, rnd_no, ply = position(table)
            rnd = engine.current
            if rnd is None:
                services.next_round(user=host, table_id=table.pk)
                continue
            move = legal_dict(*rng.choice(rnd.legal()))
            user = seat_user(table, rnd.turn)

            def play(move=move, user=user, rnd_no=rnd_no, ply=ply):
                services.play_move(user=user, table_id=table.pk, round_number=rnd_no, ply=ply,
                                   tile=move.get("play"), end=move.get("end"),
                                   is_pass=bool(move.get("pass")))

            results = race(("a", play), ("b", play), ("c", play))
            assert sum(r in ("a", "b", "c") for r in results) == 1
            assert sorted(r for r in results if r not in ("a", "b", "c")) == ["stale", "stale"]
        assert sum(LedgerEntry.objects.filter(table=table, reason="pot")
                   .values_list("coins", flat=True)) == 2000
        books_ok()


def test_a_guest_is_asked_to_sign_up_before_sitting_at_a_stake_table(people):
    from apps.accounts.models import Profile

    table = club.open_stake_table(user=people["host"], entry=100)
    Profile.objects.filter(user=people["outsider"]).update(guest=True)
    guest = Profile.objects.select_related("user").get(user=people["outsider"]).user
    refused("not_signed_in", services.join_table, user=guest, table_id=table.pk)
    refused("not_signed_in", club.open_stake_table, user=guest, entry=100)
    assert seat_user(table, 1) is None


def test_closed_mid_round_the_leaver_is_not_refunded(people):
    host = people["host"]
    table = club.open_stake_table(user=host, entry=100)
    for name in ("ana", "bea", "caio"):
        services.join_table(user=people[name], table_id=table.pk)
    services.start_match(user=host, table_id=table.pk)
    services.leave_table(user=people["bea"], table_id=table.pk)
    services.close_by_staff(table_id=table.pk, reason="test")
    assert coins(people["bea"]) == [START - 100]
    assert sorted(coins(host, people["ana"], people["caio"])) == [START + 33, START + 33,
                                                                  START + 34]
    books_ok()


def test_check_coins_command(people):
    from django.core.management import CommandError, call_command

    club.open_stake_table(user=people["host"], entry=100)
    call_command("check_coins")
    Wallet.objects.filter(pk=people["ana"].pk).update(coins=5)
    with pytest.raises(CommandError):
        call_command("check_coins")
    Wallet.objects.filter(pk=people["ana"].pk).update(coins=START)
