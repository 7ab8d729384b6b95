"""Reads: the bell's count and list, a person's choices, who is looking or active."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from apps.accounts.activity import active_since
from apps.tables.models import Connection

from . import kinds
from .models import Notification, Preference, PushSubscription

#: Notifications shown on the list page.
LIST_SIZE = 50


def push_enabled() -> bool:
    return bool(settings.VAPID_PUBLIC_KEY and settings.VAPID_PRIVATE_KEY)


def unread_count(user_id: int) -> int:
    return Notification.objects.filter(recipient_id=user_id, shown=True,
                                       read_at__isnull=True).count()


def recent(user_id: int, *, limit: int = LIST_SIZE) -> list[Notification]:
    return list(Notification.objects.filter(recipient_id=user_id, shown=True)
                .order_by("-created_at", "-pk")[:limit])


def choices(user_ids) -> dict[tuple[int, str, str], bool]:
    """(person, kind, channel) -> chosen, for the rows people wrote (defaults elsewhere)."""
    return {(p.user_id, p.kind, p.channel): p.enabled
            for p in Preference.objects.filter(user_id__in=list(user_ids))}


def wants(chosen: dict, user_id: int, kind: kinds.Kind, channel: str) -> bool:
    return chosen.get((user_id, kind.name, channel), channel in kind.channels)


def choices_of(user) -> list[dict]:
    """The profile's table: every kind, and for each channel whether it is on."""
    chosen = choices([user.pk])
    return [{"kind": k, "channels": [(c, kinds.CHANNEL_LABELS[c], wants(chosen, user.pk, k, c))
                                     for c in kinds.CHANNELS]}
            for k in kinds.KINDS.values()]


def subscriptions(user_ids) -> dict[int, list[PushSubscription]]:
    found: dict[int, list[PushSubscription]] = {}
    for sub in PushSubscription.objects.filter(user_id__in=list(user_ids)).order_by("pk"):
        found.setdefault(sub.user_id, []).append(sub)
    return found


def looking_at(user_id: int) -> set[int]:
    """The tables whose page the person has open now (the tables' presence rows)."""
    return set(Connection.objects.filter(user_id=user_id).values_list("table_id", flat=True))


def active(user_ids, *, now: datetime | None = None) -> set[int]:
    """Those active on the site in the last ``NOTIFY_ACTIVE_SECONDS``."""
    now = now or timezone.now()
    return active_since(user_ids, now - timedelta(seconds=settings.NOTIFY_ACTIVE_SECONDS))
