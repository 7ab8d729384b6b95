"""The only code that changes a table's state.

Every function here takes the table's row lock, checks the caller's right to act (and, for a
move, the round and ply it was sent for), changes the rows, bumps the table's version with a
conditional UPDATE, and only after the commit rings the table's doorbell on the channel layer.
So a move sent twice, from two tabs, or racing a timer is applied once; the other call gets
:class:`StaleMove` ("the table has moved on").
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.rules.engine import END_NAMES, move_dict
from apps.rules.engine import Match as EngineMatch
from apps.rules.errors import RuleError
from apps.rules.presets import make_rules
from apps.rules.tiles import parse_tile

from . import game
from .messages import rule_message
from .models import Invitation, Match, Move, Round, Seat, Table

User = get_user_model()

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


# -- plumbing ---------------------------------------------------------------------------------

def _locked(table_id: int) -> Table:
    try:
        return Table.objects.select_for_update().get(pk=table_id)
    except Table.DoesNotExist:
        raise ServiceError(_("This table does not exist."), code="no_table") from None


def _bump(table: Table, events: list[dict]) -> Outcome:
    """Advance the version, guarded by a conditional UPDATE (SQLite ignores FOR UPDATE)."""
    old = table.version
    rows = Table.objects.filter(pk=table.pk, version=old).update(
        version=old + 1, updated_at=timezone.now())
    if rows != 1:
        raise StaleMove()
    table.version = old + 1
    outcome = Outcome(table.pk, table.version, events)
    transaction.on_commit(lambda: _ring(outcome))
    return outcome


def _ring(outcome: Outcome) -> None:
    from apps.realtime.notify import table_changed

    table_changed(outcome.table_id, outcome.version, outcome.events)
    from .scheduling import after_change

    after_change(outcome.table_id)


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


def _seat_of(table: Table, user) -> Seat:
    _require_signed_in(user)
    seat = table.seats.filter(user=user).first()
    if seat is None:
        raise ServiceError(_("You are not seated at this table."), code="not_seated")
    return seat


def _seat_users(table: Table) -> list[int | None]:
    return [None if s.is_bot else s.user_id for s in table.seats.order_by("index")]


# -- tables and seats -------------------------------------------------------------------------

def create_table(*, host, preset: str, players: int | None = None, options: dict | None = None,
                 public: bool = False, allow_bots: bool = False, bot_level: str = "medium",
                 bot_think_ms: int = 1000, name: str = "") -> Table:
    """Open a table; the host takes seat 0. Inconsistent options are refused with the reason."""
    _require_signed_in(host)
    options = {k: v for k, v in (options or {}).items() if v is not None}
    try:
        rules = make_rules({"preset": preset, **options}, players)
    except RuleError as err:
        raise ServiceError(rule_message(err), code="bad_options") from err
    if not 0 <= bot_think_ms <= 10_000:
        raise ServiceError(_("Bots think between 0 and 10 seconds."), code="bad_options")
    with transaction.atomic():
        for _attempt in range(5):
            try:
                with transaction.atomic():
                    table = Table.objects.create(
                        host=host, preset=preset, players=rules.players, options=options,
                        public=public, allow_bots=allow_bots, bot_level=bot_level,
                        bot_think_ms=bot_think_ms, name=name[:40])
                break
            except IntegrityError:  # an invite code collision: draw another
                continue
        else:
            raise ServiceError(_("Could not open a table; try again."), code="retry")
        Seat.objects.bulk_create(Seat(table=table, index=i) for i in range(rules.players))
        Seat.objects.filter(table=table, index=0).update(user=host, joined_at=timezone.now())
    return table


def find_by_code(code: str) -> Table:
    clean = "".join(ch for ch in (code or "").upper() if ch.isalnum())
    table = Table.objects.filter(code=clean).exclude(state=Table.State.CLOSED).first()
    if table is None:
        raise ServiceError(_("No open table has that code."), code="bad_code")
    return table


def join_table(*, user, table_id: int, code: str | None = None) -> Outcome:
    """Take the first free seat (arrival order): public tables, the code, or an invitation."""
    _require_signed_in(user)
    with transaction.atomic():
        table = _locked(table_id)
        _require_open(table)
        if table.seats.filter(user=user).exists():
            raise ServiceError(_("You are already seated here."), code="already_seated")
        invited = Invitation.objects.filter(table=table, invitee=user).first()
        if not (table.public or (code and code.upper() == table.code) or invited):
            raise ServiceError(_("This table is by invitation only."), code="invite_only")
        if table.state != Table.State.WAITING:
            raise ServiceError(_("The match has already started."), code="started")
        seat = table.seats.filter(user__isnull=True, is_bot=False).order_by("index").first()
        if seat is None:
            raise ServiceError(_("Every seat is taken."), code="full")
        seat.user, seat.joined_at = user, timezone.now()
        seat.save(update_fields=["user", "joined_at"])
        if invited and invited.answered_at is None:
            invited.answered_at = timezone.now()
            invited.save(update_fields=["answered_at"])
        return _bump(table, [{"kind": "seat", "seat": seat.index, "action": "joined"}])


def leave_table(*, user, table_id: int) -> Outcome:
    with transaction.atomic():
        table = _locked(table_id)
        seat = _seat_of(table, user)
        if table.host_id == user.pk:
            raise ServiceError(_("The host keeps their seat."), code="host_stays")
        if table.state != Table.State.WAITING:
            raise ServiceError(_("You can only leave before the match starts."),
                               code="started")
        seat.user, seat.joined_at = None, None
        seat.save(update_fields=["user", "joined_at"])
        return _bump(table, [{"kind": "seat", "seat": seat.index, "action": "left"}])


def add_bot(*, user, table_id: int, level: str | None = None) -> Outcome:
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        _require_open(table)
        if not table.allow_bots:
            raise ServiceError(_("This table does not allow bots."), code="no_bots")
        if table.state != Table.State.WAITING:
            raise ServiceError(_("Bots join before the match starts."), code="started")
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
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        if table.state != Table.State.WAITING:
            raise ServiceError(_("Bots leave before the match starts."), code="started")
        seat = table.seats.filter(index=seat_index, is_bot=True).first()
        if seat is None:
            raise ServiceError(_("There is no bot in that seat."), code="no_bot")
        seat.is_bot, seat.bot_level, seat.joined_at = False, "", None
        seat.save(update_fields=["is_bot", "bot_level", "joined_at"])
        return _bump(table, [{"kind": "seat", "seat": seat_index, "action": "bot_removed"}])


def invite(*, user, table_id: int, display_name: str) -> Invitation:
    from apps.accounts.selectors import user_by_display_name

    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        _require_open(table)
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


def _ring_user(user_id: int, table: Table) -> None:
    from apps.realtime.notify import user_notified

    user_notified(user_id, {"kind": "invitation", "table": table.pk, "code": table.code})


# -- the match --------------------------------------------------------------------------------

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
        events = _begin_match(table, number=1)
        return _bump(table, events)


def _begin_match(table: Table, number: int) -> list[dict]:
    rules = game.rules_for(table)
    match = Match.objects.create(table=table, number=number, rules=rules.options(),
                                 players=rules.players, scores=[0] * rules.sides,
                                 games=[0] * rules.sides)
    engine = EngineMatch(rules)
    rnd = game.deal_round(match, engine, _seat_users(table))
    events = [{"kind": "match_started", "match": number},
              {"kind": "round_started", "round": rnd.number, "opener": rnd.opener}]
    _auto_passes(table, match, rnd, engine, events)
    return events


def next_round(*, user, table_id: int) -> Outcome:
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        match, engine = _playing(table)
        if engine.current is not None:
            raise ServiceError(_("The round is still being played."), code="round_on")
        if engine.over:
            raise ServiceError(_("The match is over: start a new match."), code="match_over")
        rnd = game.deal_round(match, engine, _seat_users(table))
        events = [{"kind": "round_started", "round": rnd.number, "opener": rnd.opener}]
        _auto_passes(table, match, rnd, engine, events)
        return _bump(table, events)


def new_match(*, user, table_id: int) -> Outcome:
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        match, engine = _playing(table)
        if not engine.over:
            raise ServiceError(_("The match is still on."), code="match_on")
        return _bump(table, _begin_match(table, number=match.number + 1))


def pause(*, user, table_id: int) -> Outcome:
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        _playing(table)
        table.paused, table.paused_by = True, user
        table.save(update_fields=["paused", "paused_by"])
        return _bump(table, [{"kind": "paused"}])


def resume(*, user, table_id: int) -> Outcome:
    with transaction.atomic():
        table = _locked(table_id)
        _require_host(table, user)
        _require_open(table)
        if not table.paused:
            raise ServiceError(_("The table is not paused."), code="not_paused")
        table.paused, table.paused_by = False, None
        table.save(update_fields=["paused", "paused_by"])
        return _bump(table, [{"kind": "resumed"}])


def _playing(table: Table) -> tuple[Match, EngineMatch]:
    _require_open(table)
    if table.state != Table.State.PLAYING:
        raise ServiceError(_("The match has not started."), code="not_started")
    match = table.current_match
    return match, game.load(match)


# -- moves ------------------------------------------------------------------------------------

def play_move(*, user, table_id: int, round_number: int, ply: int, tile: str | None = None,
              end: str | None = None, is_pass: bool = False) -> Outcome:
    """A seated player's play or pass, sent for round ``round_number`` at move ``ply``."""
    with transaction.atomic():
        table = _locked(table_id)
        seat = _seat_of(table, user)
        return _apply(table, seat.index, round_number, ply, tile, end, is_pass,
                      by=Move.By.PLAYER, user=user)


def play_for_seat(*, table_id: int, round_number: int, ply: int, by: str) -> Outcome:
    """The table acts for a seat: a bot's choice, or (time out) the first tile that fits.

    Called by timers and bot tasks with the round and ply they were set for, so a late or
    repeated call finds the table moved on and changes nothing.
    """
    with transaction.atomic():
        table = _locked(table_id)
        match, engine = _playing(table)
        if table.paused:
            raise ServiceError(_("The table is paused."), code="paused")
        rnd = engine.current
        _check_position(engine, round_number, ply)
        seat_index = rnd.turn
        if by == Move.By.BOT:
            from apps.bots import choose_move
            from apps.rules.view import seat_view

            seat = table.seats.get(index=seat_index)
            if not seat.is_bot:
                raise StaleMove()
            view = seat_view(engine, seat_index)
            move = choose_move(view, seat.bot_level or table.bot_level, game.bot_rng(view))
        else:
            from apps.rules.engine import legal_dict

            move = legal_dict(*rnd.legal()[0])
        return _apply(table, seat_index, round_number, ply, move.get("play"), move.get("end"),
                      bool(move.get("pass")), by=by, user=None, match=match, engine=engine)


def _check_position(engine: EngineMatch, round_number: int, ply: int) -> None:
    last = len(engine.rounds) - 1
    if round_number != last or ply != len(engine.rounds[-1].history) \
            or engine.rounds[-1].result is not None:
        raise StaleMove()


def _apply(table: Table, seat_index: int, round_number: int, ply: int, tile: str | None,
           end: str | None, is_pass: bool, *, by: str, user, match: Match | None = None,
           engine: EngineMatch | None = None) -> Outcome:
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
        raise ServiceError(rule_message(err), code=err.code) from err
    db_round = match.rounds.get(number=round_number)
    events: list[dict] = []
    _record(engine, db_round, move, by=by, user=user, events=events)
    _auto_passes(table, match, db_round, engine, events)
    return _bump(table, events)


def _record(engine: EngineMatch, db_round: Round, move: tuple[int, int], *, by: str, user,
            events: list[dict]) -> None:
    rnd = engine.current
    seat, ply = rnd.turn, len(rnd.history)
    written = move_dict(seat, *move)
    engine.play(*move)
    Move.objects.create(round=db_round, ply=ply, seat=seat, tile=written.get("play", ""),
                        end=written.get("end", ""), is_pass=bool(written.get("pass")), by=by,
                        user=user)
    events.append({"kind": "move", "ply": ply, **written, "by": by})
    if rnd.result is not None:
        _settle(db_round.match, db_round, engine, events)


def _auto_passes(table: Table, match: Match, db_round: Round, engine: EngineMatch,
                 events: list[dict]) -> None:
    """Where passing is never a choice, the table writes the pass itself."""
    from apps.rules.engine import PASS_MOVE

    if table.preset not in AUTO_PASS_PRESETS:
        return
    while engine.current is not None and engine.current.legal() == [PASS_MOVE]:
        _record(engine, db_round, PASS_MOVE, by=Move.By.TABLE, user=None, events=events)


def _settle(match: Match, db_round: Round, engine: EngineMatch, events: list[dict]) -> None:
    from apps.rules.view import side_dict

    rnd = engine.rounds[-1]
    res = rnd.result
    db_round.result = {
        "reason": res.reason,
        "winner": side_dict(engine.rules, res.winner),
        "tie": res.tie,
        "pips": list(res.pips),
        "points": res.points,
        "fives": list(rnd.fives),
    }
    db_round.finished_at = timezone.now()
    db_round.save(update_fields=["result", "finished_at"])
    match.scores, match.games = engine.scores(), list(engine.games)
    fields = ["scores", "games"]
    if engine.over:
        match.winner, match.finished_at = engine.winner, timezone.now()
        fields += ["winner", "finished_at"]
    match.save(update_fields=fields)
    events.append({"kind": "round_over", "round": db_round.number, **db_round.result})
    if engine.over:
        events.append({"kind": "match_over", "winner": side_dict(engine.rules, engine.winner)})


# -- presence ---------------------------------------------------------------------------------

def connect(*, user, table_id: int, channel_name: str) -> Outcome | None:
    """A socket opened; the first tab of a seated person makes them connected."""
    from .models import Connection

    with transaction.atomic():
        table = _locked(table_id)
        was = Connection.objects.filter(table=table, user=user).exists()
        Connection.objects.update_or_create(channel_name=channel_name,
                                            defaults={"user": user, "table": table})
        if was or not table.seats.filter(user=user).exists():
            return None
        return _bump(table, [{"kind": "presence", "seat": _seat_of(table, user).index,
                              "connected": True}])


def disconnect(*, channel_name: str) -> Outcome | None:
    """A socket closed; the last tab of a seated person makes them away."""
    from .models import Connection

    with transaction.atomic():
        conn = Connection.objects.filter(channel_name=channel_name).first()
        if conn is None:
            return None
        table = _locked(conn.table_id)
        conn.delete()
        user = conn.user
        if Connection.objects.filter(table=table, user=user).exists():
            return None
        seat = table.seats.filter(user=user).first()
        if seat is None:
            return None
        return _bump(table, [{"kind": "presence", "seat": seat.index, "connected": False}])
