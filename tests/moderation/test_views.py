"""Actions through the staff pages under /staff/ (who may open them: test_permissions.py)."""

from __future__ import annotations

from django.test import Client

from apps.moderation import services as mod
from apps.moderation.models import ModerationLog
from apps.tables.models import Table

from .conftest import actor_for


def client_for(people, role):
    client = Client()
    if role != "anonymous":
        client.force_login(actor_for(people, role))
    return client


def test_actions_through_the_pages(people, table):
    client = client_for(people, "moderator")
    msg = mod.post_chat(user=people["caio"], table_id=table.pk, text="rude")
    back = f"/staff/tables/{table.pk}/"
    r = client.post("/staff/act/hide_message/", {"message": msg.pk, "next": back})
    assert r.status_code == 302 and r["Location"] == back
    r = client.post("/staff/act/mute/", {"user": people["caio"].pk, "minutes": 10,
                                         "reason": "rude", "next": back})
    assert r.status_code == 302
    r = client.post("/staff/act/close_table/", {"table": table.pk, "reason": "",
                                                "next": back}, follow=True)
    assert "Give a reason" in r.content.decode() or "reason" in r.content.decode().lower()
    assert Table.objects.get(pk=table.pk).state == "playing"
    client.post("/staff/act/close_table/", {"table": table.pk, "reason": "abuse"})
    assert Table.objects.get(pk=table.pk).state == "closed"
    assert client.post("/staff/act/ban/", {"user": people["caio"].pk, "days": "forever",
                                           "reason": "x"}).status_code == 403
    assert client.post("/staff/act/nonsense/", {}).status_code == 404
    r = client.post("/staff/act/rename_table/", {"table": table.pk, "name": "x",
                                                 "next": "https://evil.example/"})
    assert r["Location"] == "/staff/"
    assert list(ModerationLog.objects.order_by("pk").values_list("action", flat=True)) == [
        "hide_message", "mute", "close_table", "rename_table"]


def test_the_table_page_has_the_chat_box(people, table):
    client = client_for(people, "player")
    page = client.get(f"/t/{table.code}/").content.decode()
    assert 'id="chat-form"' in page and "js/chat.js" in page and 'id="chat-strings"' in page


def test_staff_download_a_closed_tables_record_with_the_round_it_stopped(people, table):
    """What happened at a table closed mid-round is in its record, for staff too (the right
    to observe tables), as its players download it."""
    import json

    from apps.rules import harness
    from apps.tables import services as tables

    match = Table.objects.get(pk=table.pk).current_match
    assert match is not None and match.rounds.filter(result__isnull=True).exists()
    url = f"/staff/tables/{table.pk}/record/"
    assert client_for(people, "player").get(url).status_code == 403
    moderator = client_for(people, "moderator")
    assert url not in moderator.get(f"/staff/tables/{table.pk}/").content.decode()
    tables.close_by_staff(table_id=table.pk, reason="abuse")
    assert url in moderator.get(f"/staff/tables/{table.pk}/").content.decode()
    response = moderator.get(url)
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    data = json.loads(response.content)
    assert harness.load(data).current is not None  # stopped mid-round, every move of it
