"""Reads for pages and sockets: chat, mutes, bans, the report queue."""

from __future__ import annotations

from django.db.models import Count, Q
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from .models import Ban, ChatMessage, Mute, Report

#: Chat messages a table's state carries.
CHAT_IN_STATE = 30


def active_mute(user) -> Mute | None:
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return Mute.objects.filter(Mute.active_q(), user=user).order_by("-until").first()


def active_ban(user) -> Ban | None:
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    bans = list(Ban.objects.filter(Ban.active_q(), user=user))
    if not bans:
        return None
    forever = [b for b in bans if b.until is None]
    return forever[0] if forever else max(bans, key=lambda b: b.until)


def is_banned(user) -> bool:
    return active_ban(user) is not None


def when(moment) -> str:
    return formats.date_format(timezone.localtime(moment), "DATETIME_FORMAT")


def mute_message(mute: Mute) -> str:
    return _("You are muted until %(until)s: %(reason)s") % {
        "until": when(mute.until), "reason": mute.reason}


def ban_message(ban: Ban) -> str:
    if ban.until is None:
        return _("Your account is banned for good: %(reason)s") % {"reason": ban.reason}
    return _("Your account is banned until %(until)s: %(reason)s") % {
        "until": when(ban.until), "reason": ban.reason}


def chat_dict(msg: ChatMessage, names: dict, *, staff: bool = False) -> dict:
    out = {"id": msg.pk, "seat": names.get(msg.user_id, (None, ""))[0],
           "name": names.get(msg.user_id, (None, ""))[1], "text": msg.text,
           "at": int(msg.created_at.timestamp() * 1000)}
    if staff:
        out.update(hidden=msg.hidden, deleted=msg.deleted, user_id=msg.user_id)
    return out


def _names(table) -> dict:
    from apps.tables.selectors import display_name

    names = {}
    for seat in table.seats.select_related("user__profile"):
        if seat.user is not None:
            names[seat.user_id] = (seat.index, display_name(seat.user))
    return names


def recent_chat(table, limit: int = CHAT_IN_STATE) -> list[dict]:
    """The last visible messages, oldest first."""
    msgs = list(ChatMessage.objects.filter(table=table, hidden=False, deleted=False)
                .select_related("user__profile").order_by("-created_at", "-pk")[:limit])
    names = _names(table)
    from apps.tables.selectors import display_name

    for msg in msgs:
        if msg.user_id is not None and msg.user_id not in names:
            names[msg.user_id] = (None, display_name(msg.user))
    return [chat_dict(m, names) for m in reversed(msgs)]


def closed_sentence(table) -> str:
    reason = table.closed_reason or ""
    if table.state != "closed":
        return ""
    if reason.startswith("staff:"):
        return _("Closed by staff: %(reason)s") % {"reason": reason[len("staff:"):].strip()}
    if reason == "empty":
        return _("Closed: nobody was at the table.")
    return _("This table is closed.")


def table_extras(state: dict, table, user) -> None:
    """What the moderation app adds to a table's state (``apps.tables.selectors.table_state``):
    the chat, why the table closed, and the person's own mute."""
    state["chat"] = recent_chat(table)
    state["table"]["closed_reason"] = closed_sentence(table)
    you = state.get("you") or {}
    mute = active_mute(user)
    you["muted"] = None if mute is None else {
        "reason": mute.reason, "until": int(mute.until.timestamp() * 1000),
        "message": mute_message(mute)}
    you["can_chat"] = you.get("seat") is not None and table.state != "closed"


# -- staff pages ------------------------------------------------------------------------------

def live_tables() -> list:
    from apps.tables.models import Table

    return list(Table.objects.exclude(state=Table.State.CLOSED)
                .annotate(open_reports=Count("reports", filter=Q(reports__status="open")))
                .select_related("host__profile").prefetch_related("seats__user__profile")
                .order_by("-open_reports", "-updated_at")[:200])


def report_queue(status: str = "open") -> list[Report]:
    return list(Report.objects.filter(status=status)
                .select_related("reporter__profile", "reported_user__profile", "table",
                                "message", "handled_by")
                .order_by("created_at" if status == "open" else "-closed_at")[:200])


def message_context(msg: ChatMessage, around: int = 10) -> list[ChatMessage]:
    """The message with up to ``around`` messages before and after it (staff see all)."""
    base = ChatMessage.objects.filter(table_id=msg.table_id).select_related("user__profile")
    before = list(base.filter(Q(created_at__lt=msg.created_at)
                              | Q(created_at=msg.created_at, pk__lt=msg.pk))
                  .order_by("-created_at", "-pk")[:around])
    after = list(base.filter(Q(created_at__gt=msg.created_at)
                             | Q(created_at=msg.created_at, pk__gt=msg.pk))
                 .order_by("created_at", "pk")[:around])
    return list(reversed(before)) + [msg] + after


def staff_chat(table, limit: int = 100) -> list[ChatMessage]:
    msgs = (ChatMessage.objects.filter(table=table).select_related("user__profile")
            .order_by("-created_at", "-pk")[:limit])
    return list(reversed(list(msgs)))
