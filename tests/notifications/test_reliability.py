"""Reliability with real processes (tests/live.py ``Stack``: a Celery worker and beat on
PostgreSQL): a worker killed in the middle of a send, and Redis (the broker) restarted with
the task that was to send a notification lost, neither lose a notification nor send one
twice. The mail goes to a real SMTP server (aiosmtpd) started by the test, the push to a push
service of the test's own."""

from __future__ import annotations

import threading
import time

import pytest

from apps.notifications import services
from apps.notifications.models import Delivery

from .conftest import Browser, PushService, b64url, make_people

pytestmark = [pytest.mark.slow, pytest.mark.postgres,
              pytest.mark.django_db(transaction=True)]


def wait_for(predicate, timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"not within {timeout}s: {what}"
        time.sleep(0.2)


def stack_env(smtp) -> dict:
    return {"EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": str(smtp.port), "EMAIL_USE_TLS": "0",
            "EMAIL_TIMEOUT": "30", "SITE_URL": "http://club.test",
            # A killed worker's claim runs out soon, beat looks every second, and nobody is
            # "active" for long (the test's own requests make them so).
            "NOTIFY_SEND_LEASE_SECONDS": "6", "NOTIFY_SWEEP_SECONDS": "1",
            "NOTIFY_ACTIVE_SECONDS": "1", "NOTIFY_RETRY_SECONDS": "1"}


class HeldRcpt:
    """The SMTP server holds its answer to the first RCPT TO until released: the worker is
    killed while it waits, mid-conversation, before the message was handed over."""

    def __init__(self, box) -> None:
        self.box = box
        self.waiting = threading.Event()
        self.release = threading.Event()
        self.first = True
        original = box.handle_RCPT

        async def handle_rcpt(server, session, envelope, address, options):
            import asyncio

            if self.first:
                self.first = False
                self.waiting.set()
                while not self.release.is_set():
                    await asyncio.sleep(0.05)
            return await original(server, session, envelope, address, options)

        box.handle_RCPT = handle_rcpt


def test_a_worker_killed_while_sending_neither_loses_nor_doubles_a_mail(smtp, tmp_path,
                                                                         settings, vapid):
    from ..live import Stack

    public, private = vapid
    people = make_people()
    held = HeldRcpt(smtp)
    push = PushService()
    browser = Browser()
    site = Stack(tmp_path / "site", {**stack_env(smtp), "VAPID_PUBLIC_KEY": public,
                                     "VAPID_PRIVATE_KEY": private})
    try:
        services.subscribe_push(user=people["bea"], endpoint=push.endpoint("bea"),
                                p256dh=browser.p256dh, auth=b64url(browser.auth))
        site.worker()
        site.beat()
        services.notify(kind="invitation", recipients=[people["bea"].pk], key="invitation:1",
                        data={"table": "Mesa", "code": "ABCDEF", "name": "ana"})
        assert held.waiting.wait(90), site.log("worker") + site.log("beat")
        site.kill("worker")  # SIGKILL, mid-conversation with the mail server
        held.release.set()
        mail = Delivery.objects.get(channel="email")
        assert (mail.state, mail.attempts) == (Delivery.State.SENDING, 1)
        site.worker()  # a worker again: the claim runs out, beat's sweep hands it over
        wait_for(lambda: Delivery.objects.get(channel="email").state == Delivery.State.SENT,
                 90, "the mail sent after the lease")
        time.sleep(8)  # more sweeps and another lease: nothing goes twice
        assert [m["to"] for m in smtp.messages] == [["bea@example.com"]]
        mail = Delivery.objects.get(channel="email")
        assert mail.attempts == 2
        assert len(push.received) == 1  # the push, sent once beside it
        assert browser.decrypt(push.received[0]["body"])["title"] == "ana convida você para Mesa"
    finally:
        site.stop()
        push.close()


def test_redis_restarted_with_the_task_lost_neither_loses_nor_doubles(smtp, tmp_path,
                                                                       settings):
    from tools.procs import RedisServer

    from ..live import Stack

    people = make_people()
    redis = RedisServer(tmp_path)
    redis.start()
    site = Stack(tmp_path / "site", {**stack_env(smtp), "REDIS_URL": redis.url,
                                     "CELERY_BROKER_URL": redis.url})
    try:
        site.worker()
        site.beat()
        redis.proc.kill()  # the broker gone: the task this notification asks for is lost
        services.notify(kind="invitation", recipients=[people["caio"].pk], key="invitation:1",
                        data={"table": "Mesa", "code": "ABCDEF", "name": "ana"})
        time.sleep(3)
        assert smtp.messages == []
        redis.start()  # empty: nothing queued survived
        wait_for(lambda: len(smtp.messages) == 1, 120, "the mail after Redis came back")
        services.notify(kind="invitation", recipients=[people["caio"].pk], key="invitation:1",
                        data={"table": "Mesa", "code": "ABCDEF", "name": "ana"})  # heard again
        time.sleep(6)
        assert [m["to"] for m in smtp.messages] == [["caio@example.com"]]
        assert Delivery.objects.get().state == Delivery.State.SENT
    finally:
        site.stop()
        redis.stop()
