"""A pairs tournament's partner invitation in a real browser, against the site the run command
serves (docs/tournaments.md, "Registration"):

- ana (English) names bea as her partner on the tournament page: the page says bea is invited
  and that ana's place is held with both entries paid, and lists the pair as waiting;
- bea (Spanish) finds the invitation on her home page ("Parejas de torneo"), and accepts it
  there: she lands on the tournament page, registered as a pair;
- ana's page, left open, follows live: the pair is registered, no longer waiting.

axe finds no serious violation on either page. Screenshots (390x844 and 1280x800) go to
var/screenshots/ (tournament-invited-*, home-partner-invitation-*; `make screenshots` renews
the committed ones).
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
from apps.tournaments import services
U = get_user_model()
people = {n: U.objects.create_user(username=n, password="pw-" + n * 2)
          for n in ("ana", "bea")}
for name, language in (("ana", "en"), ("bea", "es")):
    people[name].profile.language = language
    people[name].profile.save()
root = U.objects.create_superuser(username="root", password="pw-rootroot")
t = services.create_tournament(user=root, name="Copa de Parejas", preset="partners",
                               players=4, format="swiss", rounds=3, target=100, entry=100,
                               starts_at=timezone.now() + timedelta(hours=2))
sessions = {}
for n, u in people.items():
    c = Client()
    c.force_login(u)
    sessions[n] = c.cookies["sessionid"].value
print(json.dumps({"sessions": sessions, "tournament": t.pk}))
"""


def test_a_partner_accepts_the_invitation_from_the_home_page(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site(env=SITE_ENV)
    made = shell(site, SETUP)
    detail, found = f"/tournaments/{made['tournament']}/", []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            ana = Visitor(browser, site.base_url, made["sessions"]["ana"], found)
            page = ana.open(detail)
            page.fill("#id_partner", "bea")
            page.click("form.register button[type=submit]")
            page.wait_for_selector(".partner-waiting", timeout=15000)
            text = page.inner_text("main")
            assert "bea is invited: you are registered as a pair when they accept." in text
            assert "ana & bea (invited, waiting for the answer)" in text, text
            assert "Withdraw the invitation and get both entries back" in text
            axe_check(page, "tournament, invitation sent")
            shoot(page, "tournament-invited-en")
            ana.collect()

            bea = Visitor(browser, site.base_url, made["sessions"]["bea"], found)
            home = bea.open("/")
            panel = home.locator(".tournament-invitations")
            assert "ana te invita a jugar Copa de Parejas como su pareja." in panel.inner_text()
            axe_check(home, "home, a partner's invitation")
            panel.scroll_into_view_if_needed()
            shoot(home, "home-partner-invitation-es")
            panel.locator("button:has-text('Aceptar')").click()
            home.wait_for_selector("text=Están inscritos como pareja.", timeout=15000)
            assert home.url.endswith(detail)
            assert "ana & bea" in home.inner_text("ul.entrants")
            assert "invitado" not in home.inner_text("ul.entrants")
            bea.collect()

            # ana's page, left open, heard it through the tournament's socket.
            wait_until(page, "!document.querySelector('.partner-waiting')", timeout=15000)
            assert "waiting for the answer" not in page.inner_text("ul.entrants")
            assert page.is_visible("text=Withdraw and get the entry back")
            ana.collect()
        finally:
            browser.close()
    site.stop(timeout=40)
    assert not found, "\n".join(found)
