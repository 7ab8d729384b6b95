"""Notifications fixtures: people with addresses and languages, a table, VAPID keys, a real
SMTP server (aiosmtpd, on a free port, in a thread of the test) and a push service of the
test's own (a local HTTP endpoint that keeps what it receives)."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth import get_user_model

from apps.notifications.management.commands.make_vapid_keys import make_pair

NAMES = {"ana": "es", "bea": "pt-br", "caio": "en", "dani": "es"}


def make_people() -> dict:
    User = get_user_model()
    people = {}
    for name, language in NAMES.items():
        user = User.objects.create_user(username=name, password="pw-" + name * 2,
                                        email=f"{name}@example.com")
        user.profile.language = language
        user.profile.save(update_fields=["language"])
        people[name] = user
    return people


@pytest.fixture
def people(db):
    return make_people()


@pytest.fixture
def vapid(settings):
    public, private = make_pair()
    settings.VAPID_PUBLIC_KEY, settings.VAPID_PRIVATE_KEY = public, private
    settings.VAPID_SUBJECT = "mailto:ops@example.com"
    settings.PUSH_ENDPOINT_HOSTS = ["fcm.googleapis.com", "127.0.0.1"]
    return public, private


@pytest.fixture(autouse=True)
def _quick(settings):
    """Nothing waits in these tests unless a test says so; a site URL for the links."""
    settings.NOTIFY_ACTIVE_SECONDS = 120
    settings.NOTIFY_GATHER_SECONDS = 900
    settings.SITE_URL = "http://club.test"


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Browser:
    """A browser's side of a push subscription (RFC 8291): its P-256 key pair and auth
    secret, with which the test decrypts what the push service received."""

    def __init__(self) -> None:
        import os

        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        self.key = ec.generate_private_key(ec.SECP256R1())
        self.auth = os.urandom(16)
        self.p256dh = b64url(self.key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))

    def decrypt(self, body: bytes) -> dict:
        import http_ece

        return json.loads(http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth,
                                           version="aes128gcm"))


class PushService:
    """A push service on 127.0.0.1: keeps each request (path, headers, body) and answers with
    ``status`` (201 unless told otherwise); ``hold`` (an Event) keeps its answer until set."""

    def __init__(self) -> None:
        self.received: list[dict] = []
        self.status = 201
        self.hold: threading.Event | None = None
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (the http.server API)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if service.hold is not None:
                    service.hold.wait(60)
                # Kept before the answer: the worker reads the answer and goes on, and a test
                # that looks right after must find the request (once, it did not).
                service.received.append({"path": self.path,
                                         "headers": {k.lower(): v for k, v in self.headers.items()},
                                         "body": body, "status": service.status})
                self.send_response(service.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def endpoint(self, name: str = "sub") -> str:
        return f"http://127.0.0.1:{self.port}/push/{name}"

    def close(self) -> None:
        if self.hold is not None:
            self.hold.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def push_service():
    service = PushService()
    yield service
    service.close()


class Mailbox:
    """What a real SMTP server (aiosmtpd) accepted: envelope recipients and the message."""

    def __init__(self) -> None:
        self.messages: list[dict] = []
        self.refuse: set[str] = set()
        self.hold: threading.Event | None = None

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
        if address in self.refuse:
            return "550 5.1.1 No such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):  # noqa: N802
        import asyncio
        import email
        import email.policy

        if self.hold is not None:
            while not self.hold.is_set():
                await asyncio.sleep(0.05)
        self.messages.append({"to": list(envelope.rcpt_tos),
                              "message": email.message_from_bytes(envelope.content,
                                                                 policy=email.policy.default)})
        return "250 Message accepted for delivery"


@pytest.fixture
def smtp(settings):
    """A real SMTP server on a free port, and the site's mail pointed at it."""
    from aiosmtpd.controller import Controller

    from tools.procs import free_port

    box = Mailbox()
    port = free_port()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", port
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_TIMEOUT = 10
    box.port = port
    yield box
    if box.hold is not None:
        box.hold.set()
    controller.stop()


def body_of(message) -> str:
    return message.get_body(preferencelist=("plain",)).get_content()


def started_pair_table(a, b):
    """``a`` and ``b`` at a started one-on-one table with no clock."""
    from apps.tables import services as tables
    from apps.tables.models import Table

    table = tables.create_table(host=a, preset="draw", players=2, public=True,
                                options={"turn_seconds": None})
    tables.join_table(user=b, table_id=table.pk)
    tables.start_match(user=a, table_id=table.pk)
    return Table.objects.get(pk=table.pk)
