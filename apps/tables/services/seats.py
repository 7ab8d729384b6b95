"""Who sits where: joining (or reserving a bot's seat during a round), leaving, the host's bots,
invitations, a bot standing in for a person away, and a person's new name reaching the tables
they sit at.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.selectors import user_by_display_name
from apps.core.doorbell import user_notified
from apps.core.errors import ServiceError

from .. import events, hooks
from ..models import (
    Invitation,
    Seat,
    Table,
)
from .base import (
    RUNNING,
    NotDue,
    Outcome,
    bump,
    is_present,
    lock_table,
    mark_if_empty,
    require_host,
    require_not_banned,
    require_open,
    require_room_for_match,
    require_signed_in,
    round_in_progress,
    seat_of,
    table_seats,
)
from .clock import away_limit
from .lifecycle import close_emptied, start_now, touch


def join_table(*, user, table_id: int, code: str | None = None) -> Outcome:
    """Take the first free seat (arrival order): public tables, the code, or an invitation.

    During a match a person may take a bot's seat: it is reserved for them and becomes theirs
    when the round ends.
    """
    require_signed_in(user)
    require_not_banned(user)
    with transaction.atomic():
        table = lock_table(table_id)
        require_open(table)
        if table.seats.filter(user=user).exists():
            raise ServiceError(_("You are already seated here."), code="already_seated")
        refused = hooks.join_refusal(table=table, user=user)
        if refused is not None:
            raise ServiceError(refused, code="refused")
        if table.turn_based:
            require_room_for_match(user)
        _refuse_practice(table)
        invited = Invitation.objects.filter(table=table, invitee=user).first()
        if not (table.public or (code and code.upper() == table.code) or invited):
            raise ServiceError(_("This table is by invitation only."), code="invite_only")
        if table.seats.filter(reserved_for=user).exists():
            raise ServiceError(_("A seat is already reserved for you."), code="already_seated")
        seat = table.seats.filter(user__isnull=True, is_bot=False).order_by("index").first()
        reserved = False
        if seat is None and table.state == Table.State.PLAYING:
            seat = table.seats.filter(is_bot=True, reserved_for__isnull=True,
                                      bot_leaving=False).order_by("index").first()
            reserved = seat is not None
        if seat is None:
            raise ServiceError(_("Every seat is taken."), code="full")
        if reserved and not round_in_progress(table):
            reserved = False
            seat.is_bot, seat.bot_level = False, ""
        if reserved:
            seat.reserved_for = user
            seat.save(update_fields=["reserved_for"])
        else:
            seat.user, seat.joined_at = user, timezone.now()
            seat.away_since = None if is_present(table, user.pk) else seat.joined_at
            seat.save(update_fields=["user", "joined_at", "is_bot", "bot_level",
                                     "away_since"])
            if seat.away_since is None and table.empty_since is not None:
                # A watcher who sits down holds the table again: it is no longer empty.
                table.empty_since = None
                table.save(update_fields=["empty_since"])
        if invited and invited.answered_at is None:
            invited.answered_at = timezone.now()
            invited.save(update_fields=["answered_at"])
        action = "reserved" if reserved else "joined"
        events = [{"kind": "seat", "seat": seat.index, "action": action}]
        if table.quick and table.state == Table.State.WAITING \
                and not any(s.empty for s in table_seats(table)):
            return start_now(table, events)
        return bump(table, events)


def _refuse_practice(table: Table) -> None:
    if table.practice:
        raise ServiceError(_("A practice table is for one person against bots."),
                           code="practice")


def leave_table(*, user, table_id: int) -> Outcome:
    """Before the match, the seat frees at once; during a round a bot plays the hand out.

    At a quick table the host is only whoever came first, so they may leave too: the host
    passes to the next person seated, and a waiting quick table nobody sits at any more closes.
    """
    with transaction.atomic():
        table = lock_table(table_id)
        seat = seat_of(table, user)
        if table.host_id == user.pk and not table.quick:
            raise ServiceError(_("The host keeps their seat."), code="host_stays")
        events = vacate(table, seat)
        if seat.user_id is None and is_present(table, user.pk):
            # Staying on the page they are a watcher now: with no player left it is empty.
            mark_if_empty(table, events, now=timezone.now())
        return bump(table, events)


def vacate(table: Table, seat: Seat) -> list[dict]:
    """Free a person's seat (at the round's end when one is being played); the events."""
    user_id = seat.user_id
    if round_in_progress(table):
        seat.leaving = seat.standin = True
        seat.save(update_fields=["leaving", "standin"])
        events = [{"kind": "seat", "seat": seat.index, "action": "leaving"}]
    else:
        seat.user, seat.joined_at, seat.away_since = None, None, None
        seat.standin = seat.leaving = False
        seat.save(update_fields=["user", "joined_at", "away_since", "standin", "leaving"])
        events = [{"kind": "seat", "seat": seat.index, "action": "left"}]
    if table.quick and table.host_id == user_id:
        events += _pass_quick_host(table)
    return events


def _pass_quick_host(table: Table) -> list[dict]:
    """The host left a quick table: the next person seated hosts it. With nobody left it
    closes at once (with the reason of a table nobody holds), unless a round is being played:
    the bots play it out and the table closes with the others nobody holds."""
    heir = next((s for s in table_seats(table) if s.user_id is not None
                 and s.user_id != table.host_id and not s.leaving), None)
    if heir is not None:
        table.host = heir.user
        table.save(update_fields=["host"])
        return [{"kind": "host", "seat": heir.index}]
    if round_in_progress(table):
        return []
    return close_emptied(table)


def add_bot(*, user, table_id: int, level: str | None = None) -> Outcome:
    """The host seats a bot in the first free seat, before a match or between rounds."""
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        require_open(table)
        if not table.allow_bots:
            raise ServiceError(_("This table does not allow bots."), code="no_bots")
        if round_in_progress(table):
            raise ServiceError(_("Bots join between rounds."), code="round_on")
        seats = list(table.seats.order_by("index"))
        if sum(s.is_bot for s in seats) >= len(seats) - 1:
            raise ServiceError(_("At least one seat is for a person."), code="too_many_bots")
        seat = next((s for s in seats if s.empty), None)
        if seat is None:
            raise ServiceError(_("Every seat is taken."), code="full")
        seat.is_bot, seat.bot_level = True, level or table.bot_level
        seat.joined_at = timezone.now()
        seat.save(update_fields=["is_bot", "bot_level", "joined_at"])
        return bump(table, [{"kind": "seat", "seat": seat.index, "action": "bot_added"}])


def remove_bot(*, user, table_id: int, seat_index: int) -> Outcome:
    """The host removes a bot: at once before a round, at the round's end during one."""
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        seat = table.seats.filter(index=seat_index, is_bot=True).first()
        if seat is None:
            raise ServiceError(_("There is no bot in that seat."), code="no_bot")
        if round_in_progress(table):
            seat.bot_leaving = True
            seat.save(update_fields=["bot_leaving"])
            action = "bot_leaving"
        else:
            seat.is_bot, seat.bot_level, seat.joined_at = False, "", None
            seat.save(update_fields=["is_bot", "bot_level", "joined_at"])
            action = "bot_removed"
        return bump(table, [{"kind": "seat", "seat": seat_index, "action": action}])


def invite(*, user, table_id: int, display_name: str) -> Invitation:
    with transaction.atomic():
        table = lock_table(table_id)
        require_host(table, user)
        require_open(table)
        _refuse_practice(table)
        invitee = user_by_display_name(display_name)
        if invitee is None:
            raise ServiceError(_("Nobody is called %(name)s.") % {"name": display_name},
                               code="no_such_player")
        if invitee.pk == user.pk:
            raise ServiceError(_("You are the host already."), code="self_invite")
        invitation, _created = Invitation.objects.get_or_create(
            table=table, invitee=invitee, defaults={"inviter": user})
    if user.pk not in hooks.hidden_from(invitee.pk):  # blocked: kept, never shown
        transaction.on_commit(lambda: _ring_user(invitee.pk, table))
        transaction.on_commit(lambda: events.invited.send(
            sender=Invitation, invitation_id=invitation.pk, table_id=table.pk,
            code=table.code, name=table.name, inviter_id=user.pk, invitee_id=invitee.pk))
    return invitation


def _ring_user(user_id: int, table: Table) -> None:
    user_notified(user_id, {"kind": "invitation", "table": table.pk, "code": table.code})


def stand_in(*, table_id: int, seat_index: int, now: datetime | None = None) -> Outcome:
    """Away 2 minutes: a bot plays the person's hand (and team) for the rest of the round."""
    now = now or timezone.now()
    with transaction.atomic():
        table = lock_table(table_id)
        seat = table.seats.get(index=seat_index)
        if table.turn_based or seat.standin or seat.user_id is None or seat.away_since is None \
                or seat.away_since + away_limit() > now or not round_in_progress(table):
            raise NotDue()
        seat.standin = True
        seat.save(update_fields=["standin"])
        return bump(table, [{"kind": "seat", "seat": seat_index, "action": "standin"}],
                    now=now)


def person_renamed(*, user_id: int) -> int:
    """A person's name or avatar changed (on their profile, or signing up from a guest
    session): each open table they sit at gets a new version, so that its pages show it (a
    snapshot keeps the names it was built with). Returns how many tables."""
    tables = (Seat.objects.filter(user_id=user_id, table__state__in=RUNNING)
              .values_list("table_id", flat=True).distinct())
    ids = sorted(set(tables))
    for table_id in ids:
        touch(table_id=table_id, events=[{"kind": "player_renamed"}])
    return len(ids)
