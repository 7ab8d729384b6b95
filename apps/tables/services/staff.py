"""Staff actions on tables. ``apps.moderation.services`` checks the staff right and writes the
moderation log; it calls these inside its own transaction, so a change and its log row commit
together.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.core.errors import ServiceError

from .. import game
from ..models import (
    Round,
    Table,
)
from .base import Outcome, bump, lock_table, require_open, round_in_progress


def close_by_staff(*, table_id: int, reason: str, now: datetime | None = None) -> Outcome:
    """Staff close a table: the round in progress is voided (kept, never counted), the clock
    stops, and every socket shows the closure and why."""
    now = now or timezone.now()
    with transaction.atomic():
        table = lock_table(table_id)
        require_open(table)
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
        return bump(table, [{"kind": "closed", "reason": "staff", "voided": bool(voided)}],
                    engine, match=match, now=now)


def update_by_staff(*, table_id: int, hidden: bool | None = None,
                    name: str | None = None) -> Outcome:
    """Staff hide (or show) a table in the lobby, or rename it."""
    with transaction.atomic():
        table = lock_table(table_id)
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
        return bump(table, events)


def remove_seated_player(*, table_id: int, seat_index: int) -> Outcome:
    """Staff remove a person from a seat, as if they left: at once outside a round; during
    one, a bot plays their hand out and the seat frees when the round ends."""
    with transaction.atomic():
        table = lock_table(table_id)
        seat = table.seats.filter(index=seat_index).first()
        if seat is None or seat.user_id is None or seat.is_bot:
            raise ServiceError(_("Nobody sits in that seat."), code="no_player")
        if round_in_progress(table):
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
        return bump(table, [{"kind": "seat", "seat": seat_index, "action": action,
                              "by": "staff"}])
