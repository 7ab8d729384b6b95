"""The only code that changes a table's state.

Every function here takes the table's row lock, checks the caller's right to act (and, for a
move, the round and ply it was sent for), changes the rows, bumps the table's version with a
conditional UPDATE, writes the version's events and builds its snapshot (``apps.tables.state``),
and only after the commit stores the snapshot and rings the table's doorbell. So a move sent
twice, from two tabs, or racing a timer is applied once; the other call gets
:class:`StaleMove` ("the table has moved on").

A move plays on from the engine's saved position (``Match.position``, saved in the same
transaction as the move): nothing here replays a round.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.rules.engine import END_NAMES, move_dict
from apps.rules.engine import Match as EngineMatch
from apps.rules.errors import RuleError
from apps.rules.presets import Rules, make_rules
from apps.rules.tiles import parse_tile

from . import game, rows, state
from .messages import rule_message
from .models import (
    Connection,
    Invitation,
    Match,
    Move,
    Round,
    Seat,
    Table,
    TableEvent,
    record_time,
)

User = get_user_model()

#: Close code of a watcher's socket when the host turns watching off (docs/protocol.md).
WATCHING_OFF_CLOSE_CODE = 4410

#: Presets where drawing and passing happen by themselves: there is never a choice.
AUTO_PASS_PRESETS = frozenset({"draw", "block", "all-fives"})


class ServiceError(Exception):
    """A refused action: nothing changed; ``message`` is already in the caller's language."""

    def __init__(self, message: str, *, code: str = "refused") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class StaleMove(ServiceError):
    def __init__(self) -> None:
        super().__init__(_("The table has moved on."), code="stale")


@dataclass
class Outcome:
    table_id: int
    version: int
    events: list[dict] = field(default_factory=list)
    #: When the table acts next by itself, and for which position (round, ply).
    deadline: datetime | None = None
    position: tuple[int, int] | None = None
    #: The state of this version (``apps.tables.state``): server side only.
    snapshot: dict | None = field(default=None, repr=False)
    #: Who is to play next by itself: "bot" or "table" (the Celery queue its timer goes to).
    actor: str | None = None


#: A disconnected person's grace on their turn: with a turn time, and without one
#: (tables.md: 5 s and 30 s; settings only so that end-to-end tests need not wait minutes).
GRACE_TIMED = timedelta(seconds=5)
GRACE_UNTIMED = timedelta(seconds=30)
#: Away this long, a bot stands in for the rest of the round.
AWAY_LIMIT = timedelta(minutes=2)
#: Nobody connected this long, the table closes.
EMPTY_LIMIT = timedelta(minutes=2)


def _limit(name: str, default: timedelta) -> timedelta:
    from django.conf import settings

    seconds = getattr(settings, name, None)
    return default if seconds is None else timedelta(seconds=seconds)


def _grace_timed() -> timedelta:
    return _limit("PRESENCE_GRACE_TIMED_SECONDS", GRACE_TIMED)


def _grace_untimed() -> timedelta:
    return _limit("PRESENCE_GRACE_UNTIMED_SECONDS", GRACE_UNTIMED)


def _away_limit() -> timedelta:
    return _limit("PRESENCE_AWAY_LIMIT_SECONDS", AWAY_LIMIT)


def _empty_limit() -> timedelta:
    return _limit("PRESENCE_EMPTY_LIMIT_SECONDS", EMPTY_LIMIT)
#: Bots whose search takes tens of milliseconds or more: they think before the row lock is
#: taken, on a Celery queue of their own, so a search never delays another table's deadline.
SLOW_BOT_LEVELS = frozenset({"expert", "master"})
#: Timers fire a hair early at most; a deadline this close counts as due.
DUE_TOLERANCE = timedelta(milliseconds=50)


# -- plumbing ---------------------------------------------------------------------------------

def _locked(table_id: int) -> Table:
    # The host's and pauser's names, which the snapshot needs, come with the seats when they
    # sit there (``state._seated``); only otherwise are they read.
    table = rows.locked_table(table_id)
    if table is None:
        raise ServiceError(_("This table does not exist."), code="no_table")
    return table


def _bump(table: Table, events: list[dict], engine: EngineMatch | None = None, *,
          match: Match | None = None, moved: bool = False, new_turn: bool = False,
          now: datetime | None = None) -> Outcome:
    """Arm the clock, advance the version with a conditional UPDATE (SQLite ignores FOR UPDATE,
    a WHERE on the version it does not), write the version's events, keep the engine's position
    when the match ``moved``, and build the version's snapshot; store and ring after commit."""
    now = now or timezone.now()
    seats = _seats(table)
    # -- the club (issue 14): a stake table's escrow follows its seats; may refuse the change --
    from apps.club.services import table_changed

    table_changed(table=table, seats=seats, events=events, now=now)
    # ------------------------------------------------------------------------------------------
    connected = state.connected_people(seats)
    if engine is None and table.state == Table.State.PLAYING:
        match = rows.current_match(table.pk)
        engine = game.restore(match)
    position, actor = _arm_clock(table, engine, seats, connected, new_turn=new_turn, now=now)
    old = table.version
    changed = rows.update(Table, table.pk, where={"version": old}, version=old + 1,
                          updated_at=now, turn_started_at=table.turn_started_at,
                          turn_deadline=table.turn_deadline)
    if changed != 1:
        raise StaleMove()
    table.version = old + 1
    rows.insert(TableEvent, table_id=table.pk, version=table.version, events=events,
                created_at=now)
    if moved:
        game.save_position(match, engine, game.round_id(match))
    from apps.realtime import snapshots

    previous = snapshots.load_version(table.pk, table.code, old)
    snapshot = state.build(table, engine=engine, match=match, seats=seats, previous=previous,
                           events=events)
    outcome = Outcome(table.pk, table.version, events, table.turn_deadline, position, snapshot,
                      actor)
    transaction.on_commit(lambda: _ring(outcome))
    return outcome


def _ring(outcome: Outcome) -> None:
    from apps.realtime.notify import publish_state

    from .scheduling import schedule_deadline

    publish_state(outcome.table_id, outcome.snapshot)
    if outcome.deadline is not None:
        schedule_deadline(outcome.table_id, outcome.position, outcome.deadline,
                          actor=outcome.actor)


def _arm_clock(table: Table, engine: EngineMatch | None, seats: list[Seat],
               connected: set[int], *, new_turn: bool,
               now: datetime) -> tuple[tuple[int, int] | None, str | None]:
    """Set when the table next acts by itself; return the position that deadline is for.

    A bot seat acts after the think time; a person's turn runs out after the turn time, or
    sooner when they are away (5 s with a turn time, 30 s without, counted from the later of
    the turn's start and their leaving); between rounds the next deal comes after the result
    has been shown. Paused or closed tables have no deadline.
    """
    if table.state != Table.State.PLAYING:
        table.turn_started_at = table.turn_deadline = None
        return None, None
    if new_turn or table.turn_started_at is None:
        table.turn_started_at = now
    table.turn_deadline = None
    if table.paused:
        return None, None
    last = engine.rounds[-1]
    position = (len(engine.rounds) - 1, len(last.history))
    start = table.turn_started_at
    if last.result is not None:
        if not engine.over and not any(s.empty for s in seats):
            table.turn_deadline = start + timedelta(seconds=table.next_round_seconds)
        return position, "table"
    seat = seats[last.turn]
    if seat.played_by_bot:
        table.turn_deadline = start + timedelta(milliseconds=table.bot_think_ms)
        slow = (seat.bot_level or table.bot_level) in SLOW_BOT_LEVELS
        return position, "bot" if slow else "table"
    limits = []
    seconds = engine.rules.turn_seconds
    if seconds:
        limits.append(start + timedelta(seconds=seconds))
    if _plays_automatically(seat):
        # "Play automatically" (seed 004): the table plays for them as a bot would, after the
        # bots' think time, so the others can follow.
        limits.append(start + timedelta(milliseconds=table.bot_think_ms))
    if seat.user_id not in connected:
        away = max(start, seat.away_since or start)
        limits.append(away + (_grace_timed() if seconds else _grace_untimed()))
    table.turn_deadline = min(limits) if limits else None
    return position, "table"


def _plays_automatically(seat: Seat) -> bool:
    profile = getattr(seat.user, "profile", None) if seat.user_id else None
    return bool(getattr(profile, "auto_play", False))


def _require_signed_in(user) -> None:
    if user is None or not user.is_authenticated:
        raise ServiceError(_("Sign in first."), code="not_signed_in")
    if not user.is_active:
        raise ServiceError(_("Your account cannot play now."), code="inactive")


def _require_host(table: Table, user) -> None:
    _require_signed_in(user)
    if table.host_id != user.pk:
        raise ServiceError(_("Only the host can do that."), code="not_host")


def _require_open(table: Table) -> None:
    if table.state == Table.State.CLOSED:
        raise ServiceError(_("This table is closed."), code="closed")


def _seats(table: Table) -> list[Seat]:
    """The table's seats, by index, with their people's profiles: read once per service call
    (the call's later steps change these same objects, so the list stays true)."""
    cached = getattr(table, "_seat_list", None)
    if cached is None:
        cached = table._seat_list = rows.seats_with_people(table.pk)
    return cached


def _seat_of(table: Table, user) -> Seat:
    _require_signed_in(user)
    seat = next((s for s in _seats(table) if s.user_id == user.pk), None)
    if seat is None:
        raise ServiceError(_("You are not seated at this table."), code="not_seated")
    return seat


def _seat_users(table: Table) -> list[int | None]:
    return [None if s.is_bot else s.user_id for s in _seats(table)]


def _present(table: Table, user_id: int) -> bool:
    """Whether ``user_id`` holds a socket at the table (for seating someone new)."""
    return Connection.objects.filter(table=table, user_id=user_id).exists()


# -- tables and seats -------------------------------------------------------------------------

def create_table(*, host, preset: str, players: int | None = None, options: dict | None = None,
                 public: bool = False, allow_bots: bool = False, bot_level: str = "medium",
                 bot_think_ms: int = 1000, name: str = "",
                 watchers_allowed: bool = True) -> Table:
    """Open a table; the host takes seat 0. Inconsistent options are refused with the reason.
    Guests may only practise (:func:`open_practice`)."""
    _require_signed_in(host)
    _require_account(host, _("Sign up to open a table for friends: your practice games stay "
                             "yours."))
    _require_not_banned(host)
    options, rules = _checked_options(preset, players, options)
    if not 0 <= bot_think_ms <= 10_000:
        raise ServiceError(_("Bots think between 0 and 10 seconds."), code="bad_options")
    name = _clean_name(name)
    with transaction.atomic():
        return _new_table(host=host, preset=preset, rules=rules, options=options,
                          public=public, allow_bots=allow_bots, bot_level=bot_level,
                          bot_think_ms=bot_think_ms, name=name,
                          watchers_allowed=bool(watchers_allowed))


def _checked_options(preset: str, players: int | None,
                     options: dict | None) -> tuple[dict, Rules]:
    # None means "the preset's default", except for the turn time, where it means no limit.
    options = {k: v for k, v in (options or {}).items()
               if v is not None or k == "turn_seconds"}
    try:
        rules = make_rules({"preset": preset, **options}, players)
    except RuleError as err:
        raise ServiceError(rule_message(err), code="bad_options") from err
    return options, rules


def _new_table(*, host, preset: str, rules: Rules, options: dict, **fields) -> Table:
    """The table row (a fresh invite code), its empty seats and the host in seat 0."""
    for _attempt in range(5):
        try:
            with transaction.atomic():
                table = Table.objects.create(host=host, preset=preset, players=rules.players,
                                             options=options, **fields)
            break
        except IntegrityError:  # an invite code collision: draw another
            continue
    else:
        raise ServiceError(_("Could not open a table; try again."), code="retry")
    Seat.objects.bulk_create(Seat(table=table, index=i) for i in range(rules.players))
    # Away until their first socket opens: a seat's away_since is its presence.
    now = timezone.now()
    Seat.objects.filter(table=table, index=0).update(user=host, joined_at=now, away_since=now)
    return table


def _require_account(user, message: str) -> None:
    from apps.accounts.selectors import is_guest

    if is_guest(user):
        raise ServiceError(message, code="guest")


#: A table's states before it closes.
RUNNING = (Table.State.WAITING, Table.State.PLAYING)


def practice_max_age() -> timedelta:
    from django.conf import settings

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
    from django.conf import settings

    from apps.accounts import services as accounts
    from apps.accounts.models import Profile
    from apps.bots import LEVELS

    if bot_level not in LEVELS:
        raise ServiceError(_("Pick one of the bot levels shown."), code="bad_options")
    options, rules = _checked_options(preset, players, {"turn_seconds": turn_seconds})
    if user is not None:
        _require_signed_in(user)
        _require_not_banned(user)
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
        table = _new_table(host=user, preset=preset, rules=rules, options=options,
                           public=False, allow_bots=True, bot_level=bot_level,
                           bot_think_ms=1000 if think is None else think, practice=True,
                           opened_from=address or None)
        now = timezone.now()
        Seat.objects.filter(table=table, index__gt=0).update(is_bot=True, bot_level=bot_level,
                                                             joined_at=now)
        table = _locked(table.pk)
        # Nobody holds a socket yet: if the page never opens one, the table goes as an
        # abandoned one does (close_empty).
        table.state, table.empty_since = Table.State.PLAYING, now
        table.save(update_fields=["state", "empty_since"])
        events, match, engine = _begin_match(table, number=1)
        _bump(table, events, engine, match=match, moved=True, new_turn=True, now=now)
    return table


def _lock_address(address: str) -> None:
    """Serialize practice openings from one address, so that its limit holds under races
    (PostgreSQL; SQLite writes one at a time anyway)."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    import zlib

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                       [0x5052, zlib.crc32(address.encode()) - 2**31])


def _end_practice(*, table_id: int, reason: str, now: datetime | None = None) -> Outcome:
    """Close a practice table, so that a page still open shows why; the sweep deletes it."""
    now = now or timezone.now()
    with transaction.atomic():
        table = _locked(table_id)
        _require_open(table)
        table.state, table.closed_at, table.closed_reason = Table.State.CLOSED, now, reason
        table.save(update_fields=["state", "closed_at", "closed_reason"])
        return _bump(table, [{"kind": "closed", "reason": reason}], now=now)


def _delete_table(table: Table) -> None:
    """A practice table goes with every row it has (seats, matches, rounds, moves, events,
    connections, chat): it counts for nothing, so nothing of it is kept."""
    Table.objects.filter(pk=table.pk).delete()


def find_by_code(code: str) -> Table:
    clean = "".join(ch for ch in (code or "").upper() if ch.isalnum())
    table = Table.objects.filter(code=clean).exclude(state=Table.State.CLOSED).first()
    if table is None:
        raise ServiceError(_("No open table has that code."), code="bad_code")
    return table


def join_table(*, user, table_id: int, code: str | None = None) -> Outcome:
    """Take the first free seat (arrival order): public tables, the code, or an invitation.

    During a match a person may take a bot's seat: it is reserved for them and becomes theirs
    when the round ends.
    """
    _require_signed_in(user)
    _require_not_banned(user)
    with transaction.atomic():
        table = _locked(table_id)
        _require_open(table)
        if table.seats.filter(user=user).exists():
            raise ServiceError(_("You are already seated here."), code="already_seated")
        _refuse_practice(table)
        invited = Invitation.objects.filter(table=table, invitee=user).first()
        if not (table.public or (code and code.upper() == table.code) or invited):
            raise ServiceError(_("This table is by invitation only."), code="invite_only")
        if table.seats.filter(reserved_for=user).exists():
            raise ServiceError(_("A seat is already reserved for you."), code="already_seated")
        seat = table.seats.filter(user__isnull=True, is_bot=False).order_by("index").first()
        reserved = False
        if seat is None and table.state == Table.State.PLAYING:
            seat = table.seats.filter(is_bot=True, reserved_for__isnull=True,
                                      bot_leaving=False).order_by("index").first()
            reserved = seat is not None
        if seat is None:
            raise ServiceError(_("Every seat is taken."), code="full")
        if reserved and not _round_in_progress(table):
            reserved = False
            seat.is_bot, seat.bot_level = False, ""
        if reserved:
            seat.reserved_for = user
            seat.save(update_fields=["reserved_for"])
        else:
            seat.user, seat.joined_at = user, timezone.now()
            seat.away_since = None if _present(table, user.pk) else seat.joined_at
            seat.save(update_fields=["user", "joined_at", "is_bot", "bot_level",
                                     "away_since"])
            if seat.away_since is None and table.empty_since is not None:
                # A watcher who sits down holds the table again: it is no longer empty.
                table.empty_since = None
                table.save(update_fields=["empty_since"])
        if invited and invited.answered_at is None:
            invited.answered_at = timezone.now()
            invited.save(update_fields=["answered_at"])
        action = "reserved" if reserved else "joined"
        events = [{"kind": "seat", "seat": seat.index, "action": action}]
        if table.quick and table.state == Table.State.WAITING \
                and not any(s.empty for s in _seats(table)):
            return _start_now(table, events)
        return _bump(table, events)


def _refuse_practice(table: Table) -> None:
    if table.practice:
        raise ServiceError(_("A practice table is for one person against bots."),
                           code="practice")


def _round_in_progress(table: Table) -> bool:
    if table.state != Table.State.PLAYING:
        return False
    match = table.current_match
    return match is not None and match.rounds.filter(result__isnull=True,
                                                     voided=False).exists()


def leave_table(*, user, table_id: int) -> Outcome:
    """Before the match, the seat frees at once; during a round a bot plays the hand out.

    At a quick table the host is only whoever came first, so they may leave too: the host
    passes to the next person seated, and a waiting quick table nobody sits at any more closes.
    """
    with transaction.atomic():
        table = _locked(table_id)
        seat = _seat_of(table, user)
        if table.host_id == user.pk and not table.quick:
            raise ServiceError(_("The host keeps their seat."), code="host_stays")
        events = _vacate(table, seat)
        if seat.user_id is None and _present(table, user.pk):
            # Staying on the page they are a watcher now: with no player left it is empty.
            _mark_if_empty(table, events, now=timezone.now())
        return _bump(table, events)


def _vacate(table: Table, seat: Seat) -> list[dict]:
    """Free a person's seat (at the round's end when one is being played); the events."""
    user_id = seat.user_id
    if _round_in_progress(table):
        seat.leaving = seat.standin = True
        seat.save(update_fields=["leaving", "standin"])
        events = [{"kind": "seat", "seat": seat.index, "action": "leaving"}]
    else:
        seat.user, seat.joined_at, seat.away_since = None, None, None
        seat.standin = seat.leaving = False
        seat.save(update_fields=["user", "joined_at", "away_since", "standin", "leaving"])
        events = [{"kind": "seat", "seat": seat.index, "action": "left"}]
    if table.quick and table.host_id == user_id:
        events += _pass_quick_host(table)
    return events


def _pass_quick_host(table: Table) -> list[dict]:
    """The host left a quick table: the next person seated hosts it. With nobody left it
    closes at once (with the reason of a table nobody holds), unless a round is being played:
    the bots play it out and the table closes with the others nobody holds."""
    heir = next((s for s in _seats(table) if s.user_id is not None and s.user_id != table.host_id
                 and not s.leaving), None)
    if heir is not None:
        table.host = heir.user
        table.save(update_fields=["host"])
        return [{"kind": "host", "seat": heir.index}]
    if _round_in_progress(table):
        return []
    return _close_emptied(table)


def _close_emptied(table: Table) -> list[dict]:
    table.state, table.closed_at, table.closed_reason = (Table.State.CLOSED, timezone.now(),
                                                         "empty")
    table.fill_at = None
    table.save(update_fields=["state", "closed_at", "closed_reason", "fill_at"])
    return [{"kind": "closed", "reason": "empty"}]


def add_bot(*, user, table_id: int, level: str | None = None) -> Outcome:
    """The host seats a bot in the first free seat, before a match or between rounds."""
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        _require_open(table)
        if not table.allow_bots:
            raise ServiceError(_("This table does not allow bots."), code="no_bots")
        if _round_in_progress(table):
            raise ServiceError(_("Bots join between rounds."), code="round_on")
        seats = list(table.seats.order_by("index"))
        if sum(s.is_bot for s in seats) >= len(seats) - 1:
            raise ServiceError(_("At least one seat is for a person."), code="too_many_bots")
        seat = next((s for s in seats if s.empty), None)
        if seat is None:
            raise ServiceError(_("Every seat is taken."), code="full")
        seat.is_bot, seat.bot_level = True, level or table.bot_level
        seat.joined_at = timezone.now()
        seat.save(update_fields=["is_bot", "bot_level", "joined_at"])
        return _bump(table, [{"kind": "seat", "seat": seat.index, "action": "bot_added"}])


def remove_bot(*, user, table_id: int, seat_index: int) -> Outcome:
    """The host removes a bot: at once before a round, at the round's end during one."""
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        seat = table.seats.filter(index=seat_index, is_bot=True).first()
        if seat is None:
            raise ServiceError(_("There is no bot in that seat."), code="no_bot")
        if _round_in_progress(table):
            seat.bot_leaving = True
            seat.save(update_fields=["bot_leaving"])
            action = "bot_leaving"
        else:
            seat.is_bot, seat.bot_level, seat.joined_at = False, "", None
            seat.save(update_fields=["is_bot", "bot_level", "joined_at"])
            action = "bot_removed"
        return _bump(table, [{"kind": "seat", "seat": seat_index, "action": action}])


def invite(*, user, table_id: int, display_name: str) -> Invitation:
    from apps.accounts.selectors import user_by_display_name

    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        _require_open(table)
        _refuse_practice(table)
        invitee = user_by_display_name(display_name)
        if invitee is None:
            raise ServiceError(_("Nobody is called %(name)s.") % {"name": display_name},
                               code="no_such_player")
        if invitee.pk == user.pk:
            raise ServiceError(_("You are the host already."), code="self_invite")
        invitation, _created = Invitation.objects.get_or_create(
            table=table, invitee=invitee, defaults={"inviter": user})
    transaction.on_commit(lambda: _ring_user(invitee.pk, table))
    return invitation


def _clean_name(name: str) -> str:
    from .names import normalize_table_name, table_name_problem

    name = normalize_table_name(name)
    problem = table_name_problem(name)
    if problem is not None:
        raise ServiceError(problem, code="bad_name")
    return name


def rename_table(*, user, table_id: int, name: str) -> Outcome:
    """The host names the table (empty: no name, pages show the code) until it closes."""
    name = _clean_name(name)
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        _require_open(table)
        _require_not_banned(user)
        table.name = name
        table.save(update_fields=["name"])
        return _bump(table, [{"kind": "renamed"}])


def set_watching(*, user, table_id: int, allowed: bool) -> Outcome:
    """The host lets people without a seat watch, or not. Turned off, every watcher's socket
    is closed once the match is on (``WATCHING_OFF_CLOSE_CODE``; before the start people
    still come to the page to take a seat)."""
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        _require_open(table)
        allowed = bool(allowed)
        if table.watchers_allowed == allowed:
            raise ServiceError(_("Watching is already on.") if allowed
                               else _("Watching is already off."), code="unchanged")
        table.watchers_allowed = allowed
        table.save(update_fields=["watchers_allowed"])
        return _bump(table, [{"kind": "watching", "allowed": allowed}])


def _ring_user(user_id: int, table: Table) -> None:
    from apps.realtime.notify import user_notified

    user_notified(user_id, {"kind": "invitation", "table": table.pk, "code": table.code})


# -- the match --------------------------------------------------------------------------------

def start_with_bots(*, user, table_id: int) -> Outcome:
    """Seed 002: at a table that allows bots, the host may start as soon as a second person is
    seated; every free seat gets a bot at the table's level and the match starts."""
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        _require_open(table)
        if table.state != Table.State.WAITING:
            raise ServiceError(_("The match has already started."), code="started")
        if not table.allow_bots:
            raise ServiceError(_("This table does not allow bots."), code="no_bots")
        if sum(s.user_id is not None for s in _seats(table)) < 2:
            raise ServiceError(_("Bots can fill the seats once a second person sits down."),
                               code="too_few_people")
        now = timezone.now()
        return _start_now(table, _fill_with_bots(table, now, by="host"), now=now)


def start_match(*, user, table_id: int) -> Outcome:
    """The host starts when every seat is taken; options freeze; the first round is dealt."""
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        _require_open(table)
        if table.state != Table.State.WAITING:
            raise ServiceError(_("The match has already started."), code="started")
        if table.seats.filter(user__isnull=True, is_bot=False).exists():
            raise ServiceError(_("Every seat must be taken first."), code="seats_empty")
        table.state = Table.State.PLAYING
        table.save(update_fields=["state"])
        events, match, engine = _begin_match(table, number=1)
        return _bump(table, events, engine, match=match, moved=True, new_turn=True)


# -- quick play ("Online", seed 003) --------------------------------------------------------------

#: Quick tables seat strangers: a turn time keeps one of them from holding the others up.
QUICK_PLAY_TURN_SECONDS = 45
#: Advisory lock namespaces (PostgreSQL's two-key form): one person, one game's waiting room.
_QUICK_LOCK_PERSON = 0x51504C50
_QUICK_LOCK_GAME = 0x51504C47


def quick_play(*, user, preset: str, players: int | None = None) -> Table:
    """"Play now": a seat at a public quick table of this game (and number of players) that is
    waiting for people, or a new one, which this person then hosts.

    A new quick table waits ``QUICK_PLAY_FILL_SECONDS`` (``fill_at``); if people fill it
    sooner it starts at once, else bots take the free seats then (:func:`fill_quick_table`).
    Nobody sits at two tables in play: a person already at a quick table that is waiting or
    playing gets that table back; one seated at another table in play (not practice) is
    refused, with that table named; a quick table whose match is over is left for the new one.
    Guests are refused: playing with people needs an account.
    """
    _require_signed_in(user)
    _require_not_banned(user)
    if getattr(getattr(user, "profile", None), "guest", False):
        raise ServiceError(_("Playing online needs an account: sign up, it is free."),
                           code="guest")
    try:
        rules = make_rules({"preset": preset, "turn_seconds": QUICK_PLAY_TURN_SECONDS},
                           4 if players is None else players)
    except RuleError as err:
        raise ServiceError(rule_message(err), code="bad_options") from err
    with transaction.atomic():
        _quick_play_lock(user.pk, preset, rules.players)
        current = _quick_table_of(user)
        if current is not None:
            return current
        _require_not_seated_elsewhere(user)
        for table_id in _waiting_quick_tables(preset, rules.players):
            table = _locked(table_id)
            if table.state == Table.State.WAITING and table.public and not table.hidden \
                    and any(s.empty for s in _seats(table)):
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


def fill_quick_table(*, table_id: int, now: datetime | None = None) -> Outcome:
    """A quick table's wait is over: bots at the table's level take the free seats
    (``bot_filled``) and the match starts by itself. Its timer and the sweep both call this;
    under the row lock a late or repeated call finds the table started (or closed) and
    changes nothing."""
    now = now or timezone.now()
    with transaction.atomic():
        table = _locked(table_id)
        if not table.quick or table.state != Table.State.WAITING or table.fill_at is None \
                or table.fill_at - DUE_TOLERANCE > now:
            raise NotDue()
        if not any(s.user_id is not None for s in _seats(table)):
            return _bump(table, _close_emptied(table), now=now)  # never a table of bots alone
        if table.empty_since is not None:
            # Nobody holds the page: the match starts paused, as a table nobody holds pauses,
            # and goes on when somebody comes back (or closes with the rest after 2 minutes).
            table.paused, table.paused_by, table.paused_at = True, None, now
            table.save(update_fields=["paused", "paused_by", "paused_at"])
        return _start_now(table, _fill_with_bots(table, now, by="wait"), now=now)


def _fill_with_bots(table: Table, now: datetime, *, by: str) -> list[dict]:
    events = []
    for seat in _seats(table):
        if seat.empty:
            seat.is_bot, seat.bot_level, seat.joined_at = True, table.bot_level, now
            seat.save(update_fields=["is_bot", "bot_level", "joined_at"])
            events.append({"kind": "seat", "seat": seat.index, "action": "bot_added"})
    if events:
        events.append({"kind": "bot_filled", "by": by, "bots": len(events)})
    return events


def _start_now(table: Table, events: list[dict], *, now: datetime | None = None) -> Outcome:
    """Start the first match of a waiting table whose every seat is taken; the table counts
    as bot-filled when bots sit at it (the league counts such tables at half)."""
    table.state, table.fill_at = Table.State.PLAYING, None
    table.bot_filled = any(s.is_bot for s in _seats(table))
    table.save(update_fields=["state", "fill_at", "bot_filled"])
    more, match, engine = _begin_match(table, number=1)
    return _bump(table, events + more, engine, match=match, moved=True, new_turn=True, now=now)


def _quick_fill_wait() -> timedelta:
    from django.conf import settings

    return timedelta(seconds=settings.QUICK_PLAY_FILL_SECONDS)


def _schedule_fill(table_id: int, when: datetime) -> None:
    from .scheduling import schedule_fill

    schedule_fill(table_id, when)


def _quick_play_lock(user_id: int, preset: str, players: int) -> None:
    """Serialise "play now" per person and per game until the transaction ends, so that two
    people pressing it at once find the same table and one person's double click one seat.
    PostgreSQL: transaction-level advisory locks (person first, then game: always that order).
    SQLite takes one writer at a time already."""
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    game_key = zlib.crc32(f"{preset}:{players}".encode()) - 2**31
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)",
                       [_QUICK_LOCK_PERSON, user_id % 2**31])
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [_QUICK_LOCK_GAME, game_key])


def _seats_held(user):
    """The person's seats (or reserved seats) at open tables, not the ones they are leaving."""
    from django.db.models import Q

    return (Seat.objects.filter(Q(user=user) | Q(reserved_for=user), leaving=False)
            .exclude(table__state=Table.State.CLOSED).select_related("table"))


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
            table = _locked(seat.table_id)
            seat = next((s for s in _seats(table) if s.pk == seat.pk), None)
            if seat is not None and seat.user_id == user.pk and not _in_play(table):
                _bump(table, _vacate(table, seat))
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
    from django.db.models import Count, Q

    return list(
        Table.objects.filter(quick=True, public=True, allow_bots=True, hidden=False,
                             state=Table.State.WAITING, preset=preset, players=players,
                             empty_since__isnull=True)
        .annotate(free=Count("seats", filter=Q(seats__user__isnull=True, seats__is_bot=False)),
                  people=Count("seats", filter=Q(seats__user__isnull=False)))
        .filter(free__gt=0, people__gt=0).order_by("fill_at", "pk")
        .values_list("pk", flat=True)[:10])


def _begin_match(table: Table, number: int) -> tuple[list[dict], Match, EngineMatch]:
    rules = game.rules_for(table)
    match = Match.objects.create(table=table, number=number, rules=rules.options(),
                                 players=rules.players, scores=[0] * rules.sides,
                                 games=[0] * rules.sides)
    engine = EngineMatch(rules)
    events = [{"kind": "match_started", "match": number}]
    _deal(table, match, engine, events)
    return events, match, engine


def _deal(table: Table, match: Match, engine: EngineMatch, events: list[dict]) -> None:
    rnd = game.deal_round(match, engine, _seat_users(table))
    # The round's id goes with the position from now on; _bump saves the position again
    # after the passes below.
    match.position = {"round_id": rnd.pk}
    events.append({"kind": "round_started", "round": rnd.number, "opener": rnd.opener})
    _auto_passes(table, match, engine, events, now=timezone.now())


def next_round(*, user, table_id: int) -> Outcome:
    """The host deals now rather than waiting for the table to deal by itself."""
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        match, engine = _playing(table)
        return _next_round(table, match, engine)


def _next_round(table: Table, match: Match, engine: EngineMatch) -> Outcome:
    if table.paused:
        raise ServiceError(_("The table is paused."), code="paused")
    if engine.current is not None:
        raise ServiceError(_("The round is still being played."), code="round_on")
    if engine.over:
        raise ServiceError(_("The match is over: start a new match."), code="match_over")
    if table.seats.filter(user__isnull=True, is_bot=False).exists():
        raise ServiceError(_("Every seat must be taken first."), code="seats_empty")
    events: list[dict] = []
    _deal(table, match, engine, events)
    return _bump(table, events, engine, match=match, moved=True, new_turn=True)


def new_match(*, user, table_id: int) -> Outcome:
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        match, engine = _playing(table)
        if not engine.over:
            raise ServiceError(_("The match is still on."), code="match_on")
        if table.seats.filter(user__isnull=True, is_bot=False).exists():
            raise ServiceError(_("Every seat must be taken first."), code="seats_empty")
        events, match, engine = _begin_match(table, number=match.number + 1)
        return _bump(table, events, engine, match=match, moved=True, new_turn=True)


def pause(*, user, table_id: int) -> Outcome:
    """Freeze the table: no deal, no bot move, no clock."""
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        match, engine = _playing(table)
        if table.paused:
            raise ServiceError(_("The table is already paused."), code="paused")
        table.paused, table.paused_by, table.paused_at = True, user, timezone.now()
        table.save(update_fields=["paused", "paused_by", "paused_at"])
        return _bump(table, [{"kind": "paused"}], engine, match=match)


def resume(*, user, table_id: int) -> Outcome:
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        _require_open(table)
        if not table.paused:
            raise ServiceError(_("The table is not paused."), code="not_paused")
        return _resume(table, [{"kind": "resumed"}])


def _resume(table: Table, events: list[dict]) -> Outcome:
    """The turn gets back exactly the time it had left when the table paused."""
    now = timezone.now()
    if table.paused_at and table.turn_started_at:
        table.turn_started_at += now - table.paused_at
    table.paused, table.paused_by, table.paused_at = False, None, None
    table.save(update_fields=["paused", "paused_by", "paused_at"])
    return _bump(table, events, now=now)


def _playing(table: Table) -> tuple[Match, EngineMatch]:
    _require_open(table)
    if table.state != Table.State.PLAYING:
        raise ServiceError(_("The match has not started."), code="not_started")
    match = rows.current_match(table.pk)
    return match, game.restore(match)


# -- moves ------------------------------------------------------------------------------------

def play_move(*, user, table_id: int, round_number: int, ply: int, tile: str | None = None,
              end: str | None = None, is_pass: bool = False) -> Outcome:
    """A seated player's play or pass, sent for round ``round_number`` at move ``ply``."""
    with transaction.atomic():
        table = _locked(table_id)
        seat = _seat_of(table, user)
        if seat.played_by_bot:
            raise ServiceError(_("A bot is playing your hand until the round ends."),
                               code="standin")
        return _apply(table, seat.index, round_number, ply, tile, end, is_pass,
                      by=Move.By.PLAYER, user=user)


class NotDue(ServiceError):
    def __init__(self) -> None:
        super().__init__(_("Nothing is due at this table yet."), code="not_due")


def act_on_deadline(*, table_id: int, round_number: int | None = None, ply: int | None = None,
                    now: datetime | None = None, think_first: bool = False) -> Outcome:
    """The table acts by itself when its deadline has come.

    A bot (or a bot standing in) makes its choice; a person whose time ran out gets the first
    tile in hand that fits, at the first end it fits, or a pass; between rounds, the next
    round is dealt. Timers pass the position they were set for, so a late, repeated or
    redelivered timer finds the table moved on and changes nothing; the sweep passes None and
    acts on whatever is due.

    With ``think_first`` (a slow bot's timer), the bot thinks before the row lock is taken, on
    the position as the database has it; the move is then applied under the lock only if the
    table is still at that version, so a slow search never holds up the table's other writers
    (or the sweep). Fast bots decide under the lock.
    """
    now = now or timezone.now()
    choice = _bot_choice(table_id, round_number, ply, now) if think_first else None
    with transaction.atomic():
        table = _locked(table_id)
        if table.state != Table.State.PLAYING or table.paused or table.turn_deadline is None:
            raise NotDue()
        if table.turn_deadline - DUE_TOLERANCE > now:
            raise NotDue()
        match, engine = _playing(table)
        last = engine.rounds[-1]
        here = (len(engine.rounds) - 1, len(last.history))
        if round_number is not None and (round_number, ply) != here:
            raise StaleMove()
        if last.result is not None:
            return _next_round(table, match, engine)
        seat = _seats(table)[last.turn]
        if seat.played_by_bot:
            if choice is None or choice[0] != (table.version, *here):
                # The table moved on while the bot thought (or there was nothing to think
                # about then): think again, now, on this position.
                choice = ((table.version, *here), _decide(table, engine, seat))
            move, by = choice[1], Move.By.BOT
        else:
            from apps.rules.engine import legal_dict

            move = legal_dict(*last.legal()[0])
            by = Move.By.TABLE
        return _apply(table, seat.index, *here, move.get("play"), move.get("end"),
                      bool(move.get("pass")), by=by, user=None, match=match, engine=engine,
                      due_at=table.turn_deadline)


def _decide(table: Table, engine: EngineMatch, seat: Seat) -> dict:
    from apps.bots import choose_move
    from apps.rules.view import seat_view

    return choose_move(seat_view(engine, seat.index), seat.bot_level or table.bot_level,
                       game.bot_rng())


def _bot_choice(table_id: int, round_number: int | None, ply: int | None,
                now: datetime) -> tuple[tuple[int, int, int], dict] | None:
    """A bot's move for a due bot turn, decided without any lock: ((version, round, ply),
    move), or None when no bot is due here."""
    table = Table.objects.filter(pk=table_id).first()
    if table is None or table.state != Table.State.PLAYING or table.paused \
            or table.turn_deadline is None or table.turn_deadline - DUE_TOLERANCE > now:
        return None
    match = table.current_match
    if match is None or match.position is None:
        return None
    engine = game.restore(match)
    last = engine.rounds[-1]
    here = (len(engine.rounds) - 1, len(last.history))
    if last.result is not None or (round_number is not None and (round_number, ply) != here):
        return None
    seat = table.seats.filter(index=last.turn).first()
    if seat is None or not seat.played_by_bot:
        return None
    return (table.version, *here), _decide(table, engine, seat)


def _check_position(engine: EngineMatch, round_number: int, ply: int) -> None:
    last = len(engine.rounds) - 1
    if round_number != last or ply != len(engine.rounds[-1].history) \
            or engine.rounds[-1].result is not None:
        raise StaleMove()


def _apply(table: Table, seat_index: int, round_number: int, ply: int, tile: str | None,
           end: str | None, is_pass: bool, *, by: str, user, match: Match | None = None,
           engine: EngineMatch | None = None, due_at: datetime | None = None) -> Outcome:
    if match is None:
        match, engine = _playing(table)
    if table.paused:
        raise ServiceError(_("The table is paused."), code="paused")
    _check_position(engine, round_number, ply)
    rnd = engine.current
    try:
        if is_pass:
            move = rnd.check_pass(seat_index)
        else:
            if end is not None and end not in END_NAMES:
                raise ServiceError(_("Choose end A, B, C or D."), code="bad_end")
            tile_id = parse_tile(tile)[0]
            move = rnd.check_play(seat_index, tile_id,
                                  None if end is None else END_NAMES.index(end))
    except RuleError as err:
        code = "bad_tile" if err.code == "bad_record" else err.code
        raise ServiceError(rule_message(err), code=code) from err
    now = timezone.now()
    events: list[dict] = []
    _record(table, engine, match, move, by=by, user=user, events=events, due_at=due_at, now=now)
    _auto_passes(table, match, engine, events, now=now)
    return _bump(table, events, engine, match=match, moved=True, new_turn=True, now=now)


def _record(table: Table, engine: EngineMatch, match: Match, move: tuple[int, int], *,
            by: str, user, events: list[dict], now: datetime,
            due_at: datetime | None = None) -> None:
    rnd = engine.current
    seat, ply = rnd.turn, len(rnd.history)
    written = {**move_dict(seat, *move), "at": record_time(now), "by": by}
    engine.play(*move, written=written)
    rows.insert(Move, round_id=game.round_id(match), ply=ply, seat=seat,
                tile=written.get("play", ""), end=written.get("end", ""),
                is_pass=bool(written.get("pass")), by=by, user_id=user.pk if user else None,
                due_at=due_at, created_at=now)
    events.append({"kind": "move", "ply": ply, **written})
    if rnd.result is not None:
        _settle(table, match, engine, events, now=now)


def _auto_passes(table: Table, match: Match, engine: EngineMatch, events: list[dict], *,
                 now: datetime) -> None:
    """Where passing is never a choice, the table writes the pass itself; elsewhere it does so
    for a person who turned auto-pass on (their profile), when the pass is their only move."""
    from apps.rules.engine import PASS_MOVE

    everyone = table.preset in AUTO_PASS_PRESETS
    while engine.current is not None and engine.current.legal() == [PASS_MOVE]:
        if everyone:
            _record(table, engine, match, PASS_MOVE, by=Move.By.TABLE, user=None,
                    events=events, now=now)
            continue
        user = _auto_passer(table, engine.current.turn)
        if user is None:
            return
        _record(table, engine, match, PASS_MOVE, by=Move.By.PLAYER, user=user,
                events=events, now=now)


def _auto_passer(table: Table, seat_index: int):
    """The person at ``seat_index`` if they play it themselves and turned auto-pass on."""
    seat = _seats(table)[seat_index]
    if seat.user is None or seat.played_by_bot:
        return None
    profile = getattr(seat.user, "profile", None)
    return seat.user if profile is not None and profile.auto_pass else None


def set_preferences(*, user, table_id: int | None = None, auto_pass: bool | None = None,
                    learning_mode: bool | None = None,
                    auto_play: bool | None = None) -> Outcome | None:
    """Save a person's table preferences; turning auto-pass on while their only move at
    ``table_id`` is a pass passes at once, and turning "play automatically" on while it is
    their turn there plays for them at once (by the table, the first tile that fits)."""
    _require_signed_in(user)
    from apps.accounts.services import ensure_profile

    profile = ensure_profile(user)
    fields = []
    if auto_pass is not None:
        profile.auto_pass, fields = bool(auto_pass), fields + ["auto_pass"]
    if learning_mode is not None:
        profile.learning_mode, fields = bool(learning_mode), fields + ["learning_mode"]
    if auto_play is not None:
        profile.auto_play, fields = bool(auto_play), fields + ["auto_play"]
    if fields:
        profile.save(update_fields=fields)
    if auto_play and table_id:
        return _play_for(user, table_id)
    if not (auto_pass and table_id):
        return None
    with transaction.atomic():
        table = _locked(table_id)
        if table.state != Table.State.PLAYING or table.paused:
            return None
        match, engine = _playing(table)
        if engine.current is None or engine.current.result is not None:
            return None
        events: list[dict] = []
        now = timezone.now()
        _auto_passes(table, match, engine, events, now=now)
        if not events:
            return None
        return _bump(table, events, engine, match=match, moved=True, new_turn=True, now=now)


def _play_for(user, table_id: int) -> Outcome | None:
    """The table's move for ``user`` when it is their turn at ``table_id`` (else nothing)."""
    from apps.rules.engine import legal_dict

    with transaction.atomic():
        table = _locked(table_id)
        if table.state != Table.State.PLAYING or table.paused:
            return None
        match, engine = _playing(table)
        rnd = engine.current
        if rnd is None or rnd.result is not None:
            return None
        seat = _seats(table)[rnd.turn]
        if seat.user_id != user.pk or seat.played_by_bot:
            return None
        move = legal_dict(*rnd.legal()[0])
        return _apply(table, seat.index, len(engine.rounds) - 1, len(rnd.history),
                      move.get("play"), move.get("end"), bool(move.get("pass")),
                      by=Move.By.TABLE, user=None, match=match, engine=engine)


def _settle(table: Table, match: Match, engine: EngineMatch, events: list[dict], *,
            now: datetime) -> None:
    from apps.rules.view import side_dict

    rnd = engine.rounds[-1]
    res = rnd.result
    result = {
        "reason": res.reason,
        "winner": side_dict(engine.rules, res.winner),
        "tie": res.tie,
        "pips": list(res.pips),
        "points": res.points,
        "fives": list(rnd.fives),
    }
    Round.objects.filter(pk=game.round_id(match)).update(result=result, finished_at=now)
    match.scores, match.games = engine.scores(), list(engine.games)
    fields = ["scores", "games"]
    if engine.over:
        match.winner, match.finished_at = engine.winner, now
        fields += ["winner", "finished_at"]
    match.save(update_fields=fields)
    # -- the club (issue 14): the match's pay, in this transaction; its rules are apps.club's --
    if engine.over:
        from apps.club.services import match_finished

        match_finished(table=table, match=match, seats=_seats(table), now=now)
    # ------------------------------------------------------------------------------------------
    events.append({"kind": "round_over", "round": len(engine.rounds) - 1, **result})
    if engine.over:
        events.append({"kind": "match_over", "winner": side_dict(engine.rules, engine.winner)})
    _seats_at_round_end(table, events)


def _seats_at_round_end(table: Table, events: list[dict]) -> None:
    """Reservations are honoured, leavers' and removed bots' seats free, returners play."""
    holding = set(Connection.objects.filter(table=table).values_list("user_id", flat=True))
    stays_watching = False
    for seat in _seats(table):
        changed = None
        if seat.reserved_for_id is not None:
            seat.user_id, seat.reserved_for = seat.reserved_for_id, None
            seat.is_bot, seat.bot_level, seat.bot_leaving = False, "", False
            seat.standin, seat.leaving, seat.joined_at = False, False, timezone.now()
            seat.away_since = None if seat.user_id in holding else timezone.now()
            changed = "reservation_taken"
        elif seat.bot_leaving:
            seat.is_bot, seat.bot_level, seat.bot_leaving = False, "", False
            changed = "bot_removed"
        elif seat.leaving:
            # Still on the page, the leaver watches now; the table may have no player left.
            stays_watching = stays_watching or seat.user_id in holding
            seat.user, seat.standin, seat.leaving, seat.away_since = None, False, False, None
            changed = "left"
        elif seat.standin and seat.away_since is None:
            seat.standin = False
            changed = "back"
        if changed:
            seat.save()
            events.append({"kind": "seat", "seat": seat.index, "action": changed})
    if stays_watching:
        _mark_if_empty(table, events, now=timezone.now())


# -- presence ---------------------------------------------------------------------------------

def connect(*, user, table_id: int, channel_name: str,
            lease: Lease | None = None) -> Outcome | None:
    """A socket opened. A seated person's first tab makes them connected; back within the
    round, they take their hand back from the bot; an empty table wakes up.

    A person without a seat is a watcher: their socket never touches a seat's presence nor the
    table's emptiness (a table its players left still pauses and closes), and their first tab
    only changes the watcher count, with a light bump (:func:`_bump_watchers`).

    ``lease`` is the web process holding the socket: its lease keeps the connection alive,
    and is written again here, in the same transaction, if the sweep deleted it while the
    process was idle.
    """
    with transaction.atomic():
        table = _locked(table_id)
        if lease is not None:
            hold_lease(lease)
        was = Connection.objects.filter(table=table, user=user).exists()
        Connection.objects.update_or_create(
            channel_name=channel_name,
            defaults={"user": user, "table": table, "node_id": lease and lease.boot})
        seat = table.seats.filter(user=user).first()
        if seat is None:
            return None if was else _bump_watchers(table)
        events: list[dict] = []
        if table.empty_since is not None:
            table.empty_since = None
            table.save(update_fields=["empty_since"])
        if not was:
            seat.away_since = None
            if seat.standin and not seat.leaving:
                seat.standin = False
            seat.save(update_fields=["away_since", "standin"])
            events.append({"kind": "presence", "seat": seat.index, "connected": True})
        if table.paused and table.paused_by_id is None and table.paused_at is not None \
                and table.state == Table.State.PLAYING:
            return _resume(table, events + [{"kind": "resumed"}])
        if not events:
            return None
        return _bump(table, events)


def disconnect(*, channel_name: str, now: datetime | None = None,
               lease_expired_before: datetime | None = None) -> Outcome | None:
    """A socket closed. A person's last tab makes them away; no seated person left pauses the
    table (by itself, so it resumes when one comes back) and starts its 2-minute expiry;
    watchers' sockets count for neither.

    ``lease_expired_before``: the sweep ends the socket only if its process's lease is still
    expired now that the table is locked (the process may have renewed it meanwhile).
    """
    with transaction.atomic():
        conn = Connection.objects.filter(channel_name=channel_name).first()
        if conn is None:
            return None
        table = _locked(conn.table_id)
        gone = Connection.objects.filter(pk=conn.pk)
        if lease_expired_before is not None:
            gone = gone.filter(node__seen_at__lt=lease_expired_before)
        if gone.delete()[0] == 0:
            return None  # another call (the sweep, the socket itself) ended it first
        user_id = conn.user_id
        now = now or timezone.now()
        events: list[dict] = []
        last_tab = not Connection.objects.filter(table=table, user_id=user_id).exists()
        seat = table.seats.filter(user_id=user_id).first()
        if seat is None:
            return _bump_watchers(table, now=now) if last_tab else None
        if last_tab:
            seat.away_since = now
            seat.save(update_fields=["away_since"])
            events.append({"kind": "presence", "seat": seat.index, "connected": False})
        _mark_if_empty(table, events, now=now)
        if not events:
            return None
        return _bump(table, events, now=now)


def _players_holding(table: Table) -> bool:
    """Whether any seated person holds a socket at the table (watchers do not count)."""
    seated = Seat.objects.filter(table=table, user__isnull=False).values("user_id")
    return Connection.objects.filter(table=table, user_id__in=seated).exists()


def _mark_if_empty(table: Table, events: list[dict], *, now: datetime) -> None:
    """No seated person holds a socket any more: the table pauses by itself and its 2-minute
    expiry starts, however many watchers stay."""
    if table.empty_since is not None or table.state == Table.State.CLOSED \
            or _players_holding(table):
        return
    table.empty_since = now
    fields = ["empty_since"]
    if table.state == Table.State.PLAYING and not table.paused:
        table.paused, table.paused_by, table.paused_at = True, None, now
        fields += ["paused", "paused_by", "paused_at"]
        events.append({"kind": "paused", "empty": True})
    table.save(update_fields=fields)


def _bump_watchers(table: Table, *, now: datetime | None = None) -> Outcome:
    """A watcher came or went: a new version whose only change is the watcher count.

    Nothing a watcher does can move the clock or the game, so the clock is not armed again and
    no timer is scheduled; the snapshot is the previous version's with the new count
    (``state.with_watchers``), so a crowd arriving costs no engine restore, seat view or
    translation per arrival. Only when the previous snapshot is not at hand is it built in
    full.
    """
    from apps.realtime import snapshots

    from .selectors import watcher_count

    now = now or timezone.now()
    old = table.version
    # updated_at stays: "your tables" are ordered by what happened at them, not by who looked.
    if Table.objects.filter(pk=table.pk, version=old).update(version=old + 1) != 1:
        raise StaleMove()
    table.version = old + 1
    count = watcher_count(table.pk)
    events = [{"kind": "watchers", "count": count}]
    TableEvent.objects.create(table=table, version=table.version, events=events, created_at=now)
    previous = snapshots.load_version(table.pk, table.code, old)
    snapshot = state.with_watchers(table, previous, events, count)
    if snapshot is None:
        snapshot = state.build(table, engine=None, seats=_seats(table), previous=previous,
                               events=events)
    outcome = Outcome(table.pk, table.version, events, snapshot=snapshot)
    transaction.on_commit(lambda: _ring(outcome))
    return outcome


@dataclass
class SocketOpened:
    """What a table socket needs once it is accepted: a close code when it may not stay
    (4401 not signed in, 4403 banned, 4404 no such table or not open to this person), the
    person's language, and the table's version in the database."""

    close_code: int | None
    language: str
    version: int = -1
    code: str = ""


def open_socket(*, user, table_id: int, channel_name: str, lease: Lease | None,
                known_ids=()) -> SocketOpened:
    """Everything a new table socket asks of the database, in one call: may this person hold
    it, in which language, and (for people) their presence."""
    from django.conf import settings

    from apps.moderation.selectors import is_banned

    from .selectors import may_watch, watching_refused

    language = settings.LANGUAGE_CODE
    if user is None or not user.is_authenticated:
        return SocketOpened(4401, language)
    profile = getattr(user, "profile", None)
    if getattr(profile, "language", None) in dict(settings.LANGUAGES):
        language = profile.language
    if is_banned(user):
        return SocketOpened(4403, language)
    if not may_watch(table_id=table_id, user=user, known_ids=known_ids):
        return SocketOpened(4404, language)
    if watching_refused(table_id=table_id, user=user):
        return SocketOpened(WATCHING_OFF_CLOSE_CODE, language)
    outcome = connect(user=user, table_id=table_id, channel_name=channel_name, lease=lease)
    code, version = Table.objects.filter(pk=table_id).values_list("code", "version").get()
    return SocketOpened(None, language, outcome.version if outcome else version, code)


# -- presence leases --------------------------------------------------------------------------
# A web process renews one lease for all its sockets (apps.realtime.hub); the sweep ends the
# presence of every socket whose process stopped renewing.
#
# What assumes ongoing activity here, and what keeps it true across a quiet spell longer than
# the lease (tests/realtime/test_idle_site.py):
# - the lease row (WebNode): renewed only while the process holds sockets, deleted by the
#   sweep LEASE after the last renewal once it holds no connection. The process never caches
#   anything of the row: its identity is the boot it made itself, and every writer of a
#   connection (``connect``) or of a renewal (``renew_lease``) writes the row again if it is
#   gone, in the same statement's transaction (``hold_lease``).
# - a connection row of a live socket ended by the sweep while its process was stalled:
#   the next renewal reports it missing and the process says again that the socket is open.

#: How often a web process renews its lease, and how long a lease lasts unrenewed. A socket
#: whose process died counts as away within LEASE + the sweep's second (docs/protocol.md).
HEARTBEAT = timedelta(seconds=5)
LEASE = timedelta(seconds=15)


def lease_length() -> timedelta:
    return _limit("PRESENCE_LEASE_SECONDS", LEASE)


@dataclass(frozen=True)
class Lease:
    """A web process as its connections name it: ``boot`` (one run of the process, made by the
    process itself) and ``name`` (its place, the same across its restarts)."""

    boot: str
    name: str


def hold_lease(lease: Lease, *, now: datetime | None = None) -> bool:
    """Renew the lease, writing its row again if the sweep deleted it; True when it was
    written anew.

    The sweep deletes a lease only by a statement that requires it to be expired
    (:func:`_delete_idle_leases`): once this UPDATE has renewed the row, a delete that was
    waiting for it finds it renewed and leaves it.
    """
    from .models import WebNode

    now = now or timezone.now()
    if WebNode.objects.filter(boot=lease.boot).update(seen_at=now):
        return False
    _node, created = WebNode.objects.get_or_create(
        boot=lease.boot, defaults={"name": lease.name, "seen_at": now, "started_at": now})
    return created


def register_node(lease: Lease) -> None:
    """A web process starts holding sockets: its lease begins, and whatever an earlier run of
    the same process (same ``name``) left connected ends at once."""
    from .models import WebNode

    hold_lease(lease)
    earlier = WebNode.objects.filter(name=lease.name).exclude(boot=lease.boot)
    _end_connections(Connection.objects.filter(node__in=earlier.values("boot")))
    _delete_idle_leases(earlier)


@dataclass
class Renewal:
    """What a web process learns from renewing its lease: every version of the tables it holds
    sockets at (a lost doorbell shows as a socket behind), and its sockets whose presence the
    database no longer has (``missing``: ended by the sweep while the process was stalled)."""

    versions: dict[int, int]
    missing: list[str]
    rewritten: bool = False


def renew_lease(lease: Lease, *, channels: list[str], present: list[str],
                table_ids: list[int]) -> Renewal:
    """A web process's heartbeat: renew its lease (writing it again if it was gone), end the
    connections it holds rows for but no longer has a socket for (``channels``: every socket
    it has; a socket that died without closing is not among them), and tell it which of its
    open table sockets (``present``) have no connection row any more."""
    rewritten = hold_lease(lease)
    held = set(Connection.objects.filter(node_id=lease.boot)
                                 .values_list("channel_name", flat=True))
    _end_connections(Connection.objects.filter(channel_name__in=held - set(channels)))
    versions = dict(Table.objects.filter(pk__in=table_ids).values_list("pk", "version"))
    return Renewal(versions, [c for c in present if c not in held], rewritten)


def expire_leases(*, now: datetime | None = None) -> int:
    """End the presence of every socket held by a web process whose lease ran out, then delete
    the leases left holding nothing."""
    from .models import WebNode

    now = now or timezone.now()
    cutoff = now - lease_length()
    dead = WebNode.objects.filter(seen_at__lt=cutoff)
    ended = _end_connections(Connection.objects.filter(node__in=dead.values("boot")), now=now,
                             lease_expired_before=cutoff)
    _delete_idle_leases(dead)
    return ended


def _delete_idle_leases(leases) -> None:
    """Delete these leases where they hold no connection, in one DELETE whose WHERE is checked
    again on a row a concurrent renewal changed (PostgreSQL re-evaluates it after the lock):
    Django's collector would read first and delete by id, and so delete a lease renewed and
    given a connection in between."""
    from django.db.models import Exists, OuterRef

    leases.exclude(Exists(Connection.objects.filter(node_id=OuterRef("boot")))).delete()


def _end_connections(conns, now: datetime | None = None,
                     lease_expired_before: datetime | None = None) -> int:
    ended = 0
    for channel_name in list(conns.values_list("channel_name", flat=True)[:2000]):
        try:
            disconnect(channel_name=channel_name, now=now,
                       lease_expired_before=lease_expired_before)
            ended += 1
        except ServiceError:
            pass
    return ended


def stand_in(*, table_id: int, seat_index: int, now: datetime | None = None) -> Outcome:
    """Away 2 minutes: a bot plays the person's hand (and team) for the rest of the round."""
    now = now or timezone.now()
    with transaction.atomic():
        table = _locked(table_id)
        seat = table.seats.get(index=seat_index)
        if seat.standin or seat.user_id is None or seat.away_since is None \
                or seat.away_since + _away_limit() > now or not _round_in_progress(table):
            raise NotDue()
        seat.standin = True
        seat.save(update_fields=["standin"])
        return _bump(table, [{"kind": "seat", "seat": seat_index, "action": "standin"}],
                     now=now)


def close_empty(*, table_id: int, now: datetime | None = None) -> Outcome | None:
    """Nobody came back for 2 minutes: the table closes; its history stays. A practice table
    is deleted instead (None): its person has left, and it counts for nothing."""
    now = now or timezone.now()
    with transaction.atomic():
        table = _locked(table_id)
        if table.state == Table.State.CLOSED or table.empty_since is None \
                or table.empty_since + _empty_limit() > now:
            raise NotDue()
        if table.practice:
            _delete_table(table)
            return None
        table.state, table.closed_at = Table.State.CLOSED, now
        table.closed_reason = "empty"
        table.save(update_fields=["state", "closed_at", "closed_reason"])
        return _bump(table, [{"kind": "closed", "reason": "empty"}], now=now)


def mark_unopened(*, table_id: int, now: datetime | None = None) -> None:
    """A waiting table nobody has opened for the empty-table limit since it was made (its host
    left before the page connected, say): nobody connected, so it leaves the lobby and is closed
    like any other (shared/specs/tables.md), counted from its creation. The sockets mark a
    table empty only when its last page closes, and this one never had a page."""
    now = now or timezone.now()
    with transaction.atomic():
        table = _locked(table_id)
        if table.state != Table.State.WAITING or table.empty_since is not None \
                or table.created_at + _empty_limit() > now \
                or Connection.objects.filter(table=table).exists():
            raise NotDue()
        # No new version: no page shows it, and closing it (the same sweep) makes one.
        table.empty_since = table.created_at
        table.save(update_fields=["empty_since"])


def cancel_waiting(*, table_id: int, reason: str, now: datetime | None = None) -> Outcome:
    """Close a table whose match never started (``reason`` goes to ``closed_reason``): a stake
    table not filled in time, or whose opener stood up (apps.club)."""
    now = now or timezone.now()
    with transaction.atomic():
        table = _locked(table_id)
        _require_open(table)
        if table.state != Table.State.WAITING:
            raise ServiceError(_("The match has already started."), code="started")
        table.state, table.closed_at, table.closed_reason = Table.State.CLOSED, now, reason
        table.save(update_fields=["state", "closed_at", "closed_reason"])
        return _bump(table, [{"kind": "closed", "reason": reason}], now=now)


def _act_on_each(table_ids, act, *, now: datetime) -> int:
    """The sweep's pass over one kind of due work: at most 500 tables, each in its own
    service call; a table that moved on meanwhile (a ServiceError) is skipped."""
    done = 0
    for table_id in list(table_ids[:500]):
        try:
            act(table_id=table_id, now=now)
            done += 1
        except ServiceError:
            pass
    return done


def sweep(*, now: datetime | None = None) -> dict[str, int]:
    """Beat's guarantee behind the per-turn timers: act on everything due, through the
    services, each in its own transaction. Indexed columns find the work."""
    now = now or timezone.now()
    done = {"deadlines": 0, "standins": 0, "closed": 0, "practice_deleted": 0}
    done["expired"] = expire_leases(now=now)
    due = Table.objects.filter(state=Table.State.PLAYING, paused=False,
                               turn_deadline__lte=now).values_list("pk", flat=True)
    done["deadlines"] = _act_on_each(due, act_on_deadline, now=now)
    away = Seat.objects.filter(away_since__lte=now - _away_limit(), standin=False,
                               user__isnull=False, table__state=Table.State.PLAYING)
    for table_id, index in list(away.values_list("table_id", "index")[:500]):
        try:
            stand_in(table_id=table_id, seat_index=index, now=now)
            done["standins"] += 1
        except ServiceError:
            pass
    waited = Table.objects.filter(quick=True, state=Table.State.WAITING,
                                  fill_at__lte=now).values_list("pk", flat=True)
    done["filled"] = _act_on_each(waited, fill_quick_table, now=now)
    unopened = Table.objects.filter(state=Table.State.WAITING, empty_since__isnull=True,
                                    created_at__lte=now - _empty_limit(),
                                    connections__isnull=True).values_list("pk", flat=True)
    done["unopened"] = _act_on_each(unopened, mark_unopened, now=now)
    empty = Table.objects.filter(empty_since__lte=now - _empty_limit()).exclude(
        state=Table.State.CLOSED).values_list("pk", flat=True)
    for table_id in list(empty[:500]):
        try:
            kept = close_empty(table_id=table_id, now=now)
            done["closed" if kept is not None else "practice_deleted"] += 1
        except ServiceError:
            pass
    done["practice_deleted"] += _sweep_practice(now=now)
    from apps.accounts.services import delete_idle_guests

    done["guests_deleted"] = delete_idle_guests(now=now)
    return done


def prune_table_events(*, keep: int | None = None, batch: int = 5000, batches: int = 20) -> int:
    """Delete the events no state can carry any more; returns how many.

    A table's snapshot holds the events of its last ``state.LOG_LENGTH`` versions, rebuilt from
    these rows when Redis has lost it, and nothing else reads them. Left alone they grow by one
    row per version of every table for ever (a busy evening is millions). Beat runs this every
    minute (``config/settings.py``), in batches of short statements on rows no move touches.
    """
    from .state import LOG_LENGTH

    keep = LOG_LENGTH if keep is None else keep
    old = TableEvent.objects.filter(version__lte=F("table__version") - keep)
    deleted = 0
    for _batch in range(batches):
        ids = list(old.values_list("pk", flat=True)[:batch])
        if not ids:
            break
        deleted += TableEvent.objects.filter(pk__in=ids).delete()[0]
    return deleted


def _sweep_practice(*, now: datetime) -> int:
    """Practice tables past their lifetime close (a page still open says why); closed ones are
    deleted once no socket is open at them, or an empty-table limit after closing at the
    latest. Returns how many were deleted."""
    old = Table.objects.filter(practice=True, state__in=RUNNING,
                               created_at__lte=now - practice_max_age())
    for table_id in list(old.values_list("pk", flat=True)[:500]):
        try:
            _end_practice(table_id=table_id, reason="practice_expired", now=now)
        except ServiceError:
            pass
    closed = Table.objects.filter(practice=True, state=Table.State.CLOSED).filter(
        Q(connections__isnull=True) | Q(closed_at__lte=now - _empty_limit())
    ).values_list("pk", flat=True).distinct()
    deleted = 0
    for table_id in list(closed[:500]):
        with transaction.atomic():
            table = Table.objects.select_for_update().filter(
                pk=table_id, practice=True, state=Table.State.CLOSED).first()
            if table is not None:
                _delete_table(table)
                deleted += 1
    return deleted


# -- staff ------------------------------------------------------------------------------------
# apps.moderation.services checks the staff right and writes the moderation log; it calls these
# inside its own transaction, so a change and its log row commit together.

def _require_not_banned(user) -> None:
    from apps.moderation.selectors import active_ban, ban_message

    ban = active_ban(user)
    if ban is not None:
        raise ServiceError(ban_message(ban), code="banned")


def person_renamed(*, user_id: int) -> int:
    """A person's name or avatar changed (on their profile, or signing up from a guest
    session): each open table they sit at gets a new version, so that its pages show it (a
    snapshot keeps the names it was built with). Returns how many tables."""
    tables = (Seat.objects.filter(user_id=user_id, table__state__in=RUNNING)
              .values_list("table_id", flat=True).distinct())
    ids = sorted(set(tables))
    for table_id in ids:
        touch(table_id=table_id, events=[{"kind": "player_renamed"}])
    return len(ids)


def touch(*, table_id: int, events: list[dict]) -> Outcome:
    """Bump the version for a change kept outside the table's rows (a chat message, a mute):
    every socket at the table then sends its fresh state."""
    with transaction.atomic():
        table = _locked(table_id)
        return _bump(table, events)


def close_by_staff(*, table_id: int, reason: str, now: datetime | None = None) -> Outcome:
    """Staff close a table: the round in progress is voided (kept, never counted), the clock
    stops, and every socket shows the closure and why."""
    now = now or timezone.now()
    with transaction.atomic():
        table = _locked(table_id)
        _require_open(table)
        voided = Round.objects.filter(match__table=table, result__isnull=True,
                                      voided=False).update(voided=True, finished_at=now)
        table.state, table.closed_at = Table.State.CLOSED, now
        table.closed_reason = f"staff: {reason}"[:200]
        table.save(update_fields=["state", "closed_at", "closed_reason"])
        match = table.current_match
        engine = None
        if voided and match is not None:
            # The voided round is never shown: the position goes back to the rounds that count.
            engine = game.load(match)
            last = match.rounds.filter(voided=False).order_by("-number").first()
            game.save_position(match, engine, last.pk if last else None)
        return _bump(table, [{"kind": "closed", "reason": "staff", "voided": bool(voided)}],
                     engine, match=match, now=now)


def update_by_staff(*, table_id: int, hidden: bool | None = None,
                    name: str | None = None) -> Outcome:
    """Staff hide (or show) a table in the lobby, or rename it."""
    with transaction.atomic():
        table = _locked(table_id)
        fields, events = [], []
        if hidden is not None:
            table.hidden = bool(hidden)
            fields.append("hidden")
            events.append({"kind": "hidden", "hidden": table.hidden})
        if name is not None:
            table.name = name[:40]
            fields.append("name")
            events.append({"kind": "renamed"})
        table.save(update_fields=fields)
        return _bump(table, events)


def remove_seated_player(*, table_id: int, seat_index: int) -> Outcome:
    """Staff remove a person from a seat, as if they left: at once outside a round; during
    one, a bot plays their hand out and the seat frees when the round ends."""
    with transaction.atomic():
        table = _locked(table_id)
        seat = table.seats.filter(index=seat_index).first()
        if seat is None or seat.user_id is None or seat.is_bot:
            raise ServiceError(_("Nobody sits in that seat."), code="no_player")
        if _round_in_progress(table):
            if seat.leaving:
                raise ServiceError(_("That player is already leaving."), code="leaving")
            seat.leaving = seat.standin = True
            seat.save(update_fields=["leaving", "standin"])
            action = "leaving"
        else:
            seat.user, seat.joined_at, seat.away_since = None, None, None
            seat.standin = seat.leaving = False
            seat.save(update_fields=["user", "joined_at", "away_since", "standin", "leaving"])
            action = "left"
        return _bump(table, [{"kind": "seat", "seat": seat_index, "action": action,
                              "by": "staff"}])
