"""Adjourning a live match (docs/turn-based.md): the host closes the table for now with its
match, seats and scores kept; the host resumes it from My games at the same move; after
``pace.ADJOURNED_DAYS`` unresumed, the match ends without counting (the table closes: no
ratings, no pay, and fair play counts it neither way). Stake and tournament tables refuse
(their apps, through ``hooks.on_change``, on the ``adjourned`` event).
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.core.errors import ServiceError

from ..models import Table
from ..pace import adjourned_limit
from .base import (
    NotDue,
    Outcome,
    bump,
    lock_table,
    mark_if_empty,
    playing_match,
    require_host,
    table_seats,
)


def adjourn(*, user, table_id: int, now: datetime | None = None) -> Outcome:
    """The host adjourns the live match being played: everyone seated is told (``adjourned``),
    the table closes for play and no clock runs."""
    now = now or timezone.now()
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        match, engine = playing_match(table)
        if table.turn_based:
            raise ServiceError(_("A turn-based match waits for its players already."),
                               code="turn_based")
        if table.practice:
            raise ServiceError(_("A practice match cannot be adjourned."), code="practice")
        if engine.over:
            raise ServiceError(_("The match is over."), code="match_over")
        table.state, table.adjourned_at = Table.State.ADJOURNED, now
        table.paused, table.paused_by, table.paused_at = False, None, None
        table.empty_since = None
        table.save(update_fields=["state", "adjourned_at", "paused", "paused_by", "paused_at",
                                  "empty_since"])
        people = [s.user_id for s in table_seats(table) if s.user_id and not s.is_bot]
        return bump(table, [{"kind": "adjourned", "match": match.number, "people": people,
                             "until": (now + adjourned_limit()).isoformat()}],
                    engine, match=match, now=now)


def resume_adjourned(*, user, table_id: int, now: datetime | None = None) -> Outcome:
    """The host takes the adjourned match up again, at the same move with the same hands;
    the seated people are told (``resumed`` with ``adjourned``). The turn starts afresh, and
    nobody's absence counts from before: the presence rules start again now."""
    now = now or timezone.now()
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        if table.state != Table.State.ADJOURNED:
            raise ServiceError(_("This match is not adjourned."), code="not_adjourned")
        table.state, table.adjourned_at = Table.State.PLAYING, None
        table.save(update_fields=["state", "adjourned_at"])
        for seat in table_seats(table):
            if seat.away_since is not None:
                seat.away_since = now
                seat.save(update_fields=["away_since"])
        people = [s.user_id for s in table_seats(table) if s.user_id and not s.is_bot]
        events = [{"kind": "resumed", "adjourned": True, "people": people}]
        mark_if_empty(table, events, now=now)
        return bump(table, events, new_turn=True, now=now)


def end_adjourned(*, table_id: int, now: datetime | None = None) -> Outcome:
    """Not resumed within the limit: the adjourned match ends without counting."""
    now = now or timezone.now()
    with transaction.atomic():
        table = lock_table(table_id)
        if table.state != Table.State.ADJOURNED or table.adjourned_at is None \
                or table.adjourned_at + adjourned_limit() > now:
            raise NotDue()
        table.state, table.closed_at, table.closed_reason = (Table.State.CLOSED, now,
                                                             "adjourned_expired")
        table.save(update_fields=["state", "closed_at", "closed_reason"])
        return bump(table, [{"kind": "closed", "reason": "adjourned_expired"}], now=now)
