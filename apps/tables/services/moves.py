"""Moves: a person's play or pass, the table's own move when a deadline comes (a bot's choice,
or the first tile that fits for a person out of time), and the moves a person's preferences make
for them (auto-pass, "play automatically").
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.services import ensure_profile
from apps.bots import choose_move
from apps.core.errors import ServiceError, StaleMove
from apps.rules.engine import END_NAMES, legal_dict
from apps.rules.engine import Match as EngineMatch
from apps.rules.errors import RuleError
from apps.rules.tiles import parse_tile
from apps.rules.view import seat_view

from .. import game
from ..messages import rule_message
from ..models import (
    Match,
    Move,
    Seat,
    Table,
)
from . import outage
from .base import (
    NotDue,
    Outcome,
    bump,
    lock_table,
    playing_match,
    require_signed_in,
    seat_of,
    table_seats,
)
from .clock import DUE_TOLERANCE
from .lifecycle import deal_next_round
from .rounds import auto_passes, record_move


@dataclass(frozen=True, kw_only=True)
class SentMove:
    """A move as it reached the table: which seat plays what, for which position (the round
    and ply it was meant for: ``_check_position`` refuses it anywhere else)."""

    seat: int
    round_number: int
    ply: int
    tile: str | None = None
    end: str | None = None
    is_pass: bool = False

    @classmethod
    def legal(cls, move: dict, *, seat: int, position: tuple[int, int]) -> SentMove:
        """A move the table chose, as ``legal_dict`` writes it, for ``position``."""
        return cls(seat=seat, round_number=position[0], ply=position[1], tile=move.get("play"),
                   end=move.get("end"), is_pass=bool(move.get("pass")))


def play_move(*, user, table_id: int, round_number: int, ply: int, tile: str | None = None,
              end: str | None = None, is_pass: bool = False) -> Outcome:
    """A seated player's play or pass, sent for round ``round_number`` at move ``ply``."""
    with transaction.atomic():
        table = lock_table(table_id, for_move=True)
        seat = seat_of(table, user)
        if seat.forfeited:
            raise ServiceError(_("A bot plays your seat until the match ends: your time ran "
                                 "out too many times in a row."), code="standin")
        if seat.played_by_bot:
            raise ServiceError(_("A bot is playing your hand until the round ends."),
                               code="standin")
        if seat.timeouts:
            seat.timeouts = 0  # the person plays again: their timeouts no longer run on
            seat.save(update_fields=["timeouts"])
        sent = SentMove(seat=seat.index, round_number=round_number, ply=ply, tile=tile,
                        end=end, is_pass=is_pass)
        return _apply(table, sent, by=Move.By.PLAYER, user=user)


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
        table = lock_table(table_id, for_move=True)
        if table.state != Table.State.PLAYING or table.paused or table.turn_deadline is None:
            raise NotDue()
        if table.turn_deadline - DUE_TOLERANCE > now:
            raise NotDue()
        if table.person_clock and outage.beat_missing(now=now):
            # Beat is away: maybe the whole site was down, and that time is not the person's.
            # Beat's next sweep moves their clock on by the outage, then acts.
            raise NotDue()
        match, engine = playing_match(table)
        last = engine.rounds[-1]
        here = (len(engine.rounds) - 1, len(last.history))
        if round_number is not None and (round_number, ply) != here:
            raise StaleMove()
        if last.result is not None:
            return deal_next_round(table, match, engine)
        seat = table_seats(table)[last.turn]
        if seat.played_by_bot:
            if choice is None or choice[0] != (table.version, *here):
                # The table moved on while the bot thought (or there was nothing to think
                # about then): think again, now, on this position.
                choice = ((table.version, *here), _decide(table, engine, seat))
            move, by = choice[1], Move.By.BOT
        else:
            move = legal_dict(*last.legal()[0])
            by = Move.By.TABLE
        timed_out = timeout_events(table, seat, match) if table.person_clock else []
        return _apply(table, SentMove.legal(move, seat=seat.index, position=here), by=by,
                      user=None, match=match, engine=engine, due_at=table.turn_deadline,
                      events=timed_out)


def timeout_events(table: Table, seat: Seat, match: Match) -> list[dict]:
    """A person's time ran out at a turn-based table: the table plays for them (seed 000's
    rule) and they are told; after the host's number of timeouts in a row, a stand-in takes
    their seat to the match's end, which fair play counts as abandoning it (the ``standin``
    seat event)."""
    seat.timeouts += 1
    moved = Move.objects.filter(round__match=match, seat=seat.index,
                                by=Move.By.PLAYER).exists()
    first_match = match.number == 1
    events = [{"kind": "timeout", "seat": seat.index, "user": seat.user_id,
               "count": seat.timeouts, "limit": table.timeouts_to_standin,
               # Whether they moved by themselves in this match yet, and whether it is the
               # table's first match (a turn-based tournament's no-show: not moved, first).
               "moved": moved, "first": first_match}]
    fields = ["timeouts"]
    if seat.timeouts >= table.timeouts_to_standin:
        seat.standin = seat.forfeited = True
        fields += ["standin", "forfeited"]
        events += [{"kind": "seat", "seat": seat.index, "action": "standin"},
                   {"kind": "seat_to_standin", "seat": seat.index, "user": seat.user_id,
                    "timeouts": seat.timeouts}]
    seat.save(update_fields=fields)
    return events


def _decide(table: Table, engine: EngineMatch, seat: Seat) -> dict:
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


def _apply(table: Table, sent: SentMove, *, by: str, user, match: Match | None = None,
           engine: EngineMatch | None = None, due_at: datetime | None = None,
           events: list[dict] | None = None) -> Outcome:
    if match is None:
        match, engine = playing_match(table)
    if table.paused:
        raise ServiceError(_("The table is paused."), code="paused")
    _check_position(engine, sent.round_number, sent.ply)
    rnd = engine.current
    try:
        if sent.is_pass:
            move = rnd.check_pass(sent.seat)
        else:
            if sent.end is not None and sent.end not in END_NAMES:
                raise ServiceError(_("Choose end A, B, C or D."), code="bad_end")
            tile_id = parse_tile(sent.tile)[0]
            move = rnd.check_play(sent.seat, tile_id,
                                  None if sent.end is None else END_NAMES.index(sent.end))
    except RuleError as err:
        code = "bad_tile" if err.code == "bad_record" else err.code
        raise ServiceError(rule_message(err), code=code) from err
    now = timezone.now()
    events = list(events or [])
    record_move(table, engine, match, move, by=by, user=user, events=events, due_at=due_at, now=now)
    auto_passes(table, match, engine, events, now=now)
    return bump(table, events, engine, match=match, moved=True, new_turn=True, now=now)


def set_preferences(*, user, table_id: int | None = None, auto_pass: bool | None = None,
                    learning_mode: bool | None = None,
                    auto_play: bool | None = None) -> Outcome | None:
    """Save a person's table preferences; turning auto-pass on while their only move at
    ``table_id`` is a pass passes at once, and turning "play automatically" on while it is
    their turn there plays for them at once (by the table, the first tile that fits)."""
    require_signed_in(user)
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
        table = lock_table(table_id, for_move=True)
        if table.state != Table.State.PLAYING or table.paused:
            return None
        match, engine = playing_match(table)
        if engine.current is None or engine.current.result is not None:
            return None
        events: list[dict] = []
        now = timezone.now()
        auto_passes(table, match, engine, events, now=now)
        if not events:
            return None
        return bump(table, events, engine, match=match, moved=True, new_turn=True, now=now)


def _play_for(user, table_id: int) -> Outcome | None:
    """The table's move for ``user`` when it is their turn at ``table_id`` (else nothing)."""
    with transaction.atomic():
        table = lock_table(table_id, for_move=True)
        if table.state != Table.State.PLAYING or table.paused:
            return None
        match, engine = playing_match(table)
        rnd = engine.current
        if rnd is None or rnd.result is not None:
            return None
        seat = table_seats(table)[rnd.turn]
        if seat.user_id != user.pk or seat.played_by_bot:
            return None
        move = legal_dict(*rnd.legal()[0])
        here = (len(engine.rounds) - 1, len(rnd.history))
        return _apply(table, SentMove.legal(move, seat=seat.index, position=here),
                      by=Move.By.TABLE, user=None, match=match, engine=engine)
