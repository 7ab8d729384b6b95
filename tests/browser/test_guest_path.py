"""The guest path in a real browser, against the site served by the run command (Daphne, the
Redis channel layer, Celery worker and beat running the bots):

a visitor on a phone (Spanish, touch) opens the home page, picks partners against easy bots in
the practice form and lands, as a guest, at a started match on the normal table page; plays the
whole round by tapping; signs up from the table page; and is back at the same table, in the same
seat, as its host, now with an account.

On the way: the home page in three languages and every page of the path pass axe-core (no
serious or critical violation) and log no console error (a Content-Security-Policy violation is
one); screenshots at 390x844 and 1280x800 go to var/screenshots/ (home-*, practice-*,
signup-guest-*, home-member-*)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .test_table_page import (
    ARGS,
    DESKTOP,
    PASSWORD,
    PHONE,
    axe_check,
    my_turn,
    no_horizontal_scroll,
    play_by_pointer,
    round_over,
    shoot,
    wait_until,
    watch_console,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

ROOT = Path(__file__).resolve().parent.parent.parent
#: The practice panel's title per language: the home page is in the browser's language.
PRACTICE_TITLES = {"es": "Juega contra bots ahora", "pt-br": "Jogue contra bots agora",
                   "en": "Play against bots now"}

READ_TABLE = """
import json
from apps.tables.models import Table
t = Table.objects.select_related("host__profile").get(code=CODE)
print(json.dumps({"host": t.host.username, "guest": t.host.profile.guest, "host_id": t.host_id,
                  "seat0": t.seats.get(index=0).user_id, "practice": t.practice,
                  "public": t.public, "state": t.state,
                  "bots": list(t.seats.filter(is_bot=True).values_list("bot_level", flat=True)),
                  "finished": t.matches.get().rounds.filter(result__isnull=False).count(),
                  "users": t.host.__class__.objects.count()}))
"""


def read_table(site, code: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in {"REDIS_URL", "DATABASE_URL", "PYTEST_EMBEDDED_REDIS"}}
    env.update({"VAR_DIR": str(site.var_dir), "DEBUG": "1"})
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c",
                          READ_TABLE.replace("CODE", json.dumps(code))],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_visitor_practises_plays_a_round_signs_up_and_keeps_the_table(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site()
    base = site.base_url
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            # The home page a visitor sees, in each language, on a desktop and a phone.
            for lang, title in PRACTICE_TITLES.items():
                context = browser.new_context(viewport=DESKTOP, locale=lang)
                page = context.new_page()
                watch_console(page, f"visitor-{lang}", errors)
                page.goto(f"{base}/")
                assert page.locator("html").get_attribute("lang") == lang
                assert page.locator("#practice-title").inner_text() == title
                # Partners games have no player count to choose; draw does (practice.js).
                page.select_option("#id_preset", "partners")
                assert page.locator("#id_players").is_hidden()
                page.select_option("#id_preset", "draw")
                assert page.locator("#id_players").is_visible()
                axe_check(page, f"home (visitor) [{lang}]")
                shoot(page, f"home-{lang}")
                context.close()

            # A visitor on a phone: partners against easy bots, no clock.
            context = browser.new_context(viewport=PHONE, locale="es", has_touch=True,
                                          is_mobile=True)
            page = context.new_page()
            watch_console(page, "visitor", errors)
            page.goto(f"{base}/")
            no_horizontal_scroll(page)
            page.select_option("#id_preset", "partners")
            page.select_option("#id_bot_level", "easy")
            page.select_option("#id_turn_seconds", "")
            page.locator("#practice-form button[type=submit]").tap()
            page.wait_for_url(re.compile(r".*/t/[A-Z0-9]+/$"), timeout=15000)
            code = page.url.rstrip("/").rsplit("/", 1)[1]
            page.wait_for_selector("#status.ok", timeout=15000)
            wait_until(page, "document.querySelectorAll('#hand .hand-tile').length === 7",
                       timeout=15000)
            guest_name = page.locator(".site-nav .guest-name").inner_text().strip()
            assert re.fullmatch(r"Invitado \w{3}", guest_name), guest_name
            assert page.locator(".guest-note").is_visible()
            assert page.evaluate("[...document.querySelectorAll('#felt .seat .badge')]"
                                 ".filter(b => b.textContent.trim() === 'bot').length") == 3
            assert page.locator("#slot-bottom .seat").get_attribute("data-seat") == "0"
            assert page.locator("#join-link").count() == 0  # practice: nothing to share
            made = read_table(site, code)
            assert made["practice"] and not made["public"] and made["guest"]
            assert made["bots"] == ["easy"] * 3 and made["state"] == "playing"

            # The whole round, by tapping; the bots (Celery) play their seats meanwhile.
            pointer: dict = {}
            plays = 0
            shot = False
            deadline = time.monotonic() + 240
            while not round_over(page):
                assert time.monotonic() < deadline, "the round never ended"
                if not my_turn(page):
                    time.sleep(0.1)
                    continue
                play_by_pointer(page, "tap", pointer)
                plays += 1
                wait_until(page, "!document.getElementById('turn').classList.contains('mine')"
                           " || !document.getElementById('result').hidden", timeout=15000)
                if plays == 3 and not shot:
                    axe_check(page, "practice table mid-round [es]")
                    shoot(page, "practice-es-play")
                    shot = True
            assert plays >= 1
            page.wait_for_selector("#result", state="visible", timeout=10000)
            assert page.locator("#result .sentence").inner_text().strip()
            assert read_table(site, code)["finished"] == 1

            # Sign up from the table page, and come back to it.
            page.locator(".guest-note a").tap()
            page.wait_for_selector("form.account-form")
            assert guest_name in page.locator(".guest-note").inner_text()
            axe_check(page, "sign-up from a guest session [es]")
            shoot(page, "signup-guest-es")
            page.fill("#id_username", "rosa")
            page.fill("#id_email", "rosa@example.com")
            page.fill("#id_password1", PASSWORD)
            page.fill("#id_password2", PASSWORD)
            page.fill("#id_display_name", "Rosa")
            page.check('input[name=avatar][value="owl"]')
            page.locator("form.account-form button[type=submit]").tap()
            page.wait_for_url(f"{base}/t/{code}/", timeout=15000)
            page.wait_for_selector("#status.ok", timeout=15000)
            assert page.locator('.site-nav a[href="/accounts/profile/"]').inner_text() == "Rosa"
            assert page.locator(".guest-note").count() == 0
            # The same seat, the same table, the host's controls; the hand or the round's end.
            assert page.locator("#slot-bottom .seat").get_attribute("data-seat") == "0"
            assert page.locator("#slot-bottom .seat .name").inner_text().strip() == "Rosa"
            wait_until(page, "!document.getElementById('host').hidden", timeout=10000)
            kept = read_table(site, code)
            assert kept["host"] == "rosa" and not kept["guest"]
            assert kept["host_id"] == made["host_id"] == kept["seat0"]
            assert kept["users"] == made["users"] and kept["state"] == "playing"

            # Home, now as a member: the practice table is among theirs.
            page.goto(f"{base}/")
            assert page.locator(f'a[href="/t/{code}/"]').count() >= 1
            assert page.locator('.site-nav a[href="/tables/new/"]').count() == 1
            axe_check(page, "home (member) [es]")
            shoot(page, "home-member-es")
        finally:
            browser.close()
    site.stop(timeout=40)
    assert not errors, "\n".join(errors)
