"""The only writer of coins and experience (docs/club.md).

Every change is a :class:`~apps.club.models.LedgerEntry` with a unique key, written in the
transaction of the event that causes it, and the person's :class:`~apps.club.models.Wallet`
(the cached sums) is changed in the same statement group, under the wallet's row lock. Locks are
always taken table first (the tables services hold it when they call in here), then wallets in
ascending user id, so that two calls never wait on each other in a circle.

The tables app knows nothing of pay: through its hooks (``apps.tables.hooks``, registered in
``apps.club.apps``) it calls :func:`match_finished` when a match ends and :func:`stake_follows`
for every new version of a table; both run inside its transaction, under its table lock, and a
refusal here (:class:`ServiceError`) undoes the whole action.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.core.beat import act_on_each
from apps.core.errors import ServiceError
from apps.tables import services as tables
from apps.tables.game import match_rules
from apps.tables.models import Table

from . import numbers, ratings
from .models import LeaguePoints, LeagueWeek, LedgerEntry, Rating, RatingChange, Stake, Wallet
from .selectors import league_table

Reason = LedgerEntry.Reason


# -- the ledger -------------------------------------------------------------------------------

def _locked_wallets(user_ids: Iterable[int]) -> dict[int, Wallet]:
    """The wallets of ``user_ids``, created if missing, row-locked in ascending id order."""
    ids = sorted(set(user_ids))
    if not ids:
        return {}
    have = set(Wallet.objects.filter(pk__in=ids).values_list("pk", flat=True))
    for user_id in ids:
        if user_id not in have:
            try:
                with transaction.atomic():
                    Wallet.objects.create(user_id=user_id)
            except IntegrityError:  # made by a concurrent call meanwhile
                pass
    wallets = Wallet.objects.select_for_update().filter(pk__in=ids).order_by("pk")
    return {w.pk: w for w in wallets}


def _write(wallet: Wallet, *, coins: int = 0, xp: int = 0, reason: str, key: str,
           table_id: int | None = None, match_id: int | None = None, rank: int | None = None,
           purse_id: int | None = None, now: datetime | None = None) -> LedgerEntry | None:
    """One ledger row and its wallet change; None when ``key`` was written before (a retry)."""
    try:
        with transaction.atomic():
            entry = LedgerEntry.objects.create(
                user_id=wallet.pk, coins=coins, xp=xp, reason=reason, key=key,
                table_id=table_id, match_id=match_id, rank=rank, purse_id=purse_id,
                created_at=now or timezone.now())
    except IntegrityError:
        if LedgerEntry.objects.filter(key=key).exists():
            return None
        raise
    Wallet.objects.filter(pk=wallet.pk).update(coins=F("coins") + coins, xp=F("xp") + xp)
    wallet.coins += coins
    wallet.xp += xp
    return entry


def _is_guest(user) -> bool:
    profile = getattr(user, "profile", None)
    return bool(getattr(profile, "guest", False))


# -- grants -----------------------------------------------------------------------------------

def grant_start(*, user) -> LedgerEntry | None:
    """The welcome grant of a new account (never for a guest; once per person, ever)."""
    key = f"start:{user.pk}"
    if _is_guest(user) or LedgerEntry.objects.filter(key=key).exists():
        return None
    with transaction.atomic():
        wallet = _locked_wallets([user.pk])[user.pk]
        return _write(wallet, coins=numbers.START_COINS, reason=Reason.START, key=key)


def _today(now: datetime) -> date:
    return now.astimezone(timezone.get_fixed_timezone(0)).date()


def claim_daily(*, user, now: datetime | None = None) -> LedgerEntry:
    """The daily grant, for a person below the floor, once per UTC day."""
    now = now or timezone.now()
    if user is None or not user.is_authenticated or _is_guest(user):
        raise ServiceError(_("Sign up to collect coins."), code="not_signed_in")
    with transaction.atomic():
        wallet = _locked_wallets([user.pk])[user.pk]
        if wallet.coins >= numbers.DAILY_FLOOR:
            raise ServiceError(
                _("The daily coins are for players with fewer than %(floor)d coins.")
                % {"floor": numbers.DAILY_FLOOR}, code="above_floor")
        entry = _write(wallet, coins=numbers.DAILY_COINS, reason=Reason.DAILY,
                       key=f"daily:{user.pk}:{_today(now).isoformat()}", now=now)
        if entry is None:
            raise ServiceError(_("You have collected today's coins already. Come back "
                                 "tomorrow."), code="already_collected")
        return entry


# -- match payouts ----------------------------------------------------------------------------

PRACTICE, PRIVATE, ONLINE = "practice", "private", "online"


def mode_of(table) -> str:
    """practice (practice tables, tables a guest hosts) pays nothing; private ("contra
    amigos": not listed) pays the winners at half; online (public, quick play too) pays all."""
    if table.practice or _is_guest(table.host):
        return PRACTICE
    return ONLINE if table.public else PRIVATE


def final_ranks(rules, winner: int | None, scores: list[int],
                games: list[int]) -> list[int]:
    """Each side's final rank (1 = best): the winner first, then by games won (series) and
    points; equal sides share the better rank (1, 2, 2, 4)."""
    sides = rules.sides

    def strength(side: int) -> tuple[int, int, int]:
        return (side == winner, games[side] if games else 0, scores[side] if scores else 0)

    order = sorted(range(sides), key=strength, reverse=True)
    ranks = [0] * sides
    for place, side in enumerate(order):
        if place and strength(side) == strength(order[place - 1]):
            ranks[side] = ranks[order[place - 1]]
        else:
            ranks[side] = place + 1
    return ranks


@dataclass(frozen=True)
class Pay:
    user_id: int
    seat: int
    rank: int
    coins: int
    xp: int


def payouts(*, mode: str, rules, ranks: list[int], seats) -> list[Pay]:
    """What each person at the end of a match is paid (table-driven: ``numbers``).

    ``seats`` are the table's seats at the match's end: bots, guests and people leaving (a
    match abandoned pays its leaver nothing) are paid nothing.
    """
    if mode == PRACTICE:
        return []
    sides = rules.sides
    coin_row, xp_row = numbers.ONLINE_COINS[sides], numbers.ONLINE_XP[sides]
    out = []
    for seat in seats:
        if seat.user_id is None or seat.is_bot or seat.leaving or _is_guest(seat.user):
            continue
        rank = ranks[rules.side_of(seat.index)]
        if mode == ONLINE:
            coins, xp = coin_row[rank - 1], xp_row[rank - 1]
        elif rank == 1:
            coins = int(coin_row[0] * numbers.PRIVATE_FACTOR)
            xp = int(xp_row[0] * numbers.PRIVATE_FACTOR)
        else:
            continue
        out.append(Pay(seat.user_id, seat.index, rank, coins, xp))
    return out


def match_finished(*, table, match, seats, now: datetime | None = None) -> list[LedgerEntry]:
    """A match is over: pay its seats by mode and rank, or its pot at a stake table.

    Called by the tables services in the transaction that wrote the match's last move, under
    the table's lock; each row's key names the match, so nothing is paid twice.
    """
    now = now or timezone.now()
    mode = mode_of(table)
    if mode == PRACTICE:
        return []
    rules = match_rules(match)
    ranks = final_ranks(rules, match.winner, list(match.scores), list(match.games))
    pays = payouts(mode=mode, rules=rules, ranks=ranks, seats=seats)
    stake = Stake.objects.select_for_update().filter(table_id=table.pk).first()
    wallets = _locked_wallets([p.user_id for p in pays] + _entrants(stake))
    written = []
    for pay in pays:
        # At a stake table the pot is the coins: the match pays experience only.
        coins = 0 if stake is not None else pay.coins
        entry = _write(wallets[pay.user_id], coins=coins, xp=pay.xp, reason=Reason.MATCH,
                       key=f"match:{match.pk}:{pay.user_id}", table_id=table.pk,
                       match_id=match.pk, rank=pay.rank, now=now)
        if entry is not None:
            written.append(entry)
    if stake is not None and stake.state == Stake.State.PLAYING:
        winners = [s for s in seats if rules.side_of(s.index) == match.winner]
        written += _pay_pot(stake, wallets, seats, winners, now=now)
    if mode == ONLINE:
        _rate(rules, ranks, seats, match, now=now)
        _league_points(table, rules, pays, seats, match, now=now)
    return written


# -- ratings ----------------------------------------------------------------------------------

def _rated_people(seats) -> list:
    return [s for s in seats if s.user_id is not None and not s.is_bot
            and not _is_guest(s.user)]


def _rate(rules, ranks: list[int], seats, match, *, now: datetime) -> None:
    """Update the ratings of an online match's people: partners as one team, bots as fixed
    opponents. Rating rows are locked in ascending user id (after the table and wallets)."""
    people = _rated_people(seats)
    if not people:
        return
    kind = Rating.Kind.PAIRS if rules.partners else Rating.Kind.SOLO
    ids = sorted({s.user_id for s in people})
    have = set(Rating.objects.filter(kind=kind, user_id__in=ids).values_list("user_id",
                                                                              flat=True))
    mu, sigma = ratings.initial()
    for user_id in ids:
        if user_id not in have:
            try:
                with transaction.atomic():
                    Rating.objects.create(user_id=user_id, kind=kind, mu=mu, sigma=sigma,
                                          shown=ratings.shown(mu, sigma))
            except IntegrityError:
                pass
    rows = {r.user_id: r for r in Rating.objects.select_for_update()
            .filter(kind=kind, user_id__in=ids).order_by("user_id")}
    by_side: dict[int, list] = {}
    for seat in seats:
        by_side.setdefault(rules.side_of(seat.index), []).append(seat)
    sides = sorted(by_side)
    teams = [[(rows[s.user_id].mu, rows[s.user_id].sigma) if s in people else None
              for s in by_side[side]] for side in sides]
    new = ratings.rate(teams, [ranks[side] for side in sides])
    for side, team in zip(sides, new, strict=True):
        for seat, value in zip(by_side[side], team, strict=True):
            if value is None:
                continue
            row = rows[seat.user_id]
            try:
                with transaction.atomic():
                    RatingChange.objects.create(user_id=row.user_id, kind=kind, match=match,
                                                before=row.shown,
                                                after=ratings.shown(*value), created_at=now)
            except IntegrityError:  # this match was rated already
                continue
            row.mu, row.sigma = value
            row.shown, row.matches, row.updated_at = ratings.shown(*value), row.matches + 1, now
            row.save(update_fields=["mu", "sigma", "shown", "matches", "updated_at"])


# -- the weekly league ------------------------------------------------------------------------

def week_of(moment: datetime) -> date:
    """The Monday (UTC) of the week ``moment`` is in: weeks run Monday 00:00 to Sunday 24:00."""
    day = _today(moment)
    return day - timedelta(days=day.weekday())


def _league_points(table, rules, pays: list[Pay], seats, match, *, now: datetime) -> None:
    halved = table.bot_filled or any(s.is_bot for s in seats)
    row = numbers.LEAGUE_POINTS[rules.sides]
    week = week_of(now)
    for pay in pays:
        points = row[pay.rank - 1] // (2 if halved else 1)
        try:
            with transaction.atomic():
                LeaguePoints.objects.create(user_id=pay.user_id, week=week, match=match,
                                            rank=pay.rank, points=points, halved=halved,
                                            created_at=now)
        except IntegrityError:  # counted already
            pass


def close_week(*, week: date, now: datetime | None = None) -> LeagueWeek | None:
    """Pay the top places of a finished week, once: the week's row and every prize's ledger
    key are written in one transaction, so a second run (beat restarted, two beats, a retry)
    finds the week closed and pays nothing. None when it was closed already."""
    now = now or timezone.now()
    if week.weekday() != 0:
        raise ServiceError(_("A league week starts on a Monday."), code="bad_week")
    if week + timedelta(days=7) > _today(now):
        raise ServiceError(_("This league week has not ended yet."), code="week_on")
    with transaction.atomic():
        try:
            with transaction.atomic():
                closed = LeagueWeek.objects.create(week=week, closed_at=now)
        except IntegrityError:
            return None
        winners = [row for row in league_table(week) if row.rank <= len(numbers.LEAGUE_PRIZES)]
        wallets = _locked_wallets([row.user_id for row in winners])
        for row in winners:
            prize = numbers.LEAGUE_PRIZES[row.rank - 1]
            _write(wallets[row.user_id], coins=prize, reason=Reason.LEAGUE,
                   key=f"league:{week.isoformat()}:{row.user_id}", rank=row.rank, now=now)
            closed.winners.append([row.user_id, row.rank, row.points, prize])
        closed.save(update_fields=["winners"])
        return closed


def close_last_week(*, now: datetime | None = None) -> LeagueWeek | None:
    """Beat: close the week that ended most recently (a no-op once it is closed)."""
    now = now or timezone.now()
    return close_week(week=week_of(now) - timedelta(days=7), now=now)


# -- stake tables -----------------------------------------------------------------------------

def _entrants(stake: Stake | None) -> list[int]:
    """The people whose entry is in the escrow now (sat down and not refunded), oldest first."""
    if stake is None:
        return []
    held: dict[int, int] = {}
    rows = LedgerEntry.objects.filter(table_id=stake.table_id, reason__in=LedgerEntry.ESCROW) \
        .order_by("pk").values_list("user_id", "reason")
    for user_id, reason in rows:
        held[user_id] = held.get(user_id, 0) + (1 if reason == Reason.STAKE else -1)
    return [u for u, n in held.items() if n > 0]


def _count(stake: Stake, user_id: int, reason: str) -> int:
    return LedgerEntry.objects.filter(table_id=stake.table_id, user_id=user_id,
                                      reason=reason).count()


def _charge(stake: Stake, wallet: Wallet, *, now: datetime) -> None:
    if wallet.coins < stake.entry:
        raise ServiceError(
            _("This table's entry is %(entry)d coins and you have %(coins)d.")
            % {"entry": stake.entry, "coins": wallet.coins}, code="short")
    n = _count(stake, wallet.pk, Reason.STAKE)
    _write(wallet, coins=-stake.entry, reason=Reason.STAKE,
           key=f"stake:{stake.table_id}:{wallet.pk}:{n}", table_id=stake.table_id, now=now)
    stake.escrow += stake.entry


def _refund(stake: Stake, wallet: Wallet, *, now: datetime) -> None:
    n = _count(stake, wallet.pk, Reason.REFUND)
    _write(wallet, coins=stake.entry, reason=Reason.REFUND,
           key=f"refund:{stake.table_id}:{wallet.pk}:{n}", table_id=stake.table_id, now=now)
    stake.escrow -= stake.entry


def _split(stake: Stake, wallets: dict[int, Wallet], user_ids: list[int], *,
           now: datetime) -> list[LedgerEntry]:
    """The whole escrow in equal shares; what does not split goes to the first of
    ``user_ids`` (the lowest seat)."""
    share, rest = divmod(stake.escrow, len(user_ids))
    written = []
    for i, user_id in enumerate(user_ids):
        coins = share + (rest if i == 0 else 0)
        if coins:
            entry = _write(wallets[user_id], coins=coins, reason=Reason.POT,
                           key=f"pot:{stake.table_id}:{user_id}", table_id=stake.table_id,
                           now=now)
            if entry is not None:
                written.append(entry)
    stake.escrow = 0
    return written


def _pay_pot(stake: Stake, wallets: dict[int, Wallet], seats, winners, *,
             now: datetime) -> list[LedgerEntry]:
    """The pot to the entrants on the winning side who still hold their seat; with none of
    them left, to every entrant still seated; with nobody seated, every entry goes back."""
    entrants = set(_entrants(stake))
    staying = [s.user_id for s in seats
               if s.user_id in entrants and not s.leaving and not s.is_bot]
    won = [s.user_id for s in winners
           if s.user_id in entrants and not s.leaving and not s.is_bot]
    written: list[LedgerEntry] = []
    if won or staying:
        written = _split(stake, wallets, won or staying, now=now)
    else:
        for user_id in sorted(entrants):
            _refund(stake, wallets[user_id], now=now)
    stake.state, stake.settled_at = Stake.State.PAID, now
    stake.save(update_fields=["escrow", "state", "settled_at"])
    return written


WATCHED_EVENTS = frozenset({"seat", "match_started", "closed"})


#: What a stake table refuses (issue 37): its pot is for one match played at one sitting.
REFUSED_AT_STAKE_TABLES = frozenset({"adjourned", "rematch_offered"})


def stake_follows(*, table, seats, events: list[dict], now: datetime | None = None) -> None:
    """Keep a stake table's escrow in step with its seats (tables services call this for
    every version with a seat, start or close event, under the table lock).

    Before the start, a person sitting down pays the entry (refused when short) and one
    standing up gets it back; the match starts only with people; after the start the pot is
    closed: nobody new sits, nobody leaving is refunded. A table closed before its match
    ended gives back every entry, or, if some entrants had left it, shares the pot between
    those still seated.
    """
    if any(e.get("kind") in REFUSED_AT_STAKE_TABLES for e in events) \
            and Stake.objects.filter(table_id=table.pk).exists():
        raise ServiceError(_("A stake table plays its one match at one sitting: it cannot be "
                             "adjourned nor offer a rematch."), code="stake_table")
    if not any(e.get("kind") in WATCHED_EVENTS for e in events):
        return
    stake = Stake.objects.select_for_update().filter(table_id=table.pk).first()
    if stake is None:
        return
    now = now or timezone.now()
    kinds = {e.get("kind") for e in events}
    joined = any(e.get("kind") == "seat" and e.get("action") in ("joined", "reserved")
                 for e in events)
    if stake.state in (Stake.State.PAID, Stake.State.CANCELLED):
        if joined or "match_started" in kinds:
            raise ServiceError(_("This stake table has played its match."), code="stake_over")
        return
    if any(s.is_bot or s.reserved_for_id for s in seats):
        raise ServiceError(_("Only people sit at stake tables."), code="people_only")
    entrants = _entrants(stake)
    seated = [s.user_id for s in seats if s.user_id is not None]
    wallets = _locked_wallets(entrants + seated)
    if table.state == Table.State.CLOSED:
        staying = {s.user_id for s in seats if s.user_id is not None and not s.leaving}
        if stake.state == Stake.State.PLAYING and set(entrants) - staying:
            _pay_pot(stake, wallets, seats, [], now=now)
            return
        for user_id in entrants:
            _refund(stake, wallets[user_id], now=now)
        stake.state, stake.settled_at = Stake.State.CANCELLED, now
        stake.save(update_fields=["escrow", "state", "settled_at"])
        return
    newcomers = [u for u in seated if u not in entrants]
    if stake.state == Stake.State.PLAYING:
        if newcomers:
            raise ServiceError(_("The match has started: this table's pot is closed."),
                               code="pot_closed")
        return
    if any(_is_guest(s.user) for s in seats if s.user_id in newcomers):
        raise ServiceError(_("Sign up to play at stake tables."), code="not_signed_in")
    for user_id in newcomers:
        _charge(stake, wallets[user_id], now=now)
    for user_id in entrants:
        if user_id not in seated:
            _refund(stake, wallets[user_id], now=now)
    if "match_started" in kinds:
        stake.state = Stake.State.PLAYING
    stake.save(update_fields=["escrow", "state"])


def open_stake_table(*, user, entry: int, preset: str = "partners", players: int | None = None,
                     options: dict | None = None, now: datetime | None = None):
    """Open an online table with an entry: the opener sits down and pays it at once."""
    now = now or timezone.now()
    if entry not in numbers.STAKES:
        raise ServiceError(_("Pick one of the entries shown."), code="bad_entry")
    if user is None or not user.is_authenticated or _is_guest(user):
        raise ServiceError(_("Sign up to play at stake tables."), code="not_signed_in")
    with transaction.atomic():
        table = tables.create_table(host=user, preset=preset, players=players, options=options,
                                    public=True, allow_bots=False,
                                    name=_("Entry %(coins)d") % {"coins": entry})
        stake = Stake.objects.create(table=table, entry=entry, created_at=now,
                                     fill_by=now + numbers.STAKE_FILL_TIME)
        _charge(stake, _locked_wallets([user.pk])[user.pk], now=now)
        stake.save(update_fields=["escrow"])
    return table


def stand_up(*, user, table_id: int):
    """Leave a stake table before its start and get the entry back; the opener leaving
    cancels the table (every entry back), since a table keeps its host."""
    # Who hosts never changes, so it may be read before the lock; the services below check
    # the table's state under it.
    table = Table.objects.filter(pk=table_id).only("host_id").first()
    if table is None or not Stake.objects.filter(table_id=table_id).exists():
        raise ServiceError(_("This is not a stake table."), code="no_stake")
    if table.host_id == getattr(user, "pk", None):
        if not Stake.objects.filter(table_id=table_id, state=Stake.State.OPEN).exists():
            raise ServiceError(_("The match has already started."), code="started")
        return tables.cancel_waiting(table_id=table_id, reason="host_left")
    return tables.leave_table(user=user, table_id=table_id)


def cancel_unfilled(*, now: datetime | None = None) -> int:
    """Beat: cancel every stake table not started in time (each in its own transaction)."""
    now = now or timezone.now()
    due = Stake.objects.filter(state=Stake.State.OPEN, fill_by__lte=now) \
        .values_list("table_id", flat=True)
    return act_on_each(due=due[:200], act=lambda table_id: tables.cancel_waiting(
        table_id=table_id, reason="unfilled", now=now))
