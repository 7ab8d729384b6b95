"""Smoke test of a table over the README's run command: a signed-in player's socket gets a
"state"; with Chromium present, the table page renders mid-round (a screenshot is kept)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from ..live import seed_site

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent.parent

def test_table_socket_over_the_run_command(run_site):
    site = run_site()
    made = seed_site(site)
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
    # Without a session the socket is told why, in a frame, and closed with 4401.
    with connect(f"{site.ws_url}/ws/table/{made['id']}/", origin=site.base_url,
                 open_timeout=10) as ws:
        told = json.loads(ws.recv(timeout=10))
        assert (told["type"], told["code"]) == ("closing", 4401) and told["message"]
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
    made = seed_site(site, moves=6)
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
