"""End to end with a real Celery worker and beat: the table plays a whole match by itself.

Three bots and one seated person whose socket stays open but who never moves, with a 1 s turn
time: the worker's timers (and beat's sweep behind them) play for the person, the bots play
after their think time, the next round is dealt by itself, and the match reaches its target.
The stored record, replayed through the harness, gives the same scores.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar

import pytest
from websockets.sync.client import connect

from apps.rules import harness

from ..conftest import ROOT

pytestmark = [pytest.mark.slow, pytest.mark.timeout(400)]

SETUP = """
from django.contrib.auth import get_user_model
from apps.tables import services
from apps.tables.models import Table
user = get_user_model().objects.create_user(username="solo", password="a-long-pass-77")
table = services.create_table(host=user, preset="partners", allow_bots=True, bot_think_ms=50,
                              options={"turn_seconds": 1, "target": 50})
Table.objects.filter(pk=table.pk).update(next_round_seconds=1)
for _ in range(3):
    services.add_bot(user=user, table_id=table.pk)
print("TABLE", table.pk)
"""

RECORD = """
import json
from apps.tables.models import Table, Move
from apps.tables import game
table = Table.objects.get(pk={table_id})
match = table.current_match
print("RECORD", json.dumps({{"record": game.record_of(match), "scores": match.scores,
       "over": match.finished_at is not None,
       "seat0": list(Move.objects.filter(round__match=match, seat=0).values_list("by", flat=True))
       }}))
"""


def manage(site, env_extra: dict, code: str) -> str:
    env = {"DATABASE_URL": f"sqlite:///{site.var_dir / 'db.sqlite3'}", "DEBUG": "1",
           "VAR_DIR": str(site.var_dir), **env_extra}
    import os

    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT,
                         env={**os.environ, **env}, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def sign_in(base_url: str, username: str, password: str) -> str:
    jar = CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    page = opener.open(f"{base_url}/accounts/login/").read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    data = urllib.parse.urlencode({"username": username, "password": password,
                                   "csrfmiddlewaretoken": token}).encode()
    request = urllib.request.Request(f"{base_url}/accounts/login/", data=data,
                                     headers={"Referer": f"{base_url}/accounts/login/"})
    opener.open(request).read()
    session = next((c.value for c in jar if c.name == "sessionid"), None)
    assert session, "sign-in failed"
    return session


def test_a_timed_table_plays_a_whole_match_for_an_idle_person(run_site, redis_url):
    site = run_site(env={"REDIS_URL": redis_url})
    env = {"REDIS_URL": redis_url}
    table_id = int(re.search(r"TABLE (\d+)", manage(site, env, SETUP)).group(1))
    session = sign_in(site.base_url, "solo", "a-long-pass-77")
    seen_versions = []
    over = False
    with connect(f"{site.ws_url}/ws/table/{table_id}/", origin=site.base_url,
                 additional_headers={"Cookie": f"sessionid={session}"},
                 open_timeout=10) as ws:
        first = json.loads(ws.recv(timeout=10))
        assert first["type"] == "state"
        ws.send(json.dumps({"type": "host", "action": "start"}))
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and not over:
            msg = json.loads(ws.recv(timeout=30))
            if msg["type"] == "state":
                seen_versions.append(msg["version"])
                match = msg["state"]["match"]
                over = bool(match and match["over"])
                hand = msg["state"]["view"]["hand"] if msg["state"]["view"] else []
                # The person's socket never carries another seat's tile during a round.
                if msg["state"]["view"] and msg["state"]["view"]["revealed"] is None:
                    others = {t for m in msg["state"]["view"]["moves"] if "play" in m
                              for t in [m["play"]]}
                    text = json.dumps(msg["state"])
                    for tile in re.findall(r'"(\d-\d)"', text):
                        assert tile in hand or tile in others
    assert over, f"the match did not finish; versions seen: {seen_versions[-5:]}"
    out = manage(site, env, RECORD.format(table_id=table_id))
    data = json.loads(out.split("RECORD ", 1)[1])
    replayed = harness.replay(data["record"])
    assert replayed["ok"] and replayed["match"]["over"]
    assert replayed["scores"] == data["scores"] and max(data["scores"]) >= 50
    assert data["seat0"] and set(data["seat0"]) == {"table"}
