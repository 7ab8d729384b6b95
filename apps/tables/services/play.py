"""Ways to play besides a table among friends: practice against bots (guests included, and the
guests' clean-up), and quick play ("Online", seed 003).
"""

from __future__ import annotations

import zlib
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts import services as accounts
from apps.accounts.models import Profile
from apps.bots import LEVELS
from apps.core.beat import act_on_each
from apps.core.errors import ServiceError
from apps.rules.errors import RuleError
from apps.rules.presets import make_rules

from .. import hooks, scheduling
from ..messages import rule_message
from ..models import (
    Connection,
    Match,
    Seat,
    Table,
)
from ..pace import LIVE, TURN, move_seconds_choices, quick_fill_wait
from .base import (
    RUNNING,
    NotDue,
    Outcome,
    User,
    bump,
    delete_table,
    lock_table,
    require_not_banned,
    require_open,
    require_room_for_match,
    require_signed_in,
    table_seats,
)
from .clock import DUE_TOLERANCE, empty_limit
from .lifecycle import (
    checked_options,
    close_emptied,
    create_table,
    fill_with_bots,
    new_table,
    start_now,
)
from .rounds import begin_match
from .seats import join_table, vacate


def practice_max_age() -> timedelta:
    return timedelta(seconds=settings.PRACTICE_MAX_AGE_SECONDS)


def open_practice(*, user: User | None = None, language: str = "", preset: str,
                  players: int | None = None, bot_level: str = "easy",
                  turn_seconds: int | None = None, address: str | None = None) -> Table:
    """Practice against bots (seeds 002/003, "contra la máquina"): a table for one person, the
    other seats filled with bots at ``bot_level``, the match started at once.

    Practice tables count for nothing: ``Table.practice`` is the predicate that rating, league
    and coin code must exclude on. They are invite-only, never listed, and deleted when their
    person leaves (``close_empty``) or at the latest ``PRACTICE_MAX_AGE_SECONDS`` after they
    opened (``sweep``).

    ``user`` None makes a guest in ``language`` first (``apps.accounts.services.start_guest``),
    in the same transaction: the caller signs ``table.host`` in. A person has one open practice
    table: opening another ends the previous one. At most ``PRACTICE_TABLES_PER_ADDRESS`` are
    open per client ``address`` (``Table.opened_from``).
    """
    if bot_level not in LEVELS:
        raise ServiceError(_("Pick one of the bot levels shown."), code="bad_options")
    options, rules = checked_options(preset, players, {"turn_seconds": turn_seconds})
    if user is not None:
        require_signed_in(user)
        require_not_banned(user)
    with transaction.atomic():
        if user is not None:
            # One practice table per person, even from two tabs at once.
            User.objects.select_for_update().filter(pk=user.pk).first()
        if address:
            _lock_address(address)
            open_here = Table.objects.filter(practice=True, state__in=RUNNING,
                                             opened_from=address)
            if user is not None:
                open_here = open_here.exclude(host=user)
            if open_here.count() >= settings.PRACTICE_TABLES_PER_ADDRESS:
                raise ServiceError(_("Too many practice tables are open from your network. "
                                     "Try again in a few minutes."), code="practice_limit")
        if user is None:
            try:
                user = accounts.start_guest(language=language, address=address)
            except accounts.GuestRefused as err:
                raise ServiceError(err.message, code=err.code) from err
        previous = Table.objects.filter(host=user, practice=True, state__in=RUNNING)
        for table_id in list(previous.values_list("pk", flat=True)):
            _end_practice(table_id=table_id, reason="practice_replaced")
        accounts.touch_guest(user)
        think = Profile.objects.filter(user=user).values_list("bot_think_ms", flat=True).first()
        table = new_table(host=user, preset=preset, rules=rules, options=options,
                          public=False, allow_bots=True, bot_level=bot_level,
                          bot_think_ms=1000 if think is None else think, practice=True,
                          opened_from=address or None)
        now = timezone.now()
        Seat.objects.filter(table=table, index__gt=0).update(is_bot=True, bot_level=bot_level,
                                                             joined_at=now)
        table = lock_table(table.pk)
        # Nobody holds a socket yet: if the page never opens one, the table goes as an
        # abandoned one does (close_empty).
        table.state, table.empty_since = Table.State.PLAYING, now
        table.save(update_fields=["state", "empty_since"])
        events, match, engine = begin_match(table, number=1)
        bump(table, events, engine, match=match, moved=True, new_turn=True, now=now)
    return table


def _lock_address(address: str) -> None:
    """Serialize practice openings from one address, so that its limit holds under races
    (PostgreSQL; SQLite writes one at a time anyway)."""
    if connection.vendor != "postgresql":
        return

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                       [0x5052, zlib.crc32(address.encode()) - 2**31])


def _end_practice(*, table_id: int, reason: str, now: datetime | None = None) -> Outcome:
    """Close a practice table, so that a page still open shows why; the sweep deletes it."""
    now = now or timezone.now()
    with transaction.atomic():
        table = lock_table(table_id)
        require_open(table)
        table.state, table.closed_at, table.closed_reason = Table.State.CLOSED, now, reason
        table.save(update_fields=["state", "closed_at", "closed_reason"])
        return bump(table, [{"kind": "closed", "reason": reason}], now=now)


#: Quick tables seat strangers: a turn time keeps one of them from holding the others up.
QUICK_PLAY_TURN_SECONDS = 45


#: Advisory lock namespaces (PostgreSQL's two-key form): one person, one game's waiting room.
_QUICK_LOCK_PERSON = 0x51504C50


_QUICK_LOCK_GAME = 0x51504C47


def quick_play(*, user, preset: str, players: int | None = None,
               move_seconds: int | None = None, allow_bots: bool = True) -> Table:
    """"Play now": a seat at a public quick table of this game (and number of players) that is
    waiting for people, or a new one, which this person then hosts.

    A new quick table waits ``QUICK_PLAY_FILL_SECONDS`` (``fill_at``); if people fill it
    sooner it starts at once, else bots take the free seats then (:func:`fill_quick_table`).
    Nobody sits at two tables in play: a person already at a quick table that is waiting or
    playing gets that table back; one seated at another table in play (not practice) is
    refused, with that table named; a quick table whose match is over is left for the new one.
    Guests are refused: playing with people needs an account.

    With ``move_seconds``, a turn-based game (:func:`_quick_turn_based`).
    """
    require_signed_in(user)
    require_not_banned(user)
    if getattr(getattr(user, "profile", None), "guest", False):
        raise ServiceError(_("Playing online needs an account: sign up, it is free."),
                           code="guest")
    refused = hooks.quick_play_refusal(user)
    if refused is not None:
        raise ServiceError(refused, code="wait")
    try:
        rules = make_rules({"preset": preset, "turn_seconds": QUICK_PLAY_TURN_SECONDS},
                           4 if players is None else players)
    except RuleError as err:
        raise ServiceError(rule_message(err), code="bad_options") from err
    if move_seconds is not None:
        return _quick_turn_based(user, preset, rules.players, move_seconds, bool(allow_bots))
    with transaction.atomic():
        _quick_play_lock(user.pk, preset, rules.players)
        current = _quick_table_of(user)
        if current is not None:
            return current
        _require_not_seated_elsewhere(user)
        for table_id in _waiting_quick_tables(preset, rules.players):
            table = lock_table(table_id)
            if table.state == Table.State.WAITING and table.public and not table.hidden \
                    and any(s.empty for s in table_seats(table)):
                join_table(user=user, table_id=table.pk)
                return Table.objects.get(pk=table.pk)
        table = create_table(host=user, preset=preset, players=rules.players, public=True,
                             allow_bots=True,
                             options={"turn_seconds": QUICK_PLAY_TURN_SECONDS})
        table.quick, table.fill_at = True, timezone.now() + _quick_fill_wait()
        table.save(update_fields=["quick", "fill_at"])
        table_id, fill_at = table.pk, table.fill_at
        transaction.on_commit(lambda: _schedule_fill(table_id, fill_at))
        return table


def _quick_turn_based(user, preset: str, players: int, move_seconds: int,
                      allow_bots: bool) -> Table:
    """"Play now", turn-based: a seat at a public quick table of the same game, players, time
    per move and bots-or-not that waits for people, or a new one. It starts when its seats
    are taken; only where its host allowed bots do bots take the free seats, after
    ``pace.QUICK_FILL_SECONDS``. A person may wait at several (up to the limit)."""
    if move_seconds not in move_seconds_choices():
        raise ServiceError(_("Choose one of the times per move offered."), code="bad_options")
    with transaction.atomic():
        _quick_play_lock(user.pk, f"{preset}:{move_seconds}", players)
        require_room_for_match(user)
        waiting = (Table.objects.filter(quick=True, public=True, hidden=False, pace=TURN,
                                        state=Table.State.WAITING, preset=preset,
                                        players=players, move_seconds=move_seconds,
                                        allow_bots=allow_bots)
                   .exclude(seats__user=user)
                   .annotate(free=Count("seats", filter=Q(seats__user__isnull=True,
                                                          seats__is_bot=False)))
                   .filter(free__gt=0).order_by("pk").values_list("pk", flat=True)[:10])
        for table_id in list(waiting):
            table = lock_table(table_id)
            if table.state == Table.State.WAITING and any(s.empty for s in table_seats(table)):
                join_table(user=user, table_id=table.pk)
                return Table.objects.get(pk=table.pk)
        table = create_table(host=user, preset=preset, players=players, public=True,
                             allow_bots=allow_bots, pace=TURN, move_seconds=move_seconds)
        table.quick = True
        table.fill_at = timezone.now() + quick_fill_wait() if allow_bots else None
        table.save(update_fields=["quick", "fill_at"])
        if table.fill_at is not None:
            table_id, fill_at = table.pk, table.fill_at
            transaction.on_commit(lambda: _schedule_fill(table_id, fill_at))
        return table


def fill_quick_table(*, table_id: int, now: datetime | None = None) -> Outcome:
    """A quick table's wait is over: bots at the table's level take the free seats
    (``bot_filled``) and the match starts by itself. Its timer and the sweep both call this;
    under the row lock a late or repeated call finds the table started (or closed) and
    changes nothing."""
    now = now or timezone.now()
    with transaction.atomic():
        table = lock_table(table_id)
        if not table.quick or table.state != Table.State.WAITING or table.fill_at is None \
                or table.fill_at - DUE_TOLERANCE > now:
            raise NotDue()
        if not any(s.user_id is not None for s in table_seats(table)):
            return bump(table, close_emptied(table), now=now)  # never a table of bots alone
        if table.empty_since is not None:
            # Nobody holds the page: the match starts paused, as a table nobody holds pauses,
            # and goes on when somebody comes back (or closes with the rest after 2 minutes).
            table.paused, table.paused_by, table.paused_at = True, None, now
            table.save(update_fields=["paused", "paused_by", "paused_at"])
        return start_now(table, fill_with_bots(table, now, by="wait"), now=now)


def _quick_fill_wait() -> timedelta:
    return timedelta(seconds=settings.QUICK_PLAY_FILL_SECONDS)


def _schedule_fill(table_id: int, when: datetime) -> None:
    scheduling.schedule_fill(table_id, when)


def _quick_play_lock(user_id: int, preset: str, players: int) -> None:
    """Serialise "play now" per person and per game until the transaction ends, so that two
    people pressing it at once find the same table and one person's double click one seat.
    PostgreSQL: transaction-level advisory locks (person first, then game: always that order).
    SQLite takes one writer at a time already."""
    if connection.vendor != "postgresql":
        return
    game_key = zlib.crc32(f"{preset}:{players}".encode()) - 2**31
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                       [_QUICK_LOCK_PERSON, user_id % 2**31])
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_QUICK_LOCK_GAME, game_key])


def _seats_held(user):
    """The person's seats (or reserved seats) at open tables, not the ones they are leaving."""
    # Turn-based tables do not count: a person waits at several while playing live.
    return (Seat.objects.filter(Q(user=user) | Q(reserved_for=user), leaving=False,
                                turn_based=False)
            .exclude(table__state__in=[Table.State.CLOSED, Table.State.ADJOURNED])
            .select_related("table"))


def _in_play(table: Table) -> bool:
    """Waiting for players, or a match not over yet."""
    return table.state == Table.State.WAITING or Match.objects.filter(
        table=table, finished_at__isnull=True).exists()


def _quick_table_of(user) -> Table | None:
    """The quick table in play the person sits at; they leave those whose match is over."""
    found = None
    for seat in _seats_held(user).filter(table__quick=True):
        if _in_play(seat.table):
            found = found or seat.table
            continue
        with transaction.atomic():
            table = lock_table(seat.table_id)
            seat = next((s for s in table_seats(table) if s.pk == seat.pk), None)
            if seat is not None and seat.user_id == user.pk and not _in_play(table):
                bump(table, vacate(table, seat))
    return found


def _require_not_seated_elsewhere(user) -> None:
    for seat in _seats_held(user).filter(table__quick=False, table__practice=False):
        if _in_play(seat.table):
            raise ServiceError(
                _("You are seated at table %(table)s: leave it, or finish its match, before "
                  "you play now.") % {"table": seat.table}, code="seated_elsewhere")


def _waiting_quick_tables(preset: str, players: int) -> list[int]:
    """Quick tables of this game waiting for people, oldest first (nearest to starting).
    A table nobody holds open (its people left the page) is passed over, as the lobby does."""
    return list(
        Table.objects.filter(quick=True, public=True, allow_bots=True, hidden=False, pace=LIVE,
                             state=Table.State.WAITING, preset=preset, players=players,
                             empty_since__isnull=True)
        .annotate(free=Count("seats", filter=Q(seats__user__isnull=True, seats__is_bot=False)),
                  people=Count("seats", filter=Q(seats__user__isnull=False)))
        .filter(free__gt=0, people__gt=0).order_by("fill_at", "pk")
        .values_list("pk", flat=True)[:10])


def sweep_practice(*, now: datetime) -> int:
    """Practice tables past their lifetime close (a page still open says why); closed ones are
    deleted once no socket is open at them, or an empty-table limit after closing at the
    latest. Returns how many were deleted."""
    old = Table.objects.filter(practice=True, state__in=RUNNING,
                               created_at__lte=now - practice_max_age())
    act_on_each(due=old.values_list("pk", flat=True)[:500], act=lambda table_id: _end_practice(
        table_id=table_id, reason="practice_expired", now=now))
    closed = Table.objects.filter(practice=True, state=Table.State.CLOSED).filter(
        Q(connections__isnull=True) | Q(closed_at__lte=now - empty_limit())
    ).values_list("pk", flat=True).distinct()
    deleted = 0
    for table_id in list(closed[:500]):
        with transaction.atomic():
            table = Table.objects.select_for_update().filter(
                pk=table_id, practice=True, state=Table.State.CLOSED).first()
            if table is not None:
                delete_table(table)
                deleted += 1
    return deleted


# -- guests ------------------------------------------------------------------------------

def guest_idle_limit() -> timedelta:
    return timedelta(seconds=settings.GUEST_IDLE_SECONDS)


def delete_idle_guests(*, now: datetime | None = None) -> int:
    """Delete guests who never signed up, have no table left (they host none, sit at no open
    one, hold no table socket) and did nothing for ``GUEST_IDLE_SECONDS``. The beat sweep
    calls this after it has deleted their finished practice tables. (Here, not in accounts:
    whether a guest has a table left is the tables' to say.)"""
    now = now or timezone.now()
    cutoff = now - guest_idle_limit()
    idle = (User.objects.filter(profile__guest=True, last_login__lte=cutoff)
            .filter(hosted_tables__isnull=True)
            .exclude(seats__table__state__in=[Table.State.WAITING, Table.State.PLAYING])
            .exclude(pk__in=Connection.objects.values("user_id")))
    deleted = 0
    for user_id in list(idle.values_list("pk", flat=True)[:500]):
        with transaction.atomic():
            # Checked again under the row lock: a guest who opened a practice table since the
            # query keeps their account.
            user = User.objects.select_for_update().filter(pk=user_id).first()
            if user is None or user.last_login is None or user.last_login > cutoff \
                    or Table.objects.filter(host=user).exists():
                continue
            user.delete()
            deleted += 1
    return deleted
