"""The table page takes a ``rewound`` state although its version is lower than the one it
shows (docs/protocol.md, "Versions, events and resync"; issue 36), and still ignores any other
older state: a real browser against the site the run command serves, its table socket passed
through a proxy in the test that adds the frames a server would send after a database lost
versions Redis kept."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .test_csp import ARGS, SITE_ENV, Visitor, shell
from .test_table_page import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(not Path("/usr/bin/chromium").exists(),
                                 reason="needs /usr/bin/chromium")]

SETUP = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from apps.tables import services
eva = get_user_model().objects.create_user(username="eva", password="pw-evaeva")
eva.profile.language = "en"
eva.profile.save()
practice = services.open_practice(user=eva, preset="partners")
c = Client()
c.force_login(eva)
print(json.dumps({"session": c.cookies["sessionid"].value, "code": practice.code}))
"""

NAME = "document.getElementById('table-name').textContent"


def test_the_page_takes_a_rewound_state_and_no_other_older_one(run_site, monkeypatch):
    playwright = pytest.importorskip("playwright.sync_api")
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    site = run_site(env=SITE_ENV)
    made = shell(site, SETUP)
    found: list[str] = []
    states: list[dict] = []
    sockets = []

    def proxy(ws) -> None:
        server = ws.connect_to_server()

        def from_server(message) -> None:
            frame = json.loads(message)
            if frame.get("type") == "state":
                states.append(frame)
            ws.send(message)

        server.on_message(from_server)
        sockets.append(ws)

    def named(frame: dict, name: str, version: int, **extra) -> str:
        state = dict(frame["state"], version=version,
                     table=dict(frame["state"]["table"], name=name))
        return json.dumps(dict(frame, state=state, version=version, events=[], **extra))

    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        try:
            eva = Visitor(browser, site.base_url, made["session"], found)
            eva.page.route_web_socket(re.compile(r"/ws/table/\d+/$"), proxy)
            page = eva.open(f"/t/{made['code']}/")
            page.wait_for_selector("#status.ok", timeout=15000)
            wait_until(page, "document.querySelectorAll('#hand .hand-tile').length > 0")
            for _ in range(100):  # the proxy's frames arrive as the page waits
                if states:
                    break
                page.wait_for_timeout(100)
            last = states[-1]
            version = last["version"]
            # Versions Redis kept that the database then lost reached the page...
            sockets[-1].send(named(last, "Lost history", version + 50))
            wait_until(page, f"{NAME} === 'Lost history'")
            # ...an older state arriving late is still ignored...
            sockets[-1].send(named(last, "Late", version + 10))
            # ...and the database's state, rewound, replaces what the page shows.
            sockets[-1].send(named(last, "The database's", version, rewound=True))
            wait_until(page, f"{NAME} === \"The database's\"")
            assert "Late" not in page.evaluate(NAME)
            eva.collect()
        finally:
            browser.close()
    site.stop(timeout=40)
    assert not found, "\n".join(found)
