"""Notifications in Chromium, against a site of real processes (tests/live.py ``Stack``: Daphne,
a worker and beat on PostgreSQL), with a real SMTP server (aiosmtpd) and a push service of the
test's own on 127.0.0.1:

- the site installs: the manifest and the service worker load, and Chromium's installability
  check (DevTools ``Page.getInstallabilityErrors``) reports no error; a push delivered to the
  worker through DevTools (``ServiceWorker.deliverPushMessage``) shows a notification with its
  title and link; the bell's count changes live when a notification is made;
- "Done when", as a new member would: the member turns on push in Chromium ("Notify me on this
  device") and e-mail on the profile, a friend plays at their table, and the member gets
  exactly one push and (after the gathering window, shortened) one mail, none while the
  table's page is open; unsubscribing from the mail stops mails of that kind.

Chromium cannot reach its own push service (FCM) from this machine, and its
``pushManager.subscribe`` waits for it forever; the page's ``subscribe`` is the one thing
replaced (an init script): it answers with a subscription whose endpoint is the test's push
service and whose keys are the test's, so that the site's worker really encrypts, signs and
posts the push, which the test decrypts and hands to Chromium's service worker through
DevTools. Everything else is the page's own code.
"""

from __future__ import annotations

import json
import random
import re
import time
from pathlib import Path

import pytest

from tests.notifications.conftest import Browser, Mailbox, PushService, b64url

from .test_table_page import ARGS, SHOTS, axe_check

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.postgres,
              pytest.mark.django_db(transaction=True),
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

#: The kind the "done when" test follows: at their turn-based table, the friend's move makes it
#: the member's turn (``match_over`` is followed the same way, by a move that ends the match).
KIND = "turn"
#: Windows shortened for the test (docs/notifications.md lists them).
GATHER_SECONDS, ACTIVE_SECONDS = 6, 2


def wait_for(predicate, timeout: float = 60, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, \
            f"not within {timeout}s: {what() if callable(what) else what}"
        time.sleep(0.2)


@pytest.fixture
def smtp_server():
    from aiosmtpd.controller import Controller

    from tools.procs import free_port

    box = Mailbox()
    box.port = free_port()
    controller = Controller(box, hostname="127.0.0.1", port=box.port)
    controller.start()
    yield box
    controller.stop()


@pytest.fixture
def site(tmp_path, smtp_server, monkeypatch):
    from apps.notifications.management.commands.make_vapid_keys import make_pair
    from tests.conftest import find_free_port
    from tests.live import Stack

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    public, private = make_pair()
    port = find_free_port()
    stack = Stack(tmp_path / "site", {
        "EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": str(smtp_server.port), "EMAIL_USE_TLS": "0",
        "SITE_URL": f"http://127.0.0.1:{port}", "VAPID_PUBLIC_KEY": public,
        "VAPID_PRIVATE_KEY": private, "PUSH_ENDPOINT_HOSTS": "127.0.0.1",
        "NOTIFY_GATHER_SECONDS": str(GATHER_SECONDS),
        "NOTIFY_ACTIVE_SECONDS": str(ACTIVE_SECONDS), "NOTIFY_SWEEP_SECONDS": "1",
        "ACTIVITY_WRITE_SECONDS": "1"})
    stack.web("web1", port)
    stack.worker()
    stack.beat()
    stack.base = f"http://127.0.0.1:{port}"
    stack.public_key = public
    yield stack
    stack.stop()


def person(name: str, language: str):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.create_user(username=name, password="pw-" + name * 2,
                                                email=f"{name}@example.com")
    user.profile.language = language
    user.profile.save(update_fields=["language"])
    return user


def context_for(p, site, user, folder):
    """A browser profile on disk: Chromium's installability check refuses incognito
    contexts (Playwright's ordinary ones), and an installed app has a profile."""
    from tests.live import session_of

    context = p.chromium.launch_persistent_context(
        str(folder), executable_path="/usr/bin/chromium", args=ARGS)
    context.grant_permissions(["notifications"], origin=site.base)
    if user is not None:
        context.add_cookies([{"name": "sessionid", "value": session_of(user),
                              "url": site.base}])
    return context


def sw_ready(page) -> str:
    return page.evaluate("navigator.serviceWorker.ready.then(r => r.scope)")


def registration_id(page, site) -> tuple[str, object]:
    """The service worker's registration id, from DevTools' ServiceWorker domain (its events
    are heard while Playwright is called: hence the page's own waits)."""
    cdp = page.context.new_cdp_session(page)
    found = []
    cdp.on("ServiceWorker.workerRegistrationUpdated",
           lambda e: found.extend(e["registrations"]))
    cdp.send("ServiceWorker.enable")
    deadline = time.monotonic() + 20
    while not any(r["scopeURL"] == site.base + "/" and not r["isDeleted"] for r in found):
        assert time.monotonic() < deadline, f"no registration of the worker: {found}"
        page.wait_for_timeout(100)
    return next(r["registrationId"] for r in found if r["scopeURL"] == site.base + "/"), cdp


def shown_notifications(page) -> list[dict]:
    return page.evaluate("""navigator.serviceWorker.ready.then(r => r.getNotifications())
        .then(ns => ns.map(n => ({title: n.title, body: n.body, link: n.data && n.data.link})))""")


def deliver(page, workers, rid: str, origin: str, data: dict, what: str) -> None:
    """Hand a push to Chromium's service worker through DevTools until it shows (at most three
    times, the notification's tag making a repeat replace it): on a loaded machine DevTools
    has dropped a delivery to a worker it was still waking, which says nothing of the site."""
    for _ in range(3):
        workers.send("ServiceWorker.deliverPushMessage", {
            "origin": origin, "registrationId": rid, "data": json.dumps(data)})
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if shown_notifications(page):
                return
            time.sleep(0.2)
    raise AssertionError(f"not shown after three deliveries: {what}")


def bell_count(page) -> str:
    return page.evaluate("""(() => { const c = document.querySelector('#bell .bell-count');
        return c.hidden ? '' : c.textContent; })()""")


def test_the_site_installs_shows_a_push_and_the_bell_follows_live(site, tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    from apps.notifications import services

    ana = person("ana", "en")
    with playwright.sync_playwright() as p:
        browser = context_for(p, site, ana, tmp_path / "profile")
        try:
            page = browser.new_page()
            errors = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(f"{site.base}/")
            assert sw_ready(page) == site.base + "/"
            cdp = page.context.new_cdp_session(page)
            manifest = cdp.send("Page.getAppManifest")
            assert manifest["url"] == f"{site.base}/manifest.webmanifest"
            assert manifest["errors"] == [] and '"standalone"' in manifest["data"]
            assert cdp.send("Page.getInstallabilityErrors")["installabilityErrors"] == []

            # The bell, live: a notification made elsewhere reaches the open page.
            assert bell_count(page) == ""
            services.notify(kind="friend_request", recipients=[ana.pk], key="friend_request:1",
                            data={"name": "bea"})
            wait_for(lambda: bell_count(page) == "1", 30, "the bell's count")
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / "notifications-bell-1280x800.png"))
            page.goto(f"{site.base}/notifications/")
            assert "bea wants to be your friend" in page.inner_text("main")
            axe_check(page, "notifications")
            page.goto(f"{site.base}/accounts/profile/")
            axe_check(page, "profile with the notifications' choices")
            page.goto(f"{site.base}/")

            # A push delivered to the worker shows its notification, with its link.
            rid, workers = registration_id(page, site)
            deliver(page, workers, rid, site.base + "/",
                    {"title": "Your turn at Mesa", "body": "Mesa waits.",
                     "link": f"{site.base}/t/ABCDEF/", "tag": "n1"}, "a notification")
            assert shown_notifications(page) == [{"title": "Your turn at Mesa",
                                                  "body": "Mesa waits.",
                                                  "link": f"{site.base}/t/ABCDEF/"}]
            assert errors == []
        finally:
            browser.close()


# -- "done when" ---------------------------------------------------------------------------------

FAKE_SUBSCRIBE = """
(() => {
  const endpoint = %(endpoint)s, p256dh = %(p256dh)s, auth = %(auth)s;
  const fake = { endpoint, expirationTime: null,
                 toJSON: () => ({ endpoint, expirationTime: null, keys: { p256dh, auth } }),
                 unsubscribe: async () => true };
  if (window.PushManager) {
    PushManager.prototype.subscribe = async function () {
      window.__subscribed = true; return fake; };
    PushManager.prototype.getSubscription = async function () {
      return window.__subscribed ? fake : null; };
  }
})();
"""


def _scores(rnd, move) -> bool:
    """The move ends the round with points: at a table whose target is 1, the match."""
    from apps.rules.rounds import apply

    if move[0] < 0:
        return False
    after = apply(rnd, *move)
    return after.over and bool(after.result.points)


#: For each kind the test may follow: which of the friend's moves makes it. "turn": any move
#: of theirs (the member's turn comes next).
MAKES = {"match_over": _scores, "turn": lambda rnd, move: True}


def _position(table_id: int):
    from apps.tables import game
    from apps.tables.models import Table

    table = Table.objects.get(pk=table_id)
    engine = game.restore(table.current_match)
    return table, engine, engine.current


def _play(user, table_id: int, engine, rnd, move):
    from apps.rules.engine import legal_dict
    from apps.tables import services as tables

    said = legal_dict(*move)
    return tables.play_move(user=user, table_id=table_id, round_number=len(engine.rounds) - 1,
                            ply=len(rnd.history), tile=said.get("play"), end=said.get("end"),
                            is_pass=bool(said.get("pass")))


def prepare(kind: str, table_id: int, member, friend) -> None:
    """Moves (the member's too, through the services) until the friend has a move that makes
    ``kind``: done while the member's page is at the table, so that what these moves make
    (a match the member had to end) is neither pushed nor mailed."""
    from apps.tables import services as tables

    rng = random.Random(38)
    for _ in range(600):
        table, engine, rnd = _position(table_id)
        if engine.over:
            tables.new_match(user=member, table_id=table_id)
            continue
        if rnd is None or rnd.over:
            tables.next_round(user=member, table_id=table_id)
            continue
        mover = table.seats.get(index=rnd.turn).user
        options = rnd.legal()
        if mover.pk == friend.pk and any(MAKES[kind](rnd, m) for m in options):
            return
        rng.shuffle(options)
        quiet = [m for m in options if not _scores(rnd, m)]
        _play(mover, table_id, engine, rnd, (quiet or options)[0])
    raise AssertionError(f"the friend never had a move making {kind}")


def friend_moves(kind: str, table_id: int, friend) -> None:
    """The friend's move (after :func:`prepare`), which makes ``kind``."""
    table, engine, rnd = _position(table_id)
    assert table.seats.get(index=rnd.turn).user_id == friend.pk
    move = next(m for m in rnd.legal() if MAKES[kind](rnd, m))
    outcome = _play(friend, table_id, engine, rnd, move)
    assert any(e.get("kind") == kind for e in outcome.events), outcome.events


def settled(kind: str, member) -> bool:
    """The member has a notification of ``kind``, and every notification of that kind (the
    friend's too: their turns come from the member's moves) is planned, each of its deliveries
    at its end (sent, skipped or failed). The friend's count: the worker plans in its own
    order, so the member's being done says nothing of the friend's."""
    from apps.notifications.models import Delivery, Notification

    rows = Notification.objects.filter(kind=kind)
    return rows.filter(recipient=member).exists() and not rows.filter(planned=False).exists() \
        and not Delivery.objects.filter(notification__in=rows,
                                        state__in=["pending", "sending"]).exists()


def test_done_when_push_and_one_mail_none_while_looking_and_unsubscribe(site, smtp_server,
                                                                      tmp_path):
    playwright = pytest.importorskip("playwright.sync_api")
    from django.utils import timezone

    from apps.friends import services as friends
    from apps.notifications.models import Delivery, Notification, Preference, PushSubscription
    from apps.tables import services as tables
    from apps.tables.models import Connection

    member, friend = person("ana", "en"), person("bea", "es")
    asked = friends.request_friend(user=friend, display_name="ana")
    friends.accept_request(user=member, request_id=asked.pk)
    table = tables.create_table(host=member, preset="draw", players=2, public=False,
                                name="Mesa de Ana", options={"target": 1},
                                pace="turn", move_seconds=86400)
    tables.invite(user=member, table_id=table.pk, display_name="bea")
    tables.join_table(user=friend, table_id=table.pk)
    tables.start_match(user=member, table_id=table.pk)
    # The friend holds the table (a socket of theirs, as the presence service records one):
    # when the member leaves its page, it goes on instead of pausing for want of anybody.
    from apps.tables.services import presence

    presence.connect(user=friend, table_id=table.pk, channel_name="test.friend")

    push = PushService()
    keys = Browser()

    def mails() -> list[dict]:  # the member's (the friend was mailed the table's invitation)
        return [m for m in smtp_server.messages if m["to"] == ["ana@example.com"]]

    with playwright.sync_playwright() as p:
        context = context_for(p, site, member, tmp_path / "profile")
        anonymous_browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            context.add_init_script(FAKE_SUBSCRIBE % {
                "endpoint": json.dumps(push.endpoint("ana")), "p256dh": json.dumps(keys.p256dh),
                "auth": json.dumps(b64url(keys.auth))})
            page = context.new_page()

            # Push on, from the profile: the browser's permission only after the click.
            page.goto(f"{site.base}/accounts/profile/")
            assert page.evaluate("Notification.permission") == "granted"  # the context's grant
            assert not page.evaluate("window.__subscribed === true")  # nothing on page load
            page.click("#push-on")
            wait_for(lambda: page.inner_text("#push-status") == "This device will be notified.",
                     20, "the device subscribed")
            assert PushSubscription.objects.get().user_id == member.pk
            assert page.is_hidden("#push-on") and page.is_visible("#push-off")
            # E-mail on for the kind, on the profile (and this device: on by default for a
            # turn, not for a match over).
            for channel in ("email", "push"):
                page.check(f"#n-{KIND}-{channel}")
            page.click(".notification-choices button[type=submit]")
            page.wait_for_selector(".messages, .banner, [role=status]")
            assert page.is_checked(f"#n-{KIND}-email") and page.is_checked(f"#n-{KIND}-push")
            page.screenshot(path=str(SHOTS / "notifications-profile-1280x800.png"),
                            full_page=True)
            assert sw_ready(page) == site.base + "/"

            # 1. The table's page open: the bell counts it, no push, no mail. (What came before,
            # the friend's request, is read first: the bell then counts this one alone.)
            Notification.objects.filter(recipient=member).update(read_at=timezone.now())
            page.goto(f"{site.base}/t/{table.code}/")
            wait_for(lambda: Connection.objects.filter(user=member).exists(), 20, "the socket")
            prepare(KIND, table.pk, member, friend)
            friend_moves(KIND, table.pk, friend)
            prepare(KIND, table.pk, member, friend)  # the next one ready, still looking
            wait_for(lambda: settled(KIND, member), 60, "the notifications settled")
            assert set(Delivery.objects.filter(notification__kind=KIND)
                       .values_list("state", flat=True)) == {"skipped"}
            # The bell counts what is unread: all of it, unless the page's socket came back
            # meanwhile (a loaded machine's sweep may end a socket whose process was late to
            # renew its lease), and a person arriving at a table has read what it told them.
            assert Notification.objects.filter(recipient=member, kind=KIND).exists()

            def unread() -> str:
                n = Notification.objects.filter(recipient=member, read_at__isnull=True).count()
                return str(n) if n else ""

            wait_for(lambda: bell_count(page) == unread(), 20,
                     lambda: f"the bell at the table: {bell_count(page)!r}, unread {unread()!r}")
            time.sleep(GATHER_SECONDS + 2)
            assert push.received == [] and mails() == []

            # 2. Away from the site: exactly one push and, after the window, one mail.
            page.goto("about:blank")
            wait_for(lambda: not Connection.objects.filter(user=member).exists(), 20,
                     "the socket closed")
            time.sleep(ACTIVE_SECONDS + 1)
            friend_moves(KIND, table.pk, friend)
            wait_for(lambda: len(push.received) == 1, 30, lambda: (
                "the push", list(Delivery.objects.values_list(
                    "notification__kind", "notification__recipient_id", "channel", "state",
                    "reason", "attempts"))))
            wait_for(lambda: len(mails()) == 1, GATHER_SECONDS + 30, "the mail")
            time.sleep(GATHER_SECONDS + 2)
            assert len(push.received) == 1 and len(mails()) == 1
            mail = mails()[0]
            assert mail["to"] == ["ana@example.com"]
            assert mail["message"]["Content-Language"] == "en"
            content = keys.decrypt(push.received[0]["body"])
            assert "Mesa de Ana" in content["title"]

            # The push, handed to Chromium's worker: its notification opens the table.
            page.goto(f"{site.base}/offline/")
            rid, workers = registration_id(page, site)
            assert content.get("tag")  # a second delivery replaces the first
            deliver(page, workers, rid, site.base + "/", content, "the notification")
            shown = shown_notifications(page)
            assert [n["title"] for n in shown] == [content["title"]]
            opened = page.goto(shown[0]["link"])
            assert opened.ok
            assert page.url.startswith(f"{site.base}/t/{table.code}/") \
                or "/matches/" in page.url

            # 3. Unsubscribed from the mail (its link, no session): no more mails of the kind.
            body = mail["message"].get_body(preferencelist=("plain",)).get_content()
            link = re.search(r"(http://\S+/notifications/unsubscribe/\S+/)", body).group(1)
            anonymous = anonymous_browser.new_context().new_page()
            anonymous.goto(link)
            anonymous.click("main form button[type=submit]")
            anonymous.wait_for_selector("[role=status]")
            assert not Preference.objects.get(user=member, kind=KIND, channel="email").enabled
            page.goto(f"{site.base}/t/{table.code}/")
            wait_for(lambda: Connection.objects.filter(user=member).exists(), 20, "the socket")
            prepare(KIND, table.pk, member, friend)
            wait_for(lambda: settled(KIND, member), 60, "the notifications settled")
            pushed = len(push.received)
            page.goto("about:blank")
            wait_for(lambda: not Connection.objects.filter(user=member).exists(), 20,
                     "the socket closed")
            time.sleep(ACTIVE_SECONDS + 1)
            friend_moves(KIND, table.pk, friend)
            wait_for(lambda: len(push.received) == pushed + 1, 30, "the next push")
            time.sleep(GATHER_SECONDS + 4)
            assert len(mails()) == 1  # no mail of that kind any more
            cdp = page.context.new_cdp_session(page)
            page.goto(f"{site.base}/")
            assert cdp.send("Page.getInstallabilityErrors")["installabilityErrors"] == []
        finally:
            context.close()
            anonymous_browser.close()
            push.close()
