"""The site's side: the bell on every signed-in page and its count, the list, "mark all
read", a notification opened, the choices on the profile (the bell's channel obeyed), this
browser's subscription, and the installed app's manifest, worker and offline page under a
strict Content-Security-Policy."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from apps.notifications import delivery, services
from apps.notifications.models import Notification, Preference, PushSubscription

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def invite(person, n: int = 1) -> None:
    for i in range(n):
        services.notify(kind="invitation", recipients=[person.pk], key=f"invitation:{i}",
                        data={"table": "Mesa", "code": "ABCDEF", "name": "bea"})
    delivery.plan()


def test_the_bell_counts_unread_on_every_page_and_the_list_reads_them(people):
    ana = people["ana"]
    client = signed_in(ana)
    page = client.get("/lobby/").content.decode()
    assert 'id="bell"' in page and 'class="bell-count" hidden>0<' in page
    invite(ana, 2)
    page = client.get("/lobby/").content.decode()
    assert 'class="bell-count">2<' in page
    assert client.get("/notifications/count/").json() == {"unread": 2}
    listing = client.get("/notifications/").content.decode()
    assert listing.count("bea te invita a Mesa") == 2  # in ana's Spanish
    n = Notification.objects.first()
    opened = client.get(f"/notifications/{n.pk}/open/")
    assert opened.status_code == 302 and opened["Location"] == "/t/ABCDEF/"
    assert client.get("/notifications/count/").json() == {"unread": 1}
    client.post("/notifications/read/")
    assert client.get("/notifications/count/").json() == {"unread": 0}


def test_nobody_else_opens_or_reads_a_persons_notification(people):
    invite(people["ana"])
    n = Notification.objects.get()
    assert signed_in(people["bea"]).get(f"/notifications/{n.pk}/open/").status_code == 404
    assert Client().get("/notifications/").status_code == 302  # sign in first


def test_the_choices_on_the_profile_and_the_bells_channel_obeyed(people):
    caio = people["caio"]
    client = signed_in(caio)
    profile = client.get("/accounts/profile/").content.decode()
    assert 'id="notifications"' in profile
    assert 'name="turn:email" id="n-turn-email" checked' in profile
    assert 'name="friend_request:email" id="n-friend_request-email" aria' in profile  # off
    # Everything on but the bell for invitations.
    boxes = {f"{k}:{c}": "on" for k in ("turn", "invitation", "friend_request")
             for c in ("site", "email", "push")}
    del boxes["invitation:site"]
    assert client.post("/notifications/choices/", boxes).status_code == 302
    assert Preference.objects.get(user=caio, kind="invitation", channel="site").enabled is False
    assert Preference.objects.get(user=caio, kind="friend_request", channel="email").enabled
    invite(caio)
    assert Notification.objects.get().shown is False
    assert client.get("/notifications/count/").json() == {"unread": 0}


def test_a_browser_subscribes_and_unsubscribes(people, vapid):
    ana = people["ana"]
    client = signed_in(ana)
    assert 'id="push-on"' in client.get("/accounts/profile/").content.decode()
    sub = {"endpoint": "https://fcm.googleapis.com/fcm/send/abc",
           "keys": {"p256dh": "BPk", "auth": "xyz"}}
    answer = client.post("/notifications/push/", json.dumps(sub),
                         content_type="application/json")
    assert answer.json()["ok"] and PushSubscription.objects.get().user == ana
    for elsewhere in ("ftp://x", "https://10.0.0.7/push", "http://127.0.0.2:6379/",
                      "https://fcm.googleapis.com.evil.example/x"):
        bad = client.post("/notifications/push/", json.dumps({**sub, "endpoint": elsewhere}),
                          content_type="application/json")
        assert bad.status_code == 400, elsewhere
    assert PushSubscription.objects.count() == 1
    client.post("/notifications/push/remove/", json.dumps({"endpoint": sub["endpoint"]}),
                content_type="application/json")
    assert PushSubscription.objects.count() == 0


def test_without_vapid_keys_the_profile_offers_no_push(people, settings):
    settings.VAPID_PUBLIC_KEY = settings.VAPID_PRIVATE_KEY = ""
    assert 'id="push-on"' not in signed_in(people["ana"]).get("/accounts/profile/") \
        .content.decode()


def test_the_manifest_the_worker_and_the_offline_page(client):
    manifest = client.get("/manifest.webmanifest")
    assert manifest["Content-Type"] == "application/manifest+json"
    data = manifest.json()
    assert data["display"] == "standalone" and data["start_url"] == "/" and data["scope"] == "/"
    sizes = {(i["sizes"], i["purpose"]) for i in data["icons"]}
    assert sizes == {("192x192", "any"), ("512x512", "any"), ("192x192", "maskable"),
                     ("512x512", "maskable")}
    for icon in data["icons"]:
        assert client.get(icon["src"]).status_code == 200
    worker = client.get("/sw.js")
    assert worker["Content-Type"].startswith("application/javascript")
    assert worker["Service-Worker-Allowed"] == "/"
    assert "showNotification" in worker.content.decode()
    offline = client.get("/offline/")
    assert offline.status_code == 200
    policy = client.get("/").headers["Content-Security-Policy"]
    assert "worker-src 'self'" in policy and "manifest-src 'self'" in policy
    assert "unsafe-inline" not in policy
    assert '<link rel="manifest" href="/manifest.webmanifest">' in client.get("/").content \
        .decode()


def test_the_offline_page_holds_no_persons_data(people):
    page = signed_in(people["ana"]).get("/offline/").content.decode()
    assert "ana" not in page and "bell" not in page
