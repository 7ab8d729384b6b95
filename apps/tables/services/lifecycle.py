"""A table's life: created, named, started (with bots or full), dealt, paused and resumed,
closed (emptied, never started, nobody back).
"""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.core.errors import ServiceError
from apps.rules.engine import Match as EngineMatch
from apps.rules.errors import RuleError
from apps.rules.presets import Rules, make_rules

from ..messages import rule_message
from ..models import (
    Connection,
    Match,
    Seat,
    Table,
)
from ..names import normalize_table_name, table_name_problem
from ..pace import LIVE, TIMEOUTS_DEFAULT, TIMEOUTS_MAX, TIMEOUTS_MIN, TURN, move_seconds_choices
from .base import (
    NotDue,
    Outcome,
    bump,
    delete_table,
    lock_table,
    playing_match,
    require_account,
    require_host,
    require_not_banned,
    require_open,
    require_room_for_match,
    require_signed_in,
    table_seats,
)
from .clock import empty_limit
from .rounds import begin_match, deal


def create_table(*, host, preset: str, players: int | None = None, options: dict | None = None,
                 public: bool = False, allow_bots: bool = False, bot_level: str = "medium",
                 bot_think_ms: int = 1000, name: str = "",
                 watchers_allowed: bool = True, pace: str = LIVE,
                 move_seconds: int | None = None, timeouts_to_standin: int = TIMEOUTS_DEFAULT,
                 vacation_allowed: bool = True) -> Table:
    """Open a table; the host takes seat 0. Inconsistent options are refused with the reason.
    Guests may only practise (:func:`open_practice`). ``pace`` "turn" opens a turn-based
    table (docs/turn-based.md): ``move_seconds`` one of ``pace.move_seconds_choices()``."""
    require_signed_in(host)
    require_account(host, _("Sign up to open a table for friends: your practice games stay "
                             "yours."))
    require_not_banned(host)
    if pace == TURN:
        options = {**(options or {}), "turn_seconds": None}
    options, rules = checked_options(preset, players, options)
    if not 0 <= bot_think_ms <= 10_000:
        raise ServiceError(_("Bots think between 0 and 10 seconds."), code="bad_options")
    paced = turn_based_fields(pace, move_seconds, timeouts_to_standin, vacation_allowed)
    name = _clean_name(name)
    with transaction.atomic():
        if pace == TURN:
            require_room_for_match(host)
        return new_table(host=host, preset=preset, rules=rules, options=options,
                         public=public, allow_bots=allow_bots, bot_level=bot_level,
                         bot_think_ms=bot_think_ms, name=name,
                         watchers_allowed=bool(watchers_allowed), **paced)


def turn_based_fields(pace: str, move_seconds: int | None, timeouts_to_standin: int,
                      vacation_allowed: bool) -> dict:
    """The table's pace fields, checked: a turn-based table's time per move is one of the
    choices, and its timeouts in a row between the bounds."""
    if pace == LIVE:
        return {}
    if pace != TURN:
        raise ServiceError(_("Choose live or turn-based."), code="bad_options")
    if move_seconds not in move_seconds_choices():
        raise ServiceError(_("Choose one of the times per move offered."), code="bad_options")
    if not (isinstance(timeouts_to_standin, int)
            and TIMEOUTS_MIN <= timeouts_to_standin <= TIMEOUTS_MAX):
        raise ServiceError(_("Timeouts in a row: from %(low)d to %(high)d.")
                           % {"low": TIMEOUTS_MIN, "high": TIMEOUTS_MAX}, code="bad_options")
    return {"pace": TURN, "move_seconds": move_seconds,
            "timeouts_to_standin": timeouts_to_standin,
            "vacation_allowed": bool(vacation_allowed)}


def checked_options(preset: str, players: int | None,
                    options: dict | None) -> tuple[dict, Rules]:
    # None means "the preset's default", except for the turn time, where it means no limit.
    options = {k: v for k, v in (options or {}).items()
               if v is not None or k == "turn_seconds"}
    try:
        rules = make_rules({"preset": preset, **options}, players)
    except RuleError as err:
        raise ServiceError(rule_message(err), code="bad_options") from err
    return options, rules


def new_table(*, host, preset: str, rules: Rules, options: dict, **fields) -> Table:
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
    Seat.objects.bulk_create(Seat(table=table, index=i, turn_based=table.turn_based)
                             for i in range(rules.players))
    # Away until their first socket opens: a seat's away_since is its presence.
    now = timezone.now()
    Seat.objects.filter(table=table, index=0).update(user=host, joined_at=now, away_since=now)
    return table


def find_by_code(code: str) -> Table:
    clean = "".join(ch for ch in (code or "").upper() if ch.isalnum())
    table = Table.objects.filter(code=clean).exclude(state=Table.State.CLOSED).first()
    if table is None:
        raise ServiceError(_("No open table has that code."), code="bad_code")
    return table


def close_emptied(table: Table) -> list[dict]:
    table.state, table.closed_at, table.closed_reason = (Table.State.CLOSED, timezone.now(),
                                                         "empty")
    table.fill_at = None
    table.save(update_fields=["state", "closed_at", "closed_reason", "fill_at"])
    return [{"kind": "closed", "reason": "empty"}]


def _clean_name(name: str) -> str:
    name = normalize_table_name(name)
    problem = table_name_problem(name)
    if problem is not None:
        raise ServiceError(problem, code="bad_name")
    return name


def rename_table(*, user, table_id: int, name: str) -> Outcome:
    """The host names the table (empty: no name, pages show the code) until it closes."""
    name = _clean_name(name)
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        require_open(table)
        require_not_banned(user)
        table.name = name
        table.save(update_fields=["name"])
        return bump(table, [{"kind": "renamed"}])


def set_watching(*, user, table_id: int, allowed: bool) -> Outcome:
    """The host lets people without a seat watch, or not. Turned off, every watcher's socket
    is closed once the match is on (``WATCHING_OFF_CLOSE_CODE``; before the start people
    still come to the page to take a seat)."""
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        require_open(table)
        allowed = bool(allowed)
        if table.watchers_allowed == allowed:
            raise ServiceError(_("Watching is already on.") if allowed
                               else _("Watching is already off."), code="unchanged")
        table.watchers_allowed = allowed
        table.save(update_fields=["watchers_allowed"])
        return bump(table, [{"kind": "watching", "allowed": allowed}])


def start_with_bots(*, user, table_id: int) -> Outcome:
    """Seed 002: at a table that allows bots, the host may start as soon as a second person is
    seated; every free seat gets a bot at the table's level and the match starts."""
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        require_open(table)
        if table.state != Table.State.WAITING:
            raise ServiceError(_("The match has already started."), code="started")
        if not table.allow_bots:
            raise ServiceError(_("This table does not allow bots."), code="no_bots")
        if sum(s.user_id is not None for s in table_seats(table)) < 2:
            raise ServiceError(_("Bots can fill the seats once a second person sits down."),
                               code="too_few_people")
        now = timezone.now()
        return start_now(table, fill_with_bots(table, now, by="host"), now=now)


def start_match(*, user, table_id: int) -> Outcome:
    """The host starts when every seat is taken; options freeze; the first round is dealt."""
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        require_open(table)
        if table.state != Table.State.WAITING:
            raise ServiceError(_("The match has already started."), code="started")
        if table.seats.filter(user__isnull=True, is_bot=False).exists():
            raise ServiceError(_("Every seat must be taken first."), code="seats_empty")
        table.state = Table.State.PLAYING
        table.save(update_fields=["state"])
        events, match, engine = begin_match(table, number=1)
        return bump(table, events, engine, match=match, moved=True, new_turn=True)


def fill_with_bots(table: Table, now: datetime, *, by: str) -> list[dict]:
    events = []
    for seat in table_seats(table):
        if seat.empty:
            seat.is_bot, seat.bot_level, seat.joined_at = True, table.bot_level, now
            seat.save(update_fields=["is_bot", "bot_level", "joined_at"])
            events.append({"kind": "seat", "seat": seat.index, "action": "bot_added"})
    if events:
        events.append({"kind": "bot_filled", "by": by, "bots": len(events)})
    return events


def start_now(table: Table, events: list[dict], *, now: datetime | None = None) -> Outcome:
    """Start the first match of a waiting table whose every seat is taken; the table counts
    as bot-filled when bots sit at it (the league counts such tables at half)."""
    table.state, table.fill_at = Table.State.PLAYING, None
    table.bot_filled = any(s.is_bot for s in table_seats(table))
    table.save(update_fields=["state", "fill_at", "bot_filled"])
    more, match, engine = begin_match(table, number=1)
    return bump(table, events + more, engine, match=match, moved=True, new_turn=True, now=now)


def next_round(*, user, table_id: int) -> Outcome:
    """The host deals now rather than waiting for the table to deal by itself."""
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        match, engine = playing_match(table)
        return deal_next_round(table, match, engine)


def deal_next_round(table: Table, match: Match, engine: EngineMatch) -> Outcome:
    if table.paused:
        raise ServiceError(_("The table is paused."), code="paused")
    if engine.current is not None:
        raise ServiceError(_("The round is still being played."), code="round_on")
    if engine.over:
        raise ServiceError(_("The match is over: start a new match."), code="match_over")
    if table.seats.filter(user__isnull=True, is_bot=False).exists():
        raise ServiceError(_("Every seat must be taken first."), code="seats_empty")
    events: list[dict] = []
    deal(table, match, engine, events)
    return bump(table, events, engine, match=match, moved=True, new_turn=True)


def new_match(*, user, table_id: int) -> Outcome:
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        match, engine = playing_match(table)
        if not engine.over:
            raise ServiceError(_("The match is still on."), code="match_on")
        if table.seats.filter(user__isnull=True, is_bot=False).exists():
            raise ServiceError(_("Every seat must be taken first."), code="seats_empty")
        if table.rematch:
            table.rematch = None  # the host started it: a rematch offered is answered
            table.save(update_fields=["rematch"])
        events, match, engine = begin_match(table, number=match.number + 1)
        return bump(table, events, engine, match=match, moved=True, new_turn=True)


def pause(*, user, table_id: int) -> Outcome:
    """Freeze the table: no deal, no bot move, no clock."""
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        match, engine = playing_match(table)
        if table.paused:
            raise ServiceError(_("The table is already paused."), code="paused")
        table.paused, table.paused_by, table.paused_at = True, user, timezone.now()
        table.save(update_fields=["paused", "paused_by", "paused_at"])
        return bump(table, [{"kind": "paused"}], engine, match=match)


def resume(*, user, table_id: int) -> Outcome:
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        require_open(table)
        if not table.paused:
            raise ServiceError(_("The table is not paused."), code="not_paused")
        return unpause(table, [{"kind": "resumed"}])


def unpause(table: Table, events: list[dict]) -> Outcome:
    """The turn gets back exactly the time it had left when the table paused."""
    now = timezone.now()
    if table.paused_at and table.turn_started_at:
        table.turn_started_at += now - table.paused_at
    table.paused, table.paused_by, table.paused_at = False, None, None
    table.save(update_fields=["paused", "paused_by", "paused_at"])
    return bump(table, events, now=now)


def close_empty(*, table_id: int, now: datetime | None = None) -> Outcome | None:
    """Nobody came back for 2 minutes: the table closes; its history stays. A practice table
    is deleted instead (None): its person has left, and it counts for nothing."""
    now = now or timezone.now()
    with transaction.atomic():
        table = lock_table(table_id)
        if table.state == Table.State.CLOSED or table.empty_since is None \
                or table.empty_since + empty_limit() > now:
            raise NotDue()
        if table.practice:
            delete_table(table)
            return None
        table.state, table.closed_at = Table.State.CLOSED, now
        table.closed_reason = "empty"
        table.save(update_fields=["state", "closed_at", "closed_reason"])
        return bump(table, [{"kind": "closed", "reason": "empty"}], now=now)


def mark_unopened(*, table_id: int, now: datetime | None = None) -> None:
    """A waiting table nobody has opened for the empty-table limit since it was made (its host
    left before the page connected, say): nobody connected, so it leaves the lobby and is closed
    like any other (shared/specs/tables.md), counted from its creation. The sockets mark a
    table empty only when its last page closes, and this one never had a page."""
    now = now or timezone.now()
    with transaction.atomic():
        table = lock_table(table_id)
        if table.state != Table.State.WAITING or table.empty_since is not None \
                or table.created_at + empty_limit() > now \
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
        table = lock_table(table_id)
        require_open(table)
        if table.state != Table.State.WAITING:
            raise ServiceError(_("The match has already started."), code="started")
        table.state, table.closed_at, table.closed_reason = Table.State.CLOSED, now, reason
        table.save(update_fields=["state", "closed_at", "closed_reason"])
        return bump(table, [{"kind": "closed", "reason": reason}], now=now)


def touch(*, table_id: int, events: list[dict]) -> Outcome:
    """Bump the version for a change kept outside the table's rows (a chat message, a mute):
    every socket at the table then sends its fresh state."""
    with transaction.atomic():
        table = lock_table(table_id)
        return bump(table, events)
