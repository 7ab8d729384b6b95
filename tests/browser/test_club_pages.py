"""The club's pages in a real browser: the profile's coins and experience, stake tables, the
league and the leaderboards, and the ratings on the table page's seats.

Each page is loaded by a person with a played online match behind them, in Spanish, checked for
Content-Security-Policy violations, serious axe violations and sideways scrolling, and shot at
390x844 and 1280x800 into var/screenshots/ (club-*.png).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_csp import ARGS, SITE_ENV, Visitor, shell
from .test_table_page import axe_check, shoot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

SETUP = """
import json
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from apps.club import services as club
from apps.club.models import LeaguePoints
from apps.tables import services
from apps.tables.models import Table
from tests.club.conftest import play_match
U = get_user_model()
people = {n: U.objects.create_user(username=n, password="pw-" + n * 2)
          for n in ("ana", "bea", "caio", "dani", "eva")}
for u in people.values():
    u.profile.language = "es"
    u.profile.save()
table = services.create_table(host=people["ana"], preset="partners", public=True,
                              name="Mesa de Ana", options={"target": 50})
for n in ("bea", "caio", "dani"):
    services.join_table(user=people[n], table_id=table.pk)
services.start_match(user=people["ana"], table_id=table.pk)
play_match(Table.objects.get(pk=table.pk), people["ana"])
stake = club.open_stake_table(user=people["eva"], entry=250)
club.open_stake_table(user=people["bea"], entry=1000, preset="draw", players=2)
from apps.tables.models import Match
old = services.create_table(host=people["eva"], preset="partners")
match = Match.objects.create(table=old, number=1, rules={}, players=4)
last = club.week_of(timezone.now()) - timedelta(days=7)
for n, points in (("eva", 24), ("ana", 18), ("caio", 10)):
    LeaguePoints.objects.create(user=people[n], week=last, match=match, rank=1, points=points)
sessions = {}
for n in ("ana",):
    c = Client()
    c.force_login(people[n])
    sessions[n] = c.cookies["sessionid"].value
print(json.dumps({"sessions": sessions, "code": table.code, "stake": stake.code}))
"""


def test_the_club_pages(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site(env=SITE_ENV)
    made = shell(site, SETUP)
    found: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            ana = Visitor(browser, site.base_url, made["sessions"]["ana"], found)
            page = ana.open("/accounts/profile/")
            assert "Monedas y experiencia" in page.content()
            assert page.locator("#club-balance").inner_text().endswith("monedas")
            assert page.locator(".club-ledger tbody tr").count() >= 2
            axe_check(page, "profile")
            shoot(page, "club-profile-es")
            ana.collect()

            page = ana.open("/club/stakes/")
            assert page.locator("table.lobby tbody tr").count() == 2
            axe_check(page, "stake tables")
            shoot(page, "club-stakes-es")
            ana.collect()
            page.click(f"form[action='/t/{made['stake']}/join/'] button")
            page.wait_for_url(f"**/t/{made['stake']}/")
            ana.collect()
            page = ana.open("/accounts/profile/")
            assert "Entrada de la mesa" in page.content()

            page = ana.open("/club/league/")
            assert page.locator("tr.me").count() == 2  # this week and last week
            axe_check(page, "league")
            shoot(page, "club-league-es")
            ana.collect()

            page = ana.open("/club/leaderboards/")
            axe_check(page, "leaderboards")
            shoot(page, "club-leaderboards-es")
            ana.collect()

            page = ana.open(f"/t/{made['code']}/")
            page.wait_for_selector("#status.ok", timeout=15000)
            wait_until(page, "document.querySelectorAll('.badge.rating').length === 4")
            label = page.locator(".badge.rating").first.get_attribute("title")
            assert label.startswith("Valoración") and "provisional" in label
            shoot(page, "club-table-seats-es")
            ana.collect()
        finally:
            browser.close()
    site.stop(timeout=40)
    assert not found, "\n".join(found)
