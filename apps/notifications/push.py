"""A notification's push to one browser (Web Push: RFC 8030, encrypted per RFC 8291, signed
with the site's VAPID key, RFC 8292) with pywebpush. The payload is what the service worker
shows: title, body and the link the notification opens, in the person's language."""

from __future__ import annotations

import json

from django.conf import settings
from django.urls import reverse
from django.utils import translation

from . import kinds
from .outcome import Outcome


def payload(notification, *, language: str | None) -> dict:
    kind = kinds.get(notification.kind)
    with translation.override(language or settings.LANGUAGE_CODE):
        title, body = kind.words(notification.data)
    return {"title": title, "body": body, "tag": f"n{notification.pk}",
            "link": f"{settings.SITE_URL}{reverse('notifications:open', args=[notification.pk])}",
            "kind": notification.kind}


def send(*, delivery, language: str | None):
    from pywebpush import WebPushException, webpush

    sub = delivery.subscription
    data = json.dumps(payload(delivery.notification, language=language))
    try:
        response = webpush(
            subscription_info={"endpoint": sub.endpoint,
                               "keys": {"p256dh": sub.p256dh, "auth": sub.auth}},
            data=data, vapid_private_key=settings.VAPID_PRIVATE_KEY,
            vapid_claims={"sub": settings.VAPID_SUBJECT}, ttl=settings.PUSH_TTL_SECONDS,
            timeout=settings.PUSH_TIMEOUT_SECONDS,
            # A push sent again (a worker killed mid-send) replaces the first at the push
            # service while undelivered: the Topic names the notification.
            headers={"Topic": f"n{delivery.notification_id}", "Urgency": "high"})
    except WebPushException as err:
        return _refused(getattr(err, "response", None), str(err))
    except Exception as err:  # the network: a timeout, a refused connection
        return Outcome("retry", reason=f"{type(err).__name__}: {err}"[:300])
    if response is not None and getattr(response, "status_code", 201) >= 400:
        return _refused(response, response.text[:200])
    return Outcome("sent")


def _refused(response, said: str):
    status = getattr(response, "status_code", None)
    reason = f"{status} {said}"[:300]
    if status in (404, 410):
        return Outcome("failed", reason=reason, gone=True)
    if status is None or status == 429 or status >= 500:
        retry_after = None
        if response is not None:
            try:
                retry_after = float(response.headers.get("Retry-After", ""))
            except ValueError:
                retry_after = None
        return Outcome("retry", reason=reason, retry_after=retry_after)
    return Outcome("failed", reason=reason)
