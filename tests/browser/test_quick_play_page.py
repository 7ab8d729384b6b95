"""Quick play and "start with bots" in a real browser, against the site served by the run
command (Daphne, the channel layer, Celery worker and beat), with a short wait
(QUICK_PLAY_FILL_SECONDS=20, the default):

- ana (English, desktop) presses "Play now" for partners on the home page and waits at a new
  quick table: the page counts down to the bots; bruno (Brazilian Portuguese, a phone) presses
  "Play now" for the same game and lands at the same table; ana, the host, sees "Start with
  bots" and presses it: bots take the two free seats and the match starts, marked bot-filled;
- carol (Spanish, desktop) presses "Play now" for draw with 3 players and nobody comes: when
  the wait is over the worker's timer seats two bots and the match starts by itself.

axe finds no serious or critical violation on the home page and the waiting table; no page
logs a console error. Screenshots of the home page's "Play now" and of the waiting table at
390x844 and 1280x800 go to var/screenshots/ (`make screenshots` renews them).
"""

from __future__ import annotations

import pytest

from .test_table_page import (
    ARGS,
    CHROMIUM_NEEDED,
    DESKTOP,
    PHONE,
    axe_check,
    shoot,
    sign_up,
    wait_until,
    watch_console,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, CHROMIUM_NEEDED, pytest.mark.timeout(300)]

FILL_SECONDS = 20
COUNTDOWN = {"en": "bots fill the free seats in", "pt-br": "os bots ocuparão os lugares livres em",
             "es": "los bots ocuparán los asientos libres en"}
PEOPLE = [("ana", "en", DESKTOP), ("bruno", "pt-br", PHONE), ("carol", "es", DESKTOP)]


def play_now(page, base: str, preset: str, players: str | None = None) -> None:
    page.goto(f"{base}/")
    page.select_option("#quick-play [name=preset]", preset)
    players_field = page.locator("#quick-play .quick-players")
    assert players_field.is_visible() is (players is not None)  # only where the game asks
    if players is not None:
        page.select_option("#quick-play [name=players]", players)
    page.click("#quick-play button[type=submit]")
    page.wait_for_url("**/t/*/")
    page.wait_for_selector("#status.ok", timeout=15000)


def turn_text(page) -> str:
    return page.evaluate("document.getElementById('turn-text').textContent")


def test_play_now_waits_counts_down_and_fills_with_bots(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site(env={"QUICK_PLAY_FILL_SECONDS": str(FILL_SECONDS)})
    base = site.base_url
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            pages = {}
            for name, lang, view in PEOPLE:
                phone = view is PHONE
                context = browser.new_context(viewport=view, locale=lang, has_touch=phone,
                                              is_mobile=phone)
                page = context.new_page()
                watch_console(page, name, errors)
                sign_up(page, base, name, lang)
                pages[name] = page
            ana, bruno, carol = pages["ana"], pages["bruno"], pages["carol"]

            # The home page's "Play now": the number of players shows for draw, not partners.
            ana.goto(f"{base}/")
            axe_check(ana, "home with play now [en]")
            shoot(ana, "home-quick-play-en")
            bruno.goto(f"{base}/")
            shoot(bruno, "home-quick-play-pt-br")

            # ana opens a quick table and waits; the page counts down to the bots.
            play_now(ana, base, "partners")
            code = ana.url.rstrip("/").rsplit("/", 1)[1]
            wait_until(ana, f"document.getElementById('turn-text').textContent"
                            f".includes('{COUNTDOWN['en']}')")
            first = turn_text(ana)
            ana.wait_for_timeout(1200)
            assert turn_text(ana) != first, "the countdown does not move"
            assert ana.locator("#host [data-action=start_with_bots]").count() == 0  # alone
            axe_check(ana, "quick table waiting [en]")
            shoot(ana, "quick-waiting-en")

            # bruno presses play now for the same game: the same table.
            play_now(bruno, base, "partners")
            assert bruno.url.rstrip("/").endswith(code)
            wait_until(bruno, f"document.getElementById('turn-text').textContent"
                              f".includes('{COUNTDOWN['pt-br']}')")
            assert bruno.locator("#host").is_hidden()
            shoot(bruno, "quick-waiting-pt-br")

            # ana, the host, starts with bots: they take the two free seats.
            wait_until(ana, "!!document.querySelector('#host [data-action=start_with_bots]')")
            shoot(ana, "quick-start-with-bots-en")
            ana.click("#host [data-action=start_with_bots]")
            for page in (ana, bruno):
                wait_until(page, "document.querySelectorAll('#hand .hand-tile').length === 7",
                           timeout=15000)
                assert page.locator('#felt .seat img.avatar[src$="bot.svg"]').count() == 2
                assert page.locator("#bot-filled").is_visible()

            # carol waits alone at draw for three: the worker's timer seats the bots.
            carol.goto(f"{base}/")
            carol.select_option("#quick-play [name=preset]", "draw")
            shoot(carol, "home-quick-play-es")
            play_now(carol, base, "draw", "3")
            wait_until(carol, f"document.getElementById('turn-text').textContent"
                              f".includes('{COUNTDOWN['es']}')")
            shoot(carol, "quick-waiting-es")
            wait_until(carol, "document.querySelectorAll('#hand .hand-tile').length === 7",
                       timeout=(FILL_SECONDS + 15) * 1000)
            assert carol.locator("#bot-filled").is_visible()
            assert not errors, errors
        finally:
            browser.close()
