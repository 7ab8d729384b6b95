"""A notification's mail, in its person's language, through Django's e-mail framework (an
SMTP server in production, files under var/mails/ for ``make run``): a gathered kind's mail
lists every table still waiting; every mail carries a one-click unsubscribe link that needs no
sign-in and the RFC 8058 headers that let a mail program unsubscribe by itself."""

from __future__ import annotations

import smtplib
from urllib.parse import urlsplit

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from . import kinds
from .outcome import Outcome


def domain() -> str:
    return urlsplit(settings.SITE_URL).hostname or "localhost"


def absolute(path: str) -> str:
    return f"{settings.SITE_URL}{path}"


def unsubscribe_url(*, user_id: int, kind: str) -> str:
    from .services import unsubscribe_token

    return absolute(reverse("notifications:unsubscribe",
                            args=[unsubscribe_token(user_id=user_id, kind=kind)]))


def compose(*, person, deliveries, message_id: str) -> EmailMessage:
    """The mail for ``deliveries`` (one person's, one kind's when gathered)."""
    language = getattr(getattr(person, "profile", None), "language", None) \
        or settings.LANGUAGE_CODE
    kind = kinds.get(deliveries[0].notification.kind)
    with translation.override(language):
        items = []
        for d in deliveries:
            title, body = kind.words(d.notification.data)
            items.append({"title": title, "body": body,
                          "link": absolute(reverse("notifications:open",
                                                   args=[d.notification.pk]))})
        if len(items) == 1:
            subject = items[0]["title"]
        else:
            subject = ngettext("%(count)d table is waiting for your move",
                               "%(count)d tables are waiting for your move",
                               len(items)) % {"count": len(items)}
        unsubscribe = unsubscribe_url(user_id=person.pk, kind=kind.name)
        body = render_to_string("notifications/mail.txt", {
            "items": items, "kind_label": kind.label, "unsubscribe": unsubscribe,
            "choices": absolute(reverse("accounts:profile") + "#notifications"),
            "site": _("Domino Club")})
        subject = f"{_('Domino Club')}: {subject}"
    return EmailMessage(
        subject=subject, body=body, to=[person.email],
        headers={"Message-ID": message_id, "Content-Language": language,
                 "List-Unsubscribe": f"<{unsubscribe}>",
                 "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
                 "Auto-Submitted": "auto-generated"})


def send(*, person, deliveries, message_id: str):
    """Send the mail; how it ended, for ``delivery._finish``."""
    message = compose(person=person, deliveries=deliveries, message_id=message_id)
    try:
        with get_connection(fail_silently=False) as connection:
            connection.send_messages([message])
    except smtplib.SMTPRecipientsRefused as err:
        code, said = next(iter(err.recipients.values()), (0, b""))
        reason = f"{code} {_text(said)}"
        if 500 <= int(code) < 600:
            return Outcome("failed", reason=reason, refused=person.email)
        return Outcome("retry", reason=reason)
    except smtplib.SMTPResponseException as err:
        reason = f"{err.smtp_code} {_text(err.smtp_error)}"
        if 500 <= err.smtp_code < 600:
            return Outcome("failed", reason=reason)
        return Outcome("retry", reason=reason)
    except (TimeoutError, smtplib.SMTPException, OSError) as err:
        return Outcome("retry", reason=f"{type(err).__name__}: {err}")
    return Outcome("sent", batch=message_id)


def _text(said) -> str:
    return said.decode(errors="replace") if isinstance(said, bytes) else str(said)
