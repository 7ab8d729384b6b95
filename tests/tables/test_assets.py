"""The table page's JavaScript and CSS stay small: under 60 KB compressed together. Its sound
effects are not part of it: the page fetches each only when the person has turned sounds on."""

from __future__ import annotations

import gzip
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
#: The JavaScript and CSS files the table page loads.
TABLE_ASSETS = ["static/js/table.js", "static/js/board.js", "static/css/tables.css",
                "static/css/site.css", "static/js/chat.js"]
BUDGET = 60 * 1024


def test_table_page_assets_fit_the_budget():
    sizes = {name: len(gzip.compress((ROOT / name).read_bytes(), compresslevel=9))
             for name in TABLE_ASSETS}
    assert sum(sizes.values()) < BUDGET, sizes


def test_the_table_page_loads_those_assets(client, db):
    from django.contrib.auth import get_user_model

    from apps.tables import services

    host = get_user_model().objects.create_user(username="host", password="pw-hosthost")
    table = services.create_table(host=host, preset="partners", public=True)
    client.force_login(host)
    html = client.get(f"/t/{table.code}/").content.decode()
    assert "js/table.js" in html and "css/tables.css" in html
    # Sounds: only their folder is named, for the page to fetch them on demand.
    assert ".wav" not in html and 'data-sounds="/static/sounds/"' in html
