"""What this app hears from the apps below it, which never import it (``apps.py`` connects
these): a table's version (``apps.tables.hooks.on_change``, in the table's transaction, so a
notification is written with the move that caused it or not at all), and the signals the
others send after their commits (an invitation, a friend request, a partner invitation, a
tournament's table opened, a review done). Beat's sweep adds what no event says: a tournament
about to start (:func:`tournaments_soon`).

Nothing here may break what caused it: a table's hook that fails rolls back to its savepoint
and logs, and the signals' receivers log too.
"""

from __future__ import annotations

import functools
import logging
import math
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.tables.models import Connection, Match
from apps.tables.state import display_name

from . import kinds, services

log = logging.getLogger(__name__)

#: Besides the kinds' own table events, this app looks at a seated person arriving: what they
#: were told about the table is read then.
ARRIVING = "presence"


def _logged(receiver):
    @functools.wraps(receiver)
    def wrapper(*args, **kwargs):
        try:
            receiver(*args, **kwargs)
        except Exception:
            log.exception("notifications: %s failed", receiver.__name__)
    return wrapper


# -- the tables' versions --------------------------------------------------------------------------

def table_changing(*, table, seats, events: list[dict], now: datetime) -> None:
    """``hooks.on_change``: every version of every table, a move's included, so a version with
    none of the watched events costs one set lookup per event."""
    if not any(e.get("kind") in kinds.TABLE_EVENTS
               or (e.get("kind") == ARRIVING and e.get("connected")) for e in events):
        return
    try:
        with transaction.atomic():  # a savepoint: a failure here never fails the move
            _table_events(table, seats, events, now)
    except Exception:
        log.exception("notifications: table %s version %s", table.pk, table.version + 1)


def _table_events(table, seats, events: list[dict], now: datetime) -> None:
    seated = kinds.Seated(
        [(s.index, s.user_id) for s in seats if s.user_id is not None and not s.is_bot],
        connected=lambda: Connection.objects.filter(table_id=table.pk)
        .values_list("user_id", flat=True))
    version = table.version + 1  # the version being written
    base = {"table": table.name or table.code, "code": table.code, "table_id": table.pk}
    for event in events:
        name = event.get("kind")
        if name == ARRIVING:
            user_id = seated.user_at(event.get("seat"))
            if event.get("connected") and user_id is not None:
                services.seen_table(user_id=user_id, table_id=table.pk, now=now)
            continue
        for kind in kinds.TABLE_EVENTS.get(name, ()):
            recipients = kind.recipients(event, seated) if kind.recipients else []
            if not recipients:
                continue
            data = {**base, **{k: v for k, v in event.items()
                               if k != "kind" and isinstance(v, str | int | float | bool)}}
            if "round" in event and "ply" in event:
                # The same turn told again (a vacation moved its deadline) is not news.
                key = f"{kind.name}:t{table.pk}:r{event['round']}:p{event['ply']}"
            elif kind.per_version:
                key = f"{kind.name}:t{table.pk}:v{version}"
            else:
                number = _match_number(table.pk)
                data["number"] = number
                key = f"{kind.name}:t{table.pk}:m{number}"
            services.notify(kind=kind.name, recipients=recipients, key=key, data=data,
                            table_id=table.pk, now=now)


def _match_number(table_id: int) -> int:
    return Match.objects.filter(table_id=table_id).order_by("-number") \
        .values_list("number", flat=True).first() or 1


# -- the others' signals ---------------------------------------------------------------------------

def _name(user_id: int) -> str:
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.select_related("profile").filter(pk=user_id).first()
    return display_name(user) if user is not None else ""


@_logged
def invited(*, invitation_id: int, table_id: int, code: str, name: str, inviter_id: int,
            invitee_id: int, **_kw) -> None:
    services.notify(kind="invitation", recipients=[invitee_id], key=f"invitation:{invitation_id}",
                    data={"table": name or code, "code": code, "table_id": table_id,
                          "name": _name(inviter_id)}, table_id=table_id)


@_logged
def friend_requested(*, request_id: int, asker_id: int, asked_id: int, **_kw) -> None:
    services.notify(kind="friend_request", recipients=[asked_id],
                    key=f"friend_request:{request_id}", data={"name": _name(asker_id)})


@_logged
def partner_invited(*, invitation_id: int, tournament_id: int, inviter_id: int, invitee_id: int,
                    **_kw) -> None:
    from apps.tournaments.models import Tournament

    title = Tournament.objects.filter(pk=tournament_id).values_list("name", flat=True).first()
    services.notify(kind="partner_invitation", recipients=[invitee_id],
                    key=f"partner_invitation:{invitation_id}",
                    data={"name": _name(inviter_id), "tournament": title or "",
                          "tournament_id": tournament_id})


@_logged
def table_ready(*, tournament_id: int, game_id: int, table_id: int, code: str, name: str,
                user_ids, **_kw) -> None:
    from apps.tournaments.models import Tournament

    title = Tournament.objects.filter(pk=tournament_id).values_list("name", flat=True).first()
    services.notify(kind="tournament_table", recipients=user_ids,
                    key=f"tournament_table:g{game_id}",
                    data={"tournament": title or "", "tournament_id": tournament_id,
                          "table": name or code, "code": code, "table_id": table_id},
                    table_id=table_id)


@_logged
def review_done(*, review_id: int, table_id: int, code: str, number: int,
                requested_by_id: int | None, **_kw) -> None:
    if requested_by_id is None:
        return
    from apps.tables.models import Table

    name = Table.objects.filter(pk=table_id).values_list("name", flat=True).first()
    services.notify(kind="review_ready", recipients=[requested_by_id],
                    key=f"review_ready:{review_id}",
                    data={"table": name or code, "code": code, "number": number,
                          "table_id": table_id})


# -- what no event says ----------------------------------------------------------------------------

def tournaments_soon(*, now: datetime | None = None) -> int:
    """Beat: everyone entered in a tournament that starts within
    ``NOTIFY_TOURNAMENT_LEAD_SECONDS`` is told once (the key holds the tournament)."""
    from apps.tournaments.models import Entrant, Tournament

    now = now or timezone.now()
    lead = timedelta(seconds=settings.NOTIFY_TOURNAMENT_LEAD_SECONDS)
    soon = Tournament.objects.filter(state=Tournament.State.REGISTERING, starts_at__gt=now,
                                     starts_at__lte=now + lead)
    made = 0
    for tournament in soon:
        people = list(Entrant.objects.filter(tournament=tournament, left_out=False)
                      .values_list("user_id", flat=True))
        minutes = max(1, math.ceil((tournament.starts_at - now).total_seconds() / 60))
        made += services.notify(
            kind="tournament_soon", recipients=people, key=f"tournament_soon:{tournament.pk}",
            data={"tournament": tournament.name, "tournament_id": tournament.pk,
                  "minutes": minutes}, now=now)
    return made
