"""Fair play in a real browser against the site the run command serves (docs/fairplay.md).

- Mid-round at a four-player partners table, every seat shows its person's share ("90%")
  beside the name, the rating and the role, and every label is still whole on a phone
  (390x844) and a desktop, in Spanish, Brazilian Portuguese and English (the check of
  test_table_labels.py, with the longest names and every badge there is).
- A host sees the minimum's control on a waiting table, sets it, and the page says it.

Screenshots (390x844 and 1280x800) go to var/screenshots/ (fairplay-seats-*,
fairplay-minimum-*; `make screenshots` renews them).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_csp import ARGS, SITE_ENV, Visitor, shell
from .test_table_labels import CLIPPED, PEOPLE, ROLES, SETUP
from .test_table_page import DESKTOP, PHONE, shoot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

#: Every seated person gets a record worth a share and a rating (the widest seats there are),
#: and ana a waiting table of her own, for the host's control. The labels test's setup makes
#: the people and the table in play (it prints its JSON last: this adds to it).
RECORDS = SETUP.replace("print(json.dumps(", "made = ((") + """
from apps.club.models import Rating
from apps.fairplay.models import Record
from apps.tables import services as tables
shares = {"ana": (9, 1), "bea": (100, 0), "caio": (17, 3), "dani": (5, 5)}
for name, (finished, abandoned) in shares.items():
    Record.objects.update_or_create(user=people[name], defaults=dict(
        started=finished + abandoned + 1, finished=finished, abandoned=abandoned))
    Rating.objects.update_or_create(user=people[name], kind="pairs", defaults=dict(
        mu=30, sigma=2, matches=40, shown=1888))
# A new version with a seat event: the snapshot's fair-play and rating parts are built again.
tables.leave_table(user=people["dani"], table_id=table.pk)
waiting = tables.create_table(host=people["ana"], preset="partners", public=True)
made["waiting"] = waiting.code
print(json.dumps(made))
"""
#: The share each seat shows, by seat. Dani left during the round: a bot plays her hand out,
#: her seat still shows her until the round ends, and the leaving counts already (5 of 11).
SHARES = ["90%", "100%", "85%", "45%"]


def test_the_seats_show_each_share_and_still_fit_on_a_phone(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site(env=SITE_ENV)
    made = shell(site, RECORDS)
    found: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            for name, lang, _shown in PEOPLE[:3]:
                person = Visitor(browser, site.base_url, made["sessions"][name], found)
                page = person.open(f"/t/{made['code']}/")
                page.wait_for_selector("#status.ok", timeout=15000)
                wait_until(page, "document.querySelectorAll('#felt .seat .badge.fairplay')"
                                 ".length === 4")
                shoot(page, f"fairplay-seats-{lang}")
                shares = page.evaluate(
                    "[...document.querySelectorAll('#felt .seat')].sort((a, b) => "
                    "a.dataset.seat - b.dataset.seat).map(s => s.querySelector("
                    "'.badge.fairplay').textContent)")
                assert shares == SHARES, (lang, shares)
                title = page.locator("#felt .seat[data-seat='0'] .badge.fairplay") \
                    .get_attribute("title")
                assert "90%" in title and "10" in title, title
                for view in (PHONE, DESKTOP):
                    page.set_viewport_size(view)
                    page.wait_for_timeout(400)
                    clipped = page.evaluate(CLIPPED)
                    assert not clipped, (lang, view, clipped)
                badges = page.evaluate("[...document.querySelectorAll('#felt .seat .badge')]"
                                       ".map(b => b.textContent.trim())")
                partner, opponent = ROLES[lang]
                assert badges.count(partner) == 1 and badges.count(opponent) == 2, badges
                person.collect()

            ana = Visitor(browser, site.base_url, made["sessions"]["ana"], found)
            page = ana.open(f"/t/{made['waiting']}/")
            page.wait_for_selector("#status.ok", timeout=15000)
            page.set_viewport_size(PHONE)
            page.fill("#fairplay-min", "80")
            page.click(".fairplay-form button")
            page.wait_for_selector("#fairplay-minimum", timeout=15000)
            assert "80%" in page.locator("#fairplay-minimum").inner_text()
            assert page.input_value("#fairplay-min") == "80"
            page.locator(".fairplay-form").scroll_into_view_if_needed()
            shoot(page, "fairplay-minimum-es")
            ana.collect()
        finally:
            browser.close()
    site.stop(timeout=40)
    assert not found, "\n".join(found)
