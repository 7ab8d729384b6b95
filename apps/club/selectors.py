"""Reads of the club's economy: balances, levels, the ledger, stake tables, the invariant."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC

from django.db.models import Count, Q, Sum

from apps.accounts.models import Profile

from . import numbers
from .models import LeaguePoints, LedgerEntry, Purse, Rating, RatingChange, Stake, Wallet


def level_for(xp: int) -> int:
    """Level L is reached at LEVEL_STEP * L * (L - 1) / 2 experience (numbers.py)."""
    level = 1
    while xp >= xp_for_level(level + 1):
        level += 1
    return level


def xp_for_level(level: int) -> int:
    return numbers.LEVEL_STEP * level * (level - 1) // 2


@dataclass(frozen=True)
class Standing:
    coins: int
    xp: int
    level: int
    level_xp: int  # experience at which this level began
    next_level_xp: int
    entries: list[LedgerEntry]
    may_claim_daily: bool
    #: [(kind label, shown, matches, provisional)] for the kinds this person has played.
    ratings: list[tuple[str, int, int, bool]]

    @property
    def level_span(self) -> int:
        return self.next_level_xp - self.level_xp

    @property
    def level_progress(self) -> int:
        return self.xp - self.level_xp

    @property
    def progress_percent(self) -> int:
        return int(100 * self.level_progress / self.level_span) if self.level_span else 100


def standing(user, *, rows: int = numbers.PROFILE_LEDGER_ROWS) -> Standing:
    wallet = Wallet.objects.filter(pk=user.pk).first()
    coins, xp = (wallet.coins, wallet.xp) if wallet else (0, 0)
    level = level_for(xp)
    entries = list(LedgerEntry.objects.filter(user=user).select_related("table")[:rows])
    labels = dict(Rating.Kind.choices)
    rated = [(labels[r.kind], r.shown, r.matches,
              r.matches < numbers.RATING_PROVISIONAL_MATCHES)
             for r in Rating.objects.filter(user=user).order_by("kind")]
    return Standing(coins=coins, xp=xp, level=level, level_xp=xp_for_level(level),
                    next_level_xp=xp_for_level(level + 1), entries=entries,
                    may_claim_daily=coins < numbers.DAILY_FLOOR and not _guest(user),
                    ratings=rated)


def _guest(user) -> bool:
    return bool(getattr(getattr(user, "profile", None), "guest", False))


def balance(user) -> int:
    return Wallet.objects.filter(pk=user.pk).values_list("coins", flat=True).first() or 0


def open_stake_tables():
    """Stake tables waiting for people, cheapest first, with their seats."""
    return (Stake.objects.filter(state=Stake.State.OPEN, table__state="waiting",
                                 table__hidden=False)
            .select_related("table", "table__host__profile")
            .annotate(free=Count("table__seats", filter=Q(table__seats__user__isnull=True)))
            .order_by("entry", "created_at"))


def stake_of(table_id: int) -> Stake | None:
    return Stake.objects.filter(table_id=table_id).first()


def coin_totals() -> dict[str, int]:
    """The invariant's three sums: wallets + escrow must equal minted."""
    wallets = Wallet.objects.aggregate(s=Sum("coins"))["s"] or 0
    escrow = (Stake.objects.aggregate(s=Sum("escrow"))["s"] or 0) \
        + (Purse.objects.aggregate(s=Sum("escrow"))["s"] or 0)
    minted = LedgerEntry.objects.filter(reason__in=LedgerEntry.MINTED) \
        .aggregate(s=Sum("coins"))["s"] or 0
    return {"wallets": wallets, "escrow": escrow, "minted": minted}


def wallet_problems() -> list[str]:
    """Every way the caches disagree with the ledger: wallets with their sums, each stake's
    and each purse's escrow with its entries, and the invariant. Empty when all is well."""
    problems = []
    sums = {row["user_id"]: row for row in LedgerEntry.objects.values("user_id")
            .annotate(coins=Sum("coins"), xp=Sum("xp"))}
    for wallet in Wallet.objects.all():
        row = sums.pop(wallet.pk, {"coins": 0, "xp": 0})
        if (wallet.coins, wallet.xp) != (row["coins"], row["xp"]):
            problems.append(f"wallet {wallet.pk}: {wallet.coins}/{wallet.xp}, ledger "
                            f"{row['coins']}/{row['xp']}")
    for user_id in sums:
        problems.append(f"user {user_id} has ledger rows and no wallet")
    held = {row["table_id"]: -row["coins"] for row in LedgerEntry.objects
            .filter(reason__in=LedgerEntry.ESCROW).values("table_id")
            .annotate(coins=Sum("coins"))}
    for stake in Stake.objects.all():
        if stake.escrow != held.get(stake.table_id, 0):
            problems.append(f"stake {stake.table_id}: escrow {stake.escrow}, entries "
                            f"{held.get(stake.table_id, 0)}")
        if stake.state in (Stake.State.PAID, Stake.State.CANCELLED) and stake.escrow:
            problems.append(f"stake {stake.table_id} is {stake.state} with {stake.escrow}")
    in_purses = {row["purse_id"]: -row["coins"] for row in LedgerEntry.objects
                 .filter(reason__in=LedgerEntry.PURSE).values("purse_id")
                 .annotate(coins=Sum("coins"))}
    for purse in Purse.objects.all():
        if purse.escrow != in_purses.get(purse.pk, 0):
            problems.append(f"purse {purse.key}: escrow {purse.escrow}, entries "
                            f"{in_purses.get(purse.pk, 0)}")
        if purse.state != Purse.State.OPEN and purse.escrow:
            problems.append(f"purse {purse.key} is {purse.state} with {purse.escrow}")
    totals = coin_totals()
    if totals["wallets"] + totals["escrow"] != totals["minted"]:
        problems.append(f"invariant: {totals}")
    return problems


# -- ratings and leaderboards -----------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    rank: int
    user_id: int
    name: str
    points: int
    provisional: bool = False


def _names(user_ids) -> dict[int, str]:
    return dict(Profile.objects.filter(user_id__in=set(user_ids))
                .values_list("user_id", "display_name"))


def _ranked(pairs: list[tuple[int, int]], *, provisional: set[int] = frozenset()) -> list[Row]:
    """(user id, points) best first -> rows with shared ranks (1, 2, 2, 4)."""
    names = _names(u for u, _p in pairs)
    rows, rank, last = [], 0, None
    for place, (user_id, points) in enumerate(pairs, start=1):
        if points != last:
            rank, last = place, points
        rows.append(Row(rank, user_id, names.get(user_id, "?"), points,
                        user_id in provisional))
    return rows


def ratings_of(user) -> dict[str, dict]:
    out = {}
    for r in Rating.objects.filter(user=user):
        out[r.kind] = {"shown": r.shown, "matches": r.matches,
                       "provisional": r.matches < numbers.RATING_PROVISIONAL_MATCHES}
    return out


def leaderboard(kind: str, *, rows: int = numbers.LEADERBOARD_ROWS) -> list[Row]:
    """All time: the ratings of people past their provisional matches, highest first."""
    qs = (Rating.objects.filter(kind=kind, matches__gte=numbers.RATING_PROVISIONAL_MATCHES)
          .order_by("-shown", "user_id").values_list("user_id", "shown")[:rows])
    return _ranked(list(qs))


def week_leaderboard(kind: str, week, *, rows: int = numbers.LEADERBOARD_ROWS) -> list[Row]:
    """This week: the rating each person gained in the week's matches, most first."""
    from datetime import datetime, time, timedelta

    from django.db.models import F

    start = datetime.combine(week, time.min, tzinfo=UTC)
    qs = (RatingChange.objects.filter(kind=kind, created_at__gte=start,
                                      created_at__lt=start + timedelta(days=7))
          .values("user_id").annotate(gain=Sum(F("after") - F("before")))
          .order_by("-gain", "user_id").values_list("user_id", "gain")[:rows])
    pairs = list(qs)
    provisional = set(Rating.objects.filter(
        kind=kind, user_id__in=[u for u, _g in pairs],
        matches__lt=numbers.RATING_PROVISIONAL_MATCHES).values_list("user_id", flat=True))
    return _ranked(pairs, provisional=provisional)


def league_table(week) -> list[Row]:
    """A week's league standings: points summed per person, highest first."""
    qs = (LeaguePoints.objects.filter(week=week).values("user_id")
          .annotate(total=Sum("points")).order_by("-total", "user_id")
          .values_list("user_id", "total"))
    return _ranked(list(qs))
