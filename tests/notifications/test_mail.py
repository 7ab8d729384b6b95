"""Mail through a real SMTP server (aiosmtpd, started by the test): the recipient, the
person's language, the one-click unsubscribe link working without a session (and the RFC 8058
headers), the gathering of "your turn" mails, a refused address not tried again, the person's
choice obeyed, and no mail to someone looking at the table or active a moment ago."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from apps.notifications import delivery, services
from apps.notifications.models import Delivery, Notification, RefusedAddress
from apps.tables.models import Connection

from .conftest import body_of, started_pair_table

pytestmark = pytest.mark.django_db


def notify(kind: str, person, key: str, now=None, **data) -> None:
    data = {"table": "Mesa", "code": "ABCDEF", "name": "ana", "number": 1, **data}
    services.notify(kind=kind, recipients=[person.pk], key=key, data=data,
                    table_id=data.pop("table_id", None), now=now)


def later(seconds: float):
    return timezone.now() + timedelta(seconds=seconds)


def test_a_mail_goes_to_its_person_in_their_language_with_a_working_unsubscribe(people, smtp):
    bea = people["bea"]  # pt-br
    notify("invitation", bea, "invitation:1")
    delivery.process()
    assert len(smtp.messages) == 1
    got = smtp.messages[0]
    message = got["message"]
    assert got["to"] == ["bea@example.com"]
    assert message["Content-Language"] == "pt-br"
    assert "convida você" in message["Subject"]  # "ana convida você para Mesa"
    body = body_of(message)
    assert "Mesa" in body and "http://club.test/notifications/" in body
    link = re.search(r"<(http://club\.test/notifications/unsubscribe/[^>]+)>",
                     message["List-Unsubscribe"]).group(1)
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert link in body
    assert Delivery.objects.get().state == Delivery.State.SENT

    # The link, with no session: a page with one button; its POST stops that kind's mails.
    path = link.replace("http://club.test", "")
    anonymous = Client()
    page = anonymous.get(path)
    assert page.status_code == 200 and b"<form" in page.content
    notify("invitation", bea, "invitation:2")
    assert anonymous.post(path).status_code == 200
    delivery.process()
    assert len(smtp.messages) == 1
    assert Delivery.objects.filter(state=Delivery.State.SENT).count() == 1
    # Other kinds still come.
    notify("partner_invitation", bea, "partner:1", tournament="Copa", tournament_id=1)
    delivery.process()
    assert len(smtp.messages) == 2


def test_a_mail_programs_one_click_post_unsubscribes(people, smtp):
    notify("invitation", people["caio"], "invitation:1")
    delivery.process()
    link = re.search(r"<([^>]+)>", smtp.messages[0]["message"]["List-Unsubscribe"]).group(1)
    answer = Client(enforce_csrf_checks=True).post(
        link.replace("http://club.test", ""), data="List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded")
    assert answer.status_code == 200
    notify("invitation", people["caio"], "invitation:2")
    delivery.process()
    assert len(smtp.messages) == 1


def test_a_forged_unsubscribe_link_changes_nothing(people):
    answer = Client().post("/notifications/unsubscribe/not-a-token/")
    assert answer.status_code == 400


def test_your_turn_mails_are_gathered_one_per_window_listing_every_table(people, smtp,
                                                                         settings):
    settings.NOTIFY_GATHER_SECONDS = 900
    dani = people["dani"]
    notify("turn", dani, "turn:t1:v5", table="Mesa 1", code="AAAAAA")
    delivery.process()
    assert smtp.messages == []  # the window is open
    notify("turn", dani, "turn:t2:v9", table="Mesa 2", code="BBBBBB")
    delivery.process(now=later(899))
    assert smtp.messages == []
    delivery.process(now=later(901))
    assert len(smtp.messages) == 1
    body = body_of(smtp.messages[0]["message"])
    assert "Mesa 1" in body and "Mesa 2" in body  # every table waiting, in one mail
    assert "2 mesas" in smtp.messages[0]["message"]["Subject"]  # in Spanish
    # A turn right after the mail waits a whole window: at most one mail per window.
    notify("turn", dani, "turn:t1:v7", now=later(902), table="Mesa 1", code="AAAAAA")
    delivery.process(now=later(1000))
    assert len(smtp.messages) == 1
    delivery.process(now=later(1802))
    assert len(smtp.messages) == 2


def test_a_refused_address_is_marked_and_not_tried_again(people, smtp):
    smtp.refuse.add("caio@example.com")
    notify("invitation", people["caio"], "invitation:1")
    delivery.process()
    d = Delivery.objects.get()
    assert d.state == Delivery.State.FAILED and "550" in d.reason
    assert RefusedAddress.objects.filter(address="caio@example.com").exists()
    notify("invitation", people["caio"], "invitation:2")
    delivery.process(now=later(7200))
    assert Delivery.objects.filter(state=Delivery.State.FAILED).count() == 2
    assert smtp.messages == []


def test_a_server_away_is_tried_again_with_growing_waits_then_given_up(people, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 2
    settings.NOTIFY_MAX_ATTEMPTS, settings.NOTIFY_RETRY_SECONDS = 3, 10
    notify("invitation", people["ana"], "invitation:1")
    delivery.process()
    d = Delivery.objects.get()
    assert (d.state, d.attempts) == (Delivery.State.PENDING, 1)
    before = timezone.now()
    delivery.process(now=later(11))
    d.refresh_from_db()
    assert (d.state, d.attempts) == (Delivery.State.PENDING, 2)
    assert d.due_at >= before + timedelta(seconds=20)  # 10 s, then 20 s
    delivery.process(now=later(60))
    d.refresh_from_db()
    assert (d.state, d.attempts) == (Delivery.State.FAILED, 3)
    delivery.process(now=later(7200))
    d.refresh_from_db()
    assert d.attempts == 3


def test_the_persons_choice_is_obeyed_for_mail(people, smtp):
    ana = people["ana"]
    services.set_choices(user=ana, choices={("invitation", "email"): False})
    notify("invitation", ana, "invitation:1")
    delivery.process()
    assert smtp.messages == [] and Delivery.objects.count() == 0
    # Turned off after the mail was planned (a gathered one waiting): skipped when due.
    notify("turn", ana, "turn:t1:v1")
    delivery.process()
    services.set_choices(user=ana, choices={("turn", "email"): False})
    delivery.process(now=later(1000))
    assert smtp.messages == []
    assert Delivery.objects.get().state == Delivery.State.SKIPPED


def test_no_mail_to_a_person_at_the_table_or_active_a_moment_ago(people, smtp):
    ana, bea = people["ana"], people["bea"]
    table = started_pair_table(ana, bea)
    Connection.objects.create(table=table, user=bea, channel_name="test.bea")
    notify("invitation", bea, "invitation:1", table_id=table.pk)
    delivery.process()
    assert smtp.messages == []
    assert Delivery.objects.get().reason == "the table's page is open"
    assert Notification.objects.get().shown  # the bell still counts it

    from apps.accounts import activity

    activity._written.clear()
    activity.seen(ana.pk)
    notify("invitation", ana, "invitation:2")
    delivery.process()
    assert smtp.messages == []
    assert Delivery.objects.get(notification__recipient=ana).reason == "active on the site"
