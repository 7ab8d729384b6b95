"""Every page type in a real browser under the site's Content-Security-Policy: no violation.

The site runs as `make run` does (Daphne, the Redis channel layer, Celery), with DEBUG off so
that error pages are the production ones. Each page is loaded by the person who would see it
(anonymous, a player, the host, a moderator, a superuser), its scripts are made to run (sockets
connect, the match starts, a chat message is sent, the language switcher is used), and every
violation the browser reports, as a `securitypolicyviolation` event or a console message, fails
the test. A planted inline script proves the listener hears violations.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from .matches import FINISH

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

ROOT = Path(__file__).resolve().parent.parent.parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
#: DEBUG off like production; DJANGO_TESTING serves static files from the source folders.
SITE_ENV = {"DEBUG": "0", "DJANGO_TESTING": "1", "SECRET_KEY": secrets.token_urlsafe(50)}

SETUP = FINISH + """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from apps.moderation import services as mod
from apps.tables import services
U = get_user_model()
people = {n: U.objects.create_user(username=n, password="pw-" + n * 2)
          for n in ("ana", "bea", "caio", "dani", "eva", "mod")}
for u in people.values():
    u.profile.language = "en"
    u.profile.save()
mod.make_moderator(people["mod"])
people["root"] = U.objects.create_superuser(username="root", password="pw-rootroot")
table = services.create_table(host=people["ana"], preset="partners", public=True,
                              name="Mesa de Ana", options={"turn_seconds": 60})
for n in ("bea", "caio", "dani"):
    services.join_table(user=people[n], table_id=table.pk)
waiting = services.create_table(host=people["eva"], preset="draw", players=2, public=True)
msg = mod.post_chat(user=people["bea"], table_id=table.pk, text="hello all")
report = mod.report(user=people["caio"], table_id=table.pk, reason="spam", message_id=msg.pk)
finished = services.create_table(host=people["eva"], preset="draw", players=2, public=True,
                                 options={"target": 10, "turn_seconds": None})
services.join_table(user=people["dani"], table_id=finished.pk)
finish(finished, people["eva"], 5)
sessions = {}
for n in ("ana", "eva", "mod", "root"):
    c = Client()
    c.force_login(people[n])
    sessions[n] = c.cookies["sessionid"].value
print(json.dumps({"sessions": sessions, "table": table.pk, "code": table.code,
                  "waiting": waiting.code, "report": report.pk, "bea": people["bea"].pk,
                  "finished": finished.code}))
"""

LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"}`
                    + ` at ${e.sourceFile}:${e.lineNumber}`);
});
"""


def shell(site, code: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in {"REDIS_URL", "DATABASE_URL", "PYTEST_EMBEDDED_REDIS"}}
    env.update(VAR_DIR=str(site.var_dir), **SITE_ENV)
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


class Visitor:
    """One person's browser context; every page it opens is checked for the header and for
    violations."""

    def __init__(self, browser, base_url: str, session: str | None, found: list[str]):
        self.base_url, self.found = base_url, found
        self.context = browser.new_context(viewport={"width": 1280, "height": 800},
                                           locale="en")
        if session:
            self.context.add_cookies([{"name": "sessionid", "value": session,
                                       "url": base_url}])
        self.context.add_init_script(LISTEN)
        self.page = self.context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda exc: found.append(f"page error: {exc}"))

    def _console(self, msg) -> None:
        text = msg.text
        if "Content Security Policy" in text or "Content-Security-Policy" in text:
            self.found.append(f"{self.page.url}: {text}")

    def open(self, path: str, status: int = 200):
        response = self.page.goto(self.base_url + path, wait_until="load")
        assert response is not None and response.status == status, (path, response.status)
        policy = response.headers.get("content-security-policy", "")
        assert "script-src 'self'" in policy and "ws://127.0.0.1" in policy, (path, policy)
        return self.page

    def collect(self) -> None:
        """The page's violation events (they are gone once the next page loads)."""
        self.found.extend(f"{self.page.url}: {v}" for v in self.page.evaluate("window.__csp"))
        self.page.evaluate("window.__csp = []")


def test_every_page_passes_the_content_security_policy(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site(env=SITE_ENV)
    made = shell(site, SETUP)
    table_url, found = f"/t/{made['code']}/", []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            # The listener hears a violation: a planted inline script is refused.
            probe = Visitor(browser, site.base_url, None, [])
            probe.open("/")
            probe.page.evaluate("""() => { const s = document.createElement("script");
                s.textContent = "window.__ran = true"; document.body.append(s); }""")
            probe.page.wait_for_timeout(300)
            probe.collect()
            assert not probe.page.evaluate("window.__ran === true")
            assert any("script-src" in v for v in probe.found), probe.found

            anonymous = Visitor(browser, site.base_url, None, found)
            for path, status in (("/", 200), ("/lobby/", 200), ("/accounts/login/", 200),
                                 ("/accounts/signup/", 200), ("/accounts/password/reset/", 200),
                                 (table_url, 200), ("/no-such-page/", 404)):
                anonymous.open(path, status)
                anonymous.collect()
            # The language switcher (a script file now, not an onchange attribute).
            anonymous.open("/lobby/")
            with anonymous.page.expect_navigation():
                anonymous.page.select_option("#language-select", "pt-br")
            assert anonymous.page.locator("html").get_attribute("lang") == "pt-br"
            anonymous.collect()

            # A visitor practises (practice.js) and lands at the table page as a guest, whose
            # socket opens; another watches a public table as a guest.
            visitor = Visitor(browser, site.base_url, None, found)
            page = visitor.open("/")
            page.select_option("#id_preset", "draw")
            visitor.collect()
            with page.expect_navigation():
                page.click("#practice-form button[type=submit]")
            page.wait_for_selector("#status.ok", timeout=15000)
            visitor.collect()
            watcher = Visitor(browser, site.base_url, None, found)
            page = watcher.open(table_url)
            with page.expect_navigation():
                page.click(".watch-guest button[type=submit]")
            page.wait_for_selector(".guest-note", timeout=15000)
            watcher.collect()

            eva = Visitor(browser, site.base_url, made["sessions"]["eva"], found)
            page = eva.open("/")  # the home page's ws/me/ socket
            page.wait_for_timeout(500)
            eva.collect()
            for path in ("/accounts/profile/", "/accounts/password/change/",
                         f"/t/{made['waiting']}/"):
                eva.open(path)
                eva.collect()
            # The replay page: its script steps through the match (keys and a button).
            page = eva.open(f"/t/{made['finished']}/matches/1/replay/")
            page.keyboard.press("ArrowRight")
            page.click("#replay-last")
            eva.collect()
            page = eva.open("/tables/new/")
            page.select_option("#id_preset", "tranca")  # create.js hides and shows fields
            eva.collect()
            page = eva.open("/staff/", 403)
            assert "Not allowed" in page.content()
            eva.collect()

            ana = Visitor(browser, site.base_url, made["sessions"]["ana"], found)
            page = ana.open(table_url)
            page.wait_for_selector("#status.ok", timeout=15000)
            assert page.locator("#table-name").inner_text() == "Mesa de Ana"
            page.click("#host [data-action=start]")
            # Locator waits, not wait_for_function: that one evals a string in the page,
            # which the policy refuses ('unsafe-eval').
            page.locator("#hand .hand-tile").nth(6).wait_for(timeout=15000)
            page.fill("#chat-text", "good luck")
            page.click("#chat-send")
            page.wait_for_selector("#chat-list li:has-text('good luck')", timeout=10000)
            page.wait_for_timeout(1500)  # the turn clock's bar runs (an inline style width)
            ana.collect()

            moderator = Visitor(browser, site.base_url, made["sessions"]["mod"], found)
            for path in ("/staff/", f"/staff/tables/{made['table']}/", "/staff/reports/",
                         f"/staff/reports/{made['report']}/", f"/staff/users/{made['bea']}/"):
                page = moderator.open(path)
                if "/staff/tables/" in path:
                    page.wait_for_selector("#observer-status:not(:empty)", timeout=15000)
                moderator.collect()

            root = Visitor(browser, site.base_url, made["sessions"]["root"], found)
            for path in ("/admin/", "/admin/moderation/moderationlog/",
                         f"/admin/auth/user/{made['bea']}/change/"):
                root.open(path)
                root.collect()
        finally:
            browser.close()
    site.stop(timeout=40)
    assert not found, "\n".join(found)
