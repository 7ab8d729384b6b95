"""The replay page and watching in a real browser, against the site served by the run command.

Finished matches are played through the services (random legal moves) in the site's own
database: partners (28 tiles dealt), draw with three players (a boneyard drawn from) and
all-fives with two (a spinner, fives scored during play). For each, a player downloads the
record from the replay page and steps the page with the arrow keys to the end of every round:
the scores the page shows there are the ones ``apps.rules.harness.replay()`` gives for the
downloaded record up to that round, the hands left are the round's pips, every tile is on the
line, and every move says who made it. The buttons, axe and the page's console are checked; a
watcher sees the watcher count and the host's switch closes their socket.

Screenshots (390x844 and 1280x800) of the replay page, the profile's history, the table as a
watcher sees it and the page a watcher gets once watching is off go to var/screenshots/.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from apps.rules import harness

from .matches import FINISH, shell
from .test_table_page import ARGS, DESKTOP, PHONE, axe_check, shoot, wait_until, watch_console

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

#: Played in the site's database by ``manage.py shell``: finished matches, and a table in play
#: for the watcher.
SETUP = FINISH + """
import json
from django.contrib.auth import get_user_model
from django.test import Client
U = get_user_model()
people = {n: U.objects.create_user(username=n, password="pw-" + n * 2)
          for n in ("ana", "bea", "caio", "dani", "eva")}
for u in people.values():
    u.profile.language = "en"
    u.profile.save()

codes = {}
for preset, players, target, seed in (("partners", 4, 50, 1), ("draw", 3, 25, 2),
                                      ("all-fives", 2, 60, 3)):
    table = services.create_table(host=people["ana"], preset=preset, players=players,
                                  public=False, options={"target": target, "turn_seconds": None})
    for n in ("bea", "caio", "dani")[:players - 1]:
        services.join_table(user=people[n], table_id=table.pk, code=table.code)
    finish(table, people["ana"], seed)
    codes[preset] = table.code
live = services.create_table(host=people["ana"], preset="partners", public=True,
                             options={"turn_seconds": None})
for n in ("bea", "caio", "dani"):
    services.join_table(user=people[n], table_id=live.pk)
services.start_match(user=people["ana"], table_id=live.pk)
sessions = {}
for n in ("ana", "eva"):
    c = Client()
    c.force_login(people[n])
    sessions[n] = c.cookies["sessionid"].value
print(json.dumps({"sessions": sessions, "codes": codes, "live": live.code, "live_id": live.pk}))
"""


LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"}`);
});
"""


def context_for(browser, base: str, session: str, viewport: dict):
    context = browser.new_context(viewport=viewport, locale="en")
    context.add_cookies([{"name": "sessionid", "value": session, "url": base}])
    context.add_init_script(LISTEN)
    return context


def where(page) -> tuple[int, int, bool]:
    data = page.evaluate("""(() => { const d = document.getElementById('replay-where').dataset;
        return [Number(d.round), Number(d.ply), d.end === '1']; })()""")
    return data[0], data[1], data[2]


def shown_scores(page) -> list[int]:
    return [int(t) for t in page.eval_on_selector_all(
        "#replay-scores [data-side] .score", "ns => ns.map(n => n.textContent)")]


def step_through(page, record: dict) -> int:
    """Arrow keys to the end of every round: the page's scores are the harness's there."""
    page.keyboard.press("Home")
    assert where(page) == (0, 0, False)
    rounds = record["rounds"]
    checked = 0
    for k, rnd in enumerate(rounds):
        assert where(page)[:2] == (k, 0)
        for _ in range(len(rnd["moves"])):
            page.keyboard.press("ArrowRight")
        assert where(page) == (k, len(rnd["moves"]), True)
        out = harness.replay({**record, "rounds": rounds[:k + 1]})
        assert out["ok"], out
        assert shown_scores(page) == out["scores"], (k, shown_scores(page), out["scores"])
        pips = [int(p) for p in page.eval_on_selector_all(
            "#replay-hands li", "ns => ns.map(n => n.dataset.pips)")]
        assert pips == out["rounds"][k]["result"]["pips"], k
        plays = [m for m in rnd["moves"] if "play" in m]
        assert page.locator("#replay-line .tile[data-ply]").count() == len(plays)
        items = page.eval_on_selector_all("#replay-moves li", "ns => ns.map(n => n.textContent)")
        assert len(items) == len(rnd["moves"])
        # Who made a move is said only when it was not the seat's own player: the table (a
        # pass it made because nothing fitted, a person's time running out) or a bot standing
        # in. These matches have no bots.
        for move, text in zip(rnd["moves"], items, strict=True):
            said = "(played by" in text or "(the table passed" in text
            assert said == (move.get("by", "player") != "player"), (move, text)
        assert page.locator("#replay-result").is_visible()
        checked += 1
        if k + 1 < len(rounds):
            page.keyboard.press("ArrowRight")
    assert page.locator("#replay-next").is_disabled()
    return checked


def test_the_replay_steps_to_the_harness_scores_and_watchers_watch(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site()
    base = site.base_url
    made = shell(site, SETUP)
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            for preset, code in made["codes"].items():
                view = PHONE if preset == "draw" else DESKTOP
                context = context_for(browser, base, made["sessions"]["ana"], view)
                page = context.new_page()
                watch_console(page, f"ana {preset}", errors)
                page.goto(f"{base}/t/{code}/matches/1/replay/")
                page.wait_for_selector("#replay-where[data-round]")
                link = page.locator(f'a[href="/t/{code}/record.json?match=1"]')
                assert link.count() == 1
                record = context.request.get(base + link.get_attribute("href")).json()
                assert step_through(page, record) == len(record["rounds"])
                # The buttons.
                page.click("#replay-first")
                assert where(page) == (0, 0, False)
                page.click("#replay-next")
                assert where(page)[:2] == (0, 1)
                page.click("#replay-prev")
                assert where(page)[:2] == (0, 0)
                if len(record["rounds"]) > 1:
                    page.click("#replay-next-round")
                    assert where(page)[:2] == (1, 0)
                    page.click("#replay-prev-round")
                    assert where(page)[:2] == (0, 0)
                page.click("#replay-last")
                last = len(record["rounds"]) - 1
                assert where(page) == (last, len(record["rounds"][last]["moves"]), True)
                axe_check(page, f"replay ({preset})")
                if preset == "all-fives":
                    page.keyboard.press("Home")
                    for _ in range(9):
                        page.keyboard.press("ArrowRight")
                    shoot(page, "replay-en")
                assert page.evaluate("window.__csp") == []
                context.close()

            # ana's history on her profile: the three matches, each linked to its replay.
            context = context_for(browser, base, made["sessions"]["ana"], DESKTOP)
            page = context.new_page()
            watch_console(page, "ana profile", errors)
            page.goto(f"{base}/accounts/profile/")
            assert page.locator(".history li").count() == 3
            for code in made["codes"].values():
                assert page.locator(f'.history a[href="/t/{code}/matches/1/replay/"]').count() == 1
            page.locator("#history").scroll_into_view_if_needed()
            axe_check(page, "profile with history")
            shoot(page, "profile-history-en")
            context.close()

            # eva watches the live table: the public view, told she is watching; the players
            # see the count. Then ana turns watching off and eva's page says so.
            ana = context_for(browser, base, made["sessions"]["ana"], DESKTOP).new_page()
            eva = context_for(browser, base, made["sessions"]["eva"], PHONE).new_page()
            watch_console(ana, "ana table", errors)
            watch_console(eva, "eva table", errors)
            ana.goto(f"{base}/t/{made['live']}/")
            ana.wait_for_selector("#status.ok", timeout=15000)
            eva.goto(f"{base}/t/{made['live']}/")
            eva.wait_for_selector("#status.ok", timeout=15000)
            wait_until(eva, "document.getElementById('watchers').textContent.includes('watching')")
            assert eva.locator("#hand-area").is_hidden()
            wait_until(ana, "document.getElementById('watchers').textContent"
                            ".includes('1 person watching')")
            axe_check(eva, "table (watcher)")
            shoot(eva, "table-en-watcher")
            axe_check(ana, "table (host, with the watching switch)")
            shoot(ana, "table-en-host-watching")
            ana.click(".watching-form button[type=submit]")
            ana.wait_for_selector(".watching-form input[value='1']", state="attached")
            wait_until(eva, "document.getElementById('status').textContent"
                            ".includes('turned watching off')")
            assert ana.evaluate("window.__csp") == [] and eva.evaluate("window.__csp") == []
            # Reloaded, the page is a 403 that says why (a fresh page: the browser logs the
            # status as a console error).
            off = eva.context.new_page()
            response = off.goto(f"{base}/t/{made['live']}/")
            assert response.status == 403
            assert "The host has turned watching off" in off.content()
            axe_check(off, "watching off")
            shoot(off, "watching-off-en")
            assert off.evaluate("window.__csp") == []
            assert not errors, errors
        finally:
            browser.close()
    site.stop(timeout=40)
