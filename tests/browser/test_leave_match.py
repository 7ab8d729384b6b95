"""Leaving a match that is on, in a real browser against the site the run command serves.

Mid-round at a four-player partners table, bea (Brazilian Portuguese, a phone) opens "Leave
the match…": the confirmation says a bot plays her hand to the round's end and what leaving
does to her fair-play record; she confirms, the page says she left, her seat shows the bot
playing for her, and the offer is gone; caio's page (English) shows the same seat at once.
axe finds no serious violation with the confirmation open. Screenshots (390x844 and
1280x800) go to var/screenshots/ (leave-match-*; `make screenshots` renews the committed
ones).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_csp import ARGS, SITE_ENV, Visitor, shell
from .test_table_labels import SETUP
from .test_table_page import PHONE, axe_check, shoot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

BEA_SEAT = 1  # the labels test's setup seats ana, bea, caio, dani in that order


def test_a_player_leaves_a_started_match_after_the_confirmation(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site(env=SITE_ENV)
    made = shell(site, SETUP)
    table, found = f"/t/{made['code']}/", []
    standin = f"#felt .seat[data-seat='{BEA_SEAT}'] .badge.standin"
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            caio = Visitor(browser, site.base_url, made["sessions"]["caio"], found)
            watching = caio.open(table)
            watching.wait_for_selector("#status.ok", timeout=15000)
            bea = Visitor(browser, site.base_url, made["sessions"]["bea"], found)
            page = bea.open(table)
            page.set_viewport_size(PHONE)
            page.wait_for_selector("#status.ok", timeout=15000)
            assert page.is_visible("#leave-match summary")
            assert not page.is_visible("#leave-match button")  # asked first
            page.click("#leave-match summary")
            text = page.inner_text("#leave-match")
            assert "um bot joga sua mão" in text and "jogo limpo" in text, text
            axe_check(page, "table, leaving")
            page.locator("#leave-match").scroll_into_view_if_needed()
            shoot(page, "leave-match-pt-br")
            page.click("#leave-match button")
            page.wait_for_selector("ul.messages", timeout=15000)
            assert "Você saiu da partida" in page.content()
            page.wait_for_selector("#status.ok", timeout=15000)
            wait_until(page, f"!!document.querySelector(\"{standin}\")")
            assert not page.is_visible("#leave-match")
            wait_until(watching, f"!!document.querySelector(\"{standin}\")")
            bea.collect()
            caio.collect()
        finally:
            browser.close()
    site.stop(timeout=40)
    assert not found, "\n".join(found)
