"""Smoke test of a table over the README's run command: a signed-in player's socket gets a
"state"; with Chromium present, the table page renders mid-round (a screenshot is kept)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent.parent

# Runs inside `manage.py shell` against the site's own database: four players, a started
# partners match with a few moves, and a session for the host.
SETUP = """
import json, random
from django.contrib.auth import get_user_model
from django.test import Client
from apps.rules.engine import legal_dict
from apps.tables import game, services
from apps.tables.models import Table
U = get_user_model()
users = [U.objects.create_user(username=n, password="pw-" + n * 2)
         for n in ("ana", "bea", "caio", "dani")]
table = services.create_table(host=users[0], preset="partners", public=True,
                              options={"turn_seconds": None})
for u in users[1:]:
    services.join_table(user=u, table_id=table.pk)
services.start_match(user=users[0], table_id=table.pk)
rng = random.Random(4)
for _ in range(MOVES):
    t = Table.objects.get(pk=table.pk)
    engine = game.load(t.current_match)
    rnd = engine.current
    if rnd is None or (rnd.turn == 0 and rnd.history):
        break
    move = legal_dict(*rng.choice(rnd.legal()))
    services.play_move(user=t.seats.get(index=rnd.turn).user, table_id=t.pk, round_number=0,
                       ply=len(rnd.history), tile=move.get("play"), end=move.get("end"),
                       is_pass=bool(move.get("pass")))
client = Client()
client.force_login(users[0])
session = client.cookies["sessionid"].value
print(json.dumps({"id": table.pk, "code": table.code, "session": session}))
"""


def seed(site, moves: int = 0) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in {"REDIS_URL", "DATABASE_URL", "PYTEST_EMBEDDED_REDIS"}}
    env.update({"VAR_DIR": str(site.var_dir), "DEBUG": "1"})
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c",
                          SETUP.replace("MOVES", str(moves))],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_table_socket_over_the_run_command(run_site):
    site = run_site()
    made = seed(site)
    with connect(f"{site.ws_url}/ws/table/{made['id']}/", origin=site.base_url,
                 additional_headers={"Cookie": f"sessionid={made['session']}"},
                 open_timeout=10) as ws:
        first = json.loads(ws.recv(timeout=10))
        assert first["type"] == "state"
        you = first["state"]["you"]
        assert (you["seat"], you["host"]) == (0, True)
        assert len(first["state"]["view"]["hand"]) == 7
        ws.send(json.dumps({"type": "ping"}))
        while (msg := json.loads(ws.recv(timeout=10)))["type"] != "pong":
            assert msg["type"] == "state"
    # Without a session the socket is closed with 4401.
    with connect(f"{site.ws_url}/ws/table/{made['id']}/", origin=site.base_url,
                 open_timeout=10) as ws:
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
        assert ws.close_code == 4401
    assert site.stop(timeout=40) == 0


@pytest.mark.browser
@pytest.mark.skipif(not Path("/usr/bin/chromium").exists(), reason="needs /usr/bin/chromium")
def test_table_page_renders_mid_round(run_site, tmp_path, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site()
    made = seed(site, moves=6)
    shot = Path(os.environ.get("TABLE_SCREENSHOT", tmp_path / "table.png"))
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        try:
            context = browser.new_context(viewport={"width": 1100, "height": 1000})
            context.add_cookies([{"name": "sessionid", "value": made["session"],
                                  "url": site.base_url}])
            page = context.new_page()
            errors = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"{site.base_url}/t/{made['code']}/")
            page.wait_for_selector("#hand .tile-button", timeout=15000)
            assert page.locator("#hand .tile-button").count() >= 5
            assert page.locator("#line .tile").count() >= 1
            assert page.locator("#felt .seat").count() == 4
            page.screenshot(path=str(shot), full_page=True)
            assert not errors, errors
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
    site.stop(timeout=40)
