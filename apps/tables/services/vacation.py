"""Vacation (docs/turn-based.md): every member has ``pace.VACATION_DAYS`` a calendar year; while
on vacation their clocks at turn-based tables stop (``clock.vacation_extension``), and their
seat says until when. A table whose host did not allow vacation keeps its clock running.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.models import Profile
from apps.accounts.services import ensure_profile
from apps.core.errors import ServiceError

from .. import game, rows
from ..models import Seat, Table
from ..pace import vacation_days
from .base import (
    Outcome,
    bump,
    lock_table,
    require_account,
    require_signed_in,
    table_seats,
)
from .clock import vacation_extension


def vacation_left(profile: Profile, now: datetime) -> timedelta:
    """What is left of this year's allowance."""
    used = profile.vacation_used if profile.vacation_year == now.year else 0
    return max(timedelta(0), timedelta(days=vacation_days()) - timedelta(seconds=used))


def on_vacation(profile: Profile, now: datetime) -> bool:
    return profile.vacation_until is not None and profile.vacation_from is not None \
        and profile.vacation_from <= now < profile.vacation_until


def start_vacation(*, user, days: float, now: datetime | None = None) -> list[Outcome]:
    """Start a vacation of ``days`` now; their clocks at turn-based tables stop until it ends.
    Refused beyond what is left of the year's allowance, or while already on vacation."""
    require_signed_in(user)
    require_account(user, _("Sign up to take a vacation from turn-based games."))
    now = now or timezone.now()
    with transaction.atomic():
        profile = Profile.objects.select_for_update().get(pk=ensure_profile(user).pk)
        if on_vacation(profile, now):
            raise ServiceError(_("You are already on vacation."), code="on_vacation")
        length = timedelta(days=days) if isinstance(days, int | float) and days > 0 else None
        left = vacation_left(profile, now)
        if length is None or length > left:
            raise ServiceError(_("You have %(days)s vacation days left this year.")
                               % {"days": _days(left)}, code="bad_vacation")
        before = (profile.vacation_from, profile.vacation_until)
        if profile.vacation_year != now.year:
            profile.vacation_year, profile.vacation_used = now.year, 0
        profile.vacation_used += int(length.total_seconds())
        profile.vacation_from, profile.vacation_until = now, now + length
        profile.save(update_fields=["vacation_from", "vacation_until", "vacation_year",
                                    "vacation_used"])
    return _tell_tables(user, profile.vacation_until, fold=before, now=now)


def stop_vacation(*, user, now: datetime | None = None) -> list[Outcome]:
    """End a vacation now: what is left of it returns to the year's allowance, and the clocks
    run again with the time each had left."""
    require_signed_in(user)
    now = now or timezone.now()
    with transaction.atomic():
        profile = Profile.objects.select_for_update().get(pk=ensure_profile(user).pk)
        if not on_vacation(profile, now):
            raise ServiceError(_("You are not on vacation."), code="not_on_vacation")
        unused = int((profile.vacation_until - now).total_seconds())
        if profile.vacation_year == now.year:
            profile.vacation_used = max(0, profile.vacation_used - unused)
        profile.vacation_until = now
        profile.save(update_fields=["vacation_until", "vacation_used"])
    return _tell_tables(user, None, fold=None, now=now)


def _tell_tables(user, until: datetime | None, *, fold, now: datetime) -> list[Outcome]:
    """A new version at each running turn-based table the person sits at (its seat shows the
    vacation, its clock is armed again). ``fold``: the previous vacation, whose stop is kept
    in the turn's start before the new one replaces it on the profile."""
    table_ids = sorted(Seat.objects.filter(user=user, turn_based=True,
                                           table__state=Table.State.PLAYING)
                       .values_list("table_id", flat=True))
    out = []
    for table_id in table_ids:
        with transaction.atomic():
            table = lock_table(table_id)
            seat = next(s for s in table_seats(table) if s.user_id == user.pk)
            if fold is not None and fold[0] is not None and table.person_clock \
                    and table.turn_started_at is not None and _turn_of(table) == seat.index:
                _fold(table, seat, fold)
            event = {"kind": "vacation", "seat": seat.index, "user": user.pk,
                     "until": until.isoformat() if until else None}
            out.append(bump(table, [event], now=now))
    return out


def _turn_of(table: Table) -> int | None:
    match = rows.current_match(table.pk)
    engine = game.restore(match) if match is not None else None
    return engine.current.turn if engine is not None and engine.current is not None else None


def _fold(table: Table, seat: Seat, before: tuple) -> None:
    """Keep an earlier vacation's stop of this turn's clock in the turn's start."""
    profile = seat.user.profile
    kept = (profile.vacation_from, profile.vacation_until)
    profile.vacation_from, profile.vacation_until = before
    start = table.turn_started_at
    deadline = start + timedelta(seconds=table.move_seconds or 0)
    extra = vacation_extension(seat, start, deadline) if table.vacation_allowed else timedelta(0)
    profile.vacation_from, profile.vacation_until = kept
    if extra:
        table.turn_started_at = start + extra
        table.save(update_fields=["turn_started_at"])


def _days(left: timedelta) -> str:
    return f"{left.total_seconds() / 86400:g}"
