"""A match's rounds: dealing, recording a move (and the passes that follow by themselves), and
settling a round when it ends.
"""

from __future__ import annotations

from datetime import datetime

from django.db.models import F
from django.utils import timezone

from apps.accounts.models import Profile
from apps.rules.engine import PASS_MOVE, move_dict
from apps.rules.engine import Match as EngineMatch
from apps.rules.view import side_dict

from .. import game, hooks
from ..models import (
    Connection,
    Match,
    Move,
    Round,
    Table,
    record_time,
)
from .base import AUTO_PASS_PRESETS, mark_if_empty, seat_users, table_seats


def begin_match(table: Table, number: int) -> tuple[list[dict], Match, EngineMatch]:
    rules = game.rules_for(table)
    match = Match.objects.create(table=table, number=number, rules=rules.options(),
                                 players=rules.players, scores=[0] * rules.sides,
                                 games=[0] * rules.sides)
    engine = EngineMatch(rules)
    events = [{"kind": "match_started", "match": number}]
    for seat in table_seats(table):
        # Timeouts count in one match; a stand-in for too many of them leaves with it.
        if seat.timeouts or seat.forfeited:
            if seat.forfeited:
                seat.standin = False
                events.append({"kind": "seat", "seat": seat.index, "action": "back"})
            seat.timeouts, seat.forfeited = 0, False
            seat.save(update_fields=["timeouts", "forfeited", "standin"])
    deal(table, match, engine, events)
    return events, match, engine


def deal(table: Table, match: Match, engine: EngineMatch, events: list[dict]) -> None:
    rnd = game.deal_round(match, engine, seat_users(table))
    # The round's id goes with the position from now on; bump saves the position again
    # after the passes below.
    match.position = {"round_id": rnd.pk}
    events.append({"kind": "round_started", "round": rnd.number, "opener": rnd.opener})
    auto_passes(table, match, engine, events, now=timezone.now())


def record_move(table: Table, engine: EngineMatch, match: Match, move: tuple[int, int], *,
                by: str, user, events: list[dict], now: datetime,
                due_at: datetime | None = None) -> None:
    rnd = engine.current
    seat, ply = rnd.turn, len(rnd.history)
    written = {**move_dict(seat, *move), "at": record_time(now), "by": by}
    engine.play(*move, written=written)
    # Written with the version's other rows by ``base.bump``, in its one statement: every
    # call that records a move ends in a bump, in the same transaction.
    table.__dict__.setdefault("_pending_moves", []).append(dict(
        round_id=game.round_id(match), ply=ply, seat=seat, tile=written.get("play", ""),
        end=written.get("end", ""), is_pass=bool(written.get("pass")), by=by,
        user_id=user.pk if user else None, due_at=due_at, created_at=now))
    events.append({"kind": "move", "ply": ply, **written})
    if rnd.result is not None:
        _settle(table, match, engine, events, now=now)


def auto_passes(table: Table, match: Match, engine: EngineMatch, events: list[dict], *,
                now: datetime) -> None:
    """Where passing is never a choice, the table writes the pass itself; elsewhere it does so
    for a person who turned auto-pass on (their profile), when the pass is their only move."""
    everyone = table.preset in AUTO_PASS_PRESETS
    while engine.current is not None and engine.current.legal() == [PASS_MOVE]:
        if everyone:
            record_move(table, engine, match, PASS_MOVE, by=Move.By.TABLE, user=None,
                        events=events, now=now)
            continue
        user = _auto_passer(table, engine.current.turn)
        if user is None:
            return
        record_move(table, engine, match, PASS_MOVE, by=Move.By.PLAYER, user=user,
                    events=events, now=now)


def _auto_passer(table: Table, seat_index: int):
    """The person at ``seat_index`` if they play it themselves and turned auto-pass on."""
    seat = table_seats(table)[seat_index]
    if seat.user is None or seat.played_by_bot:
        return None
    profile = getattr(seat.user, "profile", None)
    return seat.user if profile is not None and profile.auto_pass else None


def _settle(table: Table, match: Match, engine: EngineMatch, events: list[dict], *,
            now: datetime) -> None:
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
    if engine.over:
        # What the apps above do with a finished match, in this transaction (the club pays it).
        hooks.match_finished(table=table, match=match, seats=table_seats(table), now=now)
        if table.turn_based:
            # Each finished turn-based match allows one more unfinished (pace.UNFINISHED_*).
            people = [s.user_id for s in table_seats(table) if s.user_id and not s.is_bot]
            Profile.objects.filter(user_id__in=people).update(
                turn_based_finished=F("turn_based_finished") + 1)
    events.append({"kind": "round_over", "round": len(engine.rounds) - 1, **result})
    if engine.over:
        events.append({"kind": "match_over", "winner": side_dict(engine.rules, engine.winner)})
    _seats_at_round_end(table, events)


def _seats_at_round_end(table: Table, events: list[dict]) -> None:
    """Reservations are honoured, leavers' and removed bots' seats free, returners play."""
    holding = set(Connection.objects.filter(table=table).values_list("user_id", flat=True))
    stays_watching = False
    for seat in table_seats(table):
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
        elif seat.standin and seat.away_since is None and not seat.forfeited:
            seat.standin = False
            changed = "back"
        if changed:
            seat.save()
            events.append({"kind": "seat", "seat": seat.index, "action": changed})
    if stays_watching:
        mark_if_empty(table, events, now=timezone.now())
