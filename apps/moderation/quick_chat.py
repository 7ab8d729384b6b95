"""Quick-chat phrases at a table, and the host's switch that lets watchers use them.

A phrase is a chat line (:class:`~apps.moderation.models.ChatMessage` with ``phrase`` set),
so staff hide, delete and report it like any other, and it counts toward the chat's rate
limit (:func:`apps.moderation.services.require_calm`). It can carry no insult, so people muted
from free chat may still use the phrases, and so may watchers where the host allows it. A
practice table has no chat at all: nobody is there to read it.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.core.errors import ServiceError
from apps.tables import services as tables
from apps.tables.models import Connection

from . import phrases
from .models import ChatMessage, ChatSettings
from .selectors import watcher_phrases_allowed
from .services import refuse_practice, require_calm


def post_phrase(*, user, table_id: int, phrase: str) -> ChatMessage:
    """Say the phrase ``phrase`` (an id of :data:`apps.moderation.phrases.PHRASES`) to the
    table: the seated players (muted ones too), and watchers holding the table's page when
    the host allows it."""
    tables.require_signed_in(user)
    if not phrases.is_phrase(phrase):
        raise ServiceError(_("There is no such phrase."), code="unknown_phrase")
    tables.require_not_banned(user)
    now = timezone.now()
    with transaction.atomic():
        table = tables.lock_table(table_id)
        tables.require_open(table)
        refuse_practice(table)
        seat = table.seats.filter(user=user).first()
        if seat is None and not watcher_phrases_allowed(table.pk):
            raise ServiceError(_("You are watching: the host lets only the players use the "
                                 "quick phrases here."), code="not_seated")
        if seat is None and not Connection.objects.filter(table=table, user=user).exists():
            raise ServiceError(_("Open the table's page to use its quick phrases."),
                               code="not_watching")
        if seat is not None and seat.leaving:
            raise ServiceError(_("Only the players at this table can chat."), code="not_seated")
        require_calm(user, table, now)
        msg = ChatMessage.objects.create(table=table, user=user, text=phrases.PHRASES[phrase],
                                         phrase=phrase, created_at=now)
        tables.touch(table_id=table.pk, events=[{
            "kind": "chat", "id": msg.pk, "seat": None if seat is None else seat.index,
            "phrase": phrase}])
    return msg


def set_watcher_phrases(*, user, table_id: int, allowed: bool) -> bool:
    """The host lets people watching without a seat use the quick phrases, or not."""
    tables.require_signed_in(user)
    with transaction.atomic():
        table = tables.lock_table(table_id)
        if table.host_id != user.pk:
            raise ServiceError(_("Only the host can do that."), code="not_host")
        tables.require_open(table)
        refuse_practice(table)
        ChatSettings.objects.update_or_create(table=table,
                                              defaults={"watcher_phrases": allowed})
        tables.touch(table_id=table.pk, events=[{"kind": "phrases", "watchers": allowed}])
    return allowed
