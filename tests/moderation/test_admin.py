"""The moderation log in the admin: readable and filterable, never editable or deletable."""

from __future__ import annotations

from django.test import Client

from apps.moderation import services as mod
from apps.moderation.models import ModerationLog


def test_the_log_is_read_only_in_the_admin(people, table):
    mod.close_table(actor=people["mod"], table_id=table.pk, reason="abuse")
    entry = ModerationLog.objects.get()
    admin = Client()
    admin.force_login(people["root"])
    base = "/admin/moderation/moderationlog/"
    listing = admin.get(base + "?action__exact=close_table")
    assert listing.status_code == 200 and b"abuse" in listing.content
    assert admin.get(base + "add/").status_code == 403
    change = admin.get(f"{base}{entry.pk}/change/")
    assert change.status_code == 200
    assert b'name="_save"' not in change.content and b'name="reason"' not in change.content
    post = admin.post(f"{base}{entry.pk}/change/", {"reason": "edited"})
    assert post.status_code == 403
    assert admin.post(f"{base}{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    bulk = admin.post(base, {"action": "delete_selected", "_selected_action": [entry.pk],
                             "post": "yes"})
    assert bulk.status_code in (200, 302)
    entry.refresh_from_db()
    assert entry.reason == "abuse" and ModerationLog.objects.count() == 1


def test_a_moderator_can_read_the_log(people, table):
    mod.hide_table(actor=people["mod"], table_id=table.pk)
    client = Client()
    client.force_login(people["mod"])
    assert client.get("/admin/moderation/moderationlog/").status_code == 200
    assert client.get("/admin/moderation/ban/").status_code == 200
