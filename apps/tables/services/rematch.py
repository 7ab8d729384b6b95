"""Rematch (docs/turn-based.md): when a match ends, any person seated offers the same seats and
options again; the offer stays open (days, at a turn-based table) and the next match starts at
the same table once every person seated has accepted. Bots accept at once; watchers are at
the same table already, so they follow. Stake and tournament tables refuse (their apps, on the
``rematch_offered`` event).
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.core.errors import ServiceError

from .base import Outcome, bump, lock_table, playing_match, seat_of, table_seats
from .rounds import begin_match


def rematch(*, user, table_id: int, now: datetime | None = None) -> Outcome:
    """Offer a rematch of the match just over, or accept the one offered; the next match
    starts once every person seated has accepted (``rematch_offered``, ``rematch_accepted``,
    ``rematch_started``)."""
    now = now or timezone.now()
    with transaction.atomic():
        table = lock_table(table_id)
        seat = seat_of(table, user)
        match, engine = playing_match(table)
        if not engine.over:
            raise ServiceError(_("The match is still on."), code="match_on")
        seats = table_seats(table)
        if any(s.empty or s.leaving for s in seats):
            raise ServiceError(_("Every seat must be taken first."), code="seats_empty")
        offer = table.rematch if (table.rematch or {}).get("match") == match.number else None
        events: list[dict] = []
        if offer is None:
            offer = {"match": match.number, "by": seat.index,
                     "accepted": sorted({seat.index} | {s.index for s in seats if s.is_bot})}
            events.append({"kind": "rematch_offered", "match": match.number,
                           "seat": seat.index, "user": user.pk,
                           "people": [s.user_id for s in seats
                                      if s.user_id and not s.is_bot and s.index != seat.index]})
        elif seat.index in offer["accepted"]:
            raise ServiceError(_("You accepted the rematch already."), code="accepted")
        else:
            offer = {**offer, "accepted": sorted(set(offer["accepted"]) | {seat.index})}
            events.append({"kind": "rematch_accepted", "match": match.number,
                           "seat": seat.index, "user": user.pk})
        if set(offer["accepted"]) >= {s.index for s in seats}:
            table.rematch = None
            table.save(update_fields=["rematch"])
            more, new, new_engine = begin_match(table, number=match.number + 1)
            events.append({"kind": "rematch_started", "match": new.number,
                           "people": [s.user_id for s in seats if s.user_id and not s.is_bot]})
            return bump(table, events + more, new_engine, match=new, moved=True,
                        new_turn=True, now=now)
        table.rematch = offer
        table.save(update_fields=["rematch"])
        return bump(table, events, engine, match=match, now=now)
