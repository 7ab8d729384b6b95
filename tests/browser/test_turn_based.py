"""Issue 37's "Done when", in a real browser against the site the run command serves (its
worker and beat fire the deadlines): ana (Spanish) creates a turn-based table for four from
the form, bea (Brazilian Portuguese) takes a seat, ana starts with two bots and plays a move,
then closes her browser; "the next day" (the table's clock moved back 23 hours in the site's
database, not a sleep) bea plays hers; both find the table under My games with whose move it
is; ana's time runs out and the table plays the first tile that fits; two more timeouts hand
her seat to a stand-in; bea's vacation stops her clock; caio (English) adjourns a live match
and resumes it from My games at the same move with the same hand; a finished match's rematch
starts once ana and bea both accept. Screenshots go to var/screenshots/ (turn-based-*).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from .matches import FINISH, ROOT
from .test_csp import ARGS, SITE_ENV, Visitor
from .test_table_page import shoot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(900),
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

ENV = {**SITE_ENV, "TURN_BASED_OUTAGE_SECONDS": "600"}

SETUP = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
U = get_user_model()
sessions = {}
for name, lang in (("ana", "es"), ("bea", "pt-br"), ("caio", "en"), ("dani", "en")):
    u = U.objects.create_user(username=name, password="pw-" + name * 2)
    u.profile.language = lang
    u.profile.save()
    c = Client()
    c.force_login(u)
    sessions[name] = c.cookies["sessionid"].value
print(json.dumps(sessions))
"""

#: Moves the game on from the site's database: the friend's moves (bea's, when she is not
#: awaited), and bots' and stand-ins' turns brought forward (the worker plays them), until
#: the turn of one of ``stop``.
DRIVE = """
import json, time
from datetime import timedelta
from django.db.models import F
from django.utils import timezone
from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Move, Table

def now_due(t):
    Table.objects.filter(pk=t.pk, version=t.version).update(
        turn_deadline=timezone.now() - timedelta(seconds=1))

def drive(code, stop):
    for _ in range(600):
        t = Table.objects.get(code=code)
        engine = game.restore(t.current_match)
        rnd = engine.current
        if rnd is None:
            if engine.over:
                return {"over": True}
            now_due(t)
            time.sleep(0.3)
            continue
        seat = t.seats.select_related("user").get(index=rnd.turn)
        name = seat.user.username if seat.user_id and not seat.standin else None
        if name in stop:
            return {"turn": name, "seat": seat.index, "deadline": t.turn_deadline.isoformat(),
                    "first": legal_dict(*rnd.legal()[0]),
                    "moves": Move.objects.filter(round__match__table=t).count()}
        if name == "bea":
            m = legal_dict(*rnd.legal()[0])
            services.play_move(user=seat.user, table_id=t.pk,
                               round_number=len(engine.rounds) - 1, ply=len(rnd.history),
                               tile=m.get("play"), end=m.get("end"),
                               is_pass=bool(m.get("pass")))
            continue
        now_due(t)
        time.sleep(0.3)
    raise SystemExit("the table did not move on")

def expire(code):
    t = Table.objects.get(code=code)
    seen = Move.objects.filter(round__match__table=t, by="table").count()
    now_due(t)
    for _ in range(120):
        if Move.objects.filter(round__match__table=t, by="table").count() > seen:
            break
        time.sleep(0.25)
    m = Move.objects.filter(round__match__table=t, by="table").order_by("-pk").first()
    seat = t.seats.get(index=m.seat)
    return {"play": m.tile or None, "end": m.end or None, "pass": m.is_pass, "seat": m.seat,
            "timeouts": seat.timeouts, "standin": seat.standin,
            "late": (m.created_at - m.due_at).total_seconds()}
"""


def shell(site, code: str) -> dict:
    """``code`` in the site's ``manage.py shell`` (its DEBUG off and its SECRET_KEY: the
    sessions); its last printed line, as JSON."""
    env = {k: v for k, v in os.environ.items()
           if k not in {"REDIS_URL", "DATABASE_URL", "PYTEST_EMBEDDED_REDIS"}}
    env.update(VAR_DIR=str(site.var_dir), **ENV)
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def run(site, code: str) -> dict:
    return shell(site, DRIVE + code)


def play_one(page) -> None:
    """The person's move, as they make it: a tile that fits (at an end, when it asks), or the
    pass when nothing does."""
    wait_until(page, "!!document.querySelector('#hand .hand-tile.legal')"
                     " || !document.querySelector('#pass').disabled")
    if page.query_selector("#hand .hand-tile.legal"):
        page.click("#hand .hand-tile.legal")
        if page.is_visible("#end-choice button.end-button"):
            page.click("#end-choice button.end-button")
    else:
        page.click("#pass")


def test_turn_based_play_from_creation_to_rematch(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site(env=ENV)
    sessions = shell(site, SETUP)
    found: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            # -- ana creates a turn-based table for four, bea sits, two bots fill it ----------
            ana = Visitor(browser, site.base_url, sessions["ana"], found)
            page = ana.open("/tables/new/")
            page.check("input[name=pace][value=turn]")
            page.select_option("#id_move_seconds", "86400")
            page.check("#id_allow_bots")
            page.click("#create-table button[type=submit]")
            page.wait_for_selector("#status.ok", timeout=20000)
            assert "Por turnos" in page.inner_text(".table-header")
            assert "1 día por jugada" in page.inner_text(".table-header")
            code = page.url.rstrip("/").rsplit("/", 1)[-1]
            bea = Visitor(browser, site.base_url, sessions["bea"], found)
            bpage = bea.open(f"/t/{code}/")
            bpage.click(".seat-form button")
            bpage.wait_for_selector("#status.ok", timeout=20000)
            page.wait_for_selector("button[data-action=start_with_bots]", timeout=20000)
            page.click("button[data-action=start_with_bots]")
            # -- ana plays a move, and closes her browser ------------------------------------
            turn = run(site, f"print(json.dumps(drive({code!r}, {{'ana'}})))")
            page.reload()
            page.wait_for_selector("#status.ok", timeout=20000)
            wait_until(page, "!!document.querySelector('#felt .seat.turn[data-seat=\"0\"]')")
            # A day's time left, in hours and minutes.
            wait_until(page, "document.querySelector('#clock .clock-secs').textContent"
                             ".includes(' h ')")
            play_one(page)
            wait_until(page, "!document.querySelector('#felt .seat.turn[data-seat=\"0\"]')")
            shoot(page, "turn-based-table-es")
            ana.context.close()
            # -- the next day: bea plays hers ---------------------------------------------------
            run(site, f"""
t = Table.objects.get(code={code!r})
Table.objects.filter(pk=t.pk).update(turn_started_at=F("turn_started_at") - timedelta(hours=23),
                                     turn_deadline=F("turn_deadline") - timedelta(hours=23))
print("{{}}")""")
            turn = run(site, f"print(json.dumps(drive({code!r}, {{'ana', 'bea'}})))")
            assert turn["turn"] == "bea", turn
            left = datetime.fromisoformat(turn["deadline"]) - datetime.now().astimezone()
            assert left < timedelta(days=1)
            bpage.reload()
            bpage.wait_for_selector("#status.ok", timeout=20000)
            wait_until(bpage, "!!document.querySelector('#felt .seat.turn[data-seat=\"1\"]')")
            play_one(bpage)
            wait_until(bpage, "!document.querySelector('#felt .seat.turn[data-seat=\"1\"]')")
            # -- both find it under My games, with whose move it is ------------------------
            turn = run(site, f"print(json.dumps(drive({code!r}, {{'ana', 'bea'}})))")
            ana = Visitor(browser, site.base_url, sessions["ana"], found)
            games = ana.open("/games/")
            row = games.inner_text(f"tr[data-table='{code}']")
            assert ("Te toca" in row) == (turn["turn"] == "ana"), row
            assert "Por turnos" in row and "1 día por jugada" in row
            shoot(games, "turn-based-my-games-es")
            bgames = bea.open("/games/")
            brow = bgames.inner_text(f"tr[data-table='{code}']")
            assert ("Sua vez" in brow) == (turn["turn"] == "bea"), brow
            assert "Minhas partidas" in bgames.inner_text("h1")
            # -- ana's time runs out: the first tile that fits is played for her -----------
            turn = run(site, f"print(json.dumps(drive({code!r}, {{'ana'}})))")
            done = run(site, f"print(json.dumps(expire({code!r})))")
            first = turn["first"]
            assert done["seat"] == 0 and done["timeouts"] == 1 and not done["standin"]
            assert (done["play"], done["pass"]) == (first.get("play"), bool(first.get("pass")))
            assert done["late"] < 5
            bpage = bea.open(f"/t/{code}/")
            bpage.wait_for_selector("#status.ok", timeout=20000)
            wait_until(bpage, "!!document.querySelector("
                              "'#felt .seat[data-seat=\"0\"] .badge.timeouts')")
            assert "1 de 3" in bpage.inner_text("#felt .seat[data-seat='0'] .badge.timeouts")
            # -- two more timeouts in a row: a stand-in takes her seat -------------------------
            for count in (2, 3):
                run(site, f"print(json.dumps(drive({code!r}, {{'ana'}})))")
                done = run(site, f"print(json.dumps(expire({code!r})))")
                assert done["timeouts"] == count
            assert done["standin"]
            wait_until(bpage, "!!document.querySelector("
                              "'#felt .seat[data-seat=\"0\"] .badge.standin')", timeout=20000)
            shoot(bpage, "turn-based-standin-pt-br")
            # -- bea's vacation stops her clock ---------------------------------------------
            profile = bea.open("/accounts/profile/")
            profile.fill("#vacation input[name=days]", "2")
            profile.click("#vacation button[type=submit]")
            profile.wait_for_selector("#vacation")
            assert "Você está de férias até" in profile.inner_text("#vacation")
            turn = run(site, f"print(json.dumps(drive({code!r}, {{'bea'}})))")
            left = datetime.fromisoformat(turn["deadline"]) - datetime.now().astimezone()
            assert left > timedelta(days=2), left
            bpage = bea.open(f"/t/{code}/")
            bpage.wait_for_selector("#status.ok", timeout=20000)
            wait_until(bpage, "!!document.querySelector("
                              "'#felt .seat[data-seat=\"1\"] .badge.vacation')")
            assert "de férias até" in bpage.inner_text("#felt .seat[data-seat='1']")
            bea.collect()
            ana.collect()
            # -- caio adjourns a live match and resumes it from My games ----------------------
            live = run(site, """
U = __import__("django.contrib.auth", fromlist=["get_user_model"]).get_user_model()
caio, dani = U.objects.get(username="caio"), U.objects.get(username="dani")
t = services.create_table(host=caio, preset="partners", allow_bots=True,
                          options={"turn_seconds": None})
services.join_table(user=dani, table_id=t.pk, code=t.code)
services.start_with_bots(user=caio, table_id=t.pk)
turn = drive(t.code, {"caio"})
print(json.dumps({"code": t.code, "turn": turn}))""")
            caio = Visitor(browser, site.base_url, sessions["caio"], found)
            cpage = caio.open(f"/t/{live['code']}/")
            cpage.wait_for_selector("#status.ok", timeout=20000)
            hand = cpage.eval_on_selector_all("#hand .hand-tile", "n => n.map(b => b.dataset.tile)")
            moves = cpage.inner_text("#moves-count")
            cpage.click("button[data-action=adjourn]")
            wait_until(cpage, "!document.querySelector('#paused').hidden")
            assert "Adjourned" in cpage.inner_text("#paused")
            games = caio.open("/games/")
            assert "Adjourned" in games.inner_text(f"tr[data-table='{live['code']}']")
            games.click(f"tr[data-table='{live['code']}'] button[type=submit]")
            games.wait_for_selector("#status.ok", timeout=20000)
            assert games.url.endswith(f"/t/{live['code']}/")
            wait_until(games, "document.querySelector('#paused').hidden")
            assert games.eval_on_selector_all(
                "#hand .hand-tile", "n => n.map(b => b.dataset.tile)") == hand
            assert games.inner_text("#moves-count") == moves
            shoot(games, "turn-based-resumed-en")
            caio.collect()
            # -- a rematch starts once both accept --------------------------------------------
            over = shell(site, FINISH + """
import json
from django.contrib.auth import get_user_model
U = get_user_model()
ana, bea = U.objects.get(username="ana"), U.objects.get(username="bea")
t = services.create_table(host=ana, preset="draw", players=2,
                          options={"target": 10, "turn_seconds": None})
services.join_table(user=bea, table_id=t.pk, code=t.code)
finish(t, ana, 5)
print(json.dumps({"code": t.code}))""")
            apage = ana.open(f"/t/{over['code']}/")
            apage.wait_for_selector("#status.ok", timeout=20000)
            apage.wait_for_selector("#rematch button[data-action=rematch]", timeout=20000)
            assert apage.inner_text("#rematch button") == "Revancha"
            apage.click("#rematch button")
            wait_until(apage, "!document.querySelector('#rematch button')")
            bpage = bea.open(f"/t/{over['code']}/")
            bpage.wait_for_selector("#status.ok", timeout=20000)
            bpage.wait_for_selector("#rematch button", timeout=20000)
            assert bpage.inner_text("#rematch button") == "Aceitar a revanche"
            shoot(bpage, "turn-based-rematch-pt-br")
            bpage.click("#rematch button")
            for who in (apage, bpage):
                wait_until(who, "document.querySelector('#rematch').hidden", timeout=20000)
            number = run(site, f"print(json.dumps(Table.objects.get(code={over['code']!r})"
                               ".current_match.number))")
            assert number == 2
            ana.collect()
            bea.collect()
        finally:
            browser.close()
    site.stop(timeout=40)
    assert not found, "\n".join(found)
