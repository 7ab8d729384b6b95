"""A tournament in a real browser, from its creation to its prizes, on the site served by the
run command (Daphne, the channel layer, a Celery worker and beat):

- mod, a moderator (English), creates a Swiss tournament of block, one-on-one, two rounds,
  matches to 1 point, 100 coins entry, prizes 70/30, through the creation form, and keeps its
  page open: everything after that reaches that page live, through the tournament's socket,
  without a reload;
- ana (Spanish), bea (Brazilian Portuguese) and caio (English) register from the page;
- the start time is brought forward (the only shortcut, with the round break and beat's tick
  shortened by the environment); beat starts round 1, the players whose table opened follow
  the page's "go to your table" link, and the match starts when both are there. Their
  profiles have "play automatically" on, so the table plays for them after the bots' think
  time: the matches are real matches through the real services, worker and beat;
- after round 2 the page shows the standings and the prizes paid, and the books agree.

Screenshots (var/screenshots/tournament-*.png) at 390x844 and 1280x800: the creation form,
registration, a round being played (the live table) and the finished tournament."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from .test_csp import ARGS, SITE_ENV, Visitor, shell
from .test_table_page import axe_check, shoot

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

ENV = {**SITE_ENV, "TOURNAMENT_ROUND_BREAK_SECONDS": "3", "TOURNAMENT_TICK_SECONDS": "1"}

SETUP = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from apps.moderation import services as mod
U = get_user_model()
people = {n: U.objects.create_user(username=n, password="pw-" + n * 2)
          for n in ("mod", "ana", "bea", "caio")}
for name, language in (("mod", "en"), ("ana", "es"), ("bea", "pt-br"), ("caio", "en")):
    profile = people[name].profile
    profile.language = language
    # The players' tables play for them (seed 004's "play automatically"), after the think time.
    profile.auto_play = name != "mod"
    profile.save()
mod.make_moderator(people["mod"])
sessions = {}
for n, u in people.items():
    c = Client()
    c.force_login(u)
    sessions[n] = c.cookies["sessionid"].value
print(json.dumps({"sessions": sessions}))
"""

START_NOW = """
import json
from datetime import timedelta
from django.utils import timezone
from apps.tournaments.models import Tournament
Tournament.objects.update(starts_at=timezone.now() + timedelta(seconds=2))
print(json.dumps({"ok": True}))
"""

BOOKS = """
import json
from apps.club.models import LedgerEntry, Purse, RatingChange
from apps.club.selectors import wallet_problems
from apps.tables.models import Match
from apps.tournaments.models import Game, Tournament
t = Tournament.objects.get()
games = Game.objects.filter(round__tournament=t)
matches = Match.objects.filter(table__tournament_game__round__tournament=t)
print(json.dumps({
    "state": t.state, "problems": wallet_problems(),
    "purse": Purse.objects.get(key=t.purse_key).state,
    "prizes": sorted(LedgerEntry.objects.filter(reason="t_prize").values_list("coins", flat=True)),
    "outcomes": sorted(games.values_list("outcome", flat=True)),
    "matches": [m.finished_at is not None for m in matches],
    "rated": RatingChange.objects.filter(match__in=matches).count(),
}))
"""


def test_a_tournament_from_registration_to_the_prizes(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site(env=ENV)
    made = shell(site, SETUP)
    found: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            visitors = {n: Visitor(browser, site.base_url, made["sessions"][n], found)
                        for n in ("mod", "ana", "bea", "caio")}
            # -- the moderator creates it through the form --------------------------------
            mod = visitors["mod"]
            page = mod.open("/tournaments/")
            page.click('a[href="/tournaments/new/"]')
            page.wait_for_selector("form.tournament-create")
            starts = (datetime.now(UTC) + timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M")
            page.fill("#id_name", "Copa Relámpago")
            page.select_option("#id_preset", "block")
            page.select_option("#id_players", "2")
            page.select_option("#id_format", "swiss")
            page.fill("#id_rounds", "2")
            page.fill("#id_starts_at", starts)
            page.select_option("#id_turn_seconds", "30")
            page.fill("#id_target", "1")
            page.fill("#id_entry", "100")
            page.fill("#id_prize_split", "70, 30")
            axe_check(page, "tournament creation")
            shoot(page, "tournament-create-en")
            page.click("form.tournament-create button[type=submit]")
            page.wait_for_selector("#tournament-live")
            detail = page.url.removeprefix(site.base_url)
            assert "Copa Relámpago" in page.inner_text("h1")
            mod.collect()

            # -- three people register from the page, in their languages ------------------
            for name, button, done in (("ana", "Inscribirme", "Estás inscrito."),
                                       ("bea", "Inscrever-me", "Você está inscrito."),
                                       ("caio", "Register", "You are registered.")):
                player = visitors[name].open(detail)
                player.click(f"form.register button:has-text('{button}')")
                player.wait_for_selector(f"text={done}")
                visitors[name].collect()
            # The moderator's page followed, live, without a reload.
            mod.page.wait_for_selector("ul.entrants li:has-text('caio')", timeout=10000)
            assert "Pot: 300 coins." in mod.page.inner_text("#tournament-live")
            axe_check(mod.page, "tournament registration")
            shoot(mod.page, "tournament-registration-en")

            # -- the start, brought forward; beat runs the rest -----------------------------
            shell(site, START_NOW)
            players = {n: visitors[n] for n in ("ana", "bea", "caio")}
            at_table: dict[str, str] = {}
            shot_live = False
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                state = mod.page.get_attribute(".tournament-state", "data-state")
                if state == "finished":
                    break
                if not shot_live and mod.page.locator(".live-tables .score").count():
                    shoot(mod.page, "tournament-round-en")
                    shot_live = True
                for name, visitor in players.items():
                    _follow(visitor, name, detail, at_table)
                time.sleep(0.5)
            else:
                raise AssertionError(f"not finished: {mod.page.inner_text('#tournament-live')}")

            # -- the end, on the page that stayed open --------------------------------------
            live = mod.page.inner_text("#tournament-live")
            assert "Finished" in live and "Prizes paid" in live, live
            assert "Started at" in live and "Registration is open" not in live, live
            assert "210" in live and "90" in live, live
            rows = mod.page.locator(".standings tbody tr")
            assert rows.count() == 3
            axe_check(mod.page, "tournament finished")
            shoot(mod.page, "tournament-finished-en")
            ana = players["ana"].open(detail)
            assert "Premios pagados" in ana.inner_text("#tournament-live")
            shoot(ana, "tournament-finished-es")
            for visitor in visitors.values():
                visitor.collect()
        finally:
            browser.close()
    assert found == [], found
    books = shell(site, BOOKS)
    assert books["state"] == "finished" and books["problems"] == [] and books["purse"] == "paid"
    assert books["prizes"] == [90, 210]
    # Two rounds of three: two games played (each a real match, rated) and two byes.
    assert books["outcomes"] == ["bye", "bye", "played", "played"], books
    assert books["matches"] == [True, True] and books["rated"] == 4


def _follow(visitor, name: str, detail: str, at_table: dict[str, str]) -> None:
    """A player: from the tournament page to their table when it opens (the page's link),
    and back once the page no longer lists that table as live."""
    page = visitor.page
    if name in at_table:
        html = page.request.get(visitor.base_url + detail + "live/").text()
        marker = 'class="live-tables"'
        live = html.split(marker, 1)[1].split("</ul>", 1)[0] if marker in html else ""
        if f'href="/t/{at_table[name]}/"' not in live:
            del at_table[name]
            visitor.collect()
            visitor.open(detail)
        return
    link = page.locator(".your-table a")
    if link.count():
        href = link.get_attribute("href")
        link.click()
        page.wait_for_selector("#table, .table-page, main", timeout=10000)
        at_table[name] = href.strip("/").split("/")[-1]
