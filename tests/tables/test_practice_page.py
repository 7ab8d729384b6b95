"""A practice table is one person against bots: the table page offers nothing meant for other
people there (the host's watching switch, the chat, the report button), and keeps all three
at an ordinary table."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from apps.tables import services

#: What only means something with other people at or around the table.
FOR_OTHERS = ('class="inline-form watching-form"', 'id="chat"', 'id="chat-form"',
              'id="report-open"', 'id="report-form"', "js/chat.js")


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.mark.parametrize("preset", ["partners", "draw"])
def test_a_practice_table_has_no_watching_switch_chat_or_report(client, people, preset):
    table = services.open_practice(user=people["ana"], preset=preset, players=4)
    client.force_login(people["ana"])
    page = client.get(f"/t/{table.code}/")
    assert page.status_code == 200 and page.context["is_host"]
    html = page.content.decode()
    for marker in FOR_OTHERS:
        assert marker not in html, marker
    assert 'id="host"' in html  # the host may still pause their practice


def test_an_ordinary_table_keeps_them(client, people, full_table):
    services.start_match(user=people["host"], table_id=full_table.pk)
    client.force_login(people["host"])
    html = client.get(f"/t/{full_table.code}/").content.decode()
    for marker in FOR_OTHERS:
        assert marker in html, marker
