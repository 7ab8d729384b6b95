"""The table page in a real browser: four people (Spanish, Brazilian Portuguese, English and
Spanish) sign in, sit at one partners table and play a whole round by clicking tiles, against the
site served by the run command (Daphne + the real channel layer + Celery worker and beat).

Screenshots of the page at 390x844 and 1280x800 in each language are written to
docs/screenshots/ (the committed ones come from this test)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

ROOT = Path(__file__).resolve().parent.parent.parent
SHOTS = Path(os.environ.get("TABLE_SCREENSHOTS", ROOT / "docs" / "screenshots"))
PEOPLE = [("ana", "es"), ("bruno", "pt-br"), ("carol", "en"), ("dani", "es")]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]

SETUP = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from apps.tables import services
U = get_user_model()
out = {"sessions": []}
users = []
for name, lang in PEOPLE:
    u = U.objects.create_user(username=name, password="pw-" + name * 2)
    u.profile.language = lang
    u.profile.save()
    users.append(u)
    c = Client()
    c.force_login(u)
    out["sessions"].append(c.cookies["sessionid"].value)
table = services.create_table(host=users[0], preset="partners", public=True,
                              options={"turn_seconds": 30})
for u in users[1:]:
    services.join_table(user=u, table_id=table.pk)
out.update(id=table.pk, code=table.code)
print(json.dumps(out))
"""

HANDS = """
import json
from apps.tables.models import Table
t = Table.objects.get(pk=TABLE)
r = t.current_match.rounds.order_by("-number").first()
from apps.rules.tiles import NAMES
print(json.dumps([[NAMES[x] if isinstance(x, int) else x for x in h] for h in r.hands]))
"""


def shell(site, code: str) -> dict | list:
    env = {k: v for k, v in os.environ.items()
           if k not in {"REDIS_URL", "DATABASE_URL", "PYTEST_EMBEDDED_REDIS"}}
    env.update({"VAR_DIR": str(site.var_dir), "DEBUG": "1"})
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def wait_until(page, expression: str, timeout: float = 10000) -> None:
    """page.wait_for_function, but by polling page.evaluate: wait_for_function evals its
    predicate inside the page, which the site's Content-Security-Policy refuses."""
    deadline = time.monotonic() + timeout / 1000
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise TimeoutError(f"not true after {timeout} ms: {expression}")
        time.sleep(0.05)


def hand_of(page) -> list[str]:
    return page.eval_on_selector_all("#hand .hand-tile", "ns => ns.map(n => n.dataset.tile)")


def my_turn(page) -> bool:
    return page.evaluate("document.getElementById('turn').classList.contains('mine')")


def round_over(page) -> bool:
    return page.locator("#result").is_visible()


def whose_turn(pages, timeout: float = 20.0) -> int | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if all(round_over(p) for p in pages):
            return None
        for i, page in enumerate(pages):
            if my_turn(page) and not round_over(page):
                return i
        time.sleep(0.05)
    raise AssertionError("nobody's turn")


def no_horizontal_scroll(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    inner = page.evaluate("window.innerWidth")
    assert width <= inner, f"page scrolls sideways: {width} > {inner}"


def shoot(page, lang: str, stage: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width, height in ((390, 844), (1280, 800)):
        page.set_viewport_size({"width": width, "height": height})
        page.wait_for_timeout(300)  # the resize re-lays the line
        no_horizontal_scroll(page)
        page.screenshot(path=str(SHOTS / f"table-{lang}-{stage}-{width}x{height}.png"),
                        full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})


def test_four_people_play_a_round_in_the_browser(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site()
    made = shell(site, SETUP.replace("PEOPLE", repr(PEOPLE)))
    url = f"{site.base_url}/t/{made['code']}/"
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            pages, errors = [], []
            for (name, lang), session in zip(PEOPLE, made["sessions"], strict=True):
                context = browser.new_context(viewport={"width": 1280, "height": 800},
                                              locale=lang)
                context.add_cookies([{"name": "sessionid", "value": session,
                                      "url": site.base_url}])
                page = context.new_page()
                page.on("pageerror", lambda exc, who=name: errors.append(f"{who}: {exc}"))
                page.goto(url)
                page.wait_for_selector("#status.ok", timeout=15000)
                pages.append(page)
            assert pages[0].locator("html").get_attribute("lang") == "es"
            assert pages[1].locator("html").get_attribute("lang") == "pt-br"
            assert pages[2].locator("html").get_attribute("lang") == "en"

            # Only the host has host controls; the host starts the match.
            assert pages[1].locator("#host").is_hidden()
            pages[0].click("#host [data-action=start]")
            for page in pages:
                wait_until(page, "document.querySelectorAll('#hand .hand-tile').length === 7",
                           timeout=15000)

            # Each page's hand is its own: seven tiles, disjoint, exactly the dealt hand.
            hands = [hand_of(page) for page in pages]
            dealt = shell(site, HANDS.replace("TABLE", str(made["id"])))
            for seat, hand in enumerate(hands):
                assert len(hand) == 7
                assert sorted(hand) == sorted(dealt[seat])
            assert len({t for h in hands for t in h}) == 28
            for seat, page in enumerate(pages):
                # Your seat at the bottom, partners facing, three others with backs only.
                assert page.locator("#slot-bottom .seat").get_attribute("data-seat") == str(seat)
                top = page.locator("#slot-top .seat").get_attribute("data-seat")
                assert top == str((seat + 2) % 4)
                assert page.locator("#felt .seat").count() == 4
                assert page.locator("#felt .backs").count() == 3

            # The clock bar of the seat to play drains.
            turn = whose_turn(pages)
            bar = "document.getElementById('clock-bar').getBoundingClientRect().width"
            first = pages[turn].evaluate(bar)
            pages[turn].wait_for_timeout(1500)
            assert 0 < pages[turn].evaluate(bar) < first
            assert pages[turn].locator(".clock-secs").inner_text().endswith("s")

            # Pause: the banner shows on all four pages; the hand cannot play; resume.
            pages[0].click("#host [data-action=pause]")
            for page in pages:
                page.wait_for_selector("#paused", state="visible", timeout=10000)
            assert pages[turn].locator('#hand .hand-tile[aria-disabled="false"]').count() == 0
            SHOTS.mkdir(parents=True, exist_ok=True)
            pages[2].screenshot(path=str(SHOTS / "table-en-paused-1280x800.png"))
            pages[0].click("#host [data-action=resume]")
            for page in pages:
                page.wait_for_selector("#paused", state="hidden", timeout=10000)

            # Learning mode (dani's switch): unseen tiles per number, saved on the profile.
            pages[3].check("#prefs [name=learning_mode]")
            pages[3].wait_for_selector("#learning", state="visible", timeout=5000)
            assert pages[3].locator("#learning .unseen li").count() == 7
            assert pages[0].locator("#learning").is_hidden()

            # Play the round by clicking tiles on the page whose turn it is.
            plies = 0
            picked_on_board = False
            shot = False
            while (turn := whose_turn(pages)) is not None:
                page = pages[turn]
                if page.locator("#pass").is_enabled():
                    page.click("#pass")
                else:
                    tiles = page.locator('#hand .hand-tile[aria-disabled="false"]')
                    assert tiles.count() > 0, "my turn, no legal tile and no pass"
                    tiles.first.click()
                    page.wait_for_timeout(150)
                    if page.locator("#end-choice").is_visible():
                        # Both ends fit: choose by tapping the highlighted end on the board, or
                        # with the end buttons.
                        if not picked_on_board:
                            page.locator("#line .end-marker.pick").first.click()
                            picked_on_board = True
                        else:
                            page.locator("#end-choice .end-button").last.click()
                wait_until(page, "!document.getElementById('turn').classList.contains('mine')"
                           " || !document.getElementById('result').hidden", timeout=10000)
                plies += 1
                if plies == 9 and not shot:
                    for page, (_name, lang) in zip(pages[:3], PEOPLE, strict=False):
                        shoot(page, lang, "play")
                    shot = True
                assert plies < 80
            assert plies >= 4

            # The end of the round: revealed hands and the reason, on every page.
            for page in pages:
                page.wait_for_selector("#result", state="visible", timeout=10000)
                assert page.locator("#result .sentence").inner_text().strip()
                assert page.locator("#result .revealed li").count() == 4
            for page, (_name, lang) in zip(pages[:3], PEOPLE, strict=False):
                shoot(page, lang, "result")
            assert pages[0].locator("#host [data-action=next_round]").is_visible() or \
                pages[0].locator("#host [data-action=new_match]").is_visible()
            assert not errors, errors
        finally:
            browser.close()
    site.stop(timeout=40)
