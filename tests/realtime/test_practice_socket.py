"""A guest's practice table over the real table socket: their own hand and nobody else's, the
table closed to others, and gone once its page has been closed for the empty-table limit."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.tables import services
from apps.tables.models import Table
from tests.socket_client import Socket, db

pytestmark = pytest.mark.django_db(transaction=True)


def open_guest_practice() -> Table:
    return services.open_practice(preset="partners", bot_level="easy", language="es")


async def test_a_guest_plays_at_their_practice_table_and_it_goes_when_they_leave(people):
    table = await db(open_guest_practice)()
    guest = await db(lambda: table.host)()
    sock = Socket(f"/ws/table/{table.pk}/", guest)
    assert await sock.connect()
    frame = await sock.state()
    state = frame["state"]
    assert state["you"]["seat"] == 0 and state["you"]["host"]
    assert len(state["view"]["hand"]) == 7 and state["table"]["state"] == "playing"
    assert [s["bot"] for s in state["seats"]] == [False, True, True, True]
    hands = await db(lambda: list(table.current_match.rounds.get().hands))()
    others = {t for seat, hand in enumerate(hands) if seat for t in hand}
    assert not others & set(state["view"]["hand"])
    assert (await db(Table.objects.get)(pk=table.pk)).empty_since is None

    # Invite-only: somebody else signed in, without the code, is refused.
    stranger = Socket(f"/ws/table/{table.pk}/", people["ana"])
    assert await stranger.connect()
    assert await stranger.close_code() == 4404

    await sock.comm.disconnect()
    left = await db(lambda: Table.objects.get(pk=table.pk).empty_since)()
    assert left is not None
    await db(services.sweep)(now=left + timedelta(minutes=1))
    assert await db(Table.objects.filter(pk=table.pk).exists)()
    await db(services.sweep)(now=left + timedelta(minutes=2, seconds=1))
    assert not await db(Table.objects.filter(pk=table.pk).exists)()
    # The guest is kept while not idle, and goes a day later.
    await db(services.sweep)(now=timezone.now() + timedelta(hours=23))
    assert await db(type(guest).objects.filter(pk=guest.pk).exists)()
    await db(services.sweep)(now=timezone.now() + timedelta(hours=24, minutes=5))
    assert not await db(type(guest).objects.filter(pk=guest.pk).exists)()


async def test_a_practice_table_is_its_persons_alone_even_for_someone_with_its_link(people):
    """No watchers, no chat (docs/practice-and-guests.md): the link does not open it to
    anyone else, and the server takes no chat line there, not even its person's."""
    from django.test import Client

    from apps.moderation.models import ChatMessage

    table = await db(open_guest_practice)()
    guest = await db(lambda: table.host)()
    sock = Socket(f"/ws/table/{table.pk}/", guest)
    assert await sock.connect()
    await sock.state()

    # Someone signed in who was given the link: the page is not theirs, nor the socket.
    browser = Client()
    await db(browser.force_login)(people["ana"])
    page = await db(browser.get)(f"/t/{table.code}/")
    assert page.status_code == 404
    watcher = Socket(f"/ws/table/{table.pk}/", people["ana"],
                     cookie=f"sessionid={browser.cookies['sessionid'].value}".encode())
    assert await watcher.connect()
    frame, code = await watcher.closing()
    assert code == 4404 and frame["code"] == 4404
    version = await db(lambda: Table.objects.get(pk=table.pk).version)()
    assert await db(lambda: Table.objects.get(pk=table.pk).connections.count())() == 1

    await sock.send({"type": "chat", "text": "hola", "id": 4})
    err = await sock.until(lambda m: m["type"] == "error")
    assert (err["code"], err["id"]) == ("practice", 4)
    assert not await db(ChatMessage.objects.filter(table_id=table.pk).exists)()
    assert await db(lambda: Table.objects.get(pk=table.pk).version)() == version
    await sock.close()
