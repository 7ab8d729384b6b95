"""The contract every writer of a table's state keeps, in one place.

Every service function takes the table's row lock first (:func:`lock_table`), checks the caller's
right to act (and, for a move, the round and ply it was sent for: ``moves._check_position``),
changes the rows, and ends with :func:`bump`: it arms the clock, advances the version with a
conditional UPDATE (so a change racing another is refused with :class:`StaleMove` even where
the database ignores FOR UPDATE), writes the version's events and builds its snapshot
(``apps.tables.state``). Only after the commit is the snapshot stored and the table's doorbell
rung (:func:`ring`): a rolled-back change is never seen. So a move sent twice, from two tabs,
or racing a timer is applied once; the other call gets :class:`StaleMove`.

What other apps add to a change inside this transaction (a stake table's escrow, the club's
pay of a finished match, a ban) comes through ``apps.tables.hooks``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.selectors import is_guest
from apps.core import doorbell, snapshots
from apps.core.errors import ServiceError, StaleMove
from apps.rules.engine import Match as EngineMatch

from .. import game, hooks, pace, rows, scheduling, selectors, state
from ..models import (
    Connection,
    Match,
    Seat,
    Table,
)
from .clock import arm_clock

User = get_user_model()


#: Presets where drawing and passing happen by themselves: there is never a choice.
AUTO_PASS_PRESETS = frozenset({"draw", "block", "all-fives"})


@dataclass
class Outcome:
    """What a change made: the table's new version and its events, the snapshot built for it,
    and when and for which position the table next acts by itself."""

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


def lock_table(table_id: int, *, for_move: bool = False) -> Table:
    """The table's row, locked until the transaction ends.

    ``for_move``: a move's call, which changes the seats only through the objects
    :func:`table_seats` returns, reads the seats and the current match with the lock, in one round
    trip. Other calls read them when first needed, after changing rows of their own.
    """
    # The host's and pauser's names, which the snapshot needs, come with the seats when they
    # sit there (``state._seated``); only otherwise are they read.
    if for_move:
        table, seats, match = rows.locked_for_move(table_id)
        if table is not None:
            table._seat_list, table._locked_match = seats, match
    else:
        table = rows.locked_table(table_id)
    if table is None:
        raise ServiceError(_("This table does not exist."), code="no_table")
    return table


def bump(table: Table, events: list[dict], engine: EngineMatch | None = None, *,
         match: Match | None = None, moved: bool = False, new_turn: bool = False,
         now: datetime | None = None) -> Outcome:
    """Arm the clock, advance the version with a conditional UPDATE (SQLite ignores FOR UPDATE,
    a WHERE on the version it does not), write the version's events, keep the engine's position
    when the match ``moved``, and build the version's snapshot; store and ring after commit."""
    now = now or timezone.now()
    seats = table_seats(table)
    connected = state.connected_people(seats)
    if engine is None and table.state == Table.State.PLAYING:
        match = rows.current_match(table.pk)
        engine = game.restore(match)
    deadline_for, actor = arm_clock(table, engine, seats, connected, new_turn=new_turn, now=now)
    if table.person_clock and (new_turn or any(e.get("kind") in TURN_AGAIN for e in events)):
        events.append(turn_event(seats[engine.current.turn], table.turn_deadline,
                                 round_number=len(engine.rounds) - 1,
                                 ply=len(engine.current.history)))
    # What the apps above add in this transaction (a stake table's escrow follows its seats,
    # the notifications of its events): after the clock, so they hear every event of the
    # version, the ``turn`` it adds included; a hook may refuse the change.
    hooks.table_changing(table=table, seats=seats, events=events, now=now)
    old = table.version
    position = (match.pk, game.position_of(match, engine, game.round_id(match))) if moved \
        else None
    written = rows.write_version(
        table.pk, old=old,
        table={"version": old + 1, "updated_at": now, "turn_started_at": table.turn_started_at,
               "turn_deadline": table.turn_deadline, "person_clock": table.person_clock},
        event={"table_id": table.pk, "version": old + 1, "events": events, "created_at": now},
        moves=table.__dict__.pop("_pending_moves", []), position=position)
    if not written:
        raise StaleMove()
    table.version = old + 1
    previous = snapshots.load_version(table.pk, table.code, old)
    snapshot = state.build(table, engine=engine, match=match, seats=seats, previous=previous,
                           events=events)
    outcome = Outcome(table.pk, table.version, events, table.turn_deadline, deadline_for,
                      snapshot, actor)
    transaction.on_commit(lambda: ring(outcome))
    return outcome


#: Events after which the person to play at a turn-based table is told again (their clock
#: restarted or moved: a resumed table, a vacation begun or ended).
TURN_AGAIN = frozenset({"resumed", "vacation"})


def turn_event(seat: Seat, deadline: datetime, *, round_number: int, ply: int) -> dict:
    """``turn``: whose move it is now at a turn-based table, and until when, and the move it
    is (the same turn told again, a vacation moving its deadline, keeps its round and ply:
    docs/protocol.md)."""
    return {"kind": "turn", "seat": seat.index, "user": seat.user_id,
            "deadline": deadline.isoformat(), "round": round_number, "ply": ply}


def ring(outcome: Outcome) -> None:
    """After the commit: the snapshot and the doorbell, the next timer, then what the apps
    above do with the version's events (``hooks.on_committed``)."""
    def timer(pipe) -> None:
        scheduling.schedule_deadline(outcome.table_id, outcome.position, outcome.deadline,
                                     actor=outcome.actor, pipe=pipe)

    # One round trip: the snapshot, the timer and the doorbell (docs/performance.md).
    kept = doorbell.publish_state(outcome.table_id, outcome.snapshot,
                                  also=timer if outcome.deadline is not None else None)
    if kept is False:
        selectors.refused_snapshot(outcome.table_id, outcome.snapshot)
    hooks.committed(table_id=outcome.table_id, version=outcome.version, events=outcome.events)


def require_signed_in(user) -> None:
    if user is None or not user.is_authenticated:
        raise ServiceError(_("Sign in first."), code="not_signed_in")
    if not user.is_active:
        raise ServiceError(_("Your account cannot play now."), code="inactive")


def require_host(table: Table, user) -> None:
    require_signed_in(user)
    if table.host_id != user.pk:
        raise ServiceError(_("Only the host can do that."), code="not_host")


def require_open(table: Table) -> None:
    if table.state == Table.State.CLOSED:
        raise ServiceError(_("This table is closed."), code="closed")


def table_seats(table: Table) -> list[Seat]:
    """The table's seats, by index, with their people's profiles: read once per service call
    (the call's later steps change these same objects, so the list stays true)."""
    cached = getattr(table, "_seat_list", None)
    if cached is None:
        cached = table._seat_list = rows.seats_with_people(table.pk)
    return cached


def seat_of(table: Table, user) -> Seat:
    require_signed_in(user)
    seat = next((s for s in table_seats(table) if s.user_id == user.pk), None)
    if seat is None:
        raise ServiceError(_("You are not seated at this table."), code="not_seated")
    return seat


def seat_users(table: Table) -> list[int | None]:
    return [None if s.is_bot else s.user_id for s in table_seats(table)]


def is_present(table: Table, user_id: int) -> bool:
    """Whether ``user_id`` holds a socket at the table (for seating someone new)."""
    return Connection.objects.filter(table=table, user_id=user_id).exists()


def require_account(user, message: str) -> None:
    if is_guest(user):
        raise ServiceError(message, code="guest")


#: A table's states before it closes.
RUNNING = (Table.State.WAITING, Table.State.PLAYING)


def delete_table(table: Table) -> None:
    """A practice table goes with every row it has (seats, matches, rounds, moves, events,
    connections, chat): it counts for nothing, so nothing of it is kept."""
    Table.objects.filter(pk=table.pk).delete()


def round_in_progress(table: Table) -> bool:
    if table.state != Table.State.PLAYING:
        return False
    match = table.current_match
    return match is not None and match.rounds.filter(result__isnull=True,
                                                     voided=False).exists()


def playing_match(table: Table) -> tuple[Match, EngineMatch]:
    require_open(table)
    if table.state != Table.State.PLAYING:
        raise ServiceError(_("The match has not started."), code="not_started")
    match = table.__dict__.get("_locked_match") or rows.current_match(table.pk)
    return match, game.restore(match)


class NotDue(ServiceError):
    def __init__(self) -> None:
        super().__init__(_("Nothing is due at this table yet."), code="not_due")


def _players_holding(table: Table) -> bool:
    """Whether any seated person holds a socket at the table (watchers do not count)."""
    seated = Seat.objects.filter(table=table, user__isnull=False).values("user_id")
    return Connection.objects.filter(table=table, user_id__in=seated).exists()


def mark_if_empty(table: Table, events: list[dict], *, now: datetime) -> None:
    """No seated person holds a socket any more: the table pauses by itself and its 2-minute
    expiry starts, however many watchers stay."""
    # A turn-based table waits for its people however long nobody has its page open.
    if table.turn_based or table.empty_since is not None \
            or table.state in (Table.State.CLOSED, Table.State.ADJOURNED) \
            or _players_holding(table):
        return
    table.empty_since = now
    fields = ["empty_since"]
    if table.state == Table.State.PLAYING and not table.paused:
        table.paused, table.paused_by, table.paused_at = True, None, now
        fields += ["paused", "paused_by", "paused_at"]
        events.append({"kind": "paused", "empty": True})
    table.save(update_fields=fields)


#: A table's states while its match counts as unfinished (an adjourned one too).
UNFINISHED = (Table.State.WAITING, Table.State.PLAYING, Table.State.ADJOURNED)


def unfinished_matches(user_id: int) -> int:
    """Turn-based tables where this person sits whose match is not over (or not started)."""
    match_on = Match.objects.filter(table=OuterRef("table_id"), finished_at__isnull=True)
    any_match = Match.objects.filter(table=OuterRef("table_id"))
    return (Seat.objects.filter(user_id=user_id, turn_based=True, table__state__in=UNFINISHED)
            .filter(Q(Exists(match_on)) | ~Exists(any_match)).count())


def match_allowance(user) -> int:
    """How many unfinished turn-based matches this person may sit in: the base, plus one per
    turn-based match they finished, up to the most (apps/tables/pace.py)."""
    finished = getattr(getattr(user, "profile", None), "turn_based_finished", 0) or 0
    return min(pace.unfinished_base() + finished, pace.unfinished_max())


def require_room_for_match(user) -> None:
    """Refuse one more turn-based match to a person who has as many unfinished as allowed."""
    allowed = match_allowance(user)
    count = unfinished_matches(user.pk)
    if count >= allowed:
        raise ServiceError(
            _("You have %(count)d unfinished turn-based matches, the most you may have now "
              "(%(allowed)d): finish one first.") % {"count": count, "allowed": allowed},
            code="too_many_matches")


def require_not_banned(user) -> None:
    """A person some app refuses (moderation: a ban) may not act; the app says why."""
    message = hooks.refusal(user)
    if message is not None:
        raise ServiceError(message, code="banned")
