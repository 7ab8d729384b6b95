"""Web push as a push service sees it: the encrypted request the worker sends reaches a local
HTTP endpoint of the test, which decrypts it with the browser's keys (RFC 8291, http-ece) and
checks its content and the VAPID signature (the JWT's ES256 signature, with the site's public
key); a 410 removes the subscription; the person's choice is obeyed."""

from __future__ import annotations

import json

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from apps.notifications import delivery, services
from apps.notifications.models import Delivery, PushSubscription

from .conftest import Browser, unb64url

pytestmark = pytest.mark.django_db


def subscribe(person, push_service, name="sub") -> Browser:
    browser = Browser()
    services.subscribe_push(user=person, endpoint=push_service.endpoint(name),
                            p256dh=browser.p256dh, auth=unb64url_auth(browser))
    return browser


def unb64url_auth(browser: Browser) -> str:
    from .conftest import b64url

    return b64url(browser.auth)


def verify_vapid(headers: dict, public_key: str, endpoint: str) -> dict:
    """The JWT of ``Authorization: vapid t=..., k=...``, checked: signed by the site's key
    (ES256), for the push service's origin. Returns its claims."""
    scheme, _sp, params = headers["authorization"].partition(" ")
    assert scheme == "vapid"
    fields = dict(part.strip().split("=", 1) for part in params.split(","))
    assert fields["k"] == public_key
    head, claims, signature = fields["t"].split(".")
    assert json.loads(unb64url(head)) == {"typ": "JWT", "alg": "ES256"}
    raw = unb64url(signature)
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(public_key))
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    key.verify(der, f"{head}.{claims}".encode(), ec.ECDSA(hashes.SHA256()))  # raises if forged
    with pytest.raises(InvalidSignature):
        key.verify(der, f"{head}.{claims}x".encode(), ec.ECDSA(hashes.SHA256()))
    decoded = json.loads(unb64url(claims))
    assert decoded["aud"] == endpoint.rsplit("/push/", 1)[0]
    return decoded


def test_the_push_is_encrypted_for_the_browser_and_signed_by_the_site(people, vapid,
                                                                       push_service):
    public, _private = vapid
    bea = people["bea"]  # pt-br
    browser = subscribe(bea, push_service)
    services.notify(kind="invitation", recipients=[bea.pk], key="invitation:1",
                    data={"table": "Mesa", "code": "ABCDEF", "name": "ana"})
    delivery.process()
    assert len(push_service.received) == 1
    got = push_service.received[0]
    assert got["headers"]["content-encoding"] == "aes128gcm"
    assert b"Mesa" not in got["body"]  # encrypted
    content = browser.decrypt(got["body"])
    assert content["title"] == "ana convida você para Mesa"
    assert content["link"].startswith("http://club.test/notifications/")
    n = Delivery.objects.get(channel="push").notification
    assert content["link"] == f"http://club.test/notifications/{n.pk}/open/"
    claims = verify_vapid(got["headers"], public, push_service.endpoint())
    assert claims["sub"] == "mailto:ops@example.com"
    assert got["headers"]["topic"] == f"n{n.pk}"
    assert Delivery.objects.get(channel="push").state == Delivery.State.SENT


def test_each_browser_gets_its_own_and_a_410_removes_the_subscription(people, vapid,
                                                                       push_service):
    ana = people["ana"]
    subscribe(ana, push_service, "one")
    subscribe(ana, push_service, "two")
    push_service.status = 410
    services.notify(kind="invitation", recipients=[ana.pk], key="invitation:1",
                    data={"table": "Mesa", "code": "ABCDEF", "name": "bea"})
    delivery.process()
    assert sorted(r["path"] for r in push_service.received) == ["/push/one", "/push/two"]
    assert PushSubscription.objects.count() == 0
    push_service.status = 201
    services.notify(kind="invitation", recipients=[ana.pk], key="invitation:2",
                    data={"table": "Mesa", "code": "ABCDEF", "name": "bea"})
    delivery.process()
    assert len(push_service.received) == 2  # nobody left to push to


def test_a_push_service_in_trouble_is_tried_again(people, vapid, push_service):
    subscribe(people["ana"], push_service)
    push_service.status = 503
    services.notify(kind="invitation", recipients=[people["ana"].pk], key="invitation:1",
                    data={"table": "Mesa", "code": "ABCDEF", "name": "bea"})
    delivery.process()
    d = Delivery.objects.get(channel="push")
    assert (d.state, d.attempts) == (Delivery.State.PENDING, 1)
    assert PushSubscription.objects.count() == 1


def test_the_persons_choice_is_obeyed_for_push(people, vapid, push_service):
    caio = people["caio"]
    subscribe(caio, push_service)
    services.set_choices(user=caio, choices={("invitation", "push"): False})
    services.notify(kind="invitation", recipients=[caio.pk], key="invitation:1",
                    data={"table": "Mesa", "code": "ABCDEF", "name": "bea"})
    # On by default for a turn; turned off before it was sent: skipped.
    services.notify(kind="turn", recipients=[caio.pk], key="turn:1",
                    data={"table": "Mesa", "code": "ABCDEF"})
    delivery.plan()
    services.set_choices(user=caio, choices={("turn", "push"): False})
    delivery.process()
    assert push_service.received == []
    pushes = Delivery.objects.filter(channel="push")
    assert list(pushes.values_list("state", flat=True)) == ["skipped"]
