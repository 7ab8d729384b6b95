"""The club's economy: a ledger of coins and experience, wallets caching its sums, stakes.

The ledger is the truth. Every change of a person's coins or experience is one
:class:`LedgerEntry`, written in the transaction of the event that causes it, with a ``key``
that is unique across the ledger: the same match, grant, entry or refund can never be written
twice, whoever retries it. :class:`Wallet` caches a person's sums so that a balance check can
lock one row (``apps.club.selectors.wallet_problems`` compares the cache with the sums).

A stake table's entries sit in :attr:`Stake.escrow` between sit-down and the pot's payout or
refund; the coin invariant is: the sum of all wallets plus all escrow equals the sum of every
minted coin (grants and match payouts), see docs/club.md.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Wallet(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, primary_key=True,
                                on_delete=models.CASCADE, related_name="wallet")
    coins = models.IntegerField(default=0)
    xp = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(coins__gte=0),
                                              name="wallet_coins_not_negative")]

    def __str__(self) -> str:
        return f"{self.user}: {self.coins}"


class LedgerEntry(models.Model):
    class Reason(models.TextChoices):
        START = "start", _("Welcome grant")
        DAILY = "daily", _("Daily grant")
        MATCH = "match", _("Match played")
        STAKE = "stake", _("Table entry")
        REFUND = "refund", _("Entry refunded")
        POT = "pot", _("Pot won")
        LEAGUE = "league", _("Weekly league prize")
        TOURNAMENT_ENTRY = "t_entry", _("Tournament entry")
        TOURNAMENT_REFUND = "t_refund", _("Tournament entry refunded")
        TOURNAMENT_PRIZE = "t_prize", _("Tournament prize")
        TOURNAMENT_AWARD = "t_award", _("Tournament prize from the club")

    #: Reasons that create coins; the others move coins between a wallet and an escrow.
    MINTED = frozenset({Reason.START, Reason.DAILY, Reason.MATCH, Reason.LEAGUE,
                        Reason.TOURNAMENT_AWARD})
    #: Reasons that move coins in or out of a stake table's escrow.
    ESCROW = frozenset({Reason.STAKE, Reason.REFUND, Reason.POT})
    #: Reasons that move coins in or out of a purse (a tournament's entries).
    PURSE = frozenset({Reason.TOURNAMENT_ENTRY, Reason.TOURNAMENT_REFUND,
                       Reason.TOURNAMENT_PRIZE})

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="ledger")
    coins = models.IntegerField(default=0)
    xp = models.IntegerField(default=0)
    reason = models.CharField(max_length=10, choices=Reason.choices)
    #: What caused it; unique across the ledger (see the module's docstring).
    key = models.CharField(max_length=80, unique=True)
    table = models.ForeignKey("tables.Table", null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="+")
    match = models.ForeignKey("tables.Match", null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="+")
    #: The purse of a tournament entry, refund or prize (its escrow is checked against these).
    purse = models.ForeignKey("club.Purse", null=True, blank=True, on_delete=models.PROTECT,
                              related_name="entries")
    #: The final rank (1 = best) of a match payout, for the profile's list.
    rank = models.PositiveSmallIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["user", "-created_at"])]
        constraints = [models.CheckConstraint(condition=~Q(coins=0) | ~Q(xp=0),
                                              name="ledger_entry_changes_something")]

    def __str__(self) -> str:
        return f"{self.key}: {self.coins:+d} coins {self.xp:+d} xp"


class Stake(models.Model):
    """The entry of a stake table and the coins held for it until the match ends."""

    class State(models.TextChoices):
        OPEN = "open", _("Waiting for players")
        PLAYING = "playing", _("Playing")
        PAID = "paid", _("Pot paid")
        CANCELLED = "cancelled", _("Cancelled, entries refunded")

    table = models.OneToOneField("tables.Table", primary_key=True, on_delete=models.CASCADE,
                                 related_name="stake")
    entry = models.PositiveIntegerField()
    escrow = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    #: Not started by then: cancelled, every entry refunded (numbers.STAKE_FILL_TIME).
    fill_by = models.DateTimeField(db_index=True)
    created_at = models.DateTimeField(default=timezone.now)
    settled_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.table} ({self.entry})"


class Purse(models.Model):
    """Coins held for an event of an app above the club, as a stake table's escrow is: a
    tournament's entries, from registration until its prizes are paid or its entries given
    back (``apps.club.purses``). The club knows the event only by ``key``."""

    class State(models.TextChoices):
        OPEN = "open", _("Taking entries")
        PAID = "paid", _("Prizes paid")
        REFUNDED = "refunded", _("Cancelled, entries refunded")

    key = models.CharField(max_length=40, unique=True)
    entry = models.PositiveIntegerField(default=0)
    escrow = models.PositiveIntegerField(default=0)
    #: Coins the club adds to the prizes, minted when they are paid (like the league's).
    added = models.PositiveIntegerField(default=0)
    state = models.CharField(max_length=10, choices=State.choices, default=State.OPEN)
    created_at = models.DateTimeField(default=timezone.now)
    settled_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.key} ({self.entry})"


class Rating(models.Model):
    """A person's skill (openskill's Plackett-Luce model): one for the pair presets, one for
    the individual presets. Provisional until ``numbers.RATING_PROVISIONAL_MATCHES``."""

    class Kind(models.TextChoices):
        PAIRS = "pairs", _("Pairs")
        SOLO = "solo", _("Individual")

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="ratings")
    kind = models.CharField(max_length=5, choices=Kind.choices)
    mu = models.FloatField()
    sigma = models.FloatField()
    matches = models.PositiveIntegerField(default=0)
    #: What the pages show and sort by: the conservative estimate, on a 1000-point scale.
    shown = models.IntegerField(db_index=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "kind"], name="rating_once")]

    def __str__(self) -> str:
        return f"{self.user} {self.kind}: {self.shown}"


class RatingChange(models.Model):
    """One match's effect on one rating: the week's leaderboard sums these."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    kind = models.CharField(max_length=5, choices=Rating.Kind.choices)
    match = models.ForeignKey("tables.Match", on_delete=models.CASCADE, related_name="+")
    before = models.IntegerField()
    after = models.IntegerField()
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "match"],
                                               name="rating_change_once")]

    def __str__(self) -> str:
        return f"{self.user_id} {self.kind}: {self.before} -> {self.after}"


class LeaguePoints(models.Model):
    """League points of one person for one online match, in the week (Monday, UTC) it ended."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="+")
    week = models.DateField(db_index=True)
    match = models.ForeignKey("tables.Match", on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveSmallIntegerField()
    points = models.PositiveIntegerField()
    #: Bots filled a seat: the match counts at half.
    halved = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "match"],
                                               name="league_points_once")]

    def __str__(self) -> str:
        return f"{self.user_id} week {self.week}: {self.points}"


class LeagueWeek(models.Model):
    """A closed week: its prizes are paid (the ledger's keys make the payment itself once)."""

    week = models.DateField(primary_key=True)
    closed_at = models.DateTimeField(default=timezone.now)
    #: [[user id, rank, points, coins], ...] as paid.
    winners = models.JSONField(default=list)

    def __str__(self) -> str:
        return f"week of {self.week}"
