"""Friends and quick phrases in a real browser, against the site as `make run` serves it.

- ana (Spanish, desktop) opens her friends page: bea online at a public table (a link to it),
  caio offline, dani's request, the people she blocked; axe finds nothing serious, nothing
  scrolls sideways; shot at 390x844 and 1280x800 (var/screenshots/friends-es-*.png);
- at ana's table, bea (Brazilian Portuguese, a phone: 390x844, touch) taps "Boa!" and caio
  (English) says "Well played" with the keyboard alone (Tab to the button, Enter); ana reads
  both in Spanish ("¡Buena!", "Bien jugado") and never eva's line (she blocked eva, who
  watches: the host lets watchers use the phrases); the table with the phrase menu is shot
  at both sizes (var/screenshots/phrases-*.png);
- ana, the host, opens the invitations panel: her friends with an Invite button each, and
  inviting dani-who-is-now-a-friend takes one click.
No page breaks the Content-Security-Policy.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_csp import ARGS, LISTEN, SITE_ENV, shell
from .test_table_page import PHONE, SHOTS, axe_check, no_horizontal_scroll, shoot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

SETUP = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from apps.friends import services as friends
from apps.moderation import quick_chat
from apps.tables import services
U = get_user_model()
people = {n: U.objects.create_user(username=n, password="pw-" + n * 2)
          for n in ("ana", "bea", "caio", "dani", "eva", "host")}
for n, lang in (("ana", "es"), ("bea", "pt-br"), ("caio", "en"), ("dani", "es"),
                ("eva", "es"), ("host", "es")):
    people[n].profile.language = lang
    people[n].profile.save()
def befriend(a, b):
    row = friends.request_friend(user=people[a], display_name=b)
    friends.accept_request(user=people[b], request_id=row.pk)
befriend("ana", "bea")
befriend("ana", "caio")
friends.set_usual_partner(user=people["ana"], partner_id=people["bea"].pk)
friends.request_friend(user=people["dani"], display_name="ana")
friends.block(user=people["ana"], person_id=people["eva"].pk)
table = services.create_table(host=people["ana"], preset="partners", public=True,
                              name="Mesa de Ana", options={"turn_seconds": None})
for n in ("bea", "caio", "host"):
    services.join_table(user=people[n], table_id=table.pk)
services.start_match(user=people["ana"], table_id=table.pk)
quick_chat.set_watcher_phrases(user=people["ana"], table_id=table.pk, allowed=True)
sessions = {}
for n in people:
    c = Client()
    c.force_login(people[n])
    sessions[n] = c.cookies["sessionid"].value
print(json.dumps({"sessions": sessions, "code": table.code, "dani": people["dani"].pk}))
"""


def context(browser, base_url: str, session: str, *, phone: bool = False):
    size = PHONE if phone else {"width": 1280, "height": 800}
    ctx = browser.new_context(viewport=size, has_touch=phone, is_mobile=phone)
    ctx.add_cookies([{"name": "sessionid", "value": session, "url": base_url}])
    ctx.add_init_script(LISTEN)
    return ctx


def violations(page) -> list:
    return [f"{page.url}: {v}" for v in page.evaluate("window.__csp || []")]


def chat_texts(page) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('#chat-list li')]"
                         ".map(li => li.textContent)")


def test_friends_page_and_quick_phrases(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site(env=SITE_ENV)
    made = shell(site, SETUP)
    base, code, found, errors = site.base_url, made["code"], [], []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            pages = {}
            for name, phone in (("ana", False), ("bea", True), ("caio", False),
                                ("eva", False)):
                pages[name] = context(browser, base, made["sessions"][name],
                                      phone=phone).new_page()
                pages[name].on("pageerror", lambda exc, n=name: errors.append(f"{n}: {exc}"))
            ana, bea, caio, eva = (pages[n] for n in ("ana", "bea", "caio", "eva"))

            # bea and eva at the table first: bea is then online, at a public table; caio
            # comes later, so he is offline on ana's page.
            for page in (bea, eva):
                page.goto(f"{base}/t/{code}/")
                page.wait_for_selector("#status.ok", timeout=15000)
            ana.goto(f"{base}/friends/")
            friends = ana.locator("#friend-list li")
            assert friends.count() == 2
            first = friends.nth(0).inner_text()
            assert "bea" in first and "en línea" in first and "compañero habitual" in first
            assert "desconectado" in friends.nth(1).inner_text()
            assert ana.locator(f"#friend-list a[href='/t/{code}/']").count() == 1
            assert "dani" in ana.locator("#incoming").inner_text()
            assert "eva" in ana.locator("#blocked").inner_text()
            axe_check(ana, "friends")
            shoot(ana, "friends-es")
            found += violations(ana)

            # The table: phrases by touch and by keyboard, each read in ana's Spanish.
            for page in (ana, caio):
                page.goto(f"{base}/t/{code}/")
                page.wait_for_selector("#status.ok", timeout=15000)
            wait_until(bea, "!document.getElementById('phrases').hidden")
            bea.tap("button[data-phrase='good_one']")
            wait_until(ana, "[...document.querySelectorAll('#chat-list li')]"
                            ".some(li => li.textContent.includes('¡Buena!'))")
            wait_until(bea, "[...document.querySelectorAll('#chat-list li')]"
                            ".some(li => li.textContent.includes('Boa!'))")
            caio.locator("button[data-phrase='i_pass']").focus()
            for _ in range(6):  # Tab along the menu to "Well played"
                if caio.evaluate("document.activeElement.dataset.phrase") == "well_played":
                    break
                caio.keyboard.press("Tab")
            assert caio.evaluate("document.activeElement.dataset.phrase") == "well_played"
            caio.keyboard.press("Enter")
            wait_until(ana, "[...document.querySelectorAll('#chat-list li')]"
                            ".some(li => li.textContent.includes('Bien jugado'))")
            # eva watches, may use the phrases here, and ana blocked her: never shown to ana.
            wait_until(eva, "!document.getElementById('phrases').hidden")
            eva.click("button[data-phrase='laugh']")
            wait_until(caio, "[...document.querySelectorAll('#chat-list li')]"
                             ".some(li => li.textContent.includes('😂'))")
            ana.wait_for_timeout(1000)
            assert not any("😂" in line for line in chat_texts(ana))
            assert any("Well played" in line for line in chat_texts(caio))
            assert ana.get_attribute("#phrases", "aria-label") == "Frases rápidas"
            no_horizontal_scroll(bea)
            bea.locator("#chat").scroll_into_view_if_needed()
            bea.screenshot(path=str(SHOTS / "phrases-pt-br-390x844.png"))
            axe_check(ana, "table with phrases")
            ana.locator("#chat").scroll_into_view_if_needed()
            ana.screenshot(path=str(SHOTS / "phrases-es-1280x800.png"))

            # The host's friends, one click from an invitation.
            ana.goto(f"{base}/friends/")
            ana.click("#incoming form[action$='/accept/'] button")
            ana.wait_for_url("**/friends/")
            ana.goto(f"{base}/t/{code}/")
            ana.click("details.share summary")
            panel = ana.locator(".friend-invites")
            assert "dani" in panel.inner_text() and "sentado aquí" in panel.inner_text()
            ana.click(".friend-invites button:has-text('Invitar a dani')")
            ana.wait_for_url(f"**/t/{code}/")
            ana.click("details.share summary")
            assert ana.locator(".friend-invites button:has-text('Invitar a dani otra vez')") \
                .count() == 1
            axe_check(ana, "table with the friends panel open")
            ana.locator(".friend-invites").scroll_into_view_if_needed()
            ana.screenshot(path=str(SHOTS / "friends-invite-es-1280x800.png"))
            for page in pages.values():
                found += violations(page)
        finally:
            browser.close()
    site.stop(timeout=40)
    assert not found, "\n".join(found)
    assert not errors, "\n".join(errors)
