"""Reads for pages and sockets: chat, mutes, bans, the report queue."""

from __future__ import annotations

import time
from datetime import timedelta

from django.conf import settings
from django.db.models import Count, Q
from django.utils import formats, timezone, translation
from django.utils.translation import gettext as _

from apps.tables.hooks import hidden_from
from apps.tables.models import Table
from apps.tables.state import display_name

from . import phrases
from .models import Ban, ChatMessage, ChatSettings, Mute, Report

#: Chat messages a table's state carries.
CHAT_IN_STATE = 30
#: The longest timed ban a superuser, and a moderator, may give.
BAN_MAX = timedelta(days=365)
MODERATOR_BAN_MAX = timedelta(days=30)
#: Lengths the person page offers, in days.
BAN_DAYS = (1, 3, 7, 14, 30, 90, 365)


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


def longest_ban(actor) -> timedelta:
    """The longest timed ban ``actor`` may give (the right to ban at all is checked apart)."""
    return BAN_MAX if getattr(actor, "is_superuser", False) else MODERATOR_BAN_MAX


def ban_choices(actor) -> list[int]:
    return [d for d in BAN_DAYS if timedelta(days=d) <= longest_ban(actor)]


def may_lift_ban(actor, target) -> bool:
    """Whether ``actor`` may lift ``target``'s active bans: superusers always; others only when
    every active ban is a timed one they gave."""
    if not actor.has_perm("moderation.lift_ban"):
        return False
    bans = list(Ban.objects.filter(Ban.active_q(), user=target))
    if not bans or actor.is_superuser:
        return bool(bans)
    return all(b.until is not None and b.by_id == actor.pk for b in bans)


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


def refusal_of(user) -> str | None:
    """Why this person may not act at a table (their ban), or None: the tables' refusal
    hook (``apps.tables.hooks.on_refusal``, registered in ``apps.moderation.apps``)."""
    ban = active_ban(user)
    return None if ban is None else ban_message(ban)


def chat_dict(msg: ChatMessage, names: dict, *, staff: bool = False) -> dict:
    out = {"id": msg.pk, "seat": names.get(msg.user_id, (None, ""))[0],
           "name": names.get(msg.user_id, (None, ""))[1], "text": msg.text,
           "at": int(msg.created_at.timestamp() * 1000)}
    if msg.phrase:
        out["phrase"] = msg.phrase  # a quick phrase: its text is put in each reader's language
    if staff:
        out.update(hidden=msg.hidden, deleted=msg.deleted, user_id=msg.user_id)
    return out


def _names(seats) -> dict:
    return {seat.user_id: (seat.index, display_name(seat.user)) for seat in seats
            if seat.user is not None}


def _recent(table, limit: int, seats) -> tuple[list[ChatMessage], list[dict]]:
    """The last visible messages, oldest first, as rows and as the state's lines."""
    msgs = list(ChatMessage.objects.filter(table=table, hidden=False, deleted=False)
                .select_related("user__profile").order_by("-created_at", "-pk")[:limit])
    msgs.reverse()
    names = _names(table.seats.select_related("user__profile") if seats is None else seats)
    for msg in msgs:
        if msg.user_id is not None and msg.user_id not in names:
            names[msg.user_id] = (None, display_name(msg.user))
    return msgs, [chat_dict(m, names) for m in msgs]


def recent_chat(table, limit: int = CHAT_IN_STATE, *, seats=None) -> list[dict]:
    """The last visible messages, oldest first."""
    return _recent(table, limit, seats)[1]


def watcher_phrases_allowed(table_id: int) -> bool:
    """Whether the host lets people watching without a seat say the quick phrases."""
    return ChatSettings.objects.filter(table_id=table_id, watcher_phrases=True).exists()


def state_part(table, seats) -> dict:
    """The moderation app's part of a table's snapshot (``apps.tables.state``): the chat, and
    the mutes of the people seated, with their message in every language (server side only:
    a person sees their own).

    Also server side only, so that composing needs no query and no translation: each line's
    author (``authors``, by position), the words of every phrase in the chat in every
    language, and, for each seated person who blocked anyone, whom (``hidden``: their lines
    are left out of that person's chat). Watchers' blocks are not read here, so that a
    watcher's socket coming and going rebuilds no part (``apps.tables.state.with_watchers``):
    their socket reads them and hands them to :func:`compose_part` (``Viewer.hidden``)."""
    seated = [s.user_id for s in seats if s.user_id is not None]
    mutes = {}
    for mute in Mute.objects.filter(Mute.active_q(), user_id__in=seated).order_by("until"):
        messages = {}
        for lang, _name in settings.LANGUAGES:
            with translation.override(lang):
                messages[lang] = mute_message(mute)
        mutes[str(mute.user_id)] = {"reason": mute.reason,
                                    "until": int(mute.until.timestamp() * 1000),
                                    "message": messages}
    msgs, chat = _recent(table, CHAT_IN_STATE, seats)
    hidden = {}
    for user_id in seated:
        people = hidden_from(user_id)
        if people:
            hidden[str(user_id)] = sorted(people)
    return {"chat": chat, "authors": [m.user_id for m in msgs],
            "phrases": {m.phrase: phrases.texts(m.phrase) for m in msgs
                        if phrases.is_phrase(m.phrase)},
            "hidden": hidden, "mutes": mutes,
            "watcher_phrases": watcher_phrases_allowed(table.pk), "practice": table.practice}


def _in_language(line: dict, texts: dict, language: str) -> dict:
    words = texts.get(line.get("phrase") or "")
    if not words:
        return line
    return dict(line, text=words.get(language) or line["text"])


def compose_part(data: dict, state: dict, viewer) -> None:
    """A person's share of :func:`state_part`: the chat (phrases in their language, without
    the lines of people they blocked), their own mute if it still runs, and whether they may
    say a phrase (seated, or watching where the host allows it; never at a practice table)."""
    chat = data.get("chat", [])
    hidden = set(data.get("hidden", {}).get(str(viewer.user_id), ())) | viewer.hidden
    texts = data.get("phrases", {})
    if hidden or texts:
        authors = data.get("authors") or [None] * len(chat)
        chat = [_in_language(line, texts, viewer.language)
                for line, author in zip(chat, authors, strict=False) if author not in hidden]
    state["chat"] = chat
    you, table = state["you"], state["table"]
    table["watcher_phrases"] = bool(data.get("watcher_phrases", False))
    you["can_phrase"] = (table["state"] != Table.State.CLOSED and not data.get("practice")
                         and (you.get("seat") is not None
                              or (you.get("watching", False) and table["watcher_phrases"])))
    mute = data.get("mutes", {}).get(str(viewer.user_id))
    if mute is not None and mute["until"] <= time.time() * 1000:
        mute = None
    state["you"]["muted"] = None if mute is None else {
        "reason": mute["reason"], "until": mute["until"],
        "message": mute["message"].get(viewer.language) or next(iter(mute["message"].values()))}


# -- staff pages ------------------------------------------------------------------------------

def live_tables() -> list:
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
