"""The writers of this app's rows: notifications made (:func:`notify`), read, the person's
choices, their browsers' push subscriptions, the one-click unsubscribe.

:func:`notify` runs in the transaction of what caused the notification when there is one (a
table's version: ``sources.table_changing``) or on its commit (the signals of the apps below):
a notification is never told of something that was rolled back, and a fact heard twice (a task
run again, a signal sent twice) makes one row, its key being unique. The worker is asked after
the commit (``tasks.process``); beat's sweep does what a lost ask left.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime

from celery import current_app
from django.core import signing
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.core.doorbell import user_notified
from apps.core.errors import ServiceError

from . import kinds, selectors
from .models import Channel, Notification, Preference, PushSubscription

log = logging.getLogger(__name__)

PROCESS_TASK = "apps.notifications.tasks.process"
UNSUBSCRIBE_SALT = "notifications.unsubscribe"


def notify(*, kind: str, recipients: Iterable[int], key: str, data: dict,
           table_id: int | None = None, now: datetime | None = None) -> int:
    """One ``kind`` notification for each of ``recipients`` (ids), keyed ``key:u<id>``: a key
    already written is left as it is. Returns how many were asked for."""
    if kinds.get(kind) is None:
        raise ValueError(f"undeclared notification kind {kind!r}")
    now = now or timezone.now()
    rows = [Notification(recipient_id=user_id, kind=kind, key=f"{key}:u{user_id}"[:200],
                         data=data, table_id=table_id, created_at=now)
            for user_id in sorted(set(recipients))]
    if not rows:
        return 0
    Notification.objects.bulk_create(rows, ignore_conflicts=True)
    transaction.on_commit(queue_process)
    return len(rows)


def queue_process() -> None:
    """Ask a worker to plan and send what is new (never raises: beat's sweep is the net)."""
    try:
        current_app.send_task(PROCESS_TASK)
    except Exception:
        log.warning("could not queue the notifications' task; beat's sweep will do it",
                    exc_info=True)


def ring_bell(user_id: int) -> None:
    """The person's pages hear their unread count (``ws/me/``, every socket of theirs)."""
    user_notified(user_id, {"kind": "bell", "unread": selectors.unread_count(user_id)})


def mark_read(*, user, notification_id: int | None = None, now: datetime | None = None) -> int:
    """One of the person's notifications read (or all of them); their bell hears it."""
    rows = Notification.objects.filter(recipient_id=user.pk, read_at__isnull=True)
    if notification_id is not None:
        rows = rows.filter(pk=notification_id)
    changed = rows.update(read_at=now or timezone.now())
    if changed:
        transaction.on_commit(lambda: ring_bell(user.pk))
    return changed


def seen_table(*, user_id: int, table_id: int, now: datetime | None = None) -> int:
    """The person came to a table: what they were told about it is read (its mails and pushes
    not yet sent are no longer due)."""
    changed = Notification.objects.filter(recipient_id=user_id, table_id=table_id,
                                          read_at__isnull=True).update(
        read_at=now or timezone.now())
    if changed:
        transaction.on_commit(lambda: ring_bell(user_id))
    return changed


def set_choices(*, user, choices: dict[tuple[str, str], bool]) -> None:
    """The person's choice for each (kind, channel) given; unknown ones are refused."""
    for kind, channel in choices:
        if kinds.get(kind) is None or channel not in kinds.CHANNELS:
            raise ServiceError(_("There is no such notification."), code="no_such_kind")
    now = timezone.now()
    with transaction.atomic():
        for (kind, channel), enabled in choices.items():
            Preference.objects.update_or_create(
                user_id=user.pk, kind=kind, channel=channel,
                defaults={"enabled": bool(enabled), "updated_at": now})


def unsubscribe_token(*, user_id: int, kind: str) -> str:
    """The signed part of a mail's one-click unsubscribe link (no sign-in needed; it does
    not expire, as old mails keep their links)."""
    return signing.dumps({"u": user_id, "k": kind}, salt=UNSUBSCRIBE_SALT, compress=True)


def read_unsubscribe_token(token: str) -> tuple[int, str]:
    try:
        value = signing.loads(token, salt=UNSUBSCRIBE_SALT)
        user_id, kind = int(value["u"]), str(value["k"])
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise ServiceError(_("This unsubscribe link is not valid."), code="bad_token") from None
    if kinds.get(kind) is None:
        raise ServiceError(_("This unsubscribe link is not valid."), code="bad_token")
    return user_id, kind


def unsubscribe(*, token: str) -> tuple[int, str]:
    """The mail's link: no more mails of that kind for that person. Returns (person, kind)."""
    user_id, kind = read_unsubscribe_token(token)
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        raise ServiceError(_("This unsubscribe link is not valid."), code="bad_token")
    set_choices(user=user, choices={(kind, Channel.EMAIL.value): False})
    return user_id, kind


def subscribe_push(*, user, endpoint: str, p256dh: str, auth: str,
                   user_agent: str = "") -> PushSubscription:
    """This browser's push subscription, kept (one row per endpoint: a browser that
    subscribes again, or passes to another person, replaces its row)."""
    if not selectors.push_enabled():
        raise ServiceError(_("Notifications on this device are not available on this site."),
                           code="push_off")
    endpoint = (endpoint or "").strip()
    if not _push_service(endpoint):
        raise ServiceError(_("This browser gave an address the site cannot use."),
                           code="bad_subscription")
    if not p256dh or not auth or len(p256dh) > 200 or len(auth) > 100 or len(endpoint) > 1000:
        raise ServiceError(_("This browser gave an address the site cannot use."),
                           code="bad_subscription")
    row, _created = PushSubscription.objects.update_or_create(
        endpoint=endpoint, defaults={"user_id": user.pk, "p256dh": p256dh, "auth": auth,
                                     "user_agent": user_agent[:300],
                                     "created_at": timezone.now()})
    return row


def _push_service(endpoint: str) -> bool:
    """Whether ``endpoint`` is at a push service the site posts to (``PUSH_ENDPOINT_HOSTS``):
    the worker sends there, so an address on the site's own network is never taken."""
    from urllib.parse import urlsplit

    from django.conf import settings

    try:
        parts = urlsplit(endpoint)
        host = (parts.hostname or "").lower()
    except ValueError:
        return False
    allowed = [h.lower().lstrip(".") for h in settings.PUSH_ENDPOINT_HOSTS]
    if parts.scheme == "http":
        return host == "127.0.0.1" and "127.0.0.1" in allowed
    return parts.scheme == "https" and any(host == h or host.endswith("." + h)
                                           for h in allowed)


def unsubscribe_push(*, user, endpoint: str) -> int:
    deleted, _rows = PushSubscription.objects.filter(user_id=user.pk,
                                                     endpoint=endpoint).delete()
    return deleted
