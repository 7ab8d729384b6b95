"""My games: every unfinished match a person sits in (live, adjourned and turn-based), those
where it is their move first, and the next game waiting for their move (docs/turn-based.md)."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone

from . import game
from .models import Match, Seat, Table
from .pace import move_time_label
from .state import display_name

#: The states of a table whose match is not over for good.
OPEN_STATES = (Table.State.WAITING, Table.State.PLAYING, Table.State.ADJOURNED)


def my_games(*, user, now: datetime | None = None) -> list[dict]:
    """One row per table where ``user`` sits whose match is unfinished (or not started, or
    offered again as a rematch): whose move it is, the time left, and the link's code. Rows
    where it is their move come first, the least time left first; then the others."""
    now = now or timezone.now()
    seats = list(Seat.objects.filter(user=user, table__state__in=OPEN_STATES,
                                     table__practice=False)
                 .select_related("table").order_by("table_id"))
    tables = [s.table for s in seats]
    latest: dict[int, Match] = {}
    for match in Match.objects.filter(table__in=tables).order_by("table_id", "number"):
        latest[match.table_id] = match
    rows = []
    for seat in seats:
        row = _row(seat, seat.table, latest.get(seat.table_id), now)
        if row is not None:
            rows.append(row)
    rows.sort(key=lambda r: (not r["your_move"], r["left_seconds"] is None,
                             r["left_seconds"] or 0, r["code"]))
    return rows


def _row(seat: Seat, table: Table, match: Match | None, now: datetime) -> dict | None:
    over = match is not None and match.finished_at is not None
    rematch = bool(table.rematch) and over
    if over and not rematch:
        return None
    turn = None
    if match is not None and not over and match.position is not None:
        engine = game.restore(match)
        if engine.current is not None:
            turn = engine.current.turn
    playing = table.state == Table.State.PLAYING and not table.paused
    your_move = playing and turn == seat.index and not seat.played_by_bot
    if table.state == Table.State.ADJOURNED:
        your_move = table.host_id == seat.user_id  # only the host's to take up again
    if rematch:
        accepted = table.rematch.get("accepted", [])
        your_move = seat.index not in accepted
    to_play = None
    if turn is not None:
        who = Seat.objects.filter(table=table, index=turn).select_related("user__profile").first()
        if who is not None:
            to_play = display_name(who.user) if who.user_id and not who.is_bot else None
    deadline = table.turn_deadline if playing and turn is not None else None
    left = None if deadline is None else max(0, int((deadline - now).total_seconds()))
    return {
        "table_id": table.pk, "code": table.code, "name": table.name or table.code,
        "preset": table.preset, "pace": table.pace, "state": table.state,
        "pace_label": move_time_label(table.move_seconds) if table.turn_based else "",
        "your_move": bool(your_move), "to_play": to_play, "turn_seat": turn,
        "bot_to_play": turn is not None and to_play is None,
        "deadline": deadline, "left_seconds": left, "rematch": rematch,
        "scores": list(match.scores) if match is not None else [],
        "adjourned_at": table.adjourned_at, "is_host": table.host_id == seat.user_id,
    }


def next_game(*, user, after_table_id: int | None = None,
              now: datetime | None = None) -> dict | None:
    """The first of :func:`my_games` where it is ``user``'s move, other than the table they
    are at; None when there is none."""
    for row in my_games(user=user, now=now):
        if row["your_move"] and row["table_id"] != after_table_id:
            return row
    return None


def page_words() -> dict:
    """What table.js shows of turn-based play, in the page's language."""
    from django.utils.translation import gettext as _

    return {
        "next_game": _("Next game where it's your move"),
        "on_vacation": _("on vacation until %(when)s"),
        "forfeited_help": _("Out of time too many times in a row: a bot plays this seat until "
                            "the match ends."),
        "timeouts": _("%(n)s of %(limit)s timeouts in a row"),
        "days_hours": _("%(d)s d %(h)s h"),
        "hours_minutes": _("%(h)s h %(m)s min"),
        "minutes": _("%(m)s min"),
        "adjourned": _("Adjourned: the host resumes the match from My games."),
        "adjourn": _("Adjourn the match"),
        "rematch": _("Rematch"),
        "rematch_accept": _("Accept the rematch"),
        "rematch_waiting": _("Rematch: %(n)s of %(total)s accepted"),
        "rematch_you_accepted": _("You accepted the rematch; waiting for the others."),
    }
