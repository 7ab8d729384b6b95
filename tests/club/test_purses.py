"""Purses (apps/club/purses.py): a tournament's entries held by the club, refunded or paid as
prizes exactly once, with "wallets + escrow = minted" after every step."""

from __future__ import annotations

import pytest

from apps.club import purses
from apps.club.models import LedgerEntry, Purse, Wallet
from apps.club.selectors import coin_totals, wallet_problems
from apps.core.errors import ServiceError

from .conftest import make_user  # noqa: F401  (the fixture)


@pytest.fixture
def three(make_user):  # noqa: F811
    return [make_user(name) for name in ("ana", "bea", "caio")]


def coins(user) -> int:
    return Wallet.objects.get(pk=user.pk).coins


def sound() -> None:
    assert wallet_problems() == []
    totals = coin_totals()
    assert totals["wallets"] + totals["escrow"] == totals["minted"]


def test_entries_refunds_and_prizes_once(three):
    ana, bea, caio = three
    purses.open_purse(key="tournament:1", entry=100, added=50)
    for person in three:
        purses.pay_entry(key="tournament:1", user=person)
        sound()
    assert Purse.objects.get(key="tournament:1").escrow == 300
    assert coin_totals()["escrow"] == 300
    assert purses.refund_entry(key="tournament:1", user_id=caio.pk) is not None
    assert purses.refund_entry(key="tournament:1", user_id=caio.pk) is None  # holds none now
    sound()
    with pytest.raises(ServiceError) as err:
        purses.pay_prizes(key="tournament:1", prizes={ana.pk: 150})  # not the whole pot
    assert err.value.code == "bad_prizes"
    with pytest.raises(ServiceError):
        purses.pay_prizes(key="tournament:1", prizes={ana.pk: 200}, awards={ana.pk: 51})
    paid = purses.pay_prizes(key="tournament:1", prizes={ana.pk: 140, bea.pk: 60},
                             awards={ana.pk: 50})
    assert len(paid) == 3
    sound()
    assert (coins(ana), coins(bea), coins(caio)) == (1090, 960, 1000)
    # Running it again pays nothing: the purse is closed, and each key is unique anyway.
    assert purses.pay_prizes(key="tournament:1", prizes={ana.pk: 140, bea.pk: 60}) == []
    assert purses.refund_all(key="tournament:1") == []
    with pytest.raises(ServiceError) as err:
        purses.pay_entry(key="tournament:1", user=caio)
    assert err.value.code == "purse_closed"
    # three entries, a refund, three prize rows
    assert LedgerEntry.objects.filter(purse__key="tournament:1").count() == 3 + 1 + 3
    sound()


def test_refund_all_gives_every_entry_back_once(three):
    purses.open_purse(key="tournament:2", entry=250)
    for person in three:
        purses.pay_entry(key="tournament:2", user=person)
    purses.pay_entry(key="tournament:2", user=three[0])  # paid for a partner too
    assert coins(three[0]) == 500
    assert len(purses.refund_all(key="tournament:2")) == 4
    assert [coins(p) for p in three] == [1000, 1000, 1000]
    assert purses.refund_all(key="tournament:2") == []
    assert Purse.objects.get(key="tournament:2").state == "refunded"
    sound()


def test_a_short_balance_is_refused_and_a_free_purse_moves_nothing(three):
    purses.open_purse(key="tournament:3", entry=1001)
    with pytest.raises(ServiceError) as err:
        purses.pay_entry(key="tournament:3", user=three[0])
    assert err.value.code == "short" and "1001" in str(err.value.message)
    purses.open_purse(key="tournament:4", entry=0)
    assert purses.pay_entry(key="tournament:4", user=three[0]) is None
    with pytest.raises(ServiceError):
        purses.open_purse(key="tournament:4", entry=0)
    sound()


def test_wallet_problems_sees_a_purse_out_of_step(three):
    purses.open_purse(key="tournament:5", entry=100)
    purses.pay_entry(key="tournament:5", user=three[0])
    Purse.objects.filter(key="tournament:5").update(escrow=90)
    assert any("purse tournament:5" in p for p in wallet_problems())
