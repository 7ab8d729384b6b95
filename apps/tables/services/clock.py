"""When a table next acts by itself: the turn's deadline, the graces of people away, and the
limits of shared/specs/tables.md (5 s / 30 s on a turn, 2 minutes away, 2 minutes empty).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings

from apps.rules.engine import Match as EngineMatch

from ..models import (
    Seat,
    Table,
)

#: A disconnected person's grace on their turn: with a turn time, and without one
#: (tables.md: 5 s and 30 s; settings only so that end-to-end tests need not wait minutes).
GRACE_TIMED = timedelta(seconds=5)


GRACE_UNTIMED = timedelta(seconds=30)


#: Away this long, a bot stands in for the rest of the round.
AWAY_LIMIT = timedelta(minutes=2)


#: Nobody connected this long, the table closes.
EMPTY_LIMIT = timedelta(minutes=2)


def limit_setting(name: str, default: timedelta) -> timedelta:
    seconds = getattr(settings, name, None)
    return default if seconds is None else timedelta(seconds=seconds)


def _grace_timed() -> timedelta:
    return limit_setting("PRESENCE_GRACE_TIMED_SECONDS", GRACE_TIMED)


def _grace_untimed() -> timedelta:
    return limit_setting("PRESENCE_GRACE_UNTIMED_SECONDS", GRACE_UNTIMED)


def away_limit() -> timedelta:
    return limit_setting("PRESENCE_AWAY_LIMIT_SECONDS", AWAY_LIMIT)


def empty_limit() -> timedelta:
    return limit_setting("PRESENCE_EMPTY_LIMIT_SECONDS", EMPTY_LIMIT)


#: Bots whose search takes tens of milliseconds or more: they think before the row lock is
#: taken, on a Celery queue of their own, so a search never delays another table's deadline.
SLOW_BOT_LEVELS = frozenset({"expert", "master"})


#: Timers fire a hair early at most; a deadline this close counts as due.
DUE_TOLERANCE = timedelta(milliseconds=50)


def arm_clock(table: Table, engine: EngineMatch | None, seats: list[Seat],
              connected: set[int], *, new_turn: bool,
              now: datetime) -> tuple[tuple[int, int] | None, str | None]:
    """Set when the table next acts by itself; return the position that deadline is for.

    A bot seat acts after the think time; a person's turn runs out after the turn time, or
    sooner when they are away (5 s with a turn time, 30 s without, counted from the later of
    the turn's start and their leaving); between rounds the next deal comes after the result
    has been shown. Paused or closed tables have no deadline.
    """
    table.person_clock = False
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
    if table.turn_based:
        return position, _arm_turn_based(table, seat)
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


def _arm_turn_based(table: Table, seat: Seat) -> str:
    """A person's turn at a turn-based table: ``move_seconds`` from the turn's start, plus
    the part of their vacation that fell in it; never a grace for being away."""
    start = table.turn_started_at
    deadline = start + timedelta(seconds=table.move_seconds or 86400)
    if table.vacation_allowed:
        deadline += vacation_extension(seat, start, deadline)
    if _plays_automatically(seat):
        deadline = min(deadline, start + timedelta(milliseconds=table.bot_think_ms))
    else:
        table.person_clock = True
    table.turn_deadline = deadline
    return "table"


def vacation_extension(seat: Seat, start: datetime, deadline: datetime) -> timedelta:
    """How long the person's vacation stopped a clock that ran from ``start`` to ``deadline``:
    the clock stops from the later of the turn's start and the vacation's to the vacation's
    end (a stopped vacation ends when it was stopped). A pure function of the rows, so that
    arming the clock again at any time gives the same deadline."""
    profile = getattr(seat.user, "profile", None) if seat.user_id else None
    since = getattr(profile, "vacation_from", None)
    until = getattr(profile, "vacation_until", None)
    if since is None or until is None:
        return timedelta(0)
    stopped = max(since, start)
    if stopped >= deadline or until <= stopped:
        return timedelta(0)
    return until - stopped


def _plays_automatically(seat: Seat) -> bool:
    profile = getattr(seat.user, "profile", None) if seat.user_id else None
    return bool(getattr(profile, "auto_play", False))
