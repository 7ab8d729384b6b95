"""Chat, reports and every staff action. The only code that writes this app's rows.

Each staff action checks ``actor.has_perm("moderation.<right>")`` (rights come from the
"moderator" group, :data:`MODERATOR_RIGHTS`, or superuser status), and ``is_staff``; changes the
rows and writes a :class:`~apps.moderation.models.ModerationLog` row in one transaction, and
after the commit rings the sockets that must show the change. Table changes go through
``apps.tables.services`` (row lock + version bump). Refusals are
:class:`apps.tables.services.ServiceError` with a translated message and a code, so the table
socket and the pages handle them like any other refusal.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.sessions.models import Session
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.accounts.selectors import is_guest
from apps.core.doorbell import send_to_group, user_group, user_notified
from apps.core.errors import ServiceError
from apps.core.protocol import BANNED_CLOSE_CODE
from apps.tables import services as tables
from apps.tables.models import Round, Seat, Table
from apps.tables.names import normalize_table_name, table_name_problem

from .models import CHAT_MAX_LENGTH, Ban, ChatMessage, ModerationLog, Mute, Report
from .selectors import (
    BAN_MAX,
    MODERATOR_BAN_MAX,
    active_ban,
    active_mute,
    longest_ban,
    mute_message,
)

User = get_user_model()
Action = ModerationLog.Action

#: Chat rate limit: at most CHAT_LIMIT messages per CHAT_WINDOW, per person and table.
CHAT_LIMIT = 5
CHAT_WINDOW = timedelta(seconds=10)
#: Reports: at most REPORT_LIMIT per person per REPORT_WINDOW.
REPORT_LIMIT = 10
REPORT_WINDOW = timedelta(hours=1)
NOTE_MAX_LENGTH = 500
REASON_MAX_LENGTH = 200
#: The longest mute. (The longest timed bans, BAN_MAX for superusers and MODERATOR_BAN_MAX for
#: moderators, are in selectors: the person page offers only what this module accepts.)
MUTE_MAX = timedelta(days=30)
#: The staff rights of the "moderator" group (migrations 0002 and 0003 grant the same).
MODERATOR_RIGHTS = (
    "mute_user", "hide_message", "delete_message", "close_table", "hide_table",
    "rename_table", "remove_player", "ban_user", "lift_ban", "handle_report", "observe_table",
    "view_chatmessage", "view_report", "view_mute", "view_ban", "view_moderationlog",
)
MODERATOR_GROUP = "moderator"


# -- plumbing ---------------------------------------------------------------------------------

def require_perm(actor, right: str) -> None:
    """A staff member with moderation's ``right``, or a ServiceError (fair play's collusion
    decisions use it too)."""
    if actor is None or not actor.is_authenticated:
        raise ServiceError(_("Sign in first."), code="not_signed_in")
    if not (actor.is_active and actor.is_staff and actor.has_perm(f"moderation.{right}")):
        raise ServiceError(_("You may not do that."), code="forbidden")


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _reason(reason: str, *, required: bool) -> str:
    reason = " ".join((reason or "").split())
    if required and not reason:
        raise ServiceError(_("Give a reason."), code="no_reason")
    if len(reason) > REASON_MAX_LENGTH:
        raise ServiceError(_("A reason is at most %(n)s characters.")
                           % {"n": REASON_MAX_LENGTH}, code="too_long")
    return reason


def _log(actor, action: str, *, reason: str = "", before: dict | None = None,
         after: dict | None = None, user=None, table=None, message=None,
         report=None) -> ModerationLog:
    return ModerationLog.objects.create(
        actor=actor, action=action, reason=reason, before=before or {}, after=after or {},
        target_user=user, target_table=table, target_message=message, target_report=report)


def _target_user(actor, user_id: int):
    """The person acted on: never oneself, never a superuser; staff only by a superuser."""
    target = User.objects.filter(pk=user_id).first()
    if target is None:
        raise ServiceError(_("No such user."), code="no_user")
    if target.pk == actor.pk:
        raise ServiceError(_("You cannot do that to yourself."), code="self")
    if target.is_superuser or (target.is_staff and not actor.is_superuser):
        raise ServiceError(_("Only a superuser can do that to staff."), code="forbidden")
    return target


def _table(table_id: int) -> Table:
    table = Table.objects.filter(pk=table_id).first()
    if table is None:
        raise ServiceError(_("This table does not exist."), code="no_table")
    return table


def _table_snapshot(table: Table) -> dict:
    return {"state": table.state, "hidden": table.hidden, "name": table.name,
            "closed_reason": table.closed_reason}


def _open_tables_of(user) -> list[int]:
    return sorted(set(Seat.objects.filter(user=user).exclude(table__state=Table.State.CLOSED)
                      .values_list("table_id", flat=True)))


def _tell_tables(user, event: dict) -> None:
    """Bump every open table the person sits at, so their sockets show the change at once."""
    for table_id in _open_tables_of(user):
        tables.touch(table_id=table_id, events=[event])


def _notify_user(user_id: int, event: dict) -> None:
    transaction.on_commit(lambda: user_notified(user_id, event))


# -- who is a moderator (manage.py make_moderator) --------------------------------------------

#: Rights the apps above moderation give a new "moderator" group, by app label (the
#: tournaments': create and cancel tournaments), as their migrations gave the first one.
_granted: dict[str, tuple[str, ...]] = {}


def grant_moderators(*, app_label: str, codenames: tuple[str, ...]) -> None:
    """An app above moderation says which of its rights the moderators hold (from ``ready``)."""
    _granted[app_label] = tuple(codenames)


def moderator_group():
    """The "moderator" group; made when missing with :data:`MODERATOR_RIGHTS` and what the
    apps above granted (an existing group keeps the rights the operator gave it)."""
    from django.contrib.auth.models import Group, Permission
    from django.db.models import Q

    group, created = Group.objects.get_or_create(name=MODERATOR_GROUP)
    if created:
        rights = Q(content_type__app_label="moderation", codename__in=MODERATOR_RIGHTS)
        for app_label, codenames in _granted.items():
            rights |= Q(content_type__app_label=app_label, codename__in=codenames)
        group.permissions.add(*Permission.objects.filter(rights))
    return group


def make_moderator(user) -> None:
    """Staff status (the staff pages and every staff action require it) plus the group."""
    with transaction.atomic():
        user.groups.add(moderator_group())
        if not user.is_staff:
            user.is_staff = True
            user.save(update_fields=["is_staff"])


def remove_moderator(user) -> None:
    """Out of the group; staff status goes too, unless the person is a superuser or holds
    other admin rights (another group, or permissions of their own)."""
    with transaction.atomic():
        user.groups.remove(*user.groups.filter(name=MODERATOR_GROUP))
        keeps_staff = (user.is_superuser or user.groups.exists()
                       or user.user_permissions.exists())
        if user.is_staff and not keeps_staff:
            user.is_staff = False
            user.save(update_fields=["is_staff"])


# -- chat and reports (players) ---------------------------------------------------------------

def post_chat(*, user, table_id: int, text: str) -> ChatMessage:
    """A seated player's message to the table. Muted people are refused with the reason and
    the end; at most CHAT_LIMIT messages per CHAT_WINDOW."""
    tables.require_signed_in(user)
    text = " ".join((text or "").split())
    if not text:
        raise ServiceError(_("Write a message first."), code="empty")
    if len(text) > CHAT_MAX_LENGTH:
        raise ServiceError(_("A message is at most %(n)s characters.") % {"n": CHAT_MAX_LENGTH},
                           code="too_long")
    tables.require_not_banned(user)
    mute = active_mute(user)
    if mute is not None:
        raise ServiceError(mute_message(mute), code="muted")
    now = timezone.now()
    with transaction.atomic():
        table = tables.lock_table(table_id)
        tables.require_open(table)
        refuse_practice(table)
        seat = table.seats.filter(user=user).first()
        if seat is None:
            # Watchers see the table, they do not talk to it (staff observe silently too).
            raise ServiceError(_("You are watching: only the players at this table can chat."),
                               code="not_seated")
        if seat.leaving:
            raise ServiceError(_("Only the players at this table can chat."), code="not_seated")
        if table.host_id != user.pk and is_guest(user):
            # A guest's name is nobody's: what they say at other people's tables could not be
            # answered for.
            raise ServiceError(_("Sign up to chat at other people's tables."), code="guest")
        require_calm(user, table, now)
        msg = ChatMessage.objects.create(table=table, user=user, text=text, created_at=now)
        tables.touch(table_id=table.pk, events=[{"kind": "chat", "id": msg.pk,
                                                 "seat": seat.index}])
    return msg


def refuse_practice(table: Table) -> None:
    """A practice table has no chat (words or phrases): nobody but bots is there to read it,
    and nobody else may watch it."""
    if table.practice:
        raise ServiceError(_("A practice table has no chat: nobody is there to read it."),
                           code="practice")


def require_calm(user, table: Table, now) -> None:
    """The chat's rate limit, for words and phrases together: at most CHAT_LIMIT lines per
    CHAT_WINDOW per person and table (read under the table's row lock, so two at once count
    each other)."""
    recent = ChatMessage.objects.filter(user=user, table=table,
                                        created_at__gt=now - CHAT_WINDOW).count()
    if recent >= CHAT_LIMIT:
        raise ServiceError(_("You are sending messages too fast. Wait a few seconds."),
                           code="rate_limited")


def report(*, user, table_id: int, reason: str, message_id: int | None = None,
           seat_index: int | None = None, note: str = "") -> Report:
    """A player at the table reports a chat message, a player (by seat) or the table."""
    tables.require_signed_in(user)
    if reason not in Report.Reason.values:
        raise ServiceError(_("Choose a reason for the report."), code="bad_reason")
    note = " ".join((note or "").split())
    if len(note) > NOTE_MAX_LENGTH:
        raise ServiceError(_("A note is at most %(n)s characters.") % {"n": NOTE_MAX_LENGTH},
                           code="too_long")
    table = _table(table_id)
    if table.host_id != user.pk and not table.seats.filter(user=user).exists():
        raise ServiceError(_("Only the players at this table can report."), code="not_seated")
    since = timezone.now() - REPORT_WINDOW
    if Report.objects.filter(reporter=user, created_at__gt=since).count() >= REPORT_LIMIT:
        raise ServiceError(_("You have sent many reports. Try again later."),
                           code="rate_limited")
    message = reported = None
    if message_id is not None:
        message = ChatMessage.objects.filter(pk=message_id, table=table).first()
        if message is None:
            raise ServiceError(_("That message is not at this table."), code="no_message")
        reported = message.user
    elif seat_index is not None:
        seat = table.seats.filter(index=seat_index).select_related("user").first()
        if seat is None or seat.user is None:
            raise ServiceError(_("Nobody sits in that seat."), code="no_player")
        reported = seat.user
    if reported is not None and reported.pk == user.pk:
        raise ServiceError(_("You cannot report yourself."), code="self")
    return Report.objects.create(reporter=user, table=table, message=message,
                                 reported_user=reported, reason=reason, note=note)


def system_report(*, table_id: int, reported_user_id: int | None, note: str,
                  reason: str = Report.Reason.CHEATING) -> Report:
    """A report the site opens by itself (no reporter), for staff to look at in the queue
    beside the players' reports: an app above this one (fair play's collusion check) says what
    it found in ``note`` and on the report's page (``staff_parts``)."""
    return Report.objects.create(reporter=None, table_id=table_id,
                                 reported_user_id=reported_user_id, reason=reason,
                                 note=" ".join(note.split())[:NOTE_MAX_LENGTH])


# -- chat messages (staff) --------------------------------------------------------------------

def _message(message_id: int) -> ChatMessage:
    msg = ChatMessage.objects.select_for_update().filter(pk=message_id).first()
    if msg is None:
        raise ServiceError(_("No such message."), code="no_message")
    return msg


def hide_message(*, actor, message_id: int, reason: str = "") -> ChatMessage:
    require_perm(actor, "hide_message")
    reason = _reason(reason, required=False)
    with transaction.atomic():
        msg = _message(message_id)
        if msg.hidden:
            raise ServiceError(_("That message is already hidden."), code="already")
        msg.hidden, msg.hidden_by = True, actor
        msg.save(update_fields=["hidden", "hidden_by"])
        _log(actor, Action.HIDE_MESSAGE, reason=reason, before={"hidden": False},
             after={"hidden": True}, user=msg.user, table=msg.table, message=msg)
        tables.touch(table_id=msg.table_id, events=[{"kind": "chat_hidden", "id": msg.pk}])
    return msg


def delete_message(*, actor, message_id: int, reason: str = "") -> ChatMessage:
    """The text is blanked; the log keeps what it said."""
    require_perm(actor, "delete_message")
    reason = _reason(reason, required=False)
    with transaction.atomic():
        msg = _message(message_id)
        if msg.deleted:
            raise ServiceError(_("That message is already deleted."), code="already")
        before = {"text": msg.text, "deleted": False, "hidden": msg.hidden}
        if msg.phrase:
            before["phrase"] = msg.phrase
        msg.text, msg.phrase, msg.deleted = "", "", True
        msg.save(update_fields=["text", "phrase", "deleted"])
        _log(actor, Action.DELETE_MESSAGE, reason=reason, before=before,
             after={"text": "", "deleted": True, "hidden": msg.hidden}, user=msg.user,
             table=msg.table, message=msg)
        tables.touch(table_id=msg.table_id, events=[{"kind": "chat_hidden", "id": msg.pk}])
    return msg


# -- mutes and bans ---------------------------------------------------------------------------

def mute(*, actor, user_id: int, minutes: int, reason: str) -> Mute:
    """Mute a person's chat for ``minutes``; their input shows the reason and the end."""
    require_perm(actor, "mute_user")
    reason = _reason(reason, required=True)
    if isinstance(minutes, bool) or not isinstance(minutes, int) or minutes < 1 \
            or timedelta(minutes=minutes) > MUTE_MAX:
        raise ServiceError(_("A mute lasts from 1 minute to 30 days."), code="bad_duration")
    target = _target_user(actor, user_id)
    now = timezone.now()
    with transaction.atomic():
        previous = active_mute(target)
        row = Mute.objects.create(user=target, until=now + timedelta(minutes=minutes),
                                  reason=reason, by=actor, created_at=now)
        _log(actor, Action.MUTE, reason=reason, user=target,
             before={"muted_until": _iso(previous.until) if previous else None},
             after={"muted_until": _iso(row.until), "mute": row.pk})
        _tell_tables(target, {"kind": "muted"})
        _notify_user(target.pk, {"kind": "muted", "reason": reason,
                                 "until": int(row.until.timestamp() * 1000)})
    return row


def lift_mute(*, actor, user_id: int, reason: str = "") -> int:
    require_perm(actor, "mute_user")
    reason = _reason(reason, required=False)
    target = _target_user(actor, user_id)
    now = timezone.now()
    with transaction.atomic():
        rows = list(Mute.objects.select_for_update().filter(Mute.active_q(now), user=target))
        if not rows:
            raise ServiceError(_("This person is not muted."), code="not_muted")
        Mute.objects.filter(pk__in=[m.pk for m in rows]).update(lifted_at=now)
        _log(actor, Action.LIFT_MUTE, reason=reason, user=target,
             before={"muted_until": _iso(max(m.until for m in rows)),
                     "mutes": [m.pk for m in rows]},
             after={"muted_until": None})
        _tell_tables(target, {"kind": "unmuted"})
    return len(rows)


def end_sessions(user) -> int:
    """Delete every live database session signed in as ``user``."""
    keys = [s.session_key for s in Session.objects.filter(expire_date__gt=timezone.now())
            .iterator() if str(s.get_decoded().get(SESSION_KEY)) == str(user.pk)]
    Session.objects.filter(session_key__in=keys).delete()
    return len(keys)


def ban(*, actor, user_id: int, reason: str, days: int | None = None) -> Ban:
    """Ban a person from the site for ``days``, or for good (``days=None``, superusers only).
    Their sessions end and their open sockets close (4403) at once."""
    if days is None:
        require_perm(actor, "ban_user_forever")
        if not actor.is_superuser:
            raise ServiceError(_("Only a superuser can ban for good."), code="forbidden")
    else:
        require_perm(actor, "ban_user")
        if isinstance(days, bool) or not isinstance(days, int) or days < 1 \
                or timedelta(days=days) > BAN_MAX:
            raise ServiceError(_("A ban lasts from 1 to 365 days, or for good."),
                               code="bad_duration")
        if timedelta(days=days) > longest_ban(actor):
            raise ServiceError(_("Moderators ban for at most %(n)s days; a longer ban is for "
                                 "a superuser.") % {"n": MODERATOR_BAN_MAX.days},
                               code="forbidden")
    reason = _reason(reason, required=True)
    target = _target_user(actor, user_id)
    now = timezone.now()
    with transaction.atomic():
        previous = active_ban(target)
        row = Ban.objects.create(user=target, reason=reason, by=actor, created_at=now,
                                 until=None if days is None else now + timedelta(days=days))
        sessions = end_sessions(target)
        _log(actor, Action.BAN, reason=reason, user=target,
             before={"banned": previous is not None,
                     "until": _iso(previous.until) if previous else None},
             after={"banned": True, "until": _iso(row.until), "forever": row.until is None,
                    "ban": row.pk, "sessions_ended": sessions})
        user_pk = target.pk
        transaction.on_commit(lambda: _close_sockets(user_pk))
    return row


def _close_sockets(user_id: int) -> None:
    send_to_group(user_group(user_id), {"type": "user.banned", "code": BANNED_CLOSE_CODE})


def lift_ban(*, actor, user_id: int, reason: str = "") -> int:
    """Lift a person's bans: moderators only the timed bans they gave themselves."""
    require_perm(actor, "lift_ban")
    reason = _reason(reason, required=False)
    target = User.objects.filter(pk=user_id).first()
    if target is None:
        raise ServiceError(_("No such user."), code="no_user")
    now = timezone.now()
    with transaction.atomic():
        rows = list(Ban.objects.select_for_update().filter(Ban.active_q(now), user=target))
        if not rows:
            raise ServiceError(_("This person is not banned."), code="not_banned")
        forever = any(b.until is None for b in rows)
        if forever and not actor.is_superuser:
            raise ServiceError(_("Only a superuser can lift a ban for good."), code="forbidden")
        # Lifting only one's own rows would leave the person banned by the others: refuse.
        if not actor.is_superuser and any(b.by_id != actor.pk for b in rows):
            raise ServiceError(_("Only a superuser can lift a ban someone else gave."),
                               code="forbidden")
        Ban.objects.filter(pk__in=[b.pk for b in rows]).update(lifted_at=now)
        _log(actor, Action.LIFT_BAN, reason=reason, user=target,
             before={"banned": True, "forever": forever, "bans": [b.pk for b in rows]},
             after={"banned": False})
    return len(rows)


# -- tables -----------------------------------------------------------------------------------

def close_table(*, actor, table_id: int, reason: str) -> Table:
    """Close a table: its round in progress is voided, the players see why."""
    require_perm(actor, "close_table")
    reason = _reason(reason, required=True)
    with transaction.atomic():
        table = tables.lock_table(table_id)
        before = _table_snapshot(table)
        tables.close_by_staff(table_id=table.pk, reason=reason)
        table.refresh_from_db()
        after = _table_snapshot(table)
        after["voided_rounds"] = [
            {"match": m, "round": r} for m, r in Round.objects.filter(
                match__table=table, voided=True, finished_at=table.closed_at)
            .values_list("match__number", "number")]
        _log(actor, Action.CLOSE_TABLE, reason=reason, before=before, after=after,
             table=table)
    return table


def hide_table(*, actor, table_id: int, hidden: bool = True, reason: str = "") -> Table:
    require_perm(actor, "hide_table")
    reason = _reason(reason, required=False)
    with transaction.atomic():
        table = tables.lock_table(table_id)
        before = {"hidden": table.hidden}
        tables.update_by_staff(table_id=table.pk, hidden=hidden)
        table.refresh_from_db()
        _log(actor, Action.HIDE_TABLE, reason=reason, before=before,
             after={"hidden": table.hidden}, table=table)
    return table


def rename_by_staff(*, actor, table_id: int, name: str, reason: str = "") -> Table:
    """Staff rename (or clear the name of) a table, under the same rules as a host's name."""
    require_perm(actor, "rename_table")
    reason = _reason(reason, required=False)
    name = normalize_table_name(name)
    problem = table_name_problem(name)
    if problem is not None:
        raise ServiceError(problem, code="bad_name")
    with transaction.atomic():
        table = tables.lock_table(table_id)
        before = {"name": table.name}
        tables.update_by_staff(table_id=table.pk, name=name)
        table.refresh_from_db()
        _log(actor, Action.RENAME_TABLE, reason=reason, before=before,
             after={"name": table.name}, table=table)
    return table


def remove_player(*, actor, table_id: int, seat_index: int, reason: str) -> Table:
    """Remove a person from a seat, as if they left (a bot plays out a round in progress)."""
    require_perm(actor, "remove_player")
    reason = _reason(reason, required=True)
    with transaction.atomic():
        table = tables.lock_table(table_id)
        seat = table.seats.filter(index=seat_index).select_related("user").first()
        target = seat.user if seat is not None else None
        if target is not None and target.pk != actor.pk and (
                target.is_superuser or (target.is_staff and not actor.is_superuser)):
            raise ServiceError(_("Only a superuser can do that to staff."), code="forbidden")
        before = {"seat": seat_index, "user": target.pk if target else None}
        outcome = tables.remove_seated_player(table_id=table.pk, seat_index=seat_index)
        seat.refresh_from_db()
        _log(actor, Action.REMOVE_PLAYER, reason=reason, before=before,
             after={"seat": seat_index, "user": seat.user_id, "leaving": seat.leaving,
                    "standin": seat.standin, "action": outcome.events[0]["action"]},
             user=target, table=table)
        if target is not None:
            _notify_user(target.pk, {"kind": "removed", "table": table.pk, "reason": reason})
    return table


# -- reports ----------------------------------------------------------------------------------

def close_report(*, actor, report_id: int, resolution: str) -> Report:
    """Close an open report with what was done (or why nothing was)."""
    require_perm(actor, "handle_report")
    resolution = " ".join((resolution or "").split())
    if not resolution:
        raise ServiceError(_("Say how the report was resolved."), code="no_resolution")
    if len(resolution) > NOTE_MAX_LENGTH:
        raise ServiceError(_("A resolution is at most %(n)s characters.")
                           % {"n": NOTE_MAX_LENGTH}, code="too_long")
    with transaction.atomic():
        row = Report.objects.select_for_update().filter(pk=report_id).first()
        if row is None:
            raise ServiceError(_("No such report."), code="no_report")
        if row.status != Report.Status.OPEN:
            raise ServiceError(_("That report is already closed."), code="already")
        row.status, row.resolution = Report.Status.CLOSED, resolution
        row.handled_by, row.closed_at = actor, timezone.now()
        row.save(update_fields=["status", "resolution", "handled_by", "closed_at"])
        _log(actor, Action.CLOSE_REPORT, reason=resolution, before={"status": "open"},
             after={"status": "closed", "resolution": resolution}, user=row.reported_user,
             table=row.table, message=row.message, report=row)
    return row


handle_report = close_report
