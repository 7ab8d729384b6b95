"""The worker's side of the outbox: plan each new notification's deliveries from the person's
choices, then send what is due, recording every try (docs/notifications.md, "Reliability").

- :func:`plan`: a notification not planned yet gets its bell flag and one delivery row per
  channel the person wants (one per browser for push); a gathered kind's mail waits
  ``NOTIFY_GATHER_SECONDS``.
- :func:`claim`: due rows (pending and due, or ``sending`` whose worker's lease ran out: it was
  killed) are taken with ``SELECT ... FOR UPDATE SKIP LOCKED`` and marked ``sending`` with a
  lease, in a transaction of their own, before anything is sent: two workers, a task run twice
  and beat's sweep never take the same row.
- :func:`send_claimed`: each is checked again (the person's choice now, read already, the
  table's page open, active on the site a moment ago: then ``skipped``), sent, and its end
  written only if the claim is still this one's: ``sent``; a transient failure back to
  ``pending`` later (doubling waits, ``NOTIFY_MAX_ATTEMPTS`` tries, then ``failed``); a
  permanent one ``failed`` at once (a refused address is remembered; a push subscription its
  service no longer knows, 404/410, is deleted).

A worker killed after a mail server or push service took the message and before its end was
written sends it again when the lease runs out: the one window in which a message can go
twice (milliseconds), which the mail's Message-ID and the push's Topic make recognisable
(docs/notifications.md says so). Killed before they took it, nothing was sent, and the next
try sends it once.
"""

from __future__ import annotations

import logging
import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from . import kinds, mails, push, selectors
from .models import Channel, Delivery, Notification, RefusedAddress
from .outcome import Outcome

log = logging.getLogger(__name__)
User = get_user_model()

#: Notifications planned, and deliveries claimed, per transaction.
PLAN_BATCH = 200
CLAIM_BATCH = 50


def lease() -> timedelta:
    return timedelta(seconds=settings.NOTIFY_SEND_LEASE_SECONDS)


def backoff(attempts: int) -> timedelta:
    seconds = settings.NOTIFY_RETRY_SECONDS * 2 ** max(attempts - 1, 0)
    return timedelta(seconds=min(seconds, settings.NOTIFY_RETRY_MAX_SECONDS))


def process(*, now: datetime | None = None) -> dict:
    """Plan what is new, then send what is due, until nothing is left (a bounded loop)."""
    planned = sent = 0
    for _round in range(20):
        p = plan(now=now)
        s = send_due(now=now)
        planned, sent = planned + p, sent + s
        if p < PLAN_BATCH and s < CLAIM_BATCH:
            break
    return {"planned": planned, "sent": sent}


# -- planning ------------------------------------------------------------------------------------

def plan(*, now: datetime | None = None) -> int:
    now = now or timezone.now()
    with transaction.atomic():
        rows = list(Notification.objects.select_for_update(skip_locked=True)
                    .filter(planned=False).order_by("created_at", "pk")[:PLAN_BATCH])
        if not rows:
            return 0
        people = {u.pk: u for u in User.objects.filter(pk__in={n.recipient_id for n in rows})
                  .select_related("profile")}
        chosen = selectors.choices(people)
        subs = selectors.subscriptions(people) if selectors.push_enabled() else {}
        deliveries = []
        for n in rows:
            kind, person = kinds.get(n.kind), people.get(n.recipient_id)
            n.planned = True
            if kind is None or person is None:
                continue
            n.shown = selectors.wants(chosen, person.pk, kind, kinds.SITE)
            if selectors.wants(chosen, person.pk, kind, kinds.EMAIL) and _mailable(person):
                wait = settings.NOTIFY_GATHER_SECONDS if kind.gathered else 0
                deliveries.append(Delivery(notification=n, channel=Channel.EMAIL,
                                           target="email",
                                           due_at=n.created_at + timedelta(seconds=wait)))
            if selectors.wants(chosen, person.pk, kind, kinds.PUSH):
                deliveries += [Delivery(notification=n, channel=Channel.PUSH,
                                        target=f"push:{sub.pk}", subscription=sub, due_at=now)
                               for sub in subs.get(person.pk, [])]
        Notification.objects.bulk_update(rows, ["planned", "shown"])
        Delivery.objects.bulk_create(deliveries, ignore_conflicts=True)
        bells = {n.recipient_id for n in rows if n.shown}
        transaction.on_commit(lambda: [_ring(user_id) for user_id in sorted(bells)])
    return len(rows)


def _mailable(person) -> bool:
    profile = getattr(person, "profile", None)
    return bool(person.email) and person.is_active and not getattr(profile, "guest", False)


def _ring(user_id: int) -> None:
    from .services import ring_bell

    ring_bell(user_id)


# -- claiming and sending ------------------------------------------------------------------------

def send_due(*, now: datetime | None = None) -> int:
    claimed = claim(now=now)
    if claimed:
        send_claimed(claimed)
    return len(claimed)


def claim(*, now: datetime | None = None) -> list[Delivery]:
    """Take due deliveries for this worker (and, with a gathered mail, the person's other
    mails of that kind still waiting: they go in the same mail)."""
    now = now or timezone.now()
    due = Q(state=Delivery.State.PENDING, due_at__lte=now) \
        | Q(state=Delivery.State.SENDING, lease_until__lt=now)
    with transaction.atomic():
        rows = list(Delivery.objects.select_for_update(skip_locked=True, of=("self",))
                    .filter(due).select_related("notification").order_by("due_at", "pk")
                    [:CLAIM_BATCH])
        gathered = {(d.notification.recipient_id, d.notification.kind) for d in rows
                    if d.channel == Channel.EMAIL and _gathered(d.notification.kind)}
        taken = {d.pk for d in rows}
        for recipient_id, kind in sorted(gathered):
            rows += list(Delivery.objects.select_for_update(skip_locked=True, of=("self",))
                         .filter(channel=Channel.EMAIL, state=Delivery.State.PENDING,
                                 notification__recipient_id=recipient_id,
                                 notification__kind=kind)
                         .exclude(pk__in=taken).select_related("notification"))
        if not rows:
            return []
        until = now + lease()
        Delivery.objects.filter(pk__in=[d.pk for d in rows]).update(
            state=Delivery.State.SENDING, lease_until=until, attempts=F("attempts") + 1)
        for d in rows:
            d.state, d.lease_until, d.attempts = Delivery.State.SENDING, until, d.attempts + 1
    return rows


def _gathered(kind_name: str) -> bool:
    kind = kinds.get(kind_name)
    return kind is not None and kind.gathered


def send_claimed(rows: list[Delivery]) -> None:
    """Send what :func:`claim` took: mails grouped (a gathered kind's per person), pushes one
    by one. Nothing here raises: every end is written on its rows."""
    mail_groups: dict[tuple, list[Delivery]] = {}
    for d in rows:
        if d.channel == Channel.EMAIL:
            n = d.notification
            group = (n.recipient_id, n.kind) if _gathered(n.kind) else (n.recipient_id, n.pk)
            mail_groups.setdefault(group, []).append(d)
        else:
            _finish([d], _attempt(lambda d=d: _push_one(d)))
    for group in mail_groups.values():
        _send_mail_group(group)


def _attempt(send) -> Outcome:
    try:
        return send()
    except Exception as err:  # an end must be written whatever happened
        log.exception("a notification's send failed unexpectedly")
        return Outcome("retry", reason=f"{type(err).__name__}: {err}"[:300])


def _checks(rows: list[Delivery], channel: str) -> tuple[list[Delivery], list[Delivery], str]:
    """Split ``rows`` (one person's) into those still to send and those to skip now."""
    person_id = rows[0].notification.recipient_id
    now = timezone.now()
    chosen = selectors.choices([person_id])
    if person_id in selectors.active([person_id], now=now):
        return [], rows, "active on the site"
    looking = selectors.looking_at(person_id)
    keep, skip, why = [], [], ""
    for d in rows:
        n = d.notification
        kind = kinds.get(n.kind)
        if kind is None or not selectors.wants(chosen, person_id, kind, channel):
            skip.append(d)
            why = "turned off"
        elif n.read_at is not None:
            skip.append(d)
            why = why or "read on the site"
        elif n.table_id is not None and n.table_id in looking:
            skip.append(d)
            why = why or "the table's page is open"
        else:
            keep.append(d)
    return keep, skip, why


def _send_mail_group(rows: list[Delivery]) -> None:
    for d in rows:
        d.notification.refresh_from_db(fields=["read_at"])
    keep, skip, why = _checks(rows, kinds.EMAIL)
    if skip:
        _finish(skip, Outcome("skipped", reason=why))
    if not keep:
        return
    person = User.objects.select_related("profile").filter(pk=keep[0].notification.recipient_id) \
        .first()
    if person is None or not _mailable(person):
        _finish(keep, Outcome("skipped", reason="no address"))
        return
    if RefusedAddress.objects.filter(address=person.email.lower()).exists():
        _finish(keep, Outcome("failed", reason="the address was refused"))
        return
    batch = keep[0].batch or f"<{uuid.uuid4().hex}@{mails.domain()}>"
    Delivery.objects.filter(pk__in=[d.pk for d in keep]).update(batch=batch)
    _finish(keep, _attempt(lambda: mails.send(person=person, deliveries=keep, message_id=batch)))


def _push_one(d: Delivery) -> Outcome:
    d.notification.refresh_from_db(fields=["read_at"])
    keep, skip, why = _checks([d], kinds.PUSH)
    if skip:
        return Outcome("skipped", reason=why)
    if d.subscription_id is None or not selectors.push_enabled():
        return Outcome("skipped", reason="push is off")
    language = User.objects.filter(pk=d.notification.recipient_id) \
        .values_list("profile__language", flat=True).first()
    return push.send(delivery=d, language=language)


def _finish(rows: list[Delivery], outcome: Outcome) -> None:
    """Write how the send ended, on the rows this claim still holds (a row whose lease ran out
    and was taken by another worker is that worker's now)."""
    now = timezone.now()
    held = Q(state=Delivery.State.SENDING)
    for d in rows:
        mine = Delivery.objects.filter(held, pk=d.pk, attempts=d.attempts)
        if outcome.state == "sent":
            mine.update(state=Delivery.State.SENT, sent_at=now, lease_until=None,
                        reason="", batch=outcome.batch or d.batch)
        elif outcome.state == "skipped":
            mine.update(state=Delivery.State.SKIPPED, lease_until=None, reason=outcome.reason)
        elif outcome.state == "retry" and d.attempts < settings.NOTIFY_MAX_ATTEMPTS:
            wait = backoff(d.attempts)
            if outcome.retry_after:
                wait = max(wait, timedelta(seconds=outcome.retry_after))
            mine.update(state=Delivery.State.PENDING, lease_until=None, due_at=now + wait,
                        reason=outcome.reason[:300])
        else:
            mine.update(state=Delivery.State.FAILED, lease_until=None,
                        reason=(outcome.reason or "too many tries")[:300])
    if outcome.refused:
        RefusedAddress.objects.get_or_create(address=outcome.refused.lower(),
                                             defaults={"reason": outcome.reason[:300]})
        log.warning("mail to %s refused for good: %s", outcome.refused, outcome.reason)
    if outcome.gone and rows and rows[0].subscription_id is not None:
        from .models import PushSubscription

        PushSubscription.objects.filter(pk=rows[0].subscription_id).delete()
        log.info("push subscription %s removed: %s", rows[0].subscription_id, outcome.reason)


def prune(*, now: datetime | None = None) -> int:
    """Notifications older than ``NOTIFY_KEEP_DAYS`` go, with their deliveries."""
    now = now or timezone.now()
    deleted, _rows = Notification.objects.filter(
        created_at__lt=now - timedelta(days=settings.NOTIFY_KEEP_DAYS)).delete()
    return deleted
