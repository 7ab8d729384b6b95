"""Smoke test of the README's `make run`: scripts/run.py with SQLite and embedded Redis."""

import json
import os
import re
import time
import urllib.error
import urllib.request

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

pytestmark = pytest.mark.slow


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _children_of(pid: int) -> set[int]:
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(entry))
    return found


def test_launcher_serves_http_and_websockets_then_stops_everything(run_site):
    site = run_site()  # waits for /healthz
    with urllib.request.urlopen(f"{site.base_url}/healthz", timeout=5) as response:
        assert json.loads(response.read()) == {"ok": True, "db": True, "redis": True}

    pids = site.pids()
    assert set(pids) == {"launcher", "daphne", "worker", "judge", "beat", "redis"}
    assert pids["launcher"] == site.proc.pid
    every_pid = set(pids.values()) | _children_of(site.proc.pid)
    for name in ("daphne", "worker", "judge", "beat", "redis"):
        assert _alive(pids[name]), f"{name} is not running\n{site.log()}"

    origin = site.base_url
    # Daphne serves the sockets: a signed-out one is accepted and told to sign in (4401), the
    # reason in a frame of its own (Daphne drops a close's reason).
    with connect(f"{site.ws_url}/ws/me/", origin=origin, open_timeout=10) as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "closing"
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=10)
        assert ws.close_code == 4401

    # A path with no route is no crash of the router (once an HTTP 500 and a traceback): the
    # socket is told 4404, with the reason in the language the browser asks for.
    for path in ("/ws/ping/", "/ws/nowhere/", "/nothing"):
        with connect(f"{site.ws_url}{path}", origin=origin, open_timeout=10,
                     additional_headers={"Accept-Language": "pt-BR,pt;q=0.9"}) as ws:
            assert json.loads(ws.recv(timeout=10)) == {
                "type": "closing", "code": 4404,
                "message": "Nada responde neste endereço. Recarregue a página."}
            with pytest.raises(ConnectionClosed):
                ws.recv(timeout=10)
            assert ws.close_code == 4404, path

    # A foreign Origin is refused during the handshake (AllowedHostsOriginValidator).
    with pytest.raises(InvalidStatus):
        with connect(f"{site.ws_url}/ws/me/", origin="http://evil.example", open_timeout=10):
            pass

    # The terminal is for what an operator needs: no line per beat tick or task, and no error
    # for what a client got wrong.
    time.sleep(3)
    assert "Sending due task" not in site.log() and "succeeded in" not in site.log()
    assert "ERROR" not in site.log() and "Traceback" not in site.log(), site.log()

    started = time.monotonic()
    assert site.stop(timeout=40) == 0, site.log()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in every_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    still_running = {pid for pid in every_pid if _alive(pid)}
    assert not still_running, f"still running: {still_running}\n{site.log()}"
    assert time.monotonic() - started < 40
    assert not (site.var_dir / "run.pids.json").exists()


def test_launcher_with_debug_off_serves_pages_and_their_static_files(run_site):
    """With DEBUG off pages name their static files through collectstatic's manifest: the
    launcher collects them before the site starts (every page, the error page too, was a 500
    until someone ran collectstatic by hand)."""
    site = run_site(env={"DEBUG": "0", "SECRET_KEY": "launcher-test-" + "k" * 40})
    for path in ("/", "/lobby/", "/accounts/signup/"):
        with urllib.request.urlopen(f"{site.base_url}{path}", timeout=10) as response:
            assert response.status == 200, path
            page = response.read().decode()
    styles = re.findall(r'href="(/static/[^"]+\.css)"', page)
    assert styles and all(re.search(r"\.[0-9a-f]{12}\.css$", s) for s in styles), styles
    with urllib.request.urlopen(f"{site.base_url}{styles[0]}", timeout=10) as response:
        assert response.status == 200 and response.read()
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{site.base_url}/t/NOSUCH/", timeout=10)
    assert missing.value.code == 404
    assert "ERROR" not in site.log() and "Traceback" not in site.log(), site.log()
