"""Purses: the entries of an event above the club (a tournament), held as a stake table's
escrow is, until the event pays its prizes or gives the entries back (docs/club.md, "Purses").

The club knows the event only by the purse's ``key`` (``tournament:12``). Every coin moves as
a ledger row with a unique key, in the caller's transaction: entries ``tentry:<purse>:<user>:<n>``,
refunds ``trefund:<purse>:<user>:<n>``, prizes from the pot ``tprize:<purse>:<user>`` and the
club's added coins ``taward:<purse>:<user>`` (minted, like the league's prizes). So a prize is
paid once however often the payout runs, and "wallets + escrow = minted" keeps holding:
entries, refunds and prizes only move coins between wallets and the purse.

Locks: the caller's own row first (the tournament), then the purse, then wallets by ascending
user id (:func:`apps.club.services._locked_wallets`).
"""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.core.errors import ServiceError

from .models import LedgerEntry, Purse
from .services import _is_guest, _locked_wallets, _write

Reason = LedgerEntry.Reason


def open_purse(*, key: str, entry: int, added: int = 0,
               now: datetime | None = None) -> Purse:
    """A new purse for an event; an entry of 0 (a free event) moves no coins."""
    if entry < 0 or added < 0:
        raise ServiceError(_("An entry and a prize cannot be negative."), code="bad_entry")
    try:
        with transaction.atomic():
            return Purse.objects.create(key=key, entry=entry, added=added,
                                        created_at=now or timezone.now())
    except IntegrityError:
        raise ServiceError(_("That purse exists already."), code="purse_exists") from None


def _locked(key: str) -> Purse:
    purse = Purse.objects.select_for_update().filter(key=key).first()
    if purse is None:
        raise ServiceError(_("There is no such purse."), code="no_purse")
    return purse


def holders(purse: Purse) -> dict[int, int]:
    """Who has an entry in the purse now, and how many (entries minus refunds), in the order
    they first paid one."""
    held: dict[int, int] = {}
    rows = LedgerEntry.objects.filter(purse=purse, reason__in=(
        Reason.TOURNAMENT_ENTRY, Reason.TOURNAMENT_REFUND)).order_by("pk") \
        .values_list("user_id", "reason")
    for user_id, reason in rows:
        held[user_id] = held.get(user_id, 0) + (1 if reason == Reason.TOURNAMENT_ENTRY else -1)
    return {u: n for u, n in held.items() if n > 0}


def _count(purse: Purse, user_id: int, reason: str) -> int:
    return LedgerEntry.objects.filter(purse=purse, user_id=user_id, reason=reason).count()


def pay_entry(*, key: str, user, count: int = 1,
              now: datetime | None = None) -> LedgerEntry | None:
    """The person's entry (``count`` entries: a pair's two) goes from their wallet into the
    purse (the last row, or None for a free event); refused, changing nothing, when the
    balance is short of them all or the purse has closed."""
    now = now or timezone.now()
    if user is None or not user.is_authenticated or _is_guest(user):
        raise ServiceError(_("Sign up to play in tournaments."), code="not_signed_in")
    with transaction.atomic():
        purse = _locked(key)
        if purse.state != Purse.State.OPEN:
            raise ServiceError(_("This tournament takes no more entries."), code="purse_closed")
        if purse.entry == 0:
            return None
        wallet = _locked_wallets([user.pk])[user.pk]
        # Checked against every entry before the first is taken: the balance in the message
        # is the one the person has, not what is left after a debit that is rolled back.
        if wallet.coins < purse.entry * count:
            if count == 1:
                message = _("The entry is %(entry)d coins and you have %(coins)d.")
            else:
                message = _("A pair's entries are %(total)d coins (%(entry)d each) and you "
                            "have %(coins)d.")
            raise ServiceError(message % {"entry": purse.entry, "total": purse.entry * count,
                                          "coins": wallet.coins}, code="short")
        n = _count(purse, user.pk, Reason.TOURNAMENT_ENTRY)
        for k in range(count):
            entry = _write(wallet, coins=-purse.entry, reason=Reason.TOURNAMENT_ENTRY,
                           key=f"tentry:{purse.pk}:{user.pk}:{n + k}", purse_id=purse.pk,
                           now=now)
        purse.escrow += purse.entry * count
        purse.save(update_fields=["escrow"])
        return entry


def _refund(purse: Purse, wallets: dict, user_id: int, *, now: datetime) -> LedgerEntry:
    n = _count(purse, user_id, Reason.TOURNAMENT_REFUND)
    entry = _write(wallets[user_id], coins=purse.entry, reason=Reason.TOURNAMENT_REFUND,
                   key=f"trefund:{purse.pk}:{user_id}:{n}", purse_id=purse.pk, now=now)
    purse.escrow -= purse.entry
    return entry


def refund_entry(*, key: str, user_id: int, now: datetime | None = None) -> LedgerEntry | None:
    """Give one person's entry back (they withdrew before the start); None when they hold
    none."""
    now = now or timezone.now()
    with transaction.atomic():
        purse = _locked(key)
        if purse.state != Purse.State.OPEN or holders(purse).get(user_id, 0) == 0:
            return None
        entry = _refund(purse, _locked_wallets([user_id]), user_id, now=now)
        purse.save(update_fields=["escrow"])
        return entry


def refund_all(*, key: str, now: datetime | None = None) -> list[LedgerEntry]:
    """The event is cancelled: every entry goes back and the purse closes. A second call
    finds it closed and gives nothing."""
    now = now or timezone.now()
    with transaction.atomic():
        purse = _locked(key)
        if purse.state != Purse.State.OPEN:
            return []
        held = holders(purse)
        wallets = _locked_wallets(held)
        written = [_refund(purse, wallets, user_id, now=now)
                   for user_id in sorted(held) for _n in range(held[user_id])]
        purse.state, purse.settled_at = Purse.State.REFUNDED, now
        purse.save(update_fields=["escrow", "state", "settled_at"])
        return written


def pay_prizes(*, key: str, prizes: dict[int, int], awards: dict[int, int] | None = None,
               now: datetime | None = None) -> list[LedgerEntry]:
    """Pay the event's prizes, once: ``prizes`` share the whole escrow (they must add up to
    it exactly), ``awards`` are the club's added coins (at most ``Purse.added``, minted).
    The purse closes in the same transaction; a second call (a retried task, two beats)
    finds it closed and pays nothing, and each row's unique key would refuse a second
    payment anyway."""
    now = now or timezone.now()
    awards = {u: c for u, c in (awards or {}).items() if c}
    prizes = {u: c for u, c in prizes.items() if c}
    with transaction.atomic():
        purse = _locked(key)
        if purse.state != Purse.State.OPEN:
            return []
        if sum(prizes.values()) != purse.escrow or sum(awards.values()) > purse.added \
                or any(c < 0 for c in (*prizes.values(), *awards.values())):
            raise ServiceError(_("The prizes do not add up to the purse."), code="bad_prizes")
        wallets = _locked_wallets(set(prizes) | set(awards))
        written = []
        for user_id in sorted(prizes):
            written.append(_purse_row(purse, wallets[user_id], prizes[user_id],
                                      Reason.TOURNAMENT_PRIZE, "tprize", now=now))
        for user_id in sorted(awards):
            written.append(_purse_row(purse, wallets[user_id], awards[user_id],
                                      Reason.TOURNAMENT_AWARD, "taward", now=now))
        purse.escrow = 0
        purse.state, purse.settled_at = Purse.State.PAID, now
        purse.save(update_fields=["escrow", "state", "settled_at"])
        return [row for row in written if row is not None]


def _purse_row(purse: Purse, wallet, coins: int, reason: str, prefix: str, *,
               now: datetime) -> LedgerEntry | None:
    return _write(wallet, coins=coins, reason=reason, key=f"{prefix}:{purse.pk}:{wallet.pk}",
                  purse_id=purse.pk, now=now)
