"""Tracker issue 25, in a real browser against the site the run command serves.

- Mid-round at a four-player partners table, every seat's label (the name, and its role:
  "you", "partner", "opponent") is whole on a phone (390x844) and on a desktop, in Spanish,
  Brazilian Portuguese and English: nothing cut off by its seat, and no seat past the screen.
- A practice table (one person and bots) shows no watching switch, no chat and no report
  button; an ordinary table keeps all three.
- The home page's game menus describe the game chosen, and follow the choice.

Screenshots (390x844 and 1280x800) go to var/screenshots/ (table-seats-*, home-presets-*;
`make screenshots` renews them).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_csp import ARGS, SITE_ENV, Visitor, shell
from .test_table_page import DESKTOP, PHONE, shoot, wait_until

# One site for the module (each test only reads what SETUP made), so its tests share a worker.
pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("table_labels"),
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

#: name, language. Long display names (the longest allowed is 12): a role badge must fit
#: beside them too.
PEOPLE = [("ana", "es", "Maximiliana"), ("bea", "pt-br", "Beatriz_Lima"),
          ("caio", "en", "Caio_Rocha"), ("dani", "es", "Daniela_Paz")]
#: The role words each language puts on a seat at a partners table.
ROLES = {"es": ("compañero", "rival"), "pt-br": ("parceiro", "adversário"),
         "en": ("partner", "opponent")}

SETUP = """
import json, random
from django.contrib.auth import get_user_model
from django.test import Client
from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Table
U = get_user_model()
people = {}
for name, lang, shown in PEOPLE:
    u = U.objects.create_user(username=name, password="pw-" + name * 2)
    u.profile.language, u.profile.display_name = lang, shown
    u.profile.save()
    people[name] = u
eva = U.objects.create_user(username="eva", password="pw-evaeva")
eva.profile.language = "es"
eva.profile.save()
table = services.create_table(host=people["ana"], preset="partners", public=True,
                              options={"turn_seconds": None})
for n in ("bea", "caio", "dani"):
    services.join_table(user=people[n], table_id=table.pk)
services.start_match(user=people["ana"], table_id=table.pk)
rng = random.Random(7)
for _ in range(5):
    table.refresh_from_db()
    rnd = game.restore(table.current_match).current
    seat = table.seats.get(index=rnd.turn)
    move = legal_dict(*rng.choice(rnd.legal()))
    services.play_move(user=seat.user, table_id=table.pk, round_number=0,
                       ply=len(rnd.history), tile=move.get("play"), end=move.get("end"),
                       is_pass=bool(move.get("pass")))
practice = services.open_practice(user=eva, preset="partners")
sessions = {}
for u in list(people.values()) + [eva]:
    c = Client()
    c.force_login(u)
    sessions[u.username] = c.cookies["sessionid"].value
print(json.dumps({"sessions": sessions, "code": table.code, "practice": practice.code}))
""".replace("PEOPLE", repr(PEOPLE))

#: Every label on the felt that is cut off, by its seat or by the screen: the name and the
#: badges (the role among them) must show whole.
CLIPPED = """() => {
  const out = [];
  const width = document.documentElement.clientWidth;
  for (const seat of document.querySelectorAll('#felt .seat')) {
    const box = seat.getBoundingClientRect();
    const at = `seat ${seat.dataset.seat}`;
    if (box.left < -0.5 || box.right > width + 0.5) out.push(`${at} off the screen`);
    for (const label of seat.querySelectorAll('.name, .badge, .presence')) {
      const r = label.getBoundingClientRect();
      const text = label.textContent.trim();
      if (label.scrollWidth > label.clientWidth + 1) out.push(`"${text}" cut short in ${at}`);
      if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.width < 1)
        out.push(`"${text}" sticks out of ${at} (${r.left}-${r.right}, ${box.left}-${box.right})`);
    }
  }
  return out;
}"""


@pytest.fixture(scope="module")
def labels_site(module_site):
    """The site and what SETUP made in it, for all three tests; stopped after the last."""
    site = module_site(env=SITE_ENV)
    yield site, shell(site, SETUP)
    site.stop(timeout=40)


def badges(page) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('#felt .seat .badge')]"
                         ".map(b => b.textContent.trim())")


def test_seat_labels_are_whole_on_a_phone_and_a_desktop(labels_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site, made = labels_site
    found: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            for name, lang, _shown in PEOPLE[:3]:
                person = Visitor(browser, site.base_url, made["sessions"][name], found)
                page = person.open(f"/t/{made['code']}/")
                page.wait_for_selector("#status.ok", timeout=15000)
                wait_until(page, "document.querySelectorAll('#felt .seat').length === 4")
                shoot(page, f"table-seats-{lang}")  # first: a failure shows what it was
                for view in (PHONE, DESKTOP):
                    page.set_viewport_size(view)
                    page.wait_for_timeout(400)  # the resize re-lays the felt
                    clipped = page.evaluate(CLIPPED)
                    assert not clipped, (lang, view, clipped)
                partner, opponent = ROLES[lang]
                shown = badges(page)
                assert shown.count(partner) == 1 and shown.count(opponent) == 2, (lang, shown)
                person.collect()
        finally:
            browser.close()
    assert not found, "\n".join(found)


def test_a_practice_table_shows_no_watching_chat_or_report(labels_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site, made = labels_site
    found: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            eva = Visitor(browser, site.base_url, made["sessions"]["eva"], found)
            page = eva.open(f"/t/{made['practice']}/")
            page.wait_for_selector("#status.ok", timeout=15000)
            wait_until(page, "document.querySelectorAll('#hand .hand-tile').length > 0")
            assert page.locator(".watching-form").count() == 0
            assert page.locator("#chat").count() == 0
            assert page.locator("#report-open").count() == 0
            # Host of her practice table all the same: she can pause it.
            assert page.locator("#host [data-action=pause]").is_visible()
            eva.collect()

            ana = Visitor(browser, site.base_url, made["sessions"]["ana"], found)
            page = ana.open(f"/t/{made['code']}/")
            page.wait_for_selector("#status.ok", timeout=15000)
            assert page.locator(".watching-form button").is_visible()
            assert page.locator("#chat").is_visible()
            assert page.locator("#chat-text").is_enabled()
            assert page.locator("#report-open").is_visible()
            ana.collect()
        finally:
            browser.close()
    assert not found, "\n".join(found)


def test_the_home_page_describes_the_game_chosen(labels_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site, made = labels_site
    found: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            ana = Visitor(browser, site.base_url, made["sessions"]["ana"], found)
            for path, menus in (("/", ("#id_preset", "#quick_preset")),
                                ("/tables/new/", ("#id_preset",)),
                                ("/club/stakes/", ("#id_preset",))):
                page = ana.open(path)
                page.set_viewport_size(PHONE)
                for menu in menus:
                    about = page.locator(f"{menu}_about")
                    assert page.locator(menu).get_attribute("aria-describedby").endswith(
                        f"{menu[1:]}_about")
                    seen = set()
                    for preset in ("partners", "partners-66", "pairs-series"):
                        page.select_option(menu, preset)
                        shown = about.locator("[data-preset]:visible")
                        assert shown.count() == 1, (path, menu, preset)
                        assert shown.get_attribute("data-preset") == preset
                        text = shown.inner_text().strip()
                        assert text and text not in seen, (path, menu, preset, text)
                        seen.add(text)
                if path == "/":
                    page.select_option("#id_preset", "partners-66")
                    shoot(page, "home-presets-es")
                ana.collect()
        finally:
            browser.close()
    assert not found, "\n".join(found)
